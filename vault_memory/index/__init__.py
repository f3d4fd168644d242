"""The derived cache: scan and plan (pure), units, the SQLite store, the Whoosh keyword index, the
embedding model and the unit arrays; `Index` keeps `.vault/` in line with the files.

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
