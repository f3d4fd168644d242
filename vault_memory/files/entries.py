"""Create, update or delete one entry of MEMORY.md or a daily log (`Vault.manage`).

What an entry is (the pure functions below decide it from a parsed note):
- a list item with its continuation and nested lines (a blank line, a heading or a list item
  indented no deeper ends it); a line inside a nested item means that nested item;
- a paragraph (a run of non-blank lines that are not list items, headings or code);
- in a daily log, a `## HH:MM · source` heading line means the whole entry block under it.
Headings of MEMORY.md sections, blank lines, frontmatter and code blocks are not entries.

An entry is named by `path#L12`, `path:12` (a range `path:12-14` must lie within one entry),
or by the sha256 of its text (its lines joined by newlines): the full hex digest or a unique
prefix of at least 6 characters, alone (MEMORY.md and every daily log are searched) or as
`path#<hash>`. A hash stays valid when lines shift; a line number does not.

Rules:
- Only MEMORY.md and daily logs (memory/YYYY-MM-DD.md) are written; notes, the dream diary
  and everything else are refused. A layout bound to a scope writes only the scope's own
  (`scopes/a/b/MEMORY.md`, `scopes/a/b/memory/…`; `MEMORY.md` as a create target means its
  own), and a hash names an entry of its own files only.
- create appends: to today's daily log under a `## HH:MM · agent` heading (the default,
  like `vault add`), or with id `MEMORY.md` to the end of its `## Inbox` section (made if
  missing), or with `MEMORY.md#Section` to the end of that section. Each plain line of the
  content becomes a bullet. Creating what the target already holds changes nothing.
- update replaces the entry's lines with the content (one bullet with the entry's own
  indentation and marker; further lines become its continuation). A `#pin` entry keeps its
  pin: the tag is added back if the new content drops it.
- delete removes the entry's lines (in a daily log, a time heading left with nothing under it
  goes too). An entry tagged `#pin`, or inside a section whose heading is, is refused unless
  `force=True`: the agent tools never pass it, so a model cannot delete pinned memory.
- update, delete and MEMORY.md creates rewrite the file with `fsutil.write_atomic` against
  the sha256 read, so a concurrent edit raises `NoteChangedError` and writes nothing; daily
  creates are locked appends.
"""

from __future__ import annotations

import datetime as dt
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from ..errors import EmptyEntryError, InputTooLargeError, VaultError
from ..relative_dates import pin_dates
from . import fsutil
from .notes import (
    LIST_ITEM,
    MEMORY_FILE,
    Note,
    format_entry,
    iter_tags,
    note_kind,
    parse_note,
)

if TYPE_CHECKING:
    from .layout import Layout

ACTIONS = ("create", "update", "delete")
INBOX = "Inbox"
MIN_HASH_PREFIX = 6
HASH_SHOWN = 12
AGENT_SOURCE = "agent"

_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>(?:[-*+]|\d+[.)])[ \t]+)(?P<rest>.*)$")
_LINE_ID = re.compile(
    r"^(?P<path>.+?)(?:#L(?P<a>\d+)(?:-L?(?P<b>\d+))?|:(?P<c>\d+)(?:-(?P<d>\d+))?)$"
)
_PATH_HASH = re.compile(r"^(?P<path>.+?)#(?P<hash>[0-9a-fA-F]{6,64})$")
_HASH = re.compile(r"^[0-9a-fA-F]{6,64}$")
_FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})")
_TAG_IN_TITLE = re.compile(r"(?<![\w/&#])#[A-Za-z][\w\-/]*")


class ManageError(VaultError):
    """A manage request that cannot be carried out as given."""


class PinnedEntryError(ManageError):
    def __init__(self, ref: str) -> None:
        self.ref = ref
        super().__init__(
            f"{ref} is pinned (#pin) and was not deleted. Pinned memory is removed by a person: "
            "edit the file, or call manage(..., force=True) from Python."
        )


@dataclass(frozen=True)
class MemoryEntry:
    """One addressable entry of a note (lines 1-based, inclusive)."""

    start_line: int
    end_line: int
    kind: str  # "item", "paragraph" or "block" (a daily log's timed entry)
    lines: tuple[str, ...]
    pinned: bool
    indent: str = ""
    marker: str = ""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def sha256(self) -> str:
        return fsutil.sha256_text(self.text)


