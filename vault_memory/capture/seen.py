"""What the daily logs already hold, remembered across the flushes of one import.

A flush leaves out the entries its session flushed before, and those any session flushed in the
logs around its day (capture/flush.py). Read and parsed again for each conversation, that is
quadratic when an import brings thousands of conversations to one day: each flush parses a log
that grows with every flush before it (500 conversations on one day took 15-20 s, 2,000 took
231 s). `SeenEntries` reads each log once, keeps the entry keys of each of its sessions, and
adds what each flush appends (parsed from the block itself), so that a flush costs what its
own entries cost. A log whose size or mtime is not what the memo recorded after its own last
append (an editor saved it, another process wrote to it) is read again: the memo answers what
reading the files would.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import VaultError
from ..files import date_from_name, fsutil, parse_note
from .extract import entry_key

if TYPE_CHECKING:
    from ..files import Note

log = logging.getLogger("vault_memory")

Stamp = tuple[int, int]  # (size, mtime_ns)


class Block(Protocol):
    """A flush block of a daily log, as capture/flush.py reads it."""

    @property
    def session(self) -> str: ...

    @property
    def entries(self) -> tuple[tuple[int, str], ...]: ...


#: (vault-relative path, text, its parsed note or None) -> the flush blocks of every session
BlockReader = Callable[[str, str, "Note | None"], Iterable[Block]]


@dataclass
class _Log:
    """The flushed entries of one daily log, as keys: by session, and the sessions of a key."""

    stamp: Stamp
    open_fence: bool = False  # the log ends inside a code block: what follows is code
    keys: dict[str, set[str]] = field(default_factory=dict)
    sessions: dict[str, set[str]] = field(default_factory=dict)

    def add(self, session: str, texts: Iterable[str]) -> None:
        for text in texts:
            key = entry_key(text)
            self.keys.setdefault(session, set()).add(key)
            self.sessions.setdefault(key, set()).add(session)


def _stamp(path: Path) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class SeenEntries:
    """The memo (see the module docstring). One per import; not shared between threads."""

    def __init__(
        self, max_bytes: int, read_blocks: BlockReader, allow_hardlinks: bool = False
    ) -> None:
        self.max_bytes = max_bytes
        self.allow_hardlinks = allow_hardlinks  # as `[security] allow_hardlinks` says
        self.read_blocks = read_blocks  # the flush's own reading of a log (capture/flush.py)
        self._logs: dict[str, _Log] = {}

    def _log(self, path: Path, relpath: str) -> _Log:
        """The log's entries, read again when it changed since; `VaultError` when it cannot
        be read (binary, too large, gone)."""
        held = self._logs.get(relpath)
        if held is not None and held.stamp == _stamp(path):
            return held
        self._logs.pop(relpath, None)
        file = fsutil.read_text(path, relpath, self.max_bytes, self.allow_hardlinks)
        note = parse_note(relpath, file.text)
        held = _Log((file.size, file.mtime_ns), len(note.lines) in note.code_lines)
        for block in self.read_blocks(relpath, file.text, note):
            held.add(block.session, (text for _, text in block.entries))
        self._logs[relpath] = held
        return held

    def check(self, path: Path, relpath: str) -> None:
        """Refuse a log that cannot be appended to (as `fsutil.read_text` would), reading it
        only when the memo does not know it as it is."""
        self._log(path, relpath)

    def flushed(
        self,
        logs: Iterable[tuple[Path, str]],
        session: str,
        candidates: Collection[str],
        every_session_within: tuple[dt.date, dt.date] | None,
    ) -> tuple[set[str], dict[str, set[str]]]:
        """(the keys `session` flushed in `logs`, the other sessions that flushed each of
        `candidates` in the logs dated within `every_session_within`)."""
        own: set[str] = set()
        elsewhere: dict[str, set[str]] = {}
        for path, relpath in logs:
            try:
                held = self._log(path, relpath)
            except VaultError as exc:
                log.warning("%s; its flushed entries are not seen", exc)
                continue
            own |= held.keys.get(session, set())
            day = date_from_name(relpath)
            if every_session_within is None or day is None:
                continue
            first, last = every_session_within
            if not first <= day <= last:
                continue
            for key in candidates:
                others = held.sessions.get(key, set()) - {session}
                if others:
                    elsewhere.setdefault(key, set()).update(others)
        return own, elsewhere

    def appended(self, path: Path, relpath: str, block: str) -> None:
        """Note the block a flush appended to the log (its entries, under their session)."""
        held = self._logs.get(relpath)
        stamp = _stamp(path)
        if held is None or held.open_fence or stamp is None:
            self._logs.pop(relpath, None)  # read again when next needed
            return
        for found in self.read_blocks(relpath, block, None):
            held.add(found.session, (text for _, text in found.entries))
        held.stamp = stamp
