"""A `MEMORY.md` entry that only restates the daily-log lines it was promoted from.

Most entries a dream adds are the log line they came from, word for word, with a provenance
comment (`<!-- src: memory/2026-11-22.md#L4 -->`). Served as such, the entry outranks the log
line (a curated file never decays), costs the context its comment, and brings neither the
line's neighbours nor its day (a log hit's path names the day, `MEMORY.md` does not). So when
every word of an entry occurs in the lines it cites, the entry leaves the ranking and those
lines stand for it at their own rank, as in a vault the dream never touched. (Handing the
lines the entry's higher score instead was measured and lowered recall on real chats: the
entries a dream promotes for their tags then crowd out the lines a question needs.) An entry
that says anything its lines do not (a date resolved, a merged value, a rewording) is served
as it is, and so is one whose lines the filters leave out (`kind:memory`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..index import terms_of
from .ranking import cited_lines

if TYPE_CHECKING:
    import numpy as np

    from .table import UnitTable

#: An entry citing more lines than this is a gathering of several lines, not a restatement.
MOST_CITED_LINES = 6


def without_restatements(
    score: np.ndarray,
    ranked: Sequence[int],
    table: UnitTable,
    units_by_id: Callable[[Iterable[int]], dict[int, Any]],
    ids_in: Callable[[str], list[int]],
) -> np.ndarray | None:
    """`score` without the ranked `MEMORY.md` entries that restate their cited log lines
    (`ids_in(path)`: the unit ids of one file); None when no ranked entry does."""
    import numpy as np

    units = units_by_id(int(table.ids[r]) for r in ranked)
    moved: np.ndarray | None = None
    files: dict[str, list[Any]] = {}
    for row in ranked:
        unit = units.get(int(table.ids[row]))
        if unit is None or unit.kind != "memory" or "superseded-by:" in unit.text:
            continue
        cites = cited_lines(unit.text)
        if not cites or len(cites) > MOST_CITED_LINES:
            continue
        rows = _cited_rows(cites, table, units_by_id, ids_in, files)
        if rows is None or not restates(unit.text, [text for _, text in rows]):
            continue
        if not np.isfinite(score[[r for r, _ in rows]]).all():
            continue  # a cited line the filters leave out: the entry stands for it
        if moved is None:
            moved = score.copy()
        moved[row] = -np.inf
    return moved


def _cited_rows(
    cites: set[tuple[str, int]],
    table: UnitTable,
    units_by_id: Callable[[Iterable[int]], dict[int, Any]],
    ids_in: Callable[[str], list[int]],
    files: dict[str, list[Any]],
) -> list[tuple[int, str]] | None:
    """(table row, text) of the units holding the cited lines; None when one is not indexed
    (the log was edited since, or the table does not hold it)."""
    out: dict[int, str] = {}
    for path in {p for p, _ in cites}:
        if path not in files:
            files[path] = list(units_by_id(ids_in(path)).values())
        for line in (n for p, n in cites if p == path):
            unit = next((u for u in files[path] if u.start_line <= line <= u.end_line), None)
            if unit is None:
                return None
            row = int(table.positions([unit.id])[0])
            if row < 0:
                return None
            out[row] = unit.text
    return sorted(out.items())


def restates(entry: str, sources: Sequence[str]) -> bool:
    """Whether every word of `entry` (its provenance comment aside) is in `sources`."""
    words = set(terms_of(_without_comments(entry)))
    known = {t for text in sources for t in terms_of(text)}
    return bool(words) and words <= known


def _without_comments(text: str) -> str:
    import re

    return re.sub(r"<!--.*?-->", " ", text, flags=re.S)
