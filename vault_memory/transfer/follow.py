"""Following coding agents' sessions while they are written (`vault import … --follow`): the
session files under a folder are looked at every few seconds (their size and modification
time: no file is read for that), and a session whose files changed and have then been quiet
for a moment is imported again, which adds only its new messages (its records are known by
their ids, agentlog.py). A session still being written is so imported in a few pieces, each
complete, none twice. The watcher can drive the same `SessionFollower.poll`.

`due` is pure: which sessions to import, given what was seen when.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import VaultError
from .agentlog import SessionFiles
from .agentsessions import AgentSessions, find_sessions
from .formats import ImportFormatError
from .importer import ImportReport, Recorder, import_sources

if TYPE_CHECKING:
    from ..files import Layout


class NothingToFollowError(VaultError):
    """A path given to follow holds no coding agent's sessions."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"{path} holds no Claude Code or Codex sessions to follow; give such a file or "
            "folder, and its format ('claude-code' or 'codex') if it is not recognised."
        )


QUIET_SECONDS = 2.0  # how long a session's files must stay unchanged before it is imported
State = tuple[int, int]  # (size, mtime_ns)


@dataclass
class Seen:
    """A file's state when last looked at, since when it has been so, and when imported."""

    state: State
    since: float
    imported: State | None = None


def due(
    sessions: Iterable[SessionFiles], seen: Mapping[Path, Seen], now: float, quiet: float
) -> list[SessionFiles]:
    """The sessions with a file changed since it was imported, all of whose files have been
    unchanged for `quiet` seconds. Pure."""
    chosen = []
    for session in sessions:
        files = [seen[f] for f in (session.main, *session.parts) if f in seen]
        changed = any(s.state != s.imported for s in files)
        if files and changed and all(now - s.since >= quiet for s in files):
            chosen.append(session)
    return chosen


@dataclass
class SessionFollower:
    """Imports the sessions of format `fmt` under `path` as they are written."""

    layout: Layout
    path: Path
    fmt: str
    record: Recorder | None = None
    quiet: float = QUIET_SECONDS
    clock: Callable[[], float] = time.monotonic
    seen: dict[Path, Seen] = field(default_factory=dict)

    def poll(self) -> ImportReport | None:
        """Look once; import what is due. The report, or None when nothing was."""
        try:
            sessions = find_sessions(self.path, self.fmt).sessions
        except ImportFormatError:
            return None  # no session yet
        now = self.clock()
        for file in {f for s in sessions for f in (s.main, *s.parts)}:
            try:
                info = file.stat()
            except OSError:
                continue
            state = (info.st_size, info.st_mtime_ns)
            known = self.seen.get(file)
            if known is None:
                self.seen[file] = Seen(state, now)
            elif known.state != state:
                known.state, known.since = state, now
        chosen = due(sessions, self.seen, now, self.quiet)
        if not chosen:
            return None
        found = AgentSessions(self.path, self.fmt, tuple(chosen))
        report = import_sources(
            self.layout, [(found, self.fmt)], str(self.path), False, None, self.record
        )
        for session in chosen:
            for file in (session.main, *session.parts):
                if file in self.seen:
                    self.seen[file].imported = self.seen[file].state
        return report
