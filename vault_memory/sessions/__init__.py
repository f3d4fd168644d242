"""Sessions you can pick up again: the conversation itself as a redacted Markdown transcript
(`sessions/DATE-ID.md`, appended by every flush), continued within a token budget, its messages
threaded into a tree, pruned when old, and the graph of what sessions left behind.

    transcript   the file format, read back, and the locked idempotent append
    resume       the newest messages that fit a budget, the older ones as a running summary
    threads      which earlier message a new one continues (embeddings, a model, or the last)
    prune        old transcripts deleted (a git commit makes it undoable)
    graph        a session's thread tree; sessions -> entries -> MEMORY.md; as Mermaid or JSON

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .graph import (
        DEFAULT_LIMIT,
        FlushedEntry,
        Graph,
        escape_label,
        notes_in,
        session_graph,
        vault_graph,
    )
    from .prune import PruneReport, parse_age, prune_if_due, prune_transcripts
    from .record import transcript_for_flush
    from .resume import (
        MESSAGE_OVERHEAD,
        MIN_BUDGET,
        TRUNCATED,
        Continuation,
        content_text,
        continue_from,
        summary_header,
        summary_line,
        thread_path,
    )
    from .transcript import (
        SESSIONS_DIR,
        SUMMARY_HEADER,
        ToolCall,
        Transcript,
        TranscriptNotFoundError,
        TranscriptReport,
        Turn,
        append_transcript,
        locate_transcript,
        new_from,
        parse_transcript,
        read_transcript,
        turns_from,
    )

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "DEFAULT_LIMIT": ("graph", "DEFAULT_LIMIT"),
    "FlushedEntry": ("graph", "FlushedEntry"),
    "Graph": ("graph", "Graph"),
    "escape_label": ("graph", "escape_label"),
    "notes_in": ("graph", "notes_in"),
    "session_graph": ("graph", "session_graph"),
    "vault_graph": ("graph", "vault_graph"),
    "transcript_files": ("transcript", "transcript_files"),
    "transcript_head": ("transcript", "transcript_head"),
    "PruneReport": ("prune", "PruneReport"),
    "parse_age": ("prune", "parse_age"),
    "prune_if_due": ("prune", "prune_if_due"),
    "prune_transcripts": ("prune", "prune_transcripts"),
    "MESSAGE_OVERHEAD": ("resume", "MESSAGE_OVERHEAD"),
    "MIN_BUDGET": ("resume", "MIN_BUDGET"),
    "TRUNCATED": ("resume", "TRUNCATED"),
    "Continuation": ("resume", "Continuation"),
    "content_text": ("resume", "content_text"),
    "continue_from": ("resume", "continue_from"),
    "summary_header": ("resume", "summary_header"),
    "summary_line": ("resume", "summary_line"),
    "thread_path": ("resume", "thread_path"),
    "locate_transcript": ("transcript", "locate_transcript"),
    "read_transcript": ("transcript", "read_transcript"),
    "SESSIONS_DIR": ("transcript", "SESSIONS_DIR"),
    "SUMMARY_HEADER": ("transcript", "SUMMARY_HEADER"),
    "ToolCall": ("transcript", "ToolCall"),
    "Transcript": ("transcript", "Transcript"),
    "TranscriptNotFoundError": ("transcript", "TranscriptNotFoundError"),
    "TranscriptReport": ("transcript", "TranscriptReport"),
    "Turn": ("transcript", "Turn"),
    "append_transcript": ("transcript", "append_transcript"),
    "transcript_for_flush": ("record", "transcript_for_flush"),
    "new_from": ("transcript", "new_from"),
    "parse_transcript": ("transcript", "parse_transcript"),
    "turns_from": ("transcript", "turns_from"),
}
__all__ = [
    "DEFAULT_LIMIT",
    "FlushedEntry",
    "Graph",
    "escape_label",
    "notes_in",
    "session_graph",
    "vault_graph",
    "transcript_files",
    "transcript_head",
    "PruneReport",
    "parse_age",
    "prune_if_due",
    "prune_transcripts",
    "MESSAGE_OVERHEAD",
    "MIN_BUDGET",
    "TRUNCATED",
    "Continuation",
    "content_text",
    "continue_from",
    "summary_header",
    "summary_line",
    "thread_path",
    "locate_transcript",
    "read_transcript",
    "SESSIONS_DIR",
    "SUMMARY_HEADER",
    "ToolCall",
    "Transcript",
    "TranscriptNotFoundError",
    "TranscriptReport",
    "Turn",
    "append_transcript",
    "transcript_for_flush",
    "new_from",
    "parse_transcript",
    "turns_from",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
