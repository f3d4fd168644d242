"""What `capture` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .conversation import (
    NOTE_LABELS as NOTE_LABELS,
    check_session_id as check_session_id,
    clean_text as clean_text,
    derive_session_id as derive_session_id,
    parse_conversation as parse_conversation,
)
from .dates import pin_dates as pin_dates, unpin_dates as unpin_dates
from .flush import (
    FlushReport as FlushReport,
    SessionInfo as SessionInfo,
    SessionNotFoundError as SessionNotFoundError,
    daily_logs as daily_logs,
    flush_conversation as flush_conversation,
    group_sessions as group_sessions,
    scan_sessions as scan_sessions,
)
from .queue import (
    QueueStats as QueueStats,
    UpdateQueue as UpdateQueue,
    queue_status as queue_status,
)
from .redact import (
    Span as Span,
    find_secrets as find_secrets,
    has_secret as has_secret,
    redact_text as redact_text,
    redact_texts as redact_texts,
)
from .trust import (
    MIN_OVERLAP as MIN_OVERLAP,
    Support as Support,
    strip_controls as strip_controls,
    support as support,
    unsafe_kind as unsafe_kind,
)
