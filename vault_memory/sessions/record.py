"""Recording a conversation: what `Vault.flush` and `Vault.record_transcript` call, the
transcript append with the parents chosen as `[sessions] threads` says, one transcript per
conversation (identity.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .identity import after_pruned, find_conversation, pruned_session
from .threads import parent_chooser
from .transcript import (
    MAX_TRANSCRIPT_BYTES,
    TranscriptReport,
    Turn,
    append_transcript,
    find_transcript,
    first_keys,
    transcript_folder,
    turns_from,
)

if TYPE_CHECKING:
    from ..files import Layout


def transcript_for_flush(
    layout: Layout,
    raw: Any,
    parsed: Sequence[Any] | None,
    session: str,
    when: dt.datetime | None = None,
    threads: str | None = None,
    force: bool = False,
    title: str | None = None,
    turns: Sequence[Turn] | None = None,
) -> TranscriptReport | None:
    """What `flush` calls: the conversation, redacted, appended to its transcript, threaded
    as `[sessions] threads` (or `threads`) says. None when transcripts are off (unless
    `force`). `title`: a new transcript's (an imported conversation's own). `turns`: the
    conversation as `turns_from` read it, when the caller has it.

    One transcript per conversation: a session with no transcript yet whose conversation
    another session's transcript keeps (`identity.find_conversation`) is appended there; the
    messages of a pruned transcript of it are not written again (`identity.after_pruned`).
    The report's `notes` say so."""
    settings = layout.config.sessions
    if not settings.transcripts and not force:
        return None
    mode = threads or settings.threads
    chooser = None
    if mode != "off":
        chooser = parent_chooser(layout.config, mode)
    turns = list(turns) if turns is not None else turns_from(raw, parsed)
    folder = transcript_folder(layout)
    notes: list[str] = []
    target = session
    if find_transcript(layout.root, folder, session) is None:
        max_bytes = max(layout.config.index.max_file_bytes, MAX_TRANSCRIPT_BYTES)
        kept = find_conversation(layout.root, folder, turns, max_bytes, save=True)
        if kept is not None:
            target = kept[1]
            notes.append(
                f"this conversation's transcript is {kept[0]} (session {target}); "
                "its new messages, if any, went there"
            )
    left = after_pruned(layout.root, folder, target, turns)
    notes += left.notes
    if not left.turns and left.path is not None:
        return TranscriptReport(left.path, target, 0, 0, notes=notes)
    report = append_transcript(layout, left.turns, target, when, chooser, title)
    report.notes = notes + report.notes
    if report.appended and not report.held:  # a new transcript: known by its opening now
        first_keys(layout.root, folder, save=True)
    return report


def conversation_session(layout: Layout, turns: Sequence[Turn]) -> str | None:
    """The session whose transcript keeps the conversation `turns` (or kept it, pruned since):
    a flush without `--session` uses it, so that the conversation keeps one session and one
    transcript however often it is flushed."""
    folder = transcript_folder(layout)
    max_bytes = max(layout.config.index.max_file_bytes, MAX_TRANSCRIPT_BYTES)
    kept = find_conversation(layout.root, folder, turns, max_bytes)
    if kept is not None:
        return kept[1]
    return pruned_session(layout.root, folder, turns)
