"""`vault export`: the vault as a stream of JSON records, one per section of each file.

    {"type": "header", "format": "vault-memory-export", "version": 1, "vault_format": 1, ...}
    {"type": "file", "path": "memory/2026-11-22.md", "kind": "daily", "sha256": ..., "sections": 3}
    {"type": "section", "path": ..., "start_line": 1, "end_line": 2, "heading": ..., "text": ...}
    ...
    {"type": "end", "files": 31, "sections": 212}

A file is cut at its headings (any level, outside code blocks): the lines before the first
heading are one section, then each heading with the lines up to the next one. In a daily log a
section is one `## HH:MM · source` entry block; in MEMORY.md one topic section. A section's
`text` is exactly its lines, line endings included (a BOM too, in the first), so the texts of a
file's sections joined are the file byte for byte: the file record's `sha256` checks it, and
`vault import` of the export writes the same Markdown (transfer/restore.py).

Records stream out file by file (one file's text in memory at a time); files are read, never
written. `split_sections` is pure.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from .. import clock
from ..errors import HARD_LINKS, DateRangeError, VaultError, left_out_for_links
from ..files import (
    date_from_name,
    fsutil,
    iter_tags,
    note_kind,
    parse_note,
    scope_of,
    scope_text,
    split_scope,
)
from ..index import indexer

if TYPE_CHECKING:
    from ..files import Layout

log = logging.getLogger("vault_memory")

FORMAT = "vault-memory-export"
VERSION = 1  # of the record format
VAULT_FORMAT = 1  # of the Markdown layout (DESIGN §1)
FORMATS = ("jsonl", "json")
KINDS = ("memory", "daily", "note", "diary", "session")
_KIND_NAMES = {
    "memory": "memory",
    "daily": "daily",
    "note": "note",
    "notes": "note",
    "diary": "diary",
    "dream": "diary",
    "dreams": "diary",
    "session": "session",
    "sessions": "session",
}
SESSIONS_DIR = "sessions"


def parse_kinds(given: str | Iterable[str] | None) -> tuple[str, ...]:
    """`daily,memory,notes` -> ("daily", "memory", "note"); () means every kind."""
    if given is None:
        return ()
    names = given.split(",") if isinstance(given, str) else list(given)
    kinds = []
    for name in names:
        name = name.strip().lower()
        if not name:
            continue
        if name not in _KIND_NAMES:
            raise VaultError(
                f"unknown kind {name!r} to export; use one or more of daily, memory, notes, "
                "diary, sessions (comma-separated)."
            )
        kinds.append(_KIND_NAMES[name])
    return tuple(dict.fromkeys(kinds))


def export_kind(relpath: str) -> str:
    """memory, daily, diary, session (a transcript in sessions/) or note."""
    _, inner = split_scope(relpath)
    if inner.split("/", 1)[0] == SESSIONS_DIR and "/" in inner:
        return "session"
    return note_kind(relpath)


def _raw_lines(text: str) -> list[str]:
    """The lines of `text` with their endings (split on "\\n" only, as `split_lines` counts)."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def split_sections(relpath: str, text: str) -> list[dict[str, Any]]:
    """The section records of one file (see the module docstring). Pure."""
    raw = _raw_lines(text)
    if not raw:
        return []
    note = parse_note(relpath, text)
    starts = sorted({1, *(h.line for h in note.headings)})
    kind = export_kind(relpath)
    scope = scope_text(scope_of(relpath))
    day = note.date.isoformat() if note.date else None
    entries = {e.heading_line: e for e in note.entries()} if note.kind == "daily" else {}
    transcript = _transcript_session(relpath, note.frontmatter) if kind == "session" else None
    records: list[dict[str, Any]] = []
    for i, start in enumerate(starts):
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(raw)
        body = [
            note.lines[n - 1]
            for n in range(start, end + 1)
            if n not in note.code_lines and n > note.frontmatter_end
        ]
        tags = set(iter_tags("\n".join(body)))
        if start == 1 and note.frontmatter_end:
            tags.update(_frontmatter_tags(note.frontmatter))
        entry = entries.get(start)
        records.append(
            {
                "type": "section",
                "path": relpath,
                "kind": kind,
                "scope": scope,
                "date": day,
                "start_line": start,
                "end_line": end,
                "heading": " > ".join(h.title for h in note.heading_path(start)),
                "time": entry.time if entry else None,
                "source": entry.source if entry else None,
                "session": entry.session if entry else transcript,
                "tags": sorted(tags),
                "text": "".join(raw[start - 1 : end]),
                "sha256": "",
            }
        )
    for record in records:
        record["sha256"] = fsutil.sha256_text(record["text"])
    return records


def _transcript_session(relpath: str, meta: dict[str, Any]) -> str | None:
    """The session of a transcript in sessions/: its frontmatter's `session`, else what its
    name holds after the date (`sessions/2026-11-22-7f3a.md` -> "7f3a")."""
    given = meta.get("session")
    if isinstance(given, str | int) and str(given).strip():
        return str(given).strip()
    stem = relpath.rsplit("/", 1)[-1].removesuffix(".md")
    rest = stem[11:] if len(stem) > 11 and stem[4] == "-" and stem[10] == "-" else ""
    return rest or None


