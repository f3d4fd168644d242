"""History kept, present clear: how a dream writes MEMORY.md when a newer line replaces an
entry's value.

The entry that holds now takes the old entry's place (its section, its position), so what
context and search read first is the current value. The old entry moves, word for word, to
`## History` at the end of the file (created when first needed), as one line that a person
reads in Obsidian without opening the source:

    - ~~Zoë Okafor: product manager for invoicing.~~ 2026-10-20 → 2026-11-20, superseded by
      [[#^zoe-okafor-role|Zoë is now head of product.]] (said in [[memory/2026-11-20]])
      <!-- src: memory/2026-10-20.md#L4 --> <!-- superseded-by: memory/2026-11-20.md#L4 -->

(one line in the file): struck through, the days it held, a link to the entry that replaced it
(an Obsidian block link: that entry ends with ` ^zoe-okafor-role`) and to the daily log that
said so, its own sources kept, and the `superseded-by` mark search and `context()` read. An
entry that had a block id keeps it in its history line, so a chain A → B → C reads from A to
C. History sits last: `context()` reads MEMORY.md from the top, so a tight budget drops the
history before any current entry, and a dream over its size budget archives history lines
first. Pure: no I/O.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable

from ..files import MemoryDoc, entry_lines, plain_text, render_memory
from ..search import SUPERSEDED_BY, read_facts
from .plan import DreamPlan, Edited, Superseded, source_date

HISTORY = "History"
_BLOCK = re.compile(r"\s\^(?P<id>[A-Za-z0-9-]+)\s*$")
_SRC = re.compile(r"<!--\s*src:.*?-->")


def is_history(text: str) -> bool:
    """Whether an entry is a history line (a superseded value), not a current one."""
    return SUPERSEDED_BY.search(text) is not None


def block_of(text: str) -> str | None:
    """The Obsidian block id an entry ends with (`… ^zoe-role`), or None."""
    match = _BLOCK.search(text.split("\n")[-1])
    return match["id"] if match else None


def new_block(key: str, taken: Iterable[str]) -> str:
    """A block id for the entry that holds now, from its subject key ("zoë okafor / role" ->
    "zoe-okafor-role"), unique in the file."""
    flat = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode().lower()
    slug = "-".join(re.findall(r"[a-z0-9]+", flat))[:40].strip("-") or "entry"
    used = set(taken)
    block, n = slug, 1
    while block in used:
        n += 1
        block = f"{slug}-{n}"
    return block


def blocks_in(memory: MemoryDoc) -> set[str]:
    return {b for e in memory.entries if (b := block_of(e.text))}


def link_history(memory: MemoryDoc, plan: DreamPlan) -> None:
    """Give each entry that replaces a superseded one a block id (its subject key), and the
    history line its text: the link between the two."""
    taken = blocks_in(memory) | {a.block for a in plan.added if a.block}
    for marked in plan.superseded:
        current = next((a for a in plan.added if a.replaces == marked.entry.key), None)
        if current is None:
            current = next((a for a in plan.added if marked.by in a.sources), None)
        if current is None:
            continue
        if not current.block:
            facts = read_facts(marked.entry.body) or read_facts(current.text)
            words = " ".join(marked.entry.body.split(":")[0].split()[:4])
            current.block = new_block(facts[0].key if facts else words, taken)
            taken.add(current.block)
        marked.block, marked.current = current.block, current.text


def history_line(marked: Superseded) -> str:
    """The one line a superseded entry becomes (see the module's docstring)."""
    old = marked.entry
    words = _BLOCK.sub("", plain_text(old.text)).replace("~~", "").strip()
    since = [d for d in map(source_date, old.sources) if d is not None]
    held = f"{max(since).isoformat()} → " if since else "until "
    held += marked.date.isoformat() if marked.date else "now"
    current = " ".join(plain_text(marked.current).split()) or marked.by_text
    label = re.sub(r"[\[\]|#^]", "", current)
    label = label if len(label) <= 80 else label[:79] + "…"
    link = f"[[#^{marked.block}|{label}]]" if marked.block else f"“{label}”"
    said = marked.by.split("#", 1)[0].removesuffix(".md")
    line = f"- ~~{words}~~ {held}, superseded by {link} (said in [[{said}]])"
    if old.sources:
        line += f" <!-- src: {', '.join(old.sources)} -->"
    line += f" <!-- superseded-by: {marked.by} -->"
    own = block_of(old.text)
    return line + (f" ^{own}" if own else "")


def render(memory: MemoryDoc, plan: DreamPlan) -> str:
    """The new MEMORY.md text: archived entries removed, edits in place, an entry that holds
    now in the place of the one it replaced, other additions at the end of their sections (a
    missing section, e.g. Inbox, is created at the end of the file) and superseded entries as
    history lines at the end. Every other line byte-identical."""
    insert: dict[str, list[list[str]]] = {}
    replace: dict[str, list[str]] = {e.entry.key: _edited_lines(e) for e in plan.edited}
    for added in plan.added:
        lines = entry_lines(added.text, added.sources)
        if added.block and lines:
            lines[-1] += f" ^{added.block}"
        if added.replaces:
            replace[added.replaces] = replace.get(added.replaces, []) + lines
            continue
        section = memory.section(added.section)
        title = section.title if section else added.section
        insert.setdefault(title, []).append(lines)
    remove = [a.entry.key for a in plan.archived]
    remove += [s.entry.key for s in plan.superseded if s.entry.key not in replace]
    history = [[history_line(s)] for s in plan.superseded]
    if history:
        section = memory.section(HISTORY)
        insert.setdefault(section.title if section else HISTORY, []).extend(history)
    return render_memory(memory, remove=remove, replace=replace, insert=insert, last=HISTORY)


def _edited_lines(edit: Edited) -> list[str]:
    sources = tuple(dict.fromkeys([*edit.entry.sources, *edit.sources]))
    lines = entry_lines(edit.text, sources)
    own = block_of(edit.entry.text)
    if own and lines and not block_of(lines[-1]):
        lines[-1] += f" ^{own}"
    return lines


def strip_marks(text: str) -> str:
    """An entry's text without its provenance comments and block id (what a person wrote)."""
    return _BLOCK.sub("", _SRC.sub("", SUPERSEDED_BY.sub("", text))).strip()


def unified_diff(before: str, after: str, path: str = "MEMORY.md") -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{path}",
        f"b/{path}",
        n=2,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
