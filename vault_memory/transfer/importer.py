"""`vault import`: conversations from elsewhere into the daily logs, and `vault export` files
back into a vault.

Each conversation goes through the normal flush (capture/flush.py): secrets redacted, what is
worth keeping extracted, entries already in the logs left out. Its messages are flushed day by
day, each day's into the log of that day (local time), under
`## HH:MM · flush · session chatgpt-<id> · <its title>`, the time of its first message that
day. The session id comes from the conversation's own id, so importing the same export again
adds nothing, and a newer export adds only new conversations and new messages (the entries
their days do not hold yet). An import stopped midway (Ctrl-C, kill -9) is completed by
running it again: every flush is one locked append, and what went in before is found again.

Before anything is written, each file is read once through (streamed) to count its
conversations and to refuse a file that breaks off; the count drives the progress bar. A
conversation that cannot be read is skipped and reported with its position; what messages
hold besides text is left out and counted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from ..capture import (
    daily_logs,
    derive_session_id,
    flush_conversation,
    parse_conversation,
    scan_sessions,
)
from ..errors import VaultError
from ..files import date_from_name
from .agentlog import AgentChat
from .agentsessions import AGENT_FORMATS, AgentSessions, agent_format, find_sessions, read_sessions
from .formats import (
    FORMATS,
    Chat,
    ChatMessage,
    ChatProblem,
    ImportFormatError,
    Source,
    detect,
    find_sources,
    iter_chats,
    iter_items,
)
from .restore import RestoreReport, check_export, restore

if TYPE_CHECKING:
    from ..files import Layout

log = logging.getLogger("vault_memory")

Progress = Callable[[str, int, int], None]  # (phase, done, total)
#: (messages, parsed, session, when, title) -> the transcript's report: keeps a conversation
Recorder = Callable[[Any, "list[Any] | None", str, dt.datetime, "str | None"], Any]
PHASE = "import"
READING = "reading (MB)"  # the first pass over a data export
MB = 1_000_000
TITLE_CHARS = 80
EXAMPLES = 20  # positions of what was left out, kept for the report


@dataclass
class ImportReport:
    source: str
    dry_run: bool
    formats: list[str] = field(default_factory=list)
    conversations: int = 0  # read
    imported: int = 0  # that added entries (or would, on a dry run)
    unchanged: int = 0  # nothing new in them
    skipped: list[str] = field(default_factory=list)  # not imported: where and why
    messages: int = 0
    entries: int = 0  # new entries written (or that would be)
    already_flushed: int = 0
    redactions: int = 0
    logs: set[str] = field(default_factory=set)  # daily logs written (or that would be)
    left_out: Counter[str] = field(default_factory=Counter)  # non-text content, by what
    left_out_at: list[str] = field(default_factory=list)  # its first positions
    warnings: list[str] = field(default_factory=list)
    files: RestoreReport | None = None  # when the input was a `vault export`
    bad_lines: list[str] = field(default_factory=list)  # of session files: skipped, and why

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "formats": self.formats,
            "dry_run": self.dry_run,
            "conversations": self.conversations,
            "imported": self.imported,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "messages": self.messages,
            "new_entries": self.entries,
            "already_flushed": self.already_flushed,
            "redactions": self.redactions,
            "logs": sorted(self.logs),
            "left_out": dict(self.left_out),
            "left_out_at": self.left_out_at,
            "warnings": self.warnings,
            "files": self.files.to_dict() if self.files else None,
            "bad_lines": self.bad_lines,
        }


class LogTracker:
    """Which daily logs hold which sessions' entries, read once at the start of an import and
    kept up to date as it writes, so each flush reads only the logs that matter (the session's
    own and those within `[flush] dedupe_days` of the day) instead of every log: an import of
    N conversations into a vault of M logs reads about N * (2 * dedupe_days + 2) logs, not
    N * M. What it hands the flush is exactly what the flush would have found by reading all."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.days: dict[str, dt.date] = {}
        for _, relpath in daily_logs(layout.root, layout.daily_dir):
            day = date_from_name(relpath)
            if day is not None:
                self.days[relpath] = day
        self.sessions: dict[str, set[str]] = {}
        max_bytes = layout.config.index.max_file_bytes
        for block in scan_sessions(
            layout.root, max_bytes, folder=layout.daily_dir, allow_hardlinks=layout.allow_hardlinks
        ):
            self.sessions.setdefault(block.session, set()).add(block.path)

    def logs_for(self, session: str, day: dt.date) -> set[str]:
        span = dt.timedelta(days=max(self.layout.config.flush.dedupe_days, 0))
        near = {relpath for relpath, d in self.days.items() if abs(d - day) <= span}
        return near | self.sessions.get(session, set()) | {self.layout.daily_relpath(day)}

    def wrote(self, session: str, relpath: str, day: dt.date) -> None:
        self.days[relpath] = day
        self.sessions.setdefault(session, set()).add(relpath)