def _frontmatter_tags(meta: dict[str, Any]) -> set[str]:
    value = meta.get("tags", meta.get("tag"))
    items = value.replace(",", " ").split() if isinstance(value, str) else value
    if not isinstance(items, list):
        return set()
    return {str(item).lstrip("#").lower() for item in items if str(item).strip().lstrip("#")}


def file_record(relpath: str, data: bytes, sections: int) -> dict[str, Any]:
    day = date_from_name(relpath) if note_kind(relpath) in ("daily", "diary") else None
    return {
        "type": "file",
        "path": relpath,
        "kind": export_kind(relpath),
        "scope": scope_text(scope_of(relpath)),
        "date": day.isoformat() if day else None,
        "bytes": len(data),
        "sha256": fsutil.sha256_bytes(data),
        "sections": sections,
    }


@dataclass
class ExportReport:
    format: str
    files: int = 0
    sections: int = 0
    bytes: int = 0  # of Markdown exported
    skipped: list[str] = field(default_factory=list)  # unreadable files, with why

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "files": self.files,
            "sections": self.sections,
            "bytes": self.bytes,
            "skipped": self.skipped,
        }


def chosen_files(
    layout: Layout,
    kinds: tuple[str, ...] = (),
    since: dt.date | None = None,
    until: dt.date | None = None,
    linked: dict[str, int] | None = None,
) -> list[str]:
    """The vault-relative paths to export, sorted: the Markdown the index reads (the scope's
    own files when the layout is bound), of `kinds`, dated within since/until when given
    (undated files are then left out). Files with several hard links are left out as the
    index leaves them out, and put in `linked`, when given (its own ones only)."""
    found = []
    scope = layout.config.scope
    seen: dict[str, int] = {}
    allow = layout.allow_hardlinks
    for relpath in indexer.scan(layout.root, scope=scope, allow_hardlinks=allow, hard_linked=seen):
        if not layout.owns(relpath):
            continue
        if kinds and export_kind(relpath) not in kinds:
            continue
        if since or until:
            day = date_from_name(relpath)
            if day is None or (since and day < since) or (until and day > until):
                continue
        found.append(relpath)
    if linked is not None:
        linked.update((p, n) for p, n in seen.items() if layout.owns(p))
    return sorted(found)


def records(
    layout: Layout,
    kinds: tuple[str, ...] = (),
    since: dt.date | None = None,
    until: dt.date | None = None,
    report: ExportReport | None = None,
) -> Iterator[dict[str, Any]]:
    """The header, each file's record followed by its sections, then the end record (its
    counts tell a complete export from a cut one)."""
    report = report or ExportReport("jsonl")
    yield {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "vault_format": VAULT_FORMAT,
        "exported_at": clock.now_local().isoformat(timespec="seconds"),
        "scope": scope_text(layout.scope) if layout.bound else None,
        "kinds": list(kinds) or list(KINDS),
        "since": since.isoformat() if since else None,
        "until": until.isoformat() if until else None,
    }
    max_bytes = layout.config.index.max_file_bytes
    linked: dict[str, int] = {}
    chosen = chosen_files(layout, kinds, since, until, linked)
    if linked:  # as the index leaves them out: not exported, and said once
        log.warning("%s", left_out_for_links(sorted(linked)))
        report.skipped += [f"{p}: {HARD_LINKS.format(links=n)}" for p, n in sorted(linked.items())]
    allow = layout.allow_hardlinks
    for relpath in chosen:
        try:
            file = fsutil.read_text(layout.root / relpath, relpath, max_bytes, allow)
        except VaultError as exc:
            log.warning("%s; not exported", exc)
            report.skipped.append(str(exc))
            continue
        data = file.text.encode("utf-8")
        sections = split_sections(relpath, file.text)
        report.files += 1
        report.sections += len(sections)
        report.bytes += len(data)
        yield file_record(relpath, data, len(sections))
        yield from sections
    yield {"type": "end", "files": report.files, "sections": report.sections}


def export_vault(
    layout: Layout,
    out: TextIO,
    format: str = "jsonl",
    kinds: str | Iterable[str] | None = None,
    since: dt.date | str | None = None,
    until: dt.date | str | None = None,
) -> ExportReport:
    """Write the export to `out` as JSONL (one record a line) or one JSON array; see
    `Vault.export`."""
    if format not in FORMATS:
        raise VaultError(f"unknown export format {format!r}; use jsonl or json.")
    first, last = clock.as_day(since, "since"), clock.as_day(until, "until")
    if first and last and first > last:
        raise DateRangeError(first, last)
    report = ExportReport(format)
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    stream = records(layout, parse_kinds(kinds), first, last, report)
    if format == "jsonl":
        for record in stream:
            out.write(dumps(record) + "\n")
    else:
        out.write("[\n")
        for n, record in enumerate(stream):
            out.write((",\n" if n else "") + dumps(record))
        out.write("\n]\n")
    return report
