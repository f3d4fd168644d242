"""What `dream` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .apply import (
    DreamDisabledError as DreamDisabledError,
    Dreamer as Dreamer,
    DreamRefusedError as DreamRefusedError,
    DreamReport as DreamReport,
    recover_dream as recover_dream,
)
from .scheduler import DreamScheduler as DreamScheduler, write_json as write_json
