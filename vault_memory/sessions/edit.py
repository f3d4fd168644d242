"""Taking back what a program wrote to a transcript: its newest message (an agent framework's
`pop_item`, an undo), or the whole transcript (its `clear_session`). Transcripts are otherwise
only appended to; these two are asked for by name, under the transcripts' lock, and the file
is rewritten atomically from the version read (a concurrent change makes it fail, never lose).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..files import fsutil
from .transcript import (
    LOCK_TIMEOUT,
    MAX_TRANSCRIPT_BYTES,
    StoredTurn,
    find_transcript,
    parse_transcript,
    transcript_folder,
)

if TYPE_CHECKING:
    from ..files import Layout


def drop_last_message(layout: Layout, session: str) -> StoredTurn | None:
    """Remove the newest message of `session`'s transcript and return it (None when there
    is no transcript or it holds no message). The rest of the file stays byte for byte."""
    found = find_transcript(layout.root, transcript_folder(layout), session)
    if found is None:
        return None
    path, relpath = layout.resolve_own(found[1])
    max_bytes = max(layout.config.index.max_file_bytes, MAX_TRANSCRIPT_BYTES)
    with fsutil.lock_file(layout.cache_dir / "transcripts.lock", "transcript", LOCK_TIMEOUT):
        read = fsutil.read_text(path, relpath, max_bytes)
        messages = parse_transcript(relpath, read.text).messages
        if not messages:
            return None
        last = messages[-1]
        lines = read.text.split("\n")  # as the markers were numbered (fsutil.split_lines)
        lines = [line + "\n" for line in lines[:-1]] + lines[-1:]
        cut = last.line - 1  # the line of its `### role · HH:MM` heading, 0-based
        if cut > 0 and not lines[cut - 1].strip():
            cut -= 1  # and the blank line that opens its block
        fsutil.write_atomic(path, "".join(lines[:cut]), read.sha256, relpath)
    return last


def forget_transcript(layout: Layout, session: str) -> bool:
    """Delete `session`'s transcript (whether there was one)."""
    found = find_transcript(layout.root, transcript_folder(layout), session)
    if found is None:
        return False
    path, _ = layout.resolve_own(found[1])
    with fsutil.lock_file(layout.cache_dir / "transcripts.lock", "transcript", LOCK_TIMEOUT):
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
    return True
