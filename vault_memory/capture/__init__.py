"""What enters a vault: conversations in their formats, secrets redacted, what is worth keeping
extracted, the flush that appends it to the day's log, idempotently, and the update queue that
flushes in the background.

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .conversation import (
        NOTE_LABELS,
        check_session_id,
        clean_text,
        derive_session_id,
        parse_conversation,
    )
    from .dates import pin_dates, unpin_dates
    from .flush import (
        FlushReport,
        SessionInfo,
        SessionNotFoundError,
        daily_logs,
        flush_conversation,
        group_sessions,
        scan_sessions,
    )
    from .queue import QueueStats, UpdateQueue, queue_status
    from .redact import redact_text, redact_texts

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "NOTE_LABELS": ("conversation", "NOTE_LABELS"),
    "FlushReport": ("flush", "FlushReport"),
    "QueueStats": ("queue", "QueueStats"),
    "SessionInfo": ("flush", "SessionInfo"),
    "SessionNotFoundError": ("flush", "SessionNotFoundError"),
    "daily_logs": ("flush", "daily_logs"),
    "flush_conversation": ("flush", "flush_conversation"),
    "group_sessions": ("flush", "group_sessions"),
    "pin_dates": ("dates", "pin_dates"),
    "redact_text": ("redact", "redact_text"),
    "redact_texts": ("redact", "redact_texts"),
    "UpdateQueue": ("queue", "UpdateQueue"),
    "check_session_id": ("conversation", "check_session_id"),
    "clean_text": ("conversation", "clean_text"),
    "derive_session_id": ("conversation", "derive_session_id"),
    "parse_conversation": ("conversation", "parse_conversation"),
    "queue_status": ("queue", "queue_status"),
    "scan_sessions": ("flush", "scan_sessions"),
    "unpin_dates": ("dates", "unpin_dates"),
}
__all__ = [
    "NOTE_LABELS",
    "FlushReport",
    "QueueStats",
    "SessionInfo",
    "SessionNotFoundError",
    "daily_logs",
    "flush_conversation",
    "group_sessions",
    "pin_dates",
    "UpdateQueue",
    "check_session_id",
    "clean_text",
    "derive_session_id",
    "parse_conversation",
    "queue_status",
    "redact_text",
    "redact_texts",
    "scan_sessions",
    "unpin_dates",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
