"""What `sessions` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .edit import drop_last_message as drop_last_message, forget_transcript as forget_transcript
from .graph import (
    DEFAULT_LIMIT as DEFAULT_LIMIT,
    FlushedEntry as FlushedEntry,
    Graph as Graph,
    escape_label as escape_label,
    notes_in as notes_in,
    session_graph as session_graph,
    vault_graph as vault_graph,
)
from .lineage import PREVIOUS as PREVIOUS, Origin as Origin, local_time as local_time
from .prune import (
    PruneReport as PruneReport,
    parse_age as parse_age,
    prune_if_due as prune_if_due,
    prune_transcripts as prune_transcripts,
)
from .record import (
    conversation_session as conversation_session,
    transcript_for_flush as transcript_for_flush,
)
from .resume import (
    MESSAGE_OVERHEAD as MESSAGE_OVERHEAD,
    MIN_BUDGET as MIN_BUDGET,
    TRUNCATED as TRUNCATED,
    Continuation as Continuation,
    content_text as content_text,
    continue_from as continue_from,
    summary_header as summary_header,
    summary_line as summary_line,
    thread_path as thread_path,
)
from .transcript import (
    SESSIONS_DIR as SESSIONS_DIR,
    SUMMARY_HEADER as SUMMARY_HEADER,
    ToolCall as ToolCall,
    Transcript as Transcript,
    TranscriptNotFoundError as TranscriptNotFoundError,
    TranscriptReport as TranscriptReport,
    Turn as Turn,
    append_transcript as append_transcript,
    find_transcript as find_transcript,
    locate_transcript as locate_transcript,
    new_from as new_from,
    parse_transcript as parse_transcript,
    read_transcript as read_transcript,
    transcript_files as transcript_files,
    transcript_folder as transcript_folder,
    transcript_head as transcript_head,
    turns_from as turns_from,
)
