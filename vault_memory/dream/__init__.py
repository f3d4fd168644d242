"""Deep Dream: decide (pure) what the daily logs add to MEMORY.md, with or without a model, apply
it with a diary record and an undo, and run it on a schedule.

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .apply import Dreamer, DreamReport, recover_dream
    from .scheduler import DreamScheduler, write_json

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "DreamReport": ("apply", "DreamReport"),
    "DreamScheduler": ("scheduler", "DreamScheduler"),
    "Dreamer": ("apply", "Dreamer"),
    "recover_dream": ("apply", "recover_dream"),
    "write_json": ("scheduler", "write_json"),
}
__all__ = [
    "DreamReport",
    "DreamScheduler",
    "Dreamer",
    "recover_dream",
    "write_json",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
