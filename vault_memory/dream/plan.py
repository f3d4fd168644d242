"""Deep Dream, the plan: what a dream reads (the items of the daily logs) and what it
decides (entries added, merged, reworded, superseded, archived, refused), as plain data.

Every decision carries its sources and its reason in words, for the diary. Pure: no I/O.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from ..files import LIST_ITEM, MemoryEntry, Note, iter_tags, plain_text
from .wording import as_memory, speaker_label

# -- candidates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One list item (or paragraph) of a daily log: a candidate for MEMORY.md."""

    path: str  # vault-relative, e.g. memory/2026-11-22.md
    date: dt.date
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str  # the item's lines, stripped, first bullet removed, joined with "\n"
    lines: tuple[str, ...] = ()  # its lines exactly as in the file
    heading: str = ""  # the daily-log entry heading, e.g. "14:03 · flush · session 7f3a"

    @property
    def source(self) -> str:
        span = f"L{self.start_line}"
        if self.end_line != self.start_line:
            span += f"-L{self.end_line}"
        return f"{self.path}#{span}"

    @property
    def key(self) -> str:
        """Content hash (file + normalised text): what a dream records as consumed. Line
        shifts do not change it; editing the text does (the edit is new input)."""
        normal = " ".join(self.text.split())
        return hashlib.sha256(f"{self.path}\n{normal}".encode()).hexdigest()[:16]

    @property
    def tags(self) -> frozenset[str]:
        return frozenset(iter_tags(self.text))

    @property
    def body(self) -> str:
        return plain_text(self.text)

    @property
    def flushed(self) -> bool:
        """The item is an entry `vault flush` wrote (under `## HH:MM · flush · session …`)."""
        return bool(_FLUSH_HEADING.search(self.heading))

    @property
    def said(self) -> str:
        """The item's text without the speaker label flush put before it."""
        found = speaker_label(self.text) if self.flushed else None
        return found[1] if found else self.text

    def statement(self, text: str | None = None) -> str:
        """The item (or `text`, a rewording of what its speaker said) as MEMORY.md states it:
        a flushed entry loses its speaker label (`wording.as_memory`)."""
        if text is None:
            return as_memory(self.text) if self.flushed else self.text
        found = speaker_label(self.text) if self.flushed else None
        return as_memory(f"{found[0]}: {text}") if found else text

    def restate(self, text: str) -> str:
        """`text` (a model's wording of this item) without the item's speaker label, if the
        model copied it."""
        own = speaker_label(self.text) if self.flushed else None
        found = speaker_label(text) if own else None
        return self.statement(found[1]) if own and found and found[0] == own[0] else text


_FLUSH_HEADING = re.compile(r"(?:^|\s)·\s*flush\b")


def extract_items(note: Note) -> list[Item]:
    """The items of a daily log: top-level list items with their continuation lines, and
    paragraphs. Headings and fenced code are never items."""
    if note.date is None:
        return []
    lines = note.lines
    heading_lines = {h.line for h in note.headings}
    items: list[Item] = []
    number = note.frontmatter_end + 1
    total = len(lines)
    while number <= total:
        line = lines[number - 1]
        if number in heading_lines or number in note.code_lines or not line.strip():
            number += 1
            continue
        is_item = bool(LIST_ITEM.match(line))
        end = number
        while end + 1 <= total:
            nxt = lines[end]
            if (end + 1) in heading_lines or (end + 1) in note.code_lines or not nxt.strip():
                break
            if is_item and LIST_ITEM.match(nxt) and not nxt.startswith(("  ", "\t")):
                break
            if not is_item and LIST_ITEM.match(nxt):
                break
            end += 1
        span = lines[number - 1 : end]
        first = LIST_ITEM.sub("", span[0], count=1).strip()
        text = "\n".join([first, *(s.strip() for s in span[1:])])
        entry_heading = ""
        for h in note.heading_path(number):
            if h.level == 2:
                entry_heading = h.title
        items.append(Item(note.relpath, note.date, number, end, text, tuple(span), entry_heading))
        number = end + 1
    return items


