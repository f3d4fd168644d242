"""Chunker: a parsed note -> small searchable units with exact line spans.

Measured on the LoCoMo retrieval benchmark (shared/eval), small units of 1–5 lines find far
more evidence within a fixed context budget than 10-line chunks or whole sections. So a unit
is one list item (with its continuation lines), one table row, or a few lines of a paragraph
or code block. The heading path, date and kind of file are kept as fields for scoring, not
pasted into the unit's text (which is exactly the file's lines). The frontmatter is no unit:
its properties, tags and aliases are fields of every unit of the note (`NoteFields`), as
Obsidian treats them; only a frontmatter that does not parse is indexed as text. A canvas's
text nodes are units citing the line their node is on (`make_canvas_units`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..files import LIST_ITEM, Canvas, Link, Note, iter_tags, obsidian, parse_note, sha256_text
from .fragments import is_fragment
from .words import after_label, lead_label

MAX_UNIT_LINES = 5
#: A message that does not stand alone and the messages that complete it are one unit up to
#: this many characters (the length of one long message: LoCoMo's turns, a model's writing,
#: are 140 characters at the median).
BURST_CHARS = 280
PARAGRAPH_LINES = 3
SALIENT_TAGS = {"important": 0.5, "pin": 0.5}
MEMORY_SALIENCE = 0.3

_SENTENCE_END = re.compile(r"[.!?:;]['\")\]]*\s*$")
# A table's `|---|:--:|` line only draws the table: no unit.
# Matched against the stripped line: two `\s*` side by side would backtrack quadratically on a
# deeply indented list item.
_TABLE_RULE = re.compile(r"\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?")
# A transcript's message markers (sessions/, `<!-- id: 3 · parent: 2 · … -->`) are data for
# the tools, hidden in Obsidian: no unit.
_COMMENT_LINE = re.compile(r"^\s*<!--.*-->\s*$")
#: How text becomes units; an index that recorded another version has the files whose units
#: change indexed again (`chunked_otherwise`). 2: a caption on its own line joins its turn.
#: 3: a burst of one speaker's messages is one unit, a paragraph holds one speaker's lines
#: (`_another_turn`). 4: a message is a unit of its own, a fragment joins the next message of
#: its speaker (`_joins_fragment`).
UNITS = 4

# A line that only shows a photo or a file: an image (`![a sunset](IMG_1.jpg)`, `![[IMG_1.jpg]]`)
# or a chat export's media marker in brackets (`(photo: a sunset over the lake)`, `[image: …]`,
# `<attached: IMG_1.jpg>`), as a list item or not. It belongs to the turn that shows it.
_CAPTION = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:!\[[^\]\n]*\]\([^)\n]*\)|!\[\[[^\]\n]*\]\]"
    r"|[(\[<]\s*(?:photo|image|picture|video|gif|sticker|attached|attachment|shared an? \w+)\b"
    r"[^\n]*[)\]>])\s*$",
    re.IGNORECASE,
)


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


@dataclass(frozen=True)
class NoteFields:
    """What Obsidian knows of a note besides its text, for every unit of it: the tags each of
    its units carries (its `tags` property; for a note, its inline tags too, since Obsidian
    tags a note by them), its properties, its names (for a note or canvas: the file name and
    aliases; daily logs and MEMORY.md are not named things) and its links."""

    tags: tuple[str, ...] = ()
    properties: tuple[tuple[str, str], ...] = ()
    names: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()


def note_fields(note: Note) -> NoteFields:
    meta = note.frontmatter
    tags = set(obsidian.frontmatter_tags(meta))
    if note.kind == "note":
        tags |= note.tags
    names = obsidian.note_names(note.relpath, meta) if note.kind == "note" else []
    return NoteFields(
        tuple(sorted(tags)),
        tuple(obsidian.properties(meta)),
        tuple(names),
        tuple(obsidian.note_links(note)),
    )


def canvas_fields(canvas: Canvas, units: list[Unit]) -> NoteFields:
    tags = sorted({tag for unit in units for tag in unit.tags})
    return NoteFields(tuple(tags), (), (obsidian.note_stem(canvas.relpath),), tuple(canvas.links))


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

    attach = False  # the last span closed is a list item that a caption below may join
    for number in range(note.frontmatter_end + 1, len(note.lines) + 1):
        line = note.lines[number - 1]
        if number not in note.code_lines and number not in heading_lines and _CAPTION.match(line):
            # A caption on its own line joins the turn above it (a list item, blank lines
            # between at most), so the photo is found with what was said about it.
            if mode == "list" and len(current) < MAX_UNIT_LINES:
                current.append(number)
                continue
            if mode == "" and attach and number - spans[-1][0] < MAX_UNIT_LINES:
                spans[-1] = (spans[-1][0], number)
                attach = False
                continue
        if line.strip():
            attach = False
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
            or (note.kind == "session" and _COMMENT_LINE.match(line))
        ):
            attach = attach or (mode == "list" and bool(current) and not line.strip())
            close()
            mode = ""
            continue
        if LIST_ITEM.match(line) or line.lstrip().startswith("|"):
            if not (mode == "list" and _joins_fragment(note, current, number)):
                close()
            mode = "list"
            current.append(number)
            continue
        if mode == "list" and len(current) < MAX_UNIT_LINES:
            current.append(number)  # continuation of a list item
            continue
        # Paragraph text: a few lines at a time, preferring to end at a sentence boundary.
        # A line opening with another lead-in label than the unit's first line's is another
        # turn (`Jo: do you like dogs?` then `Sam: I love turtles`): it opens a unit of its
        # own, so that a unit holds one speaker's words and is found as theirs.
        if mode != "para" or (current and _another_turn(note, current[0], line)):
            close()
            mode = "para"
        current.append(number)
        if len(current) >= PARAGRAPH_LINES or (
            _SENTENCE_END.search(line) and sum(len(note.lines[n - 1]) for n in current) >= 80
        ):
            close()
    close()
    return spans


def _joins_fragment(note: Note, current: list[int], number: int) -> bool:
    """Whether list item `number` goes on the unit `current` as the rest of a message that
    does not stand alone. In a chat a message is the unit that is found, cited and paid for:
    people send two to seven in a row, each usually whole, and a unit of the whole run is
    found for one matching word and costs its length. Only a fragment joins the message its
    speaker sends next (`fragments.is_fragment`: under 25 characters, no verb, or a sentence
    that message completes: `- **Sam**: so i went`, `- **Sam**: to the lake w my dad`,
    `- **Sam**: caught 3 fish!!` is one unit). The unit's lines are list items of one
    lead-in label, at most BURST_CHARS characters and MAX_UNIT_LINES lines together; a turn
    of the other speaker, a heading or a blank line ends it."""
    if not current or len(current) >= MAX_UNIT_LINES:
        return False
    line = note.lines[number - 1]
    label = lead_label(line)
    if label is None:
        return False
    size = len(line.strip())
    for earlier in current:
        text = note.lines[earlier - 1]
        size += len(text.strip())
        if size > BURST_CHARS or not LIST_ITEM.match(text) or lead_label(text) != label:
            return False
    return is_fragment(after_label(note.lines[current[-1] - 1]), after_label(line))


def _another_turn(note: Note, first: int, line: str) -> bool:
    """Whether paragraph `line` opens with a lead-in label other than the one the unit's
    `first` line opens with (prose with no label of its own goes on as before)."""
    label = lead_label(line)
    if label is None:
        return False
    opened = lead_label(note.lines[first - 1])
    return opened is not None and label != opened


def make_units(note: Note) -> list[Unit]:
    """The units of a note, in file order."""
    units: list[Unit] = []
    file_tags = set(note.tags) if note.kind == "note" else set()
    # A frontmatter block is properties (fields of the note's units), not text; one that does
    # not parse is all there is of it, so its lines are searched as text.
    if note.frontmatter_error and note.frontmatter_end >= 3:
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


def make_canvas_units(canvas: Canvas, title: str) -> list[Unit]:
    """The units of a canvas's text nodes: each node's Markdown cut as a note's text is, every
    unit citing the line of its node; the heading is the canvas's name and the node's group."""
    units: list[Unit] = []
    for node in canvas.texts:
        inner = parse_note("node.md", node.text)
        for unit in make_units(inner):
            heading = " > ".join(p for p in (title, node.group, unit.heading) if p)
            units.append(
                Unit(
                    node.line,
                    node.line,
                    unit.text,
                    heading,
                    unit.tags,
                    _salience("note", set(unit.tags)),
                )
            )
    return units


def chunked_otherwise(text: str) -> bool:
    """Whether a unit an index of an older `UNITS` stored may be cut otherwise now: a caption
    alone (version 2 joins it to the turn that shows it), a labelled list item short enough to
    open or join a run of messages, a paragraph holding another speaker's turn (version 3),
    one speaker's messages joined whatever they said (version 4 joins fragments only). A
    unit's neighbours are not seen here, so every file with such a unit is read again, once."""
    lines = text.strip().split("\n")
    if len(lines) > 1:  # a paragraph of two speakers' turns, or one speaker's run
        first = lead_label(lines[0])
        return first is not None and any(lead_label(line) is not None for line in lines[1:])
    return bool(_CAPTION.match(text)) or (
        bool(LIST_ITEM.match(text))
        and len(text.strip()) <= BURST_CHARS
        and lead_label(text) is not None
    )