def _format_of(source: Source, given: str) -> str:
    if given not in FORMATS:
        raise VaultError(f"unknown import format {given!r}; use one of: {', '.join(FORMATS)}.")
    return detect(source) if given == "auto" else given


def _count(
    layout: Layout, source: Source | AgentSessions, fmt: str, progress: Progress | None
) -> int:
    """The first pass over a file: its conversations (or files) counted, and the file
    refused before anything is written when it breaks off or is not what it should be. A
    data export shows how far it has read (in MB) meanwhile. Coding agents' sessions are
    counted by their files (each is read when its turn comes, a bad line skipped alone)."""
    if isinstance(source, AgentSessions):
        return len(source.sessions)
    if fmt == "jsonl":
        return check_export(layout, source)
    if fmt == "openai":
        return sum(1 for _ in iter_chats(source, fmt, layout.config.flush.max_input_bytes))
    if progress is None:
        return sum(1 for _ in iter_items(source))
    total = max(source.size() // MB, 1)
    shown = -1

    def at(position: int) -> None:
        nonlocal shown
        if position // MB != shown:
            shown = position // MB
            progress(READING, min(shown, total), total)

    return sum(1 for _ in iter_items(source, at))


def _sources(path: Path, given: str) -> Iterator[tuple[Source | AgentSessions, str]]:
    """What to read of a path, with its format: a coding agent's session files, or the
    files of a data export or message file."""
    if given not in FORMATS:
        raise VaultError(f"unknown import format {given!r}; use one of: {', '.join(FORMATS)}.")
    agent = given if given in AGENT_FORMATS else None
    if given == "auto":
        agent = agent_format(path)
    if agent is not None:
        yield find_sessions(path, agent), agent
        return
    for source in find_sources(path):
        yield source, _format_of(source, given)


def import_history(
    layout: Layout,
    path: str | Path | Sequence[str | Path],
    format: str = "auto",
    dry_run: bool = False,
    progress: Progress | None = None,
    record: Recorder | None = None,
) -> ImportReport:
    """See `Vault.import_history`. `record(messages, parsed, session, when, title)`, when given,
    keeps each conversation itself (the facade hands in the transcript writer, sessions/)."""
    paths = [Path(p).expanduser() for p in ([path] if isinstance(path, str | Path) else path)]
    sources = [found for given in paths for found in _sources(given, format)]
    label = ", ".join(str(p) for p in paths)
    return import_sources(layout, sources, label, dry_run, progress, record)


def import_sources(
    layout: Layout,
    sources: Sequence[tuple[Source | AgentSessions, str]],
    label: str,
    dry_run: bool = False,
    progress: Progress | None = None,
    record: Recorder | None = None,
) -> ImportReport:
    """Import what `import_history` found (a follower hands in the sessions that changed)."""
    report = ImportReport(label, dry_run)
    plan: list[tuple[Source | AgentSessions, str, int]] = []
    for source, fmt in sources:
        plan.append((source, fmt, _count(layout, source, fmt, progress)))
        report.formats.append(fmt)
    total = sum(count for _, _, count in plan)
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(PHASE, done, total)

    if progress is not None:
        progress(PHASE, 0, total)
    max_bytes = layout.config.flush.max_input_bytes
    tracker: LogTracker | None = None
    for source, fmt, _ in plan:
        if isinstance(source, AgentSessions):
            chats: Iterable[Chat | ChatProblem] = read_sessions(source)
        elif fmt == "jsonl":
            report.files = restore(layout, source, dry_run, report.files, step)
            continue
        else:
            chats = iter_chats(source, fmt, max_bytes)
        tracker = tracker or LogTracker(layout)
        for chat in chats:
            report.conversations += 1
            if isinstance(chat, ChatProblem):
                _skip(report, f"{source.name}: {chat}")
            else:
                _import_chat(layout, chat, dry_run, report, source.name, tracker, record)
            step()
    return report


def _skip(report: ImportReport, what: str) -> None:
    log.warning("skipped %s", what)
    report.skipped.append(what)


def session_of(chat: Chat) -> str:
    """`chatgpt-6761a3f2b0c4`: the conversation's own id, shortened (12 hex digits keep ids
    apart across hundreds of thousands of conversations), or a hash of how it opens. A coding
    agent's session keeps its whole id (agentlog.py)."""
    if isinstance(chat, AgentChat):
        return chat.session
    compact = re.sub(r"[^A-Za-z0-9]", "", chat.id or "").lower()[:12]
    if not compact:
        opening = "\x1f".join(f"{m.role}:{m.text}" for m in chat.messages[:2])
        compact = hashlib.sha256(opening.encode("utf-8")).hexdigest()[:12]
    return f"{chat.source}-{compact}"


def heading_title(title: str | None) -> str | None:
    """A title fit for a heading: one line, no `#` (no tags, no heading marks), not too long."""
    if not title:
        return None
    text = " ".join(re.sub(r"[#\[\]]", " ", title).split())
    if len(text) > TITLE_CHARS:
        text = text[: TITLE_CHARS - 1].rstrip() + "…"
    return text or None


#: A message this soon after the one before it continues the same sitting...
SITTING_GAP = dt.timedelta(hours=2)
#: ...across midnight too, until this hour of the next morning.
SITTING_ENDS = dt.time(6)


def by_day(chat: Chat) -> list[list[ChatMessage]]:
    """The messages grouped by the (local) day they were sent, in order; a message without a
    time takes the one before it (the conversation's own at the start, else now). A sitting
    that runs past midnight stays with the day it began (messages at most `SITTING_GAP`
    apart, until `SITTING_ENDS` of the next morning): its second half keeps its neighbours
    and its section, and "yesterday" said at 00:30 is read from the evening it continues, as
    the people in it meant it (they have not slept yet)."""
    days: dict[dt.date, list[ChatMessage]] = {}
    last = chat.created or next((m.at for m in chat.messages if m.at), None) or clock.now()
    previous: dt.datetime | None = None
    sitting: dt.date | None = None
    for message in chat.messages:
        at = message.at or last
        last = at
        if not (
            sitting is not None
            and previous is not None
            and at.date() == sitting + dt.timedelta(days=1)
            and at.time() < SITTING_ENDS
            and dt.timedelta(0) <= at - previous <= SITTING_GAP
        ):
            sitting = at.date()
        previous = at
        days.setdefault(sitting, []).append(replace(message, at=at))
    return [days[day] for day in sorted(days)]


def _import_chat(
    layout: Layout,
    chat: Chat,
    dry_run: bool,
    report: ImportReport,
    name: str,
    tracker: LogTracker,
    record: Recorder | None = None,
) -> None:
    for what in chat.left_out:
        report.left_out[what.split(": ", 1)[-1]] += 1
        if len(report.left_out_at) < EXAMPLES:
            report.left_out_at.append(f"{name}: {chat.position}, {what}")
    added = recorded = 0
    problems = []
    whole = isinstance(chat, AgentChat)  # a coding agent's session: recorded once, threaded

    def flush(messages: Any, session: str, at: dt.datetime | None, title: str | None) -> None:
        nonlocal added
        day = at.date() if at else clock.today()
        keep = None
        if record is not None and not whole:
            hook = record

            def keep(parsed: list[Any], session_id: str, when: dt.datetime) -> Any:
                return hook(messages, parsed, session_id, when, title)

        try:
            flushed = flush_conversation(
                layout,
                messages,
                session=session,
                dry_run=dry_run,
                now=at,
                title=title,
                logs=tracker.logs_for(session, day),
                record=keep,
            )
        except VaultError as exc:
            problems.append(f"{day.isoformat()}: {exc}" if at else str(exc))
            return
        report.messages += flushed.messages
        report.entries += len(flushed.entries)
        report.already_flushed += flushed.already_flushed
        report.redactions += sum(flushed.redactions.values())
        report.warnings.extend(flushed.warnings)
        if flushed.entries:
            added += len(flushed.entries)
            report.logs.add(flushed.path)
            if not dry_run:
                tracker.wrote(session, flushed.path, dt.date.fromisoformat(flushed.date))

    if chat.raw is not None:  # OpenAI-style messages: flushed as `vault flush` would
        try:
            session = derive_session_id(parse_conversation(chat.raw))
        except VaultError as exc:
            _skip(report, f"{name}: {chat.position}: {exc}")
            return
        flush(chat.raw, session, None, None)
    else:
        session, title = session_of(chat), heading_title(chat.title)
        for messages in by_day(chat):  # each day of it on its own: one bad day skips only itself
            said = [m for m in messages if m.flushed]
            if any(m.role in ("user", "assistant") for m in said):
                dicts = [m.as_message() for m in said]
                flush(dicts, session, said[0].at or clock.now(), title)
        # Each day's messages also go to the one transcript of the conversation
        # (sessions/DATE-ID.md, dated by its first day, titled by its own title); a coding
        # agent's session goes there whole, each message threaded and dated as it was.
        if whole and record is not None and not dry_run:
            recorded = _record_whole(chat, session, report, record)
    for problem in problems:
        _skip(report, f"{name}: {chat.position}: {problem}")
    for line in getattr(chat, "bad_lines", ()):
        log.warning("skipped %s", line)
        report.bad_lines.append(line)
    if added or recorded:
        report.imported += 1
    elif not problems:
        report.unchanged += 1


def _record_whole(chat: Chat, session: str, report: ImportReport, record: Recorder) -> int:
    """A coding agent's session into its transcript, whole: the messages it does not hold
    yet, by their ids. How many were appended (a failure is a warning, as in a flush)."""
    messages = [m.as_message() for m in chat.messages]
    first = chat.messages[0].at or clock.now()
    try:
        kept = record(messages, None, session, first, heading_title(chat.title))
    except VaultError as exc:
        report.warnings.append(f"{session}: the transcript was not written: {exc}")
        return 0
    return int(getattr(kept, "appended", 0) or 0)


__all__ = ["ImportFormatError", "ImportReport", "import_history"]
