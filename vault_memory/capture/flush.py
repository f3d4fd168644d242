"""Flush: a conversation becomes entries in a daily log, idempotently and with secrets redacted.

    conversation (conversation.py) -> messages -> redacted (redact.py) -> entries (extract.py;
    dialogue.py between people; relative dates pinned to the day, dates.py)
    -> minus the entries already flushed -> one appended block

Idempotence lives in the files, not in the cache: the entries already flushed are read back
from the `## HH:MM · flush · session ID` blocks of the daily logs and compared by a normalised
content hash: those of this session in every log, and those of every session in the logs
within `[flush] dedupe_days` of the target day (the same conversation flushed under two ids,
say once with `--session` and once without, is written once). Flushing the same conversation
twice appends nothing; a longer version of it (what an agent flushes before each compaction)
appends only what is new, even when the earlier part went into yesterday's log. `.vault/` may
be deleted at any time. A flush bound to a scope writes to, and compares with, that scope's
own daily logs only.

Writes are serialised by `.vault/flush.lock` (so two flushes of one session cannot both decide
that an entry is new) and appended with `fsutil.append_entry` (whose lock keeps `vault add` and
every other appender from interleaving lines). One heading per session per minute: when the
log ends with this session's block of the same `HH:MM`, the new entries are appended under it
(a window flushing many times a minute leaves one block, not one heading per bullet); that
choice is made under the append's lock, from the file as it is then.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from ..errors import ConfigError, InputTooLargeError, VaultError
from ..files import (
    DAILY_DIR,
    LIST_ITEM,
    date_from_name,
    format_entry,
    fsutil,
    parse_note,
    scope_of,
    scope_text,
)
from .conversation import (
    MalformedConversationError,
    Message,
    check_session_id,
    derive_session_id,
    parse_conversation,
)
from .dialogue import between_people, extract_dialogue
from .extract import FlushEntry, Refusal, entry_key, extract_llm, extract_offline
from .redact import redact

if TYPE_CHECKING:
    from ..config import FlushSettings
    from ..files import Layout, Note
    from .seen import SeenEntries

log = logging.getLogger("vault_memory")

SOURCE = "flush"
LOCK_TIMEOUT = 30.0


class SessionNotFoundError(VaultError):
    def __init__(self, session: str) -> None:
        self.session = session
        super().__init__(
            f"no flushed session {session!r} in the daily logs. Run `vault sessions` to list "
            "the sessions that were flushed."
        )


# -- what the vault already holds -------------------------------------------------------------


@dataclass(frozen=True)
class SessionBlock:
    """One `## HH:MM · flush · session ID` block of a daily log."""

    session: str
    path: str  # vault-relative
    date: str
    time: str
    heading_line: int
    end_line: int  # the block's last non-blank line
    entries: tuple[tuple[int, str], ...]  # (line, entry text as in the file)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.heading_line}-{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "date": self.date,
            "time": self.time,
            "start_line": self.heading_line,
            "end_line": self.end_line,
            "entries": [{"line": line, "text": text} for line, text in self.entries],
        }


@dataclass
class SessionInfo:
    id: str
    blocks: list[SessionBlock]
    scope: str = ""  # the scope whose daily logs hold it ("org/acme"; "" for the root)

    @property
    def dates(self) -> list[str]:
        return sorted({b.date for b in self.blocks})

    @property
    def entries(self) -> int:
        return sum(len(b.entries) for b in self.blocks)

    @property
    def locations(self) -> list[str]:
        return [b.location for b in self.blocks]

    def to_dict(self, with_entries: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "scope": self.scope,
            "dates": self.dates,
            "first_date": self.dates[0],
            "last_date": self.dates[-1],
            "entries": self.entries,
            "locations": self.locations,
        }
        if with_entries:
            data["blocks"] = [b.to_dict() for b in self.blocks]
        return data


def daily_logs(
    root: Path, folder: str = DAILY_DIR, only: Collection[str] | None = None
) -> list[tuple[Path, str]]:
    """The daily logs (`folder`/YYYY-MM-DD.md: memory/ of the root, or of a scope) as (real
    path, vault-relative path), by date; of the vault-relative paths `only`, when given."""
    if not (root / folder).is_dir():
        return []
    found = []
    listed = (
        (root / folder).iterdir()
        if only is None
        else (root / relpath for relpath in only if relpath.rpartition("/")[0] == folder)
    )
    for path in listed:
        relpath = f"{folder}/{path.name}"
        if not date_from_name(relpath):
            continue
        try:
            real, real_relpath = fsutil.resolve_in_vault(root, relpath)
        except VaultError:  # a symlink leading outside the vault is never read
            continue
        if scope_of(real_relpath) != scope_of(relpath):
            continue  # nor one leading into another scope's files
        if real.is_file():
            found.append((real, relpath))
    return sorted(found, key=lambda item: item[1])


def scan_sessions(
    root: Path,
    max_bytes: int,
    session: str | None = None,
    every_session_within: tuple[dt.date, dt.date] | None = None,
    folder: str = DAILY_DIR,
    only: Collection[str] | None = None,
    allow_hardlinks: bool = False,
) -> list[SessionBlock]:
    """The flush blocks of every daily log in `folder` (of one session, when given), oldest
    first. The logs dated within `every_session_within` (first, last day) give the blocks of
    every session. `only`: read only these logs (a caller that knows which hold anything). A
    log with several hard links is not read unless `allow_hardlinks` (said on stderr)."""
    blocks: list[SessionBlock] = []
    for path, relpath in daily_logs(root, folder, only):
        wanted = session
        if every_session_within is not None:
            day = date_from_name(relpath)
            if day is not None and every_session_within[0] <= day <= every_session_within[1]:
                wanted = None
        needle = f"session {wanted}" if wanted else "flush"
        try:
            text = fsutil.read_text(path, relpath, max_bytes, allow_hardlinks).text
        except VaultError as exc:
            log.warning("%s; its flushed entries are not seen", exc)
            continue
        if needle not in text:
            continue
        blocks.extend(_session_blocks(relpath, text, wanted))
    return blocks


def _session_blocks(
    relpath: str, text: str, session: str | None, note: Note | None = None
) -> Iterator[SessionBlock]:
    note = note or parse_note(relpath, text)
    day = note.date.isoformat() if note.date else ""
    for entry in note.entries():
        if entry.source.lower() != SOURCE or not entry.session:
            continue
        if session is not None and entry.session != session:
            continue
        items: list[tuple[int, str]] = []
        last = entry.heading_line
        for number in range(entry.start_line, entry.end_line + 1):
            line = note.lines[number - 1]
            if not line.strip() or number in note.code_lines:
                continue
            last = number
            continuation = line.startswith(("  ", "\t")) and not LIST_ITEM.match(line)
            if continuation and items:
                items[-1] = (items[-1][0], f"{items[-1][1]} {line.strip()}")
            else:
                items.append((number, LIST_ITEM.sub("", line.strip(), count=1)))
        yield SessionBlock(
            entry.session, relpath, day, entry.time, entry.heading_line, last, tuple(items)
        )


def seen_entries(max_bytes: int, allow_hardlinks: bool = False) -> SeenEntries:
    """A memo of what the daily logs hold for the flushes of one import (capture/seen.py),
    reading each log's blocks as the flush does."""
    from .seen import SeenEntries

    return SeenEntries(
        max_bytes,
        lambda relpath, text, note: _session_blocks(relpath, text, None, note),
        allow_hardlinks,
    )


