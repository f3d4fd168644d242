"""What `capture` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .conversation import (
    NOTE_LABELS as NOTE_LABELS,
)
from .conversation import (
    check_session_id as check_session_id,
)
from .conversation import (
    clean_text as clean_text,
)
from .conversation import (
    derive_session_id as derive_session_id,
)
from .conversation import (
    parse_conversation as parse_conversation,
)
from .dates import pin_dates as pin_dates
from .dates import unpin_dates as unpin_dates
from .flush import (
    FlushReport as FlushReport,
)
from .flush import (
    SessionInfo as SessionInfo,
)
from .flush import (
    SessionNotFoundError as SessionNotFoundError,
)
from .flush import (
    daily_logs as daily_logs,
)
from .flush import (
    flush_conversation as flush_conversation,
)
from .flush import (
    group_sessions as group_sessions,
)
from .flush import (
    scan_sessions as scan_sessions,
)
from .queue import (
    QueueStats as QueueStats,
)
from .queue import (
    UpdateQueue as UpdateQueue,
)
from .queue import (
    queue_status as queue_status,
)
from .redact import redact_text as redact_text
from .redact import redact_texts as redact_texts
