"""The source of truth: the vault's folder layout, its Markdown parsed without ever being changed,
MEMORY.md as sections of entries, and the file primitives every write goes through (confinement,
atomic guarded rewrites, locked appends, one git commit of exactly the files written), and the
scopes a vault's files belong to (`scopes`: whose they are, who may see them).

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