def group_sessions(blocks: Iterable[SessionBlock]) -> list[SessionInfo]:
    """Blocks grouped by session (and scope), the most recently flushed session first."""
    sessions: dict[tuple[str, str], SessionInfo] = {}
    for block in blocks:
        scope = scope_text(scope_of(block.path))
        info = sessions.setdefault((scope, block.session), SessionInfo(block.session, [], scope))
        info.blocks.append(block)
    return sorted(
        sessions.values(),
        key=lambda s: (s.blocks[-1].date, s.blocks[-1].time, s.id),
        reverse=True,
    )


# -- the flush ------------------------------------------------------------------------------


@dataclass
class FlushReport:
    session: str
    session_derived: bool  # True when the id was derived from the conversation
    path: str  # the daily log written to (or that would be)
    date: str
    mode: str  # "offline" or "llm"
    model: str | None
    dry_run: bool
    messages: int
    entries: list[FlushEntry] = field(default_factory=list)  # new entries
    already_flushed: int = 0  # extracted entries already in the logs (see `flush`)
    already_in_other_sessions: int = 0  # of those, the ones only other sessions had
    other_sessions: list[str] = field(default_factory=list)  # the sessions that had them
    redactions: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # a model's entries that were not written, and why (untrusted input: extract.Refusal)
    refused: list[Refusal] = field(default_factory=list)
    controls_stripped: int = 0  # invisible characters taken out of a model's entries
    heading: str | None = None
    start_line: int | None = None  # the block's heading line
    end_line: int | None = None  # its last line
    continued: bool = False  # the entries went under this session's block of the same minute
    # the block appended (a continued block: the entries only), or that a dry run would append
    text: str = ""
    transcript: Any = None  # what the flush appended to the session's transcript (sessions/)

    @property
    def written(self) -> bool:
        return bool(self.entries) and not self.dry_run

    @property
    def refusals(self) -> dict[str, int]:
        """How many of a model's entries were refused, by reason."""
        return dict(Counter(r.reason for r in self.refused))

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "session_derived": self.session_derived,
            "path": self.path,
            "date": self.date,
            "heading": self.heading,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "continued": self.continued,
            "written": self.written,
            "dry_run": self.dry_run,
            "mode": self.mode,
            "model": self.model,
            "messages": self.messages,
            "new_entries": len(self.entries),
            "already_flushed": self.already_flushed,
            "already_in_other_sessions": self.already_in_other_sessions,
            "other_sessions": self.other_sessions,
            "entries": [e.to_dict() for e in self.entries],
            "redactions": self.redactions,
            "refused": [r.to_dict() for r in self.refused],
            "refusals": self.refusals,
            "controls_stripped": self.controls_stripped,
            "warnings": self.warnings,
            "text": self.text,
            "transcript": self.transcript.to_dict() if self.transcript is not None else None,
        }


