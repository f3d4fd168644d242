"""Recording a conversation: what `Vault.flush` and `Vault.record_transcript` call, the
transcript append with the parents chosen as `[sessions] threads` says."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .threads import parent_chooser
from .transcript import TranscriptReport, append_transcript, turns_from

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
) -> TranscriptReport | None:
    """What `flush` calls: the conversation, redacted, appended to the session's transcript,
    threaded as `[sessions] threads` (or `threads`) says. None when transcripts are off
    (unless `force`). `title`: a new transcript's (an imported conversation's own)."""
    settings = layout.config.sessions
    if not settings.transcripts and not force:
        return None
    mode = threads or settings.threads
    chooser = None
    if mode != "off":
        chooser = parent_chooser(layout.config, mode)
    return append_transcript(layout, turns_from(raw, parsed), session, when, chooser, title)
