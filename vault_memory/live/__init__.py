"""Keeping the cache exact while files change (`vault watch`), and talking to a running watcher.

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import watch_client
    from .watch import Watcher, WatchReport
    from .watch_client import STOP_WAIT, StopReport, stop_watcher, watcher_status

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "STOP_WAIT": ("watch_client", "STOP_WAIT"),
    "StopReport": ("watch_client", "StopReport"),
    "WatchReport": ("watch", "WatchReport"),
    "Watcher": ("watch", "Watcher"),
    "stop_watcher": ("watch_client", "stop_watcher"),
    "watch_client": ("watch_client", None),
    "watcher_status": ("watch_client", "watcher_status"),
}
__all__ = [
    "STOP_WAIT",
    "StopReport",
    "WatchReport",
    "Watcher",
    "stop_watcher",
    "watch_client",
    "watcher_status",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
