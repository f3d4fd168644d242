"""The units a query's operators select (search/query.py reads them): the filter tree evaluated
to a mask over the unit table's rows, before the free text is ranked.

Fields (tags, properties, path, file name, kind, date, scope) and the words a filter needs are
matched in the Whoosh index (`FullText.unit_ids`); what Whoosh cannot see is decided here: an
exact phrase is checked in the units' text, `line:( )` on each line of the units that hold its
words, `section:( )` over the runs of units under one heading (the unit table's sections, with
their headings' words).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..index import fold, terms_of, whole
from .query import All, AnyOf, Exact, Field, Free, NotOf, Within

if TYPE_CHECKING:
    import numpy as np

    from ..index import Index
    from .table import UnitTable

TEXT_BATCH = 500  # units read back at a time to check a phrase or a line


def select(tree: Any, table: UnitTable, index: Index) -> np.ndarray | None:
    """The rows of `table` the filter `tree` keeps (a boolean mask), or None when it keeps
    every row (only free words, which are ranked and not required)."""
    return _Selection(table, index).restrict(tree)


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """The phrase's words in order, whole, with any spacing between them, in text folded as
    matching folds it (case, accents, width: index/words.py; search `fold(text)` with it)."""
    words = fold(phrase).split()
    if not words:
        return re.compile(r"(?!)")
    return re.compile(
        whole(r"\s+".join(map(re.escape, words)), words[0][0], words[-1][-1]), re.IGNORECASE
    )


def _free(node: Any) -> bool:
    """Whether a part of the query is only free text (ranked, never a filter by itself)."""
    if isinstance(node, Free):
        return True
    if isinstance(node, All | AnyOf):
        return all(_free(p) for p in node.parts)
    return False


class _Selection:
    def __init__(self, table: UnitTable, index: Index) -> None:
        self.table = table
        self.index = index
        self.n = len(table.ids)

    # -- masks over the rows ---------------------------------------------------------------

    def restrict(self, node: Any) -> np.ndarray | None:
        """What `node` requires in the context of a whole query: free words require nothing."""
        if _free(node):
            return None
        if isinstance(node, All):
            mask = None
            for part in node.parts:
                found = self.restrict(part)
                if found is not None:
                    mask = found if mask is None else mask & found
            return mask
        return self.match(node)

    def match(self, node: Any) -> np.ndarray:
        """The rows `node` matches, strictly (a free word: the units holding its terms)."""
        import numpy as np

        if isinstance(node, Field):
            units, files = self.index.fulltext.select(node.query)
            mask = self._rows(units)
            if len(files):  # a file's field holds for every unit of it
                mask |= np.isin(self.table.file_ids, files)
            return mask
        if isinstance(node, Free):
            return self._holding(node.terms) if node.terms else np.zeros(self.n, dtype=bool)
        if isinstance(node, Exact):
            return self._exact(node)
        if isinstance(node, Within):
            return self._lines(node) if node.scope == "line" else self._sections(node)
        if isinstance(node, NotOf):
            return ~self.match(node.part)
        if isinstance(node, All | AnyOf):
            return _combine(node, [self.match(p) for p in node.parts])
        raise TypeError(f"not a filter: {node!r}")

    def _rows(self, uids: np.ndarray) -> np.ndarray:
        import numpy as np

        mask = np.zeros(self.n, dtype=bool)
        rows = self.table.positions(uids)
        mask[rows[rows >= 0]] = True
        return mask

    def _holding(self, terms: tuple[str, ...]) -> np.ndarray:
        """The units whose text holds every one of `terms` (analyzed), from the Whoosh index."""
        from whoosh.query import And, Term

        clauses = [Term("text", t) for t in dict.fromkeys(terms)]
        return self._rows(
            self.index.fulltext.unit_ids(clauses[0] if len(clauses) == 1 else And(clauses))
        )

    def _texts(self, rows: np.ndarray) -> dict[int, str]:
        """row -> text of those units, read back from the store."""
        found: dict[int, str] = {}
        store = self.index.store
        for start in range(0, len(rows), TEXT_BATCH):
            batch = rows[start : start + TEXT_BATCH]
            units = store.units_by_id(int(self.table.ids[r]) for r in batch)
            for row in batch:
                unit = units.get(int(self.table.ids[row]))
                if unit is not None:
                    found[int(row)] = unit.text
        return found

    def _exact(self, node: Exact) -> np.ndarray:
        import numpy as np

        candidates = self._holding(node.terms) if node.terms else np.ones(self.n, dtype=bool)
        pattern = phrase_pattern(node.phrase)
        mask = np.zeros(self.n, dtype=bool)
        for row, text in self._texts(np.flatnonzero(candidates)).items():
            if pattern.search(fold(text)):
                mask[row] = True
        return mask

    # -- line:( ) and section:( ) ----------------------------------------------------------------

    def _lines(self, node: Within) -> np.ndarray:
        import numpy as np

        loose = _loose(node.part)
        candidates = np.ones(self.n, dtype=bool) if loose is None else self.match(loose)
        mask = np.zeros(self.n, dtype=bool)
        if loose is node.part:  # words only: for a unit of one line, the index has answered
            one_line = self.table.line_counts == 1
            mask |= candidates & one_line
            candidates &= ~one_line
        for row, text in self._texts(np.flatnonzero(candidates)).items():
            if any(_holds(node.part, line) for line in text.split("\n") if line.strip()):
                mask[row] = True
        return mask

    def _sections(self, node: Within) -> np.ndarray:
        import numpy as np

        table = self.table
        count = int(table.section.max()) + 1 if self.n else 0
        return (
            self._section_mask(node.part, count)[table.section]
            if count
            else np.zeros(0, dtype=bool)
        )

    def _section_mask(self, node: Any, count: int) -> np.ndarray:
        """Over the sections: those whose units or headings satisfy `node`."""
        import numpy as np

        table = self.table
        if isinstance(node, Free | Exact) and not node.terms:
            return np.ones(count, dtype=bool)
        if isinstance(node, Free):
            out = np.ones(count, dtype=bool)
            for term in dict.fromkeys(node.terms):
                held = np.zeros(count, dtype=bool)
                number = table.vocab.get(term)
                held[table.section[table.text.postings(number)[0]]] = True
                held[table.section[table.heading.postings(number)[0]]] = True
                out &= held
            return out
        if isinstance(node, Exact):
            held = np.zeros(count, dtype=bool)
            held[table.section[self._exact(node)]] = True
            return held
        if isinstance(node, NotOf):
            return ~self._section_mask(node.part, count)
        if isinstance(node, All | AnyOf):
            return _combine(node, [self._section_mask(p, count) for p in node.parts])
        raise TypeError(f"not a filter of words: {node!r}")


def _loose(node: Any) -> Any:
    """A condition every unit with a line (or section) satisfying `node` meets, checkable in
    the index (the words it must hold), or None when there is none (`-word` alone). An
    expression of words only is its own condition (the same object)."""
    if isinstance(node, Free):
        return node if node.terms else None
    if isinstance(node, Exact):
        return Free(node.phrase, node.terms) if node.terms else None
    if isinstance(node, All | AnyOf):
        parts = tuple(map(_loose, node.parts))
        if all(p is q for p, q in zip(parts, node.parts, strict=True)):
            return node
        if isinstance(node, All):
            kept = tuple(p for p in parts if p is not None)
            return All(kept) if kept else None
        return None if any(p is None for p in parts) else AnyOf(parts)
    return None


def _holds(node: Any, line: str) -> bool:
    """Whether one line satisfies an expression of words and phrases."""
    if isinstance(node, Free):
        return set(node.terms) <= set(terms_of(line)) if node.terms else True
    if isinstance(node, Exact):
        return bool(phrase_pattern(node.phrase).search(fold(line)))
    if isinstance(node, NotOf):
        return not _holds(node.part, line)
    if isinstance(node, All):
        return all(_holds(p, line) for p in node.parts)
    if isinstance(node, AnyOf):
        return any(_holds(p, line) for p in node.parts)
    raise TypeError(f"not a filter of words: {node!r}")


def _combine(node: All | AnyOf, masks: list[np.ndarray]) -> np.ndarray:
    """The masks of a node's parts joined: all of them (`All`) or any (`AnyOf`)."""
    out = masks[0].copy()
    for mask in masks[1:]:
        if isinstance(node, All):
            out &= mask
        else:
            out |= mask
    return out
