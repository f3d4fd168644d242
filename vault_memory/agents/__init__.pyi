"""What `agents` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .background import BackgroundIndex as BackgroundIndex
from .mcp_server import serve_stdio as serve_stdio
from .tools import (
    Tool as Tool,
    ToolArgumentError as ToolArgumentError,
    ToolResult as ToolResult,
    call_tool as call_tool,
    check_arguments as check_arguments,
    make_tools as make_tools,
    run_tool as run_tool,
)
from .window import ConversationWindow as ConversationWindow