def _input_size(raw: Any) -> int:
    if isinstance(raw, bytes):
        return len(raw)
    if isinstance(raw, str):
        return len(raw.encode("utf-8", "surrogatepass"))
    try:
        return len(json.dumps(raw, ensure_ascii=False, default=str).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        raise MalformedConversationError("the messages are not JSON-like data") from None


def flush_conversation(
    layout: Layout,
    messages: str | bytes | list[Any] | dict[str, Any],
    session: str | None = None,
    dry_run: bool = False,
    date: dt.date | str | None = None,
    now: dt.datetime | None = None,
    record: Callable[[list[Message], str, dt.datetime], Any] | None = None,
    title: str | None = None,
    logs: Collection[str] | None = None,
    identify: Callable[[list[Message]], str | None] | None = None,
    seen: SeenEntries | None = None,
) -> FlushReport:
    """See `Vault.flush`. `record(parsed messages, session id, when)`, when given, keeps the
    conversation itself (the facade hands in the transcript writer, sessions/); what it
    returns is the report's `transcript`, and a `VaultError` it raises a warning. `title` (a
    conversation's own, from an import) is added to the block's heading: `## 14:03 · flush ·
    session ID · Title`. `logs`: the only daily logs (vault-relative) that can hold the
    session's entries or lie within `dedupe_days` of the day, from a caller that keeps track
    (an import of thousands of conversations), so that each flush does not read every log.
    `identify(parsed messages)`: the session that already holds this conversation, by its
    content (the facade looks in the transcripts), used when no `session` is given. `seen`:
    that caller's memo of what those logs hold (capture/seen.py), so that each flush does not
    parse them again either."""
    settings = _checked_settings(layout)
    parsed = _parse_within_limit(messages, settings.max_input_bytes)
    when = _flush_time(clock.as_day(date), now, settings.timezone)
    session_id, derived = _session_of(parsed, session, identify)
    clean, counts = _redacted(parsed)
    report = FlushReport(
        session=session_id,
        session_derived=derived,
        path=layout.daily_path(when.date())[1],
        date=when.date().isoformat(),
        mode="offline",
        model=None,
        dry_run=dry_run,
        messages=len(parsed),
    )
    # The entries first: a flush that cannot write the day's log stops there, with one error;
    # then the conversation itself (sessions/), whose failure is a warning.
    max_bytes = layout.config.index.max_file_bytes
    path, relpath = layout.daily_path(when.date())
    links_ok = _refuse_linked(layout, path, relpath)  # first, before anything is done
    candidates = _extract(layout, clean, session_id, report, counts, max_bytes, when.date())
    report.redactions = dict(counts)
    _append_new(layout, report, candidates, when, title, logs, links_ok, seen)
    if record is not None and not dry_run:
        _record(report, record, parsed, when)
    return report


def _checked_settings(layout: Layout) -> FlushSettings:
    settings = layout.config.flush
    if settings.dedupe_days < 0:
        raise ConfigError(
            f"flush.dedupe_days is {settings.dedupe_days}; give 0 or more days "
            "(0 compares only with the same session's entries)."
        )
    clock.zone(settings.timezone)  # a bad zone is one clear error before anything is read
    return settings


def _parse_within_limit(messages: Any, limit: int) -> list[Message]:
    size = _input_size(messages)
    if size > limit:
        raise InputTooLargeError("the conversation", size, limit)
    return parse_conversation(messages)


def _session_of(
    parsed: list[Message],
    session: str | None,
    identify: Callable[[list[Message]], str | None] | None,
) -> tuple[str, bool]:
    """(the session id, whether it was derived): the one given; else the session that
    already holds this conversation (`identify`: by content, however it was flushed before);
    else one derived from how it opens."""
    if session is not None:
        return check_session_id(session), False
    held = identify(parsed) if identify is not None else None
    return (held or derive_session_id(parsed)), True


def _flush_time(day: dt.date | None, now: dt.datetime | None, timezone: str) -> dt.datetime:
    """When the conversation is flushed, as wall time where the person is (`[flush]
    timezone`): its log's day and its heading's time, and the day "today" means."""
    now = clock.wall_time(now, timezone)
    return dt.datetime.combine(day, now.time()) if day else now


def _redacted(parsed: list[Message]) -> tuple[list[Message], Counter[str]]:
    counts: Counter[str] = Counter()
    clean = []
    for message in parsed:
        if message.role in ("user", "assistant") and message.text:
            result = redact(message.text)
            counts.update(result.counts)
            message = Message(message.role, result.text, message.name, message.tool_calls)
        clean.append(message)
    return clean, counts


def _append_new(
    layout: Layout,
    report: FlushReport,
    candidates: list[FlushEntry],
    when: dt.datetime,
    title: str | None,
    logs: Collection[str] | None,
    links_ok: bool,
    seen: SeenEntries | None = None,
) -> None:
    """Append the entries not flushed yet as one block (or under this session's block of
    the same minute), filling the report; a dry run only fills it."""
    settings = layout.config.flush
    max_bytes = layout.config.index.max_file_bytes
    path, relpath = layout.daily_path(when.date())
    near = _days_around(when.date(), settings.dedupe_days) if settings.dedupe_days else None

    lookup = _Lookup(layout.root, max_bytes, layout.daily_dir, logs, links_ok, near, seen)

    def select() -> str:
        return _select_new(lookup, report.session, candidates, report, when, title)

    # A first look without the lock: nothing new (the common case of a repeated flush)
    # takes no lock and writes nothing at all, not even `.vault/`.
    if not select() or report.dry_run:
        return
    with fsutil.lock_file(layout.cache_dir / "flush.lock", "flush", LOCK_TIMEOUT):
        fsutil.settle(path)  # a killed flush's journaled block is in the log before we look
        block = select()
        if not block:
            return
        if seen is not None and path.exists():  # refuse a binary or broken file
            seen.check(path, relpath)
        elif path.exists():
            fsutil.read_text(path, relpath, max_bytes, links_ok)
        path.parent.mkdir(parents=True, exist_ok=True)
        heading, *body = block.strip("\n").split("\n")
        entries = "\n".join(body) + "\n"
        open_block: list[int] = []

        def continue_or_open(current: str) -> str:
            line = _open_block_line(relpath, current, heading)
            if line is None:
                return block
            open_block.append(line)
            return entries

        first = fsutil.append_entry(
            path,
            block,
            create_with=layout.daily_header(when.date()),
            compose=continue_or_open,
            allow_hardlinks=links_ok,
        )
        if seen is not None:
            seen.appended(path, relpath, block)
    if open_block:
        report.continued, report.text = True, entries
        report.start_line, report.end_line = open_block[0], first + len(body) - 1
    else:
        report.start_line = first + 1  # the block opens with a blank line
        report.end_line = report.start_line + len(body)


def _record(
    report: FlushReport,
    record: Callable[[list[Message], str, dt.datetime], Any],
    parsed: list[Message],
    when: dt.datetime,
) -> None:
    """Keep the conversation itself (sessions/); say where it went when that is not the
    session's own transcript, and why nothing went when it was pruned."""
    try:
        report.transcript = record(parsed, report.session, when)
    except VaultError as exc:
        _warn(report, f"the transcript was not written: {exc}")
        return
    for note in getattr(report.transcript, "notes", ()):
        _warn(report, note)


def _refuse_linked(layout: Layout, path: Path, relpath: str) -> bool:
    """`HardLinkedError` when the day's log has several hard links and they are not allowed;
    else whether they are."""
    with contextlib.suppress(FileNotFoundError):
        fsutil.refuse_links(os.stat(path), relpath, layout.allow_hardlinks)
    return layout.allow_hardlinks


def _open_block_line(relpath: str, text: str, heading: str) -> int | None:
    """The line of `heading` when it opens the last block of the daily log `text` (no other
    heading after it, no code fence left open), else None."""
    if heading not in text:  # the common case, without parsing
        return None
    note = parse_note(relpath, text)
    if not note.headings or len(note.lines) in note.code_lines:
        return None
    last = note.headings[-1]
    if note.lines[last.line - 1].rstrip() != heading:
        return None
    return last.line


def _extract(
    layout: Layout,
    messages: list[Message],
    session_id: str,
    report: FlushReport,
    counts: Counter[str],
    max_bytes: int,
    day: dt.date,
) -> list[FlushEntry]:
    from ..llm import LLMClient, LLMError

    settings = layout.config.flush
    try:
        client = LLMClient.from_config(layout.config)
    except ConfigError as exc:
        _warn(report, f"{exc}; used the offline extraction instead")
        client = None
    if client is not None:
        recorded = [
            text
            for b in scan_sessions(
                layout.root,
                max_bytes,
                session_id,
                folder=layout.daily_dir,
                allow_hardlinks=layout.allow_hardlinks,
            )
            for _, text in b.entries
        ]
        try:
            found = extract_llm(
                client,
                messages,
                recorded,
                settings.max_entry_chars,
                settings.llm_max_input_chars,
                day,
            )
        except LLMError as exc:
            _warn(
                report, f"LLM extraction failed ({exc.what}); used the offline extraction instead"
            )
        else:
            report.mode, report.model = "llm", client.model
            counts.update(found.redacted)
            report.refused, report.controls_stripped = found.refused, found.stripped
            return found.entries
    if between_people(messages):
        return extract_dialogue(messages, settings.max_entry_chars, day)
    return extract_offline(messages, settings.max_entry_chars, day)


def _days_around(day: dt.date, days: int) -> tuple[dt.date, dt.date]:
    span = dt.timedelta(days=min(days, (dt.date.max - dt.date.min).days))
    first = day - span if day - dt.date.min >= span else dt.date.min
    last = day + span if dt.date.max - day >= span else dt.date.max
    return first, last


@dataclass(frozen=True)
class _Lookup:
    """Where a flush looks for the entries flushed before: the daily logs of `folder` (only
    `logs` when given), any session's within the days `near`, this session's in all of them;
    read through an import's memo (`seen`) when there is one."""

    root: Path
    max_bytes: int
    folder: str = DAILY_DIR
    logs: Collection[str] | None = None
    allow_hardlinks: bool = False
    near: tuple[dt.date, dt.date] | None = None
    seen: SeenEntries | None = None

    def flushed(self, session_id: str, keys: set[str]) -> tuple[set[str], dict[str, set[str]]]:
        """(this session's entry keys, the other sessions holding each other key)."""
        if self.seen is not None:  # an import's memo: the same answer without parsing again
            logs = daily_logs(self.root, self.folder, self.logs)
            return self.seen.flushed(logs, session_id, keys, self.near)
        own: set[str] = set()
        elsewhere: dict[str, set[str]] = {}
        for found in scan_sessions(
            self.root,
            self.max_bytes,
            session_id,
            self.near,
            self.folder,
            self.logs,
            self.allow_hardlinks,
        ):
            for _, text in found.entries:
                if found.session == session_id:
                    own.add(entry_key(text))
                else:
                    elsewhere.setdefault(entry_key(text), set()).add(found.session)
        return own, elsewhere


def _select_new(
    lookup: _Lookup,
    session_id: str,
    candidates: list[FlushEntry],
    report: FlushReport,
    when: dt.datetime,
    title: str | None = None,
) -> str:
    """Fill the report with the entries not flushed yet (as `lookup` finds them); return the
    block to append ("" when nothing is new)."""
    own, elsewhere = lookup.flushed(session_id, {c.key for c in candidates})
    new = [c for c in candidates if c.key not in own and c.key not in elsewhere]
    theirs = [c for c in candidates if c.key not in own and c.key in elsewhere]
    report.entries = new
    report.already_flushed = len(candidates) - len(new)
    report.already_in_other_sessions = len(theirs)
    report.other_sessions = sorted({s for c in theirs for s in elsewhere[c.key]})
    if not new:
        return ""
    label = f"{session_id} · {title}" if title else session_id
    block = format_entry("\n".join(e.text for e in new), when, SOURCE, label)
    report.text = block
    report.heading = block.strip("\n").split("\n")[0].lstrip("# ")
    return block


def _warn(report: FlushReport, message: str) -> None:
    log.warning(message)
    report.warnings.append(message)
