"""The Markdown model: what a vault file holds, parsed without ever changing it.

`parse_note` gives the heading tree with exact 1-based inclusive line spans, the frontmatter
(parsed with python-frontmatter, never re-dumped), `#tags`, `[[wikilinks]]`, the kind of file
and, for daily logs, the date and the `## HH:MM · source[ · session]` entries.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..config import DAILY_DIR, DIARY_DIR, MEMORY_FILE  # noqa: F401 - the vault's names
from ..errors import InvalidTagError
from .fsutil import split_lines
from .scopes import split_scope

KINDS = ("memory", "daily", "note", "diary", "session")
SESSIONS_DIR = "sessions"  # transcripts: sessions/YYYY-MM-DD-<session>.md

_DATE_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
_SESSION_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.md$")
# A closing `#` run counts only after a space (CommonMark), so `## Learn C#` keeps its `#`.
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*(?:(?<=[ \t])#+[ \t]*)?$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
# A tag starts with a letter and follows a non-word character, so `#L4` in `file.md#L4`,
# `#123`, URL fragments and links to a heading (`[[#Decisions]]`) are not tags.
# What follows a tag's `#`, as Obsidian reads it: word characters, `-` and `/`, starting with a
# word character and not only digits (`#2024` is not a tag, `#2024-goals` and `#_inbox` are).
TAG_NAME = r"(?=[\w/-]*[^\W\d])\w[\w/-]*"
_TAG = re.compile(rf"(?<![\w/&#])(?<!\[\[)#({TAG_NAME})")
_WIKILINK = re.compile(r"\[\[([^\[\]|#]+)(?:#[^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")
_ENTRY_HEADING = re.compile(r"^(\d{1,2}:\d{2})(?:\s*[·•|—–-]\s*(.*))?$")
_SEPARATOR = re.compile(r"\s*[·•|—–]\s*|\s+-\s+")
_COMMENT = re.compile(r"<!--.*?-->")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")  # a bullet or numbered list item
_INLINE_CODE = re.compile(r"(`+).+?\1")


@dataclass(frozen=True)
class Heading:
    level: int
    title: str
    line: int  # the heading's own line
    end_line: int  # last line of its section (before the next heading of the same or higher level)


@dataclass(frozen=True)
class Entry:
    """One `## HH:MM · source[ · session]` block of a daily log."""

    time: str
    source: str
    session: str | None
    heading_line: int
    start_line: int  # first line after the heading
    end_line: int


@dataclass(frozen=True)
class Note:
    relpath: str
    kind: str
    lines: list[str]
    date: dt.date | None = None
    frontmatter: dict[str, Any] = field(default_factory=dict)
    frontmatter_end: int = 0  # last line of the frontmatter block, 0 if there is none
    frontmatter_error: str | None = None
    headings: list[Heading] = field(default_factory=list)
    code_lines: frozenset[int] = frozenset()  # lines inside fenced code blocks (fences included)
    tags: frozenset[str] = frozenset()
    links: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        title = self.frontmatter.get("title")
        if isinstance(title, str) and title.strip():
            return title.strip()
        first = next((h for h in self.headings if h.level == 1), None)
        return first.title if first else self.relpath.rsplit("/", 1)[-1].removesuffix(".md")

    def heading_path(self, line: int) -> list[Heading]:
        """The headings enclosing `line`, outermost first (a heading encloses its own line).

        The last heading at or before `line` and its chain of enclosing headings (computed
        once per note): a note's units ask for this in O(depth), not O(headings), so a file of
        thousands of headings is indexed in linear time."""
        starts, parents = self._heading_tree
        i = bisect.bisect_right(starts, line) - 1
        chain: list[Heading] = []
        while i >= 0:
            h = self.headings[i]
            if h.end_line >= line:
                chain.append(h)
            i = parents[i]
        path: list[Heading] = []
        for h in reversed(chain):
            while path and path[-1].level >= h.level:
                path.pop()
            path.append(h)
        return path

    @functools.cached_property
    def _heading_tree(self) -> tuple[list[int], list[int]]:
        """Each heading's line, and the index of the nearest heading before it of a lower
        level (-1: none)."""
        parents: list[int] = []
        stack: list[int] = []
        for i, h in enumerate(self.headings):
            while stack and self.headings[stack[-1]].level >= h.level:
                stack.pop()
            parents.append(stack[-1] if stack else -1)
            stack.append(i)
        return [h.line for h in self.headings], parents

    def entries(self) -> list[Entry]:
        """Daily-log entries: level-2 headings that start with a time."""
        found = []
        for h in self.headings:
            if h.level != 2:
                continue
            parsed = parse_entry_heading(h.title)
            if parsed is None:
                continue
            time, source, session = parsed
            found.append(Entry(time, source, session, h.line, h.line + 1, h.end_line))
        return found


def note_kind(relpath: str) -> str:
    """memory (MEMORY.md at the top of a scope's folder: the vault root or scopes/a/b/), daily
    (memory/YYYY-MM-DD.md there), diary (dreams/… there), else note."""
    _, relpath = split_scope(relpath)
    if relpath == MEMORY_FILE:
        return "memory"
    parts = relpath.split("/")
    if parts[0] == DIARY_DIR and len(parts) > 1:
        return "diary"
    if parts[0] == DAILY_DIR and len(parts) == 2 and _DATE_NAME.match(parts[1]):
        return "daily"
    if parts[0] == SESSIONS_DIR and len(parts) == 2 and _SESSION_NAME.match(parts[1]):
        return "session"
    return "note"


def date_from_name(relpath: str) -> dt.date | None:
    """The date of a file named YYYY-MM-DD.md (daily logs, diary files, dated notes)."""
    match = _DATE_NAME.match(relpath.rsplit("/", 1)[-1])
    if not match:
        return None
    try:
        return dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def _session_date(relpath: str) -> dt.date | None:
    """The day a transcript (sessions/YYYY-MM-DD-ID.md) started."""
    match = _SESSION_NAME.match(relpath.rsplit("/", 1)[-1])
    return date_from_name(f"{match[1]}-{match[2]}-{match[3]}.md") if match else None


def parse_entry_heading(title: str) -> tuple[str, str, str | None] | None:
    """`14:03 · flush · session 7f3a` -> ("14:03", "flush", "7f3a"); None if not an entry."""
    match = _ENTRY_HEADING.match(title.strip())
    if not match:
        return None
    rest = [p for p in _SEPARATOR.split(match[2] or "") if p.strip()]
    if rest and rest[0].strip().lower().startswith("session "):
        rest.insert(0, "")  # `09:00 — session 3`: a session and no source
    source = rest[0].strip() if rest else ""
    session = None
    if len(rest) > 1:
        session = rest[1].strip()
        session = session.removeprefix("session ").strip() or None
    return match[1], source, session


def _frontmatter_block(lines: list[str]) -> int:
    """Last line (1-based) of a leading `---` … `---`/`...` block, or 0."""
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


def _parse_frontmatter(lines: list[str], end: int) -> tuple[dict[str, Any], str | None]:
    import frontmatter  # python-frontmatter; only parsing, never dumps

    # python-frontmatter only knows `---` as the closing line; `...` (YAML's end marker) is
    # accepted by _frontmatter_block, so hand it the block closed the way it understands.
    block = "\n".join([*lines[: end - 1], "---"]) + "\n"
    try:
        post = frontmatter.loads(block)
    except Exception as exc:  # yaml raises many types; the user's file is simply unparseable
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return {}, f"broken frontmatter ({first}); the file is indexed as plain text"
    if not isinstance(post.metadata, dict):
        return {}, "frontmatter is not a mapping; the file is indexed as plain text"
    return dict(post.metadata), None


def _scan(lines: list[str], start: int) -> tuple[list[tuple[int, int, str]], set[int]]:
    """Headings (line, level, title) and fenced-code lines, from line `start` (1-based) on."""
    raw: list[tuple[int, int, str]] = []
    code: set[int] = set()
    fence: str | None = None
    for number in range(start, len(lines) + 1):
        line = lines[number - 1]
        match = _FENCE.match(line)
        if fence is not None:
            code.add(number)
            # a closing fence has no info string
            if (
                match is not None
                and line.strip() == match[1]
                and match[1][0] == fence[0]
                and len(match[1]) >= len(fence)
            ):
                fence = None
            continue
        if match:
            fence = match[1]
            code.add(number)
            continue
        heading = _HEADING.match(line)
        if heading:
            raw.append((number, len(heading[1]), heading[2]))
    return raw, code


def _spans(raw: list[tuple[int, int, str]], total: int) -> list[Heading]:
    """Each heading ends before the next heading of its level or a higher one (or at the end
    of the file): one pass with a stack of the headings still open."""
    ends = [total] * len(raw)
    open_: list[int] = []
    for i, (line, level, _) in enumerate(raw):
        while open_ and raw[open_[-1]][1] >= level:
            ends[open_.pop()] = line - 1
        open_.append(i)
    return [
        Heading(level, title, line, end)
        for (line, level, title), end in zip(raw, ends, strict=True)
    ]


def iter_tags(text: str) -> Iterator[str]:
    if "#" not in text:  # every tag starts with one (most lines have none)
        return
    for match in _TAG.finditer(_INLINE_CODE.sub(" ", _COMMENT.sub(" ", text))):
        yield match[1].lower()


def _frontmatter_tags(meta: dict[str, Any]) -> set[str]:
    value = meta.get("tags", meta.get("tag"))
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = [str(v) for v in value]
    else:
        return set()
    return {item.lstrip("#").lower() for item in items if item.strip().lstrip("#")}


def parse_note(relpath: str, text: str) -> Note:
    """Parse a vault file's text. Pure: no I/O, and the text is not altered."""
    lines = split_lines(text.removeprefix("\ufeff"))  # a BOM would hide frontmatter and a heading
    fm_end = _frontmatter_block(lines)
    meta: dict[str, Any] = {}
    fm_error = None
    if fm_end:
        meta, fm_error = _parse_frontmatter(lines, fm_end)
    raw, code = _scan(lines, fm_end + 1)
    headings = _spans(raw, len(lines))
    tags = set(_frontmatter_tags(meta))
    links: list[str] = []
    for number in range(fm_end + 1, len(lines) + 1):
        if number in code:
            continue
        line = lines[number - 1]
        heading = _HEADING.match(line)
        tags.update(iter_tags(heading[2] if heading else line))
        links.extend(m[1].strip() for m in _WIKILINK.finditer(line))
    kind = note_kind(relpath)
    return Note(
        relpath=relpath,
        kind=kind,
        lines=lines,
        date=date_from_name(relpath) if kind != "session" else _session_date(relpath),
        frontmatter=meta,
        frontmatter_end=fm_end,
        frontmatter_error=fm_error,
        headings=headings,
        code_lines=frozenset(code),
        tags=frozenset(tags),
        links=tuple(dict.fromkeys(links)),
    )


def daily_log_header(day: dt.date) -> str:
    return f"# {day.isoformat()}\n"


def _tag_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_-/"


def check_tag(tag: str) -> str:
    """A tag a user gave (`decision`, `#project/alpha`) as it is written after its `#`, or
    `InvalidTagError` when Obsidian would not read it as a tag: only letters, digits, `_`, `-`
    and `/` between nested parts, and not only digits."""
    name = unicodedata.normalize("NFC", tag.strip().lstrip("#"))
    parts = name.split("/")
    if (
        not all(parts)
        or not all(map(_tag_char, name))
        or all(ch.isdigit() or ch == "/" for ch in name)
        or not re.fullmatch(TAG_NAME, name)
    ):
        raise InvalidTagError(tag, tag_slug(tag))
    return name


def tag_slug(text: str) -> str | None:
    """`two words` -> `two-words`: the nearest valid tag, or None when there is none."""
    name = unicodedata.normalize("NFC", text.strip().lstrip("#"))
    name = "".join(ch if _tag_char(ch) else " " for ch in name)
    parts = ["-".join(part.replace("-", " ").split()) for part in name.split("/")]
    slug = "/".join(part for part in parts if part)
    if not slug or all(ch.isdigit() or ch == "/" for ch in slug):
        return None
    return slug


def format_entry(
    text: str,
    when: dt.datetime,
    source: str,
    session: str | None = None,
    tags: tuple[str, ...] = (),
) -> str:
    """An entry block for a daily log: a time heading and the text as bullets (a plain line
    becomes `- line`; lines that are already list items or blank are kept as they are).
    `InvalidTagError` for a tag Obsidian would not read (see `check_tag`)."""
    suffix = " ".join(f"#{check_tag(t)}" for t in tags)
    heading = f"## {when:%H:%M} · {source}" + (f" · session {session}" if session else "")
    body: list[str] = []
    for line in split_lines(text.strip("\n")):
        stripped = line.strip()
        if not stripped:
            body.append("")
        elif LIST_ITEM.match(stripped) or line.startswith(("  ", "\t")):
            body.append(line.rstrip())
        else:
            body.append(f"- {stripped}")
    if suffix:
        last = max(i for i, line in enumerate(body) if line.strip())
        body[last] = f"{body[last]} {suffix}"
    return "\n" + heading + "\n" + "\n".join(body) + "\n"
