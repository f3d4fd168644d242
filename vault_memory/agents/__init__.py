"""What agents use, handed a `Vault` by their caller: the memory tools, the MCP server, the
conversation window, and the background index a server starts.

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .background import BackgroundIndex
    from .mcp_server import serve_stdio
    from .tools import (
        Tool,
        ToolArgumentError,
        ToolResult,
        call_tool,
        check_arguments,
        make_tools,
        run_tool,
    )
    from .window import ConversationWindow

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "BackgroundIndex": ("background", "BackgroundIndex"),
    "ConversationWindow": ("window", "ConversationWindow"),
    "Tool": ("tools", "Tool"),
    "ToolArgumentError": ("tools", "ToolArgumentError"),
    "ToolResult": ("tools", "ToolResult"),
    "call_tool": ("tools", "call_tool"),
    "check_arguments": ("tools", "check_arguments"),
    "make_tools": ("tools", "make_tools"),
    "run_tool": ("tools", "run_tool"),
    "serve_stdio": ("mcp_server", "serve_stdio"),
}
__all__ = [
    "BackgroundIndex",
    "ConversationWindow",
    "Tool",
    "ToolArgumentError",
    "ToolResult",
    "call_tool",
    "check_arguments",
    "make_tools",
    "run_tool",
    "serve_stdio",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