@dataclass
class ManageReport:
    action: str
    path: str
    start_line: int  # where the entry now is (create, update) or was (delete)
    end_line: int
    changed: bool
    text: str  # the entry as written, or as it was before a delete
    previous: str | None = None  # the entry before an update
    hash: str | None = None  # first characters of the entry's sha256 (None after a delete)
    message: str = ""

    @property
    def id(self) -> str:
        return f"{self.path}#L{self.start_line}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "changed": self.changed,
            "id": self.id,
            "hash": self.hash,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "text": self.text,
            "previous": self.previous,
            "message": self.message,
        }


# -- the entries of a note (pure) ---------------------------------------------------------------


def _width(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def _heading_tags(title: str) -> set[str]:
    return set(iter_tags(title))


def _is_pinned(note: Note, start: int, text: str) -> bool:
    if "pin" in set(iter_tags(text)):
        return True
    return any("pin" in _heading_tags(h.title) for h in note.heading_path(start))


def _item_spans(note: Note) -> list[tuple[int, int]]:
    headings = {h.line for h in note.headings}
    lines = note.lines
    spans = []
    for i in range(note.frontmatter_end, len(lines)):
        number = i + 1
        if number in note.code_lines or number in headings or not _ITEM.match(lines[i]):
            continue
        width = _width(lines[i])
        last = number
        in_fence = False
        for j in range(number, len(lines)):  # j is the 0-based index of line j + 1
            line = lines[j]
            if j + 1 in note.code_lines:
                if j not in note.code_lines:  # a code block starts: is it inside the item?
                    in_fence = _width(line) > width
                if not in_fence:
                    break
                last = j + 1
                continue
            in_fence = False
            if j + 1 in headings or not line.strip():
                break
            if _ITEM.match(line) and _width(line) <= width:
                break
            last = j + 1
        spans.append((number, last))
    return spans


def entries_of(note: Note) -> list[MemoryEntry]:
    """Every addressable entry of a note: daily-log blocks, list items (nested ones too) and
    paragraphs, in file order of their first line."""
    found: list[MemoryEntry] = []
    covered: set[int] = set()
    for start, end in _item_spans(note):
        covered.update(range(start, end + 1))
        match = _ITEM.match(note.lines[start - 1])
        assert match is not None
        lines = tuple(note.lines[start - 1 : end])
        found.append(
            MemoryEntry(
                start,
                end,
                "item",
                lines,
                _is_pinned(note, start, "\n".join(lines)),
                match["indent"],
                match["marker"],
            )
        )
    headings = {h.line for h in note.headings}
    run: list[int] = []

    def close() -> None:
        if run:
            lines = tuple(note.lines[run[0] - 1 : run[-1]])
            pinned = _is_pinned(note, run[0], "\n".join(lines))
            found.append(MemoryEntry(run[0], run[-1], "paragraph", lines, pinned))
            run.clear()

    for number in range(note.frontmatter_end + 1, len(note.lines) + 1):
        line = note.lines[number - 1]
        if number in covered or number in headings or number in note.code_lines or not line.strip():
            close()
            continue
        run.append(number)
    close()
    if note.kind == "daily":
        for entry in note.entries():
            end = entry.end_line
            while end > entry.heading_line and not note.lines[end - 1].strip():
                end -= 1
            lines = tuple(note.lines[entry.heading_line - 1 : end])
            pinned = _is_pinned(note, entry.heading_line, "\n".join(lines))
            found.append(MemoryEntry(entry.heading_line, end, "block", lines, pinned))
    found.sort(key=lambda e: (e.start_line, -e.end_line))
    return found


def entry_at(note: Note, start: int, end: int | None = None) -> MemoryEntry:
    """The entry holding lines START..END (the innermost one), or a `ManageError` saying why
    there is none."""
    end = start if end is None else end
    total = len(note.lines)
    if start < 1 or end < start or end > total:
        raise ManageError(
            f"{note.relpath} has {total} lines; line {start}"
            + (f"-{end}" if end != start else "")
            + f" is out of range. Give a line within 1-{max(total, 1)}."
        )
    heading = next((h for h in note.headings if h.line == start), None)
    blocks = {e.heading_line for e in note.entries()} if note.kind == "daily" else set()
    if heading is not None and start not in blocks:
        raise ManageError(
            f"{note.relpath}:{start} is a heading ({'#' * heading.level} {heading.title}), "
            "not an entry. Give the line of an entry under it."
        )
    if start <= note.frontmatter_end:
        raise ManageError(f"{note.relpath}:{start} is in the frontmatter, not an entry.")
    candidates = [
        e
        for e in entries_of(note)
        if e.start_line <= start and end <= e.end_line and (e.kind == "block") == (start in blocks)
    ]
    if not candidates:
        line = note.lines[start - 1]
        if not line.strip():
            reason = "is a blank line"
        elif start in note.code_lines:
            reason = "is inside a code block"
        else:
            reason = f"and line {end} are not in one entry"
        raise ManageError(
            f"{note.relpath}:{start} {reason}, not an entry. "
            "Give the first line of one entry (e.g. from search_memory)."
        )
    return max(candidates, key=lambda e: (e.start_line, -e.end_line))


# -- text edits (pure) ---------------------------------------------------------------------------


def clean_content(content: str, limit: int) -> str:
    """The content dedented and stripped, or an error saying why it is unusable."""
    if "\x00" in content:
        raise ManageError("the content contains a NUL byte; send plain text.")
    size = len(content.encode("utf-8"))
    if size > limit:
        raise InputTooLargeError("the content", size, limit)
    text = textwrap.dedent(content.replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not text:
        raise EmptyEntryError()
    fences = [m[1][0] for line in text.split("\n") if (m := _FENCE_LINE.match(line))]
    if len(fences) % 2:
        raise ManageError(
            "the content opens a code block (```) it does not close; close it or remove it."
        )
    return text


def bullet_lines(text: str) -> list[str]:
    """Lines to append for `text`: each plain line becomes `- line`; list items and indented
    lines are kept; blank lines are dropped (as `format_entry` does for daily logs)."""
    out = []
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped:
            continue
        if LIST_ITEM.match(stripped) or line.startswith(("  ", "\t")):
            out.append(line.rstrip())
        else:
            out.append(f"- {stripped}")
    return out


def replacement_lines(entry: MemoryEntry, text: str) -> list[str]:
    """The lines that replace `entry` for an update with `text`."""
    lines = [line.rstrip() for line in text.split("\n") if line.strip()]
    if entry.kind == "paragraph":
        out = lines
    elif entry.kind == "block":
        out = [entry.lines[0], *bullet_lines("\n".join(lines))]  # the time heading stays
    else:
        first = _ITEM.match(lines[0])
        head = first["rest"] if first else lines[0].strip()
        continuation = entry.indent + " " * len(entry.marker.expandtabs(4))
        out = [entry.indent + entry.marker + head]
        out += [continuation + line.lstrip() for line in lines[1:]]
    if "pin" in set(iter_tags(entry.text)) and "pin" not in set(iter_tags("\n".join(out))):
        out[-1] += " #pin"  # an update never unpins
    return out


def splice(text: str, start: int, end: int, new_lines: list[str]) -> str:
    """`text` with lines START..END (1-based, inclusive) replaced by `new_lines`; END = START - 1
    inserts before START. Everything else is kept byte for byte (BOM, CRLF, final newline)."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    raw = body.split("\n")
    final_newline = raw[-1] == ""
    if final_newline:
        raw.pop()
    near = raw[start - 1] if start - 1 < len(raw) else (raw[-1] if raw else "")
    eol = "\r" if near.endswith("\r") else ""
    touches_end = end >= len(raw)
    raw[start - 1 : end] = [line + eol for line in new_lines]
    if not raw:
        return bom
    return bom + "\n".join(raw) + ("\n" if final_newline or touches_end else "")


def _normal(text: str) -> str:
    stripped = LIST_ITEM.sub("", text.strip())
    return " ".join(stripped.split()).casefold()


def _section_title(title: str) -> str:
    return " ".join(_TAG_IN_TITLE.sub(" ", title).split()).casefold()


def insert_into_section(note: Note, text: str, section: str, lines: list[str]) -> tuple[str, int]:
    """MEMORY.md's text with `lines` appended to the level-2 section titled `section` (made at
    the end of the file if missing); returns the new text and the first inserted line."""
    wanted = _section_title(section)
    heading = next(
        (h for h in note.headings if h.level == 2 and _section_title(h.title) == wanted), None
    )
    if heading is None:
        total = len(note.lines)
        last = total
        while last > 0 and not note.lines[last - 1].strip():
            last -= 1
        block = ([""] if last else []) + [f"## {section}", *lines]
        return splice(text, last + 1, total, block), last + 1 + len(block) - len(lines)
    last = heading.end_line
    while last > heading.line and not note.lines[last - 1].strip():
        last -= 1
    new_lines = list(lines)
    follows = note.lines[last] if last < len(note.lines) else None
    if follows is not None and follows.strip():  # the next heading directly follows
        new_lines.append("")
    return splice(text, last + 1, last, new_lines), last + 1


# -- ids ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    path: str | None = None
    start: int | None = None
    end: int | None = None
    hash: str | None = None
    section: str | None = None


def parse_id(entry_id: str | None, action: str) -> Target:
    """`path#L12`, `path:12-14`, `path#<hash>`, `<hash>`, or for create `path[#Section]`."""
    if entry_id is None or not entry_id.strip():
        return Target()
    raw = entry_id.strip()
    if "\x00" in raw:
        raise ManageError("the id contains a NUL byte.")
    match = _LINE_ID.match(raw)
    if match and action != "create":
        start = int(match["a"] or match["c"])
        end_text = match["b"] or match["d"]
        return Target(match["path"], start, int(end_text) if end_text else start)
    if action == "create":
        path, _, section = raw.partition("#")
        return Target(path.strip(), section=section.strip() or None)
    match = _PATH_HASH.match(raw)
    if match:
        return Target(match["path"], hash=match["hash"].lower())
    if _HASH.match(raw):
        return Target(hash=raw.lower())
    raise ManageError(
        f"cannot {action} {raw!r}: name the entry as path#L12 (its first line), path:12, or by "
        f"its hash (at least {MIN_HASH_PREFIX} hex characters), as search_memory and manage "
        "reports give them."
    )


# -- appending to the day's log -----------------------------------------------------------------

MAX_ENTRY_BYTES = 64_000


@dataclass
class AddReport:
    path: str  # vault-relative
    heading: str
    start_line: int
    end_line: int
    created_file: bool


def append_note(
    layout: Layout,
    text: str,
    tags: tuple[str, ...] = (),
    when: dt.datetime | None = None,
    source: str = "note",
    session: str | None = None,
) -> AddReport:
    """Append an entry to the day's log under a `## HH:MM · source` heading, the tags
    (`decision`, `#project/alpha`) at the end of its last line (see `Vault.add`)."""
    if not text.strip():
        raise EmptyEntryError()
    if "\x00" in text:  # the day's log would become "binary" and refuse every later append
        raise VaultError("the entry contains a NUL byte (\\x00); send plain text.")
    size = len(text.encode("utf-8"))
    if size > MAX_ENTRY_BYTES:
        raise InputTooLargeError("the entry", size, MAX_ENTRY_BYTES)
    when = clock.wall_time(when, layout.config.flush.timezone)
    # "today", "next Friday": the day the person wrote them, beside their words
    text = pin_dates(text, when.date())
    block = format_entry(text, when, source, session, tags)  # a bad tag: nothing written
    path, relpath = layout.daily_path(when.date())
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    links_ok = layout.allow_hardlinks
    if not created:
        # refuse to append to a binary or broken file, or one with several hard links
        fsutil.read_text(path, relpath, layout.config.index.max_file_bytes, links_ok)
    first = fsutil.append_entry(
        path, block, create_with=layout.daily_header(when.date()), allow_hardlinks=links_ok
    )
    block_lines = block.strip("\n").split("\n")
    start = first + 1  # the block opens with a blank line
    end = start + len(block_lines) - 1
    return AddReport(relpath, block_lines[0].lstrip("# "), start, end, created)


# -- the facade's worker ------------------------------------------------------------------------


class Manager:
    """Carries out `Vault.manage` against a vault's files."""

    def __init__(self, layout: Layout, max_entry_bytes: int = MAX_ENTRY_BYTES) -> None:
        self.layout = layout
        self.root = layout.root
        self.max_bytes = layout.config.index.max_file_bytes
        self.max_entry_bytes = max_entry_bytes
        self.links_ok = layout.allow_hardlinks

    def run(
        self, content: str | None, action: str, entry_id: str | None, force: bool
    ) -> ManageReport:
        if action not in ACTIONS:
            raise ManageError(f"unknown action {action!r}; use one of: {', '.join(ACTIONS)}.")
        target = parse_id(entry_id, action)
        if action == "create":
            return self._create(clean_content(content or "", self.max_entry_bytes), target)
        if target.path is None and target.hash is None:
            raise ManageError(
                f"{action} needs the id of an entry (path#L12 or its hash), e.g. from "
                "search_memory or the report of a create."
            )
        text = clean_content(content or "", self.max_entry_bytes) if action == "update" else ""
        relpath, file, note, entry = self._locate(target)
        ref = f"{relpath}#L{entry.start_line}"
        if action == "delete":
            if entry.pinned and not force:
                raise PinnedEntryError(ref)
            return self._delete(relpath, file, note, entry)
        return self._update(relpath, file, note, entry, text)

    # -- reading

    def _writable(self, given: str) -> tuple[Path, str]:
        real, relpath = self.layout.resolve_own(given)
        kind = note_kind(relpath)
        if kind not in ("memory", "daily"):
            raise ManageError(
                f"refusing to write {relpath}: manage edits only {self.layout.memory_relpath} "
                f"and daily logs ({self.layout.daily_dir}/YYYY-MM-DD.md). Other files are the "
                "user's to edit."
            )
        return real, relpath

    def _read(self, real: Path, relpath: str) -> tuple[fsutil.TextFile, Note]:
        file = fsutil.read_text(real, relpath, self.max_bytes, self.links_ok)
        return file, parse_note(relpath, file.text)

    def _locate(self, target: Target) -> tuple[str, fsutil.TextFile, Note, MemoryEntry]:
        if target.path is not None:
            real, relpath = self._writable(target.path)
            file, note = self._read(real, relpath)
            if target.start is not None:
                return relpath, file, note, entry_at(note, target.start, target.end)
            assert target.hash is not None
            found = [(relpath, file, note, e) for e in self._by_hash(note, target.hash)]
            where = relpath
        else:
            assert target.hash is not None
            found = []
            for real, relpath in self._memory_files():
                try:
                    file, note = self._read(real, relpath)
                except VaultError:
                    continue  # an unreadable log cannot hold the entry; others still can
                found.extend((relpath, file, note, e) for e in self._by_hash(note, target.hash))
            where = f"{self.layout.memory_relpath} or the daily logs"
        if not found:
            raise ManageError(
                f"no entry with hash {target.hash} in {where}; it may have been changed or "
                "removed. Search again to get a current id."
            )
        if len(found) > 1:
            places = ", ".join(f"{r}#L{e.start_line}" for r, _, _, e in found[:5])
            raise ManageError(
                f"hash {target.hash} matches {len(found)} entries ({places}); give more "
                "characters of the hash or the entry's path#L line."
            )
        return found[0]

    @staticmethod
    def _by_hash(note: Note, prefix: str) -> list[MemoryEntry]:
        return [e for e in entries_of(note) if e.sha256.startswith(prefix)]

    def _memory_files(self) -> Iterator[tuple[Path, str]]:
        """MEMORY.md and the daily logs of the layout's own scope (the root's, unbound)."""
        memory = self.layout.memory_relpath
        if (self.root / memory).is_file():
            try:
                found: tuple[Path, str] | None = self.layout.resolve_own(memory)
            except VaultError:
                found = None  # a symlink out of the vault (or the scope) is never read
            if found is not None:
                yield found
        daily = self.layout.daily_dir
        folder = self.root / daily
        if folder.is_dir():
            for path in sorted(folder.glob("*.md"), reverse=True):
                relpath = f"{daily}/{path.name}"
                if note_kind(relpath) == "daily":
                    try:
                        yield self.layout.resolve_own(relpath)
                    except VaultError:
                        continue  # a symlink out of the vault (or the scope) is never read

    # -- writing

    def _delete(
        self, relpath: str, file: fsutil.TextFile, note: Note, entry: MemoryEntry
    ) -> ManageReport:
        lines = note.lines
        start, end = entry.start_line, entry.end_line
        if note.kind == "daily" and entry.kind != "block":
            block = next((b for b in note.entries() if b.heading_line < start <= b.end_line), None)
            if block is not None and not any(
                lines[n - 1].strip()
                for n in range(block.start_line, block.end_line + 1)
                if not start <= n <= end
            ):
                start = block.heading_line  # the time heading would be left with nothing under it
        if end >= len(lines):  # removing the end of the file: no blank lines left dangling
            while start > 1 and not lines[start - 2].strip():
                start -= 1
        elif start > 1 and not lines[start - 2].strip() and not lines[end].strip():
            end += 1  # keep one blank line between what stood before and after
        new_text = splice(file.text, start, end, [])
        fsutil.write_atomic(file.path, new_text, file.sha256, relpath, self.links_ok)
        return ManageReport(
            action="delete",
            path=relpath,
            start_line=entry.start_line,
            end_line=entry.end_line,
            changed=True,
            text=entry.text,
            message=f"deleted {relpath}:{entry.start_line}-{entry.end_line}",
        )

    def _update(
        self, relpath: str, file: fsutil.TextFile, note: Note, entry: MemoryEntry, text: str
    ) -> ManageReport:
        lines = replacement_lines(entry, text)
        new_entry = "\n".join(lines)
        changed = new_entry != entry.text
        end = entry.start_line + len(lines) - 1
        if changed:
            new_text = splice(file.text, entry.start_line, entry.end_line, lines)
            fsutil.write_atomic(file.path, new_text, file.sha256, relpath, self.links_ok)
        return ManageReport(
            action="update",
            path=relpath,
            start_line=entry.start_line,
            end_line=end,
            changed=changed,
            text=new_entry,
            previous=entry.text,
            hash=fsutil.sha256_text(new_entry)[:HASH_SHOWN],
            message=(
                f"updated {relpath}:{entry.start_line}-{end}"
                if changed
                else "unchanged: the entry already says that"
            ),
        )

    def _create(self, text: str, target: Target) -> ManageReport:
        day = clock.wall_time(None, self.layout.config.flush.timezone).date()
        text = pin_dates(text, day)  # before the comparison with what the file holds
        if target.path in (None, "", "today"):
            real, relpath = self.layout.daily_path(day)
        elif target.path == MEMORY_FILE:  # a bound scope's create: its own MEMORY.md
            real, relpath = self._writable(self.layout.memory_relpath)
        else:
            assert target.path is not None
            real, relpath = self._writable(target.path)
        today = self.layout.daily_relpath(day)
        if relpath == today:
            if target.section:
                raise ManageError(
                    "a daily log has no sections to add to; leave out '#...' "
                    f"or use {MEMORY_FILE}#Section."
                )
            return self._create_daily(real, relpath, text)
        if relpath != self.layout.memory_relpath:
            raise ManageError(
                f"create adds to today's log ({today}) or to {self.layout.memory_relpath}"
                f"[#Section], not to {relpath}: past days are history."
            )
        return self._create_memory(real, relpath, text, target.section or INBOX)

    @staticmethod
    def _already(note: Note, lines: list[str]) -> MemoryEntry | None:
        """The existing entry, if every new bullet is already an item of the note."""
        existing = {_normal(e.text): e for e in entries_of(note) if e.kind == "item"}
        matches = [existing.get(_normal(line)) for line in lines]
        if all(LIST_ITEM.match(line) for line in lines) and all(matches):
            return matches[0]
        return None

    def _unchanged(self, relpath: str, same: MemoryEntry) -> ManageReport:
        return ManageReport(
            action="create",
            path=relpath,
            start_line=same.start_line,
            end_line=same.end_line,
            changed=False,
            text=same.text,
            hash=same.sha256[:HASH_SHOWN],
            message=f"unchanged: {relpath}:{same.start_line} already holds this entry",
        )

    def _create_memory(self, real: Path, relpath: str, text: str, section: str) -> ManageReport:
        lines = bullet_lines(text)
        if real.exists():
            file, note = self._read(real, relpath)
            same = self._already(note, lines)
            if same is not None:
                return self._unchanged(relpath, same)
            new_text, first = insert_into_section(note, file.text, section, lines)
            fsutil.write_atomic(file.path, new_text, file.sha256, relpath, self.links_ok)
        else:
            first = 4
            new_text = "\n".join(["# MEMORY", "", f"## {section}", *lines]) + "\n"
            real.parent.mkdir(parents=True, exist_ok=True)  # a scope's first memory
            fsutil.write_atomic(real, new_text, None, relpath, self.links_ok)
        written = "\n".join(lines)
        return ManageReport(
            action="create",
            path=relpath,
            start_line=first,
            end_line=first + len(lines) - 1,
            changed=True,
            text=written,
            hash=fsutil.sha256_text(written)[:HASH_SHOWN],
            message=f"added to {relpath} under ## {section}",
        )

    def _create_daily(self, real: Path, relpath: str, text: str) -> ManageReport:
        lines = bullet_lines(text)
        if real.is_file():
            fsutil.settle(real)  # an append a killed writer left is in the log before we look
            _, note = self._read(real, relpath)
            same = self._already(note, lines)
            if same is not None:
                return self._unchanged(relpath, same)
        added = append_note(self.layout, "\n".join(lines), source=AGENT_SOURCE)
        _, note = self._read(real, relpath)
        block = entry_at(note, added.start_line)
        return ManageReport(
            action="create",
            path=relpath,
            start_line=block.start_line,
            end_line=block.end_line,
            changed=True,
            text=block.text,
            hash=block.sha256[:HASH_SHOWN],
            message=f"added to {relpath}",
        )
