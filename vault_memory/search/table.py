"""The unit table: every unit of the index in file order, with its section, date, salience,
vector and the postings of its analyzed terms, as numpy arrays a query is scored on. Built
from the store once and saved beside it (index/arrays.py), so a cold process maps it.

Units are grouped by scope (files/scopes.py), the root's first, so the units a scope may see
are a few runs of rows: `restrict` gives a scoped search its mask, its row ranges and the
unit counts and field lengths of just those units (a scope's BM25 is computed as if the vault
held only what it sees).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..index import terms_of
from .dates import mentioned_days
from .ranking import is_question, lead_label, recency_factors

if TYPE_CHECKING:
    import numpy as np

TABLE_FORMAT = 7  # bump when UnitTable's arrays change meaning (5: by scope; 6: file ids;
# 7: the days a unit's relative dates name)

# (unit id, file id, heading, date, salience, vector or None, line count, analyzed terms, text,
# scope); the scope ("org/acme", "" for the root) may be left out: the root's.
UnitRow = tuple[int, int, str, str | None, float, bytes | None, int, str, str, str]
FIELDS = ("tx", "hd", "lb")  # text, heading, lead-in label


@dataclass(frozen=True)
class Restriction:
    """The units a scoped search may see: a mask over the rows, the runs of rows it covers,
    and for BM25 their number and each field's average length."""

    mask: np.ndarray
    ranges: tuple[tuple[int, int], ...]
    units: int
    averages: Mapping[str, float]


