"""What `live` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from . import watch_client as watch_client
from .signals import stopping_on_signals as stopping_on_signals
from .watch import (
    Watcher as Watcher,
    WatcherRunningError as WatcherRunningError,
    WatchReport as WatchReport,
)
from .watch_client import (
    STOP_WAIT as STOP_WAIT,
    StopReport as StopReport,
    WatcherNotAnsweringError as WatcherNotAnsweringError,
    WatcherStillRunningError as WatcherStillRunningError,
    stop_watcher as stop_watcher,
    watcher_status as watcher_status,
)