# -- the plan --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """The knobs of a dream (vault.toml [dream] plus constants measured on sample_vault/)."""

    max_memory_chars: int = 12_000
    max_drop_ratio: float = 0.25
    promote_at: float = 1.0  # a candidate's score must reach this to be promoted
    recency_half_life_days: float = 14.0
    max_entry_chars: int = 600  # longer items are not promoted (they are notes, not memory)


@dataclass
class Added:
    section: str
    text: str
    sources: tuple[str, ...]
    reason: str
    score: float = 0.0
    item: Item | None = None
    replaces: str | None = None  # the key of the entry whose place it takes (a newer value)
    block: str | None = None  # its Obsidian block id, when a history line links to it
    implied: bool = False  # added only as the value that holds now of a supersession

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "text": self.text,
            "sources": list(self.sources),
            "reason": self.reason,
            "score": round(self.score, 3),
        }


@dataclass
class Merged:
    source: str
    text: str
    into: str  # "MEMORY.md m3" (an existing entry) or the source of an entry added now
    into_text: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "text": self.text,
            "into": self.into,
            "into_text": self.into_text,
            "reason": self.reason,
        }


@dataclass
class Archived:
    """An entry moved out of MEMORY.md, whole, to `dreams/archive.md`: to respect the size
    budget (`budget`), or because a line it cites replaces it or asks to forget it."""

    entry: MemoryEntry
    reason: str
    sources: tuple[str, ...] = ()  # the lines that justify it (none for the budget)
    budget: bool = False
    asked: bool = False  # the person asked to forget it (dream/forget.py)

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.entry.section,
            "text": self.entry.text,
            "sources": list(self.entry.sources),
            "reason": self.reason,
        }


@dataclass
class Edited:
    entry: MemoryEntry
    text: str
    sources: tuple[str, ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.entry.section,
            "before": self.entry.text,
            "text": self.text,
            "sources": list(self.sources),
            "reason": self.reason,
        }


@dataclass
class Superseded:
    """An entry a newer line states another value for: it moves, word for word, to the
    history section, with the day it gave way, its sources and a link to the entry that holds
    now (dream/history.py)."""

    entry: MemoryEntry
    by: str  # the newer item's source, "memory/2026-11-01.md#L4"
    by_text: str
    reason: str  # the subject, attribute and both values
    date: dt.date | None = None  # the day of the line that replaced it
    current: str = ""  # the text of the entry that holds now
    block: str = ""  # that entry's block id (the history line links to it)

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.entry.section,
            "text": self.entry.text,
            "by": self.by,
            "by_text": self.by_text,
            "reason": self.reason,
        }


@dataclass
class Skipped:
    source: str
    text: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "text": self.text, "reason": self.reason}


@dataclass
class Refused:
    """A part of a plan that breaks a rule: left out, the rest applies; the diary lists it."""

    what: str  # "new entry", "rewording of m3", "archive of m7", …
    text: str  # the text proposed, or the entry concerned
    reason: str
    sources: tuple[str, ...] = ()  # the inputs it cites (not consumed: a later dream retries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "text": self.text,
            "reason": self.reason,
            "sources": list(self.sources),
        }


@dataclass
class DreamPlan:
    added: list[Added] = field(default_factory=list)
    merged: list[Merged] = field(default_factory=list)
    archived: list[Archived] = field(default_factory=list)
    edited: list[Edited] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    consumed: list[Item] = field(default_factory=list)  # every candidate this dream settles
    superseded: list[Superseded] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)

    @property
    def changes_memory(self) -> bool:
        return bool(self.added or self.archived or self.edited or self.superseded)


@dataclass(frozen=True)
class Problem:
    """A reason to refuse a plan. `forceable` problems (size, drop ratio) yield to --force;
    the others (pinned entries, invented sources, junk) never do."""

    message: str
    forceable: bool = False


def source_date(source: str) -> dt.date | None:
    """The day of the daily log a source names ("memory/2026-11-20.md#L4"), or None."""
    name = source.split("#", 1)[0].rsplit("/", 1)[-1].removesuffix(".md")
    try:
        return dt.date.fromisoformat(name)
    except ValueError:
        return None
