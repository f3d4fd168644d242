"""What agents use, handed a `Vault` by their caller: the memory tools, the MCP server, the
conversation window, and the background index a server starts.

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
