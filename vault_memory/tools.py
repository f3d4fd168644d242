"""`vault_memory.tools`, as the README has always shown it: the agent tools live in
`vault_memory.agents.tools`; this name keeps `from vault_memory.tools import make_tools,
call_tool` working."""

from .agents import (
    Tool,
    ToolArgumentError,
    ToolResult,
    call_tool,
    check_arguments,
    make_tools,
    run_tool,
)

__all__ = [
    "Tool",
    "ToolArgumentError",
    "ToolResult",
    "call_tool",
    "check_arguments",
    "make_tools",
    "run_tool",
]
