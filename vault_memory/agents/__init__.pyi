"""What `agents` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .background import BackgroundIndex as BackgroundIndex
from .mcp_server import serve_stdio as serve_stdio
from .tools import (
    Tool as Tool,
)
from .tools import (
    ToolArgumentError as ToolArgumentError,
)
from .tools import (
    ToolResult as ToolResult,
)
from .tools import (
    call_tool as call_tool,
)
from .tools import (
    check_arguments as check_arguments,
)
from .tools import (
    make_tools as make_tools,
)
from .tools import (
    run_tool as run_tool,
)
from .window import ConversationWindow as ConversationWindow
