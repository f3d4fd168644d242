"""Finding and assembling what memory says: the unit table, pure scoring and fusion, the searcher,
the log of what search returned (a hint for the dream), and the context block built within a
token budget.

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
