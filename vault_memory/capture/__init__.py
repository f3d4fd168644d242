"""What enters a vault: conversations in their formats, secrets redacted, what is worth keeping
extracted, the flush that appends it to the day's log, idempotently, and the update queue that
flushes in the background.

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
