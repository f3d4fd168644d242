"""What `live` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from . import watch_client as watch_client
from .watch import Watcher as Watcher
from .watch import WatchReport as WatchReport
from .watch_client import (
    STOP_WAIT as STOP_WAIT,
)
from .watch_client import (
    StopReport as StopReport,
)
from .watch_client import (
    stop_watcher as stop_watcher,
)
from .watch_client import (
    watcher_status as watcher_status,
)
