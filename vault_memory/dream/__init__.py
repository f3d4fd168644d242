"""Deep Dream: decide (pure) what the daily logs add to MEMORY.md, with or without a model, apply
it with a diary record and an undo, and run it on a schedule.

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
