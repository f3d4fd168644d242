"""Keeping the cache exact while files change (`vault watch`), and talking to a running watcher.

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
