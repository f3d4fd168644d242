"""MEMORY.md as sections and entries, edited in place.

`parse_memory(text)` keeps every original line with its own line ending; an entry is a
top-level list item with its continuation lines, a section is a `#`/`##` heading and what
follows it. `render_memory(doc, ...)` removes, replaces and inserts entries and re-emits every
other line byte for byte, so a dream's diff shows only what it meant to change. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .notes import LIST_ITEM, iter_tags, parse_note

MEMORY_HEADER = "# MEMORY\n"
INBOX = "Inbox"
_SRC = re.compile(r"<!--\s*src:\s*(.*?)\s*-->")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG_TOKEN = re.compile(r"(?<![\w/&#])#[A-Za-z][\w\-/]*")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_LINE = re.compile(r"[^\n]*\n|[^\n]+$")
_BLOCK_ID = re.compile(r"\s\^[A-Za-z0-9-]+\s*$")  # Obsidian's block id ending a list item


@dataclass(frozen=True)
class MemoryEntry:
    key: str  # "m1", "m2" … in file order: a stable id within one dream
    section: str  # title of the enclosing section ("" before the first heading)
    start: int  # index of its first line in MemoryDoc.lines (0-based)
    end: int  # one past its last line
    text: str  # its lines, line endings removed, joined with "\n"
    pinned: bool  # tagged #pin, or inside a pinned section
    sources: tuple[str, ...]  # from `<!-- src: … -->` comments

    @property
    def body(self) -> str:
        """The words of the entry: no bullet, no comments, no tags, one line."""
        return plain_text(self.text)


@dataclass(frozen=True)
class Section:
    title: str  # heading text without the `#`s ("" for lines before the first heading)
    level: int  # 0 for the lines before the first heading
    start: int  # index of the heading line (or 0)
    end: int  # one past the section's last line
    pinned: bool
    entries: tuple[MemoryEntry, ...]


@dataclass(frozen=True)
class MemoryDoc:
    lines: tuple[str, ...]  # exactly the file's lines, each with its own line ending
    sections: tuple[Section, ...]
    newline: str  # "\n" or "\r\n": what new lines end with

    @property
    def text(self) -> str:
        return "".join(self.lines)

    @property
    def entries(self) -> list[MemoryEntry]:
        return [e for s in self.sections for e in s.entries]

    def entry(self, key: str) -> MemoryEntry:
        for e in self.entries:
            if e.key == key:
                return e
        raise KeyError(key)

    def section(self, title: str) -> Section | None:
        """The section whose title matches `title` (ignoring case, tags and spacing)."""
        wanted = heading_key(title)
        for s in self.sections:
            if s.level and heading_key(s.title) == wanted:
                return s
        return None


def plain_text(text: str) -> str:
    """Text for comparing entries: bullets, HTML comments, #tags and a block id removed, one
    line."""
    lines = [_BULLET.sub("", line, count=1) for line in text.split("\n")]
    if lines:
        lines[-1] = _BLOCK_ID.sub("", lines[-1])
    joined = _COMMENT.sub(" ", " ".join(lines))
    return " ".join(_TAG_TOKEN.sub(" ", joined).split())


def heading_key(title: str) -> str:
    return " ".join(_TAG_TOKEN.sub(" ", title).split()).lower()


def sources_of(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for match in _SRC.finditer(text):
        found.extend(s for s in re.split(r"[,\s]+", match[1]) if s)
    return tuple(found)


def split_keepends(text: str) -> list[str]:
    """Lines with their endings; only "\\n" ends a line (as `fsutil.split_lines` counts)."""
    return _LINE.findall(text)


def parse_memory(text: str) -> MemoryDoc:
    """Sections and entries of MEMORY.md. Headings inside code fences do not count."""
    raw = split_keepends(text)
    note = parse_note("MEMORY.md", text)
    stripped = [line.rstrip("\n").rstrip("\r") for line in raw]
    newline = "\r\n" if raw and raw[0].endswith("\r\n") else "\n"
    body_start = note.frontmatter_end  # 0-based index of the first line after frontmatter
    bounds = [(h.line - 1, h.level, h.title) for h in note.headings if h.level <= 2]
    starts = [(body_start, 0, "")] + [b for b in bounds if b[0] >= body_start]
    sections: list[Section] = []
    counter = 0
    for i, (start, level, title) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(raw)
        if level == 0 and start == end:
            continue
        pinned = level > 0 and "pin" in set(iter_tags(title))
        entries = []
        first = start + 1 if level else start
        for a, b in _entry_spans(stripped, first, end, note.code_lines):
            counter += 1
            entry_text = "\n".join(stripped[a:b])
            entries.append(
                MemoryEntry(
                    key=f"m{counter}",
                    section=title,
                    start=a,
                    end=b,
                    text=entry_text,
                    pinned=pinned or "pin" in set(iter_tags(entry_text)),
                    sources=sources_of(entry_text),
                )
            )
        sections.append(Section(title, level, start, end, pinned, tuple(entries)))
    return MemoryDoc(tuple(raw), tuple(sections), newline)


def _entry_spans(
    lines: list[str], start: int, end: int, code_lines: frozenset[int]
) -> list[tuple[int, int]]:
    """Top-level list items in lines[start:end] with their continuation lines: indented lines,
    lazy continuation lines right after, and blank lines followed by an indented line."""
    spans: list[tuple[int, int]] = []
    i = start
    while i < end:
        line = lines[i]
        if (i + 1) in code_lines or not _is_top_item(line):
            i += 1
            continue
        j = i + 1
        while j < end:
            nxt = lines[j]
            if (j + 1) in code_lines and not nxt.startswith((" ", "\t")):
                break
            if not nxt.strip():
                k = j
                while k < end and not lines[k].strip():
                    k += 1
                if k < end and lines[k].startswith(("  ", "\t")) and not _is_heading(lines[k]):
                    j = k
                    continue
                break
            if _is_top_item(nxt) or _is_heading(nxt):
                break
            j += 1
        spans.append((i, j))
        i = j
    return spans


def _is_top_item(line: str) -> bool:
    return bool(LIST_ITEM.match(line)) and not line.startswith(("  ", "\t"))


def _is_heading(line: str) -> bool:
    return bool(re.match(r"^ {0,3}#{1,6}[ \t]", line))


def entry_lines(text: str, sources: Sequence[str] = ()) -> list[str]:
    """A new entry as Markdown lines (no endings): `- text`, continuation lines indented, and
    the provenance comment at the end of the last line."""
    parts = [p.strip() for p in text.strip().split("\n") if p.strip()]
    if not parts:
        return []
    lines = [f"- {_BULLET.sub('', parts[0], count=1)}"] + [f"  {p}" for p in parts[1:]]
    if sources:
        lines[-1] += f" <!-- src: {', '.join(sources)} -->"
    return lines


def render_memory(
    doc: MemoryDoc,
    remove: Sequence[str] = (),
    replace: Mapping[str, Sequence[str]] | None = None,
    insert: Mapping[str, Sequence[Sequence[str]]] | None = None,
    last: str | None = None,
) -> str:
    """The text with entries `remove`d (by key), `replace`d (key -> new lines), and new
    entries inserted at the end of the named sections (title -> entries, each a list of
    lines). A title that names no section becomes a new `##` section at the end of the file
    (before the section titled `last`, when there is one: the history stays last). Every other
    line is kept exactly, line ending included."""
    replace = replace or {}
    insert = insert or {}
    nl = doc.newline
    dropped: set[int] = set()
    swapped: dict[int, list[str]] = {}
    for entry in doc.entries:
        if entry.key in remove or entry.key in replace:
            dropped.update(range(entry.start, entry.end))
        if entry.key in replace:
            swapped[entry.start] = [line + nl for line in replace[entry.key]]
    after: dict[int, list[str]] = {}
    new_sections: list[tuple[str, Sequence[Sequence[str]]]] = []
    ending = doc.section(last) if last else None
    if ending is not None and ending.start == 0:
        ending = None
    for title, entries in insert.items():
        if not entries:
            continue
        section = doc.section(title)
        if section is None:
            new_sections.append((title, entries))
            continue
        anchor = _anchor(doc, section)
        block = [line + nl for entry in entries for line in entry]
        last = doc.lines[anchor].rstrip("\r\n")
        if last.strip() and not _is_heading(last) and not LIST_ITEM.match(last):
            block.insert(0, nl)  # a paragraph ends the section: start a list after a blank
        after.setdefault(anchor, []).extend(block)
    out: list[str] = []
    for index, line in enumerate(doc.lines):
        if ending is not None and index == ending.start and new_sections:
            _add_sections(out, new_sections, nl)  # before the last section, a blank line after
            out.append(nl)
            new_sections = []
        if index in swapped:
            out.extend(swapped[index])
        if index not in dropped:
            out.append(line)
        if index in after:
            if out and not out[-1].endswith("\n"):
                out[-1] += nl
            out.extend(after[index])
    if not doc.lines and (after or new_sections):
        out.append(MEMORY_HEADER.replace("\n", nl))
    _add_sections(out, new_sections, nl)
    return "".join(out)


def _add_sections(
    out: list[str], sections: Sequence[tuple[str, Sequence[Sequence[str]]]], nl: str
) -> None:
    for title, entries in sections:
        if out and not out[-1].endswith("\n"):
            out[-1] += nl
        if out and out[-1].strip():
            out.append(nl)
        out.append(f"## {title}{nl}")
        out.extend(line + nl for entry in entries for line in entry)


def _anchor(doc: MemoryDoc, section: Section) -> int:
    """Index of the line new entries go after: the last line of the section's list, or its
    last non-blank line when it has no entries."""
    if section.entries:
        return section.entries[-1].end - 1
    for index in range(section.end - 1, section.start - 1, -1):
        if doc.lines[index].strip():
            return index
    return section.start
