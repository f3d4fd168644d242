"""Chunker: a parsed note -> small searchable units with exact line spans.

Measured on the LoCoMo retrieval benchmark (shared/eval), small units of 1–5 lines find far
more evidence within a fixed context budget than 10-line chunks or whole sections. So a unit
is one list item (with its continuation lines), one table row, a few lines of a paragraph or
code block, or the frontmatter. The heading path, date and kind of file are kept as fields
for scoring, not pasted into the unit's text (which is exactly the file's lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..files import LIST_ITEM, Note, iter_tags, sha256_text

MAX_UNIT_LINES = 5
PARAGRAPH_LINES = 3
SALIENT_TAGS = {"important": 0.5, "pin": 0.5}
MEMORY_SALIENCE = 0.3

_SENTENCE_END = re.compile(r"[.!?:;]['\")\]]*\s*$")
# A table's `|---|:--:|` line only draws the table: no unit.
# Matched against the stripped line: two `\s*` side by side would backtrack quadratically on a
# deeply indented list item.
_TABLE_RULE = re.compile(r"\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?")


@dataclass(frozen=True)
class Unit:
    start_line: int
    end_line: int
    text: str  # the unit's lines, exactly as in the file
    heading: str  # heading path, "Day > 14:03 · flush"
    tags: tuple[str, ...]
    salience: float  # multiplicative boost >= 1

    @property
    def sha256(self) -> str:
        return sha256_text(self.text)


def _salience(kind: str, tags: set[str]) -> float:
    boost = 1.0 + sum(w for tag, w in SALIENT_TAGS.items() if tag in tags)
    if kind == "memory":
        boost += MEMORY_SALIENCE
    return round(boost, 3)


def _spans(note: Note) -> list[tuple[int, int]]:
    """Line spans (1-based, inclusive) of the units of a note's body."""
    heading_lines = {h.line for h in note.headings}
    spans: list[tuple[int, int]] = []
    current: list[int] = []  # lines of the unit being built
    mode = ""  # "list", "para", "code"

    def close() -> None:
        nonlocal current
        if current:
            spans.append((current[0], current[-1]))
        current = []

    for number in range(note.frontmatter_end + 1, len(note.lines) + 1):
        line = note.lines[number - 1]
        if number in note.code_lines:
            stripped = line.strip()
            if stripped.startswith(("```", "~~~")):  # fences carry no content
                close()
                continue
            if mode != "code" or len(current) >= MAX_UNIT_LINES:
                close()
            mode = "code"
            current.append(number)
            continue
        if (
            number in heading_lines
            or not line.strip()
            or (mode == "list" and _TABLE_RULE.fullmatch(line.strip()))
        ):
            close()
            mode = ""
            continue
        if LIST_ITEM.match(line) or line.lstrip().startswith("|"):
            close()
            mode = "list"
            current.append(number)
            continue
        if mode == "list" and len(current) < MAX_UNIT_LINES:
            current.append(number)  # continuation of a list item
            continue
        # Paragraph text: a few lines at a time, preferring to end at a sentence boundary.
        if mode != "para":
            close()
            mode = "para"
        current.append(number)
        if len(current) >= PARAGRAPH_LINES or (
            _SENTENCE_END.search(line) and sum(len(note.lines[n - 1]) for n in current) >= 80
        ):
            close()
    close()
    return spans


def make_units(note: Note) -> list[Unit]:
    """The units of a note, in file order."""
    units: list[Unit] = []
    file_tags = set(note.tags) if note.kind == "note" else set()
    if note.frontmatter_end >= 3:  # a frontmatter block with content lines
        for start in range(2, note.frontmatter_end, MAX_UNIT_LINES):
            end = min(start + MAX_UNIT_LINES - 1, note.frontmatter_end - 1)
            text = "\n".join(note.lines[start - 1 : end])
            if text.strip():
                units.append(
                    Unit(
                        start,
                        end,
                        text,
                        note.title,
                        tuple(sorted(file_tags)),
                        _salience(note.kind, file_tags),
                    )
                )
    for start, end in _spans(note):
        text = "\n".join(note.lines[start - 1 : end])
        path = note.heading_path(start)
        heading = " > ".join(h.title for h in path)
        tags = set(iter_tags(text))
        for h in path:
            tags.update(iter_tags(h.title))
        units.append(
            Unit(start, end, text, heading, tuple(sorted(tags)), _salience(note.kind, tags))
        )
    return units
