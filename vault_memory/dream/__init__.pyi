"""What `dream` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .apply import Dreamer as Dreamer
from .apply import DreamReport as DreamReport
from .scheduler import DreamScheduler as DreamScheduler
from .scheduler import write_json as write_json
