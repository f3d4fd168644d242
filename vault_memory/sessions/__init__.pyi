"""What `sessions` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .graph import (
    DEFAULT_LIMIT as DEFAULT_LIMIT,
)
from .graph import (
    FlushedEntry as FlushedEntry,
)
from .graph import (
    Graph as Graph,
)
from .graph import (
    escape_label as escape_label,
)
from .graph import (
    notes_in as notes_in,
)
from .graph import (
    session_graph as session_graph,
)
from .graph import (
    vault_graph as vault_graph,
)
from .prune import (
    PruneReport as PruneReport,
)
from .prune import (
    parse_age as parse_age,
)
from .prune import (
    prune_if_due as prune_if_due,
)
from .prune import (
    prune_transcripts as prune_transcripts,
)
from .record import transcript_for_flush as transcript_for_flush
from .resume import (
    MESSAGE_OVERHEAD as MESSAGE_OVERHEAD,
)
from .resume import (
    MIN_BUDGET as MIN_BUDGET,
)
from .resume import (
    TRUNCATED as TRUNCATED,
)
from .resume import (
    Continuation as Continuation,
)
from .resume import (
    content_text as content_text,
)
from .resume import (
    continue_from as continue_from,
)
from .resume import (
    summary_header as summary_header,
)
from .resume import (
    summary_line as summary_line,
)
from .resume import (
    thread_path as thread_path,
)
from .transcript import (
    SESSIONS_DIR as SESSIONS_DIR,
)
from .transcript import (
    SUMMARY_HEADER as SUMMARY_HEADER,
)
from .transcript import (
    ToolCall as ToolCall,
)
from .transcript import (
    Transcript as Transcript,
)
from .transcript import (
    TranscriptNotFoundError as TranscriptNotFoundError,
)
from .transcript import (
    TranscriptReport as TranscriptReport,
)
from .transcript import (
    Turn as Turn,
)
from .transcript import (
    append_transcript as append_transcript,
)
from .transcript import (
    locate_transcript as locate_transcript,
)
from .transcript import (
    new_from as new_from,
)
from .transcript import (
    parse_transcript as parse_transcript,
)
from .transcript import (
    read_transcript as read_transcript,
)
from .transcript import (
    transcript_files as transcript_files,
)
from .transcript import (
    transcript_head as transcript_head,
)
from .transcript import (
    turns_from as turns_from,
)