class UnitTable:
    """Every unit of the index in file order, with its section, date, salience and vector:
    the arrays a query is scored on. Built from the store once, saved next to it (see
    index/arrays.py) so that a cold process maps it instead of rebuilding it."""

    def __init__(self, arrays: dict[str, np.ndarray], windows: Sequence[int]) -> None:
        self.arrays = arrays
        self.ids = arrays["ids"]
        self.salience = arrays["salience"]
        self.day_numbers = arrays["day_numbers"]
        self.line_counts = arrays["line_counts"]
        self.matrix = arrays["matrix"]
        self.section = arrays["section"]
        self.file_ids = arrays["file_ids"]  # each unit's file (the store's files.id)
        self.has_vectors = bool(arrays["has_vectors"][0])
        self._sorted_ids = arrays["sorted_ids"]
        self._order = arrays["order"]
        self.windows: dict[int, tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]] = {}
        self.window_norms: dict[int, np.ndarray] = {}
        for w in windows:
            members = [(arrays[f"w{w}_rows{k}"], arrays[f"w{w}_wins{k}"]) for k in range(w)]
            self.windows[w] = (arrays[f"w{w}_len"], members)
            self.window_norms[w] = arrays[f"w{w}_norm"]
        self.text = FieldPostings(arrays, "tx")
        self.heading = FieldPostings(arrays, "hd")
        self.label = FieldPostings(arrays, "lb")  # lead-in labels (`lead_label`)
        self.question = arrays["question"]  # 1 where the unit ends by asking
        self.told = arrays["told"]  # first and last day its relative dates name (0: none)
        self._vocab: dict[str, int] | None = None
        self._recency_key: tuple[int, float, float] | None = None
        self._recency: np.ndarray | None = None
        self.scope_codes = arrays["scope_codes"]  # each row's scope, a number into scope_names
        self._scope_bounds = arrays["scope_bounds"]  # rows of scope k: bounds[k]:bounds[k + 1]
        names = bytes(arrays["scope_names"]).decode("utf-8")
        self.scope_names = names.split("\n") if len(arrays["scope_bounds"]) > 1 else []
        self._restrictions: dict[tuple[str, ...], Restriction] = {}

    def restrict(self, scopes: Sequence[str]) -> Restriction:
        """The rows of the units of `scopes` (names as "org/acme", "" for the root). Their runs
        and counts are kept while the table lives; the mask is made anew (a few microseconds:
        a server for hundreds of agents keeps no mask of a table's length per agent)."""
        import numpy as np

        key = tuple(sorted(set(scopes)))
        found = self._restrictions.get(key)
        if found is None:
            codes = [i for i, name in enumerate(self.scope_names) if name in key]
            bounds = self._scope_bounds
            ranges = tuple((int(bounds[c]), int(bounds[c + 1])) for c in codes)
            units = sum(end - first for first, end in ranges)
            averages = {
                field: float(self.arrays[f"{field}_scope_len"][codes].sum()) / units
                if units else 0.0
                for field in FIELDS
            }
            found = Restriction(np.zeros(0, dtype=bool), ranges, units, averages)
            self._restrictions[key] = found
        mask = np.zeros(len(self.ids), dtype=bool)
        for first, end in found.ranges:
            mask[first:end] = True
        return dataclasses.replace(found, mask=mask)

    @property
    def vocab(self) -> dict[str, int]:
        """Analyzed term -> term number, for both fields."""
        if self._vocab is None:
            words = bytes(self.arrays["vocab"]).decode("utf-8")
            self._vocab = {w: i for i, w in enumerate(words.split("\n"))} if words else {}
        return self._vocab

    @classmethod
    def build(
        cls,
        rows: Sequence[UnitRow],
        dims: int,
        windows: Sequence[int],
    ) -> UnitTable:
        """rows: (unit id, file id, heading, date, salience, vector bytes or None, line count,
        analyzed terms, text[, scope]) in file order (grouped by scope here if they are not)."""
        import numpy as np

        scope_of_row = [r[9] if len(r) > 9 else "" for r in rows]
        if any(x > y for x, y in zip(scope_of_row, scope_of_row[1:], strict=False)):
            order = sorted(range(len(rows)), key=scope_of_row.__getitem__)  # stable
            rows = [rows[i] for i in order]
            scope_of_row = [scope_of_row[i] for i in order]
        n = len(rows)
        a: dict[str, np.ndarray] = {}
        names = list(dict.fromkeys(scope_of_row))
        code_of = {name: code for code, name in enumerate(names)}
        a["scope_codes"] = np.fromiter(map(code_of.__getitem__, scope_of_row), dtype=np.int32,
                                       count=n)
        a["scope_bounds"] = np.searchsorted(a["scope_codes"], np.arange(len(names) + 1)).astype(
            np.int64)
        a["scope_names"] = np.frombuffer("\n".join(names).encode("utf-8"), dtype=np.uint8).copy()
        a["ids"] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        a["order"] = np.argsort(a["ids"], kind="stable")
        a["sorted_ids"] = a["ids"][a["order"]]
        a["salience"] = np.fromiter((r[4] for r in rows), dtype=np.float64, count=n)
        a["file_ids"] = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
        ordinals: dict[str | None, int] = {None: 0}  # date ordinals, 0 for undated units
        for r in rows:
            if r[3] is not None and r[3] not in ordinals:
                ordinals[r[3]] = dt.date.fromisoformat(r[3]).toordinal()
        a["day_numbers"] = np.fromiter((ordinals[r[3]] for r in rows), dtype=np.int64, count=n)
        a["line_counts"] = np.fromiter((r[6] for r in rows), dtype=np.int64, count=n)
        a["question"] = np.fromiter((is_question(r[8]) for r in rows), dtype=np.uint8, count=n)
        # The days a dated unit's relative dates name ("yesterday", "last Fri"), from its own
        # text and date (so derivable file by file): first and last day ordinal, 0 for none.
        told = np.zeros((n, 2), dtype=np.int64)
        for i, r in enumerate(rows):
            if r[3] is not None:
                days = mentioned_days(r[8], dt.date.fromordinal(ordinals[r[3]]))
                if days is not None:
                    told[i] = days[0].toordinal(), days[1].toordinal()
        a["told"] = told
        matrix = np.zeros((n, dims), dtype=np.float32)
        # A vector of the wrong length (damage: `vault status` and `vault index` find it) is
        # left out: its unit goes by keywords, never shifts the other rows.
        with_vector = [i for i, r in enumerate(rows) if r[5] is not None
                       and len(r[5]) == dims * 4]
        if with_vector:
            blob = b"".join(rows[i][5] for i in with_vector)  # type: ignore[misc]
            matrix[with_vector] = np.frombuffer(blob, dtype=np.float32).reshape(-1, dims)
        a["matrix"] = matrix
        a["has_vectors"] = np.array([bool(with_vector)])
        # Sections: runs of units of one file under one heading path.
        starts = np.zeros(n, dtype=np.int64)
        if n:
            starts[1:] = [
                x[1] != y[1] or x[2] != y[2] for x, y in zip(rows, rows[1:], strict=False)
            ]
        a["section"] = np.cumsum(starts)
        for w in windows:
            lengths, members = _windows(a["section"], w)
            a[f"w{w}_len"] = lengths
            for k, (unit_rows, window_rows) in enumerate(members):
                a[f"w{w}_rows{k}"] = unit_rows
                a[f"w{w}_wins{k}"] = window_rows
            a[f"w{w}_norm"] = _window_norms(matrix, bool(with_vector), lengths, members)
        a.update(_postings(rows, a["scope_codes"], len(names)))
        return cls(a, windows)

    def recency(self, today: int, half_life_days: float, weight: float) -> np.ndarray:
        """`recency_factors` of every unit, computed once a day."""
        key = (today, half_life_days, weight)
        if self._recency is None or self._recency_key != key:
            self._recency = recency_factors(self.day_numbers, today, half_life_days, weight)
            self._recency_key = key
        return self._recency

    def positions(self, uids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The table rows of unit ids, -1 for ids the table does not hold."""
        import numpy as np

        wanted = np.asarray(uids, dtype=np.int64)
        if len(self._sorted_ids) == 0:
            return np.full(len(wanted), -1, dtype=np.int64)
        at = np.searchsorted(self._sorted_ids, wanted)
        at = np.minimum(at, len(self._sorted_ids) - 1)
        found = self._sorted_ids[at] == wanted
        return np.where(found, self._order[at], -1)


class FieldPostings:
    """One field's inverted index as arrays: for term number t, the units holding it are
    rows[offsets[t]:offsets[t+1]] with their term frequencies; plus each unit's length.

    With a `Restriction`, postings, idf and the average length count only its units: a scope's
    scores are what they would be in a vault holding only what the scope sees."""

    def __init__(self, arrays: Mapping[str, np.ndarray], field: str) -> None:
        self.field = field
        self.offsets = arrays[f"{field}_offsets"]
        self.rows = arrays[f"{field}_rows"]
        self.tf = arrays[f"{field}_tf"]
        self.lengths = arrays[f"{field}_len"]
        self.average = float(arrays[f"{field}_avg"][0])
        self.units = len(self.lengths)

    def postings(
        self, term: int | None, within: Restriction | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        if term is None or term + 1 >= len(self.offsets):
            return self.rows[:0], self.tf[:0]
        start, end = int(self.offsets[term]), int(self.offsets[term + 1])
        rows, tf = self.rows[start:end], self.tf[start:end]
        if within is not None:
            keep = within.mask[rows]
            rows, tf = rows[keep], tf[keep]
        return rows, tf

    def idf(self, term: int | None, within: Restriction | None = None) -> float:
        """Robertson idf, log(1 + (N - n + 0.5) / (n + 0.5)), as the Whoosh weighting."""
        return self._idf(len(self.postings(term, within)[0]), within)

    def _idf(self, n: int, within: Restriction | None) -> float:
        if n == 0:
            return 0.0
        units = self.units if within is None else within.units
        return math.log(1.0 + (units - n + 0.5) / (n + 0.5))

    def bm25(
        self, term: int | None, k1: float, b: float, within: Restriction | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(unit rows, BM25 score of the term in each): Whoosh's BM25F formula per field."""
        rows, tf = self.postings(term, within)
        if len(rows) == 0:
            return rows, tf.astype("float64")
        average = (self.average if within is None else within.averages[self.field]) or 1.0
        norm = k1 * ((1.0 - b) + b * self.lengths[rows] / average)
        return rows, self._idf(len(rows), within) * (tf * (k1 + 1.0)) / (tf + norm)


def _postings(
    rows: Sequence[UnitRow], scope_codes: np.ndarray, scopes: int
) -> dict[str, np.ndarray]:
    """The text, heading and label fields' inverted index as arrays (see FieldPostings), built
    from the analyzed terms the indexer stored with each unit (headings and lead-in labels are
    analyzed here, once per distinct string); and each field's total length per scope."""
    import numpy as np
    from whoosh.util.numeric import byte_to_length, length_to_byte

    vocab: dict[str, int] = {}
    out: dict[str, np.ndarray] = {}
    by_string: dict[str | None, list[str]] = {None: []}

    def analyzed(text: str | None) -> list[str]:
        found = by_string.get(text)
        if found is None:
            found = by_string[text] = terms_of(text or "")
        return found

    fields: tuple[tuple[str, Callable[[UnitRow], list[str]]], ...] = (
        ("tx", lambda r: r[7].split()),
        ("hd", lambda r: analyzed(r[2])),
        ("lb", lambda r: analyzed(lead_label(r[8]))),
    )
    for name, terms_of_row in fields:
        flat: list[str] = []
        sizes: list[int] = []
        for row in rows:
            terms = terms_of_row(row)
            sizes.append(len(terms))
            flat.extend(terms)
        for term in dict.fromkeys(flat):  # term numbers in order of first appearance
            vocab.setdefault(term, len(vocab))
        lengths = np.asarray(sizes, dtype=np.int64)
        terms_at = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
        rows_at = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
        # One posting per (unit, term) with its count, then grouped by term, units ascending.
        pairs, counts = np.unique(rows_at * len(vocab) + terms_at, return_counts=True)
        ids = pairs % len(vocab)
        order = np.argsort(ids, kind="stable")
        out[f"{name}_rows"] = (pairs // len(vocab)).astype(np.int32)[order]
        out[f"{name}_tf"] = counts.astype(np.float32)[order]
        # The average is exact, each unit's length rounded to what Whoosh's one byte holds:
        # the scores are then exactly the Whoosh index's.
        out[f"{name}_avg"] = np.array([lengths.mean() if len(lengths) else 0.0])
        out[f"{name}_scope_len"] = np.bincount(scope_codes, weights=lengths, minlength=scopes)
        longest = int(lengths.max(initial=0))
        rounded = [byte_to_length(length_to_byte(x)) for x in range(longest + 1)]
        out[f"{name}_len"] = np.asarray(rounded, dtype=np.float32)[lengths]
        out[f"{name}_ids"] = ids  # replaced below, once the vocabulary is complete
    size = len(vocab)
    for name, _ in fields:
        counts = np.bincount(out.pop(f"{name}_ids"), minlength=size)
        out[f"{name}_offsets"] = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    out["vocab"] = np.frombuffer("\n".join(vocab).encode("utf-8"), dtype=np.uint8).copy()
    return out


def _window_norms(
    matrix: np.ndarray,
    has_vectors: bool,
    lengths: np.ndarray,
    membership: list[tuple[np.ndarray, np.ndarray]],
) -> np.ndarray:
    """|sum of a window's unit vectors|, so that a window's cosine to a query follows from
    its units' cosines: cos(q, sum v) = sum cos(q, v) / |sum v|. No window is embedded."""
    import numpy as np

    count = len(lengths)
    norms = np.ones(count, dtype=np.float64)
    if not has_vectors:
        return norms
    block = 8192
    for first in range(0, count, block):
        acc = np.zeros((min(block, count - first), matrix.shape[1]), dtype=np.float32)
        for rows, wins in membership:
            keep = (wins >= first) & (wins < first + block)
            acc[wins[keep] - first] += matrix[rows[keep]]
        norms[first : first + len(acc)] = np.linalg.norm(acc, axis=1)
    return np.maximum(norms, 1e-6)


def _windows(
    section: np.ndarray, size: int
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Sliding windows of `size` units inside each section (a shorter section is one window):
    their lengths, and the (unit rows, window rows) membership pairs."""
    import numpy as np

    n = len(section)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, [(empty, empty) for _ in range(size)]
    bounds = np.flatnonzero(np.diff(section)) + 1
    begins = np.concatenate(([0], bounds))
    section_lengths = np.diff(np.concatenate((begins, [n])))
    # A section of length L gives max(1, L - size + 1) windows starting at its first units.
    per_section = np.maximum(section_lengths - size + 1, 1)
    first_window = np.concatenate(([0], np.cumsum(per_section)[:-1]))
    total = int(per_section.sum())
    within = np.arange(total) - np.repeat(first_window, per_section)
    start = np.repeat(begins, per_section) + within
    length = np.minimum(np.repeat(section_lengths, per_section), size)
    index = np.arange(total)
    membership = []
    for offset in range(size):
        keep = length > offset
        membership.append((start[keep] + offset, index[keep]))
    return length.astype(np.int64), membership


