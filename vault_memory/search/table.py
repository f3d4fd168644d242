"""The unit table: every unit of the index in file order, with its section, date, salience,
vector and the postings of its analyzed terms, as numpy arrays a query is scored on. Built
from the store once and saved beside it (index/arrays.py), so a cold process maps it.

Units are grouped by scope (files/scopes.py), the root's first, so the units a scope may see
are a few runs of rows: `restrict` gives a scoped search its mask, its row ranges and the
unit counts and field lengths of just those units (a scope's BM25 is computed as if the vault
held only what it sees).
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..index import after_label, lead_label, terms_of
from .dates import MOST_TOLD, Day, on_days, told_ranges
from .people import addressed_names, self_names
from .ranking import at_rows, is_question, length_factors, recency_factors, speaks_of_self

if TYPE_CHECKING:
    import numpy as np

    from ..index import UnitRow

TABLE_FORMAT = 16  # bump when UnitTable's arrays change meaning (5: by scope; 6: file ids;
# 7: terms in sorted order, exact field lengths, the files' marks: patched by changed files;
# 8: the days a unit's relative dates name; 9: the vectors kept apart, patched by appending;
# 10: rows, sections, windows, days and line counts as int32: `ROW_DTYPE`; 11: more relative
# dates read: "this weekend", "in two weeks", "tmr", weekday names only as whole names; 12: up
# to `MOST_TOLD` of a unit's relative dates, not only its first; 13: windows of turns,
# `turn_on`; 14: a span lasting up to the line's day tells when it began, "for 3 years now";
# 15: the names a unit's speaker gives themself and calls the other by, fields `me`, `to`;
# 16: whether a unit speaks of its speaker, `of_self`)
#: How a table holds its rows' vectors: `base` (saved in a file of its own, which patched
#: tables share), the vectors of rows patched in since (`vec_extra`), and for a patched table
#: where each row's vector is in base ++ extra (`vec_rows`; absent: row i's is base[i]).
VECTOR_ARRAYS = ("base", "vec_extra", "vec_rows")
#: A patched table is compacted (its vectors written in row order, as `build` does) when the
#: vectors appended, or left unused in its base, pass this many rows or this share of its rows.
APPENDED_MOST = 4096
APPENDED_SHARE = 16

# Rows are the index backend's `UnitRow`s; a row may leave its scope out (the root's).
#: text, heading, lead-in label, the names a unit's speaker gives themself ("I'm Kate") and the
#: names it calls the person it speaks to ("Thanks, Kate!"): `people.py`
FIELDS = ("tx", "hd", "lb", "me", "to")
#: The dtype of what counts rows, sections, windows, day ordinals and lines (postings' rows
#: were int32 already): half the bytes of int64, so a patched table copies and saves less
#: (a fifth of the table at 100,000 units). Unit and file ids stay int64 (database rowids).
#: Day ordinals end at 3,652,059 (`date.max`); a unit's line count is capped at `MOST_LINES`.
ROW_DTYPE = "int32"
MOST_ROWS = 2**31 - 1  # a table holds fewer rows (`build` refuses more)
MOST_LINES = 2**31 - 1  # a unit counted as holding more lines holds this many
#: A window of k turns (`_turn_windows`) holds at most this many units a turn (4k in all): a
#: speaker who sends dozens of messages in a row lifts no window of a hundred units.
TURN_UNITS_MOST = 4


@dataclass(frozen=True)
class RunPairs:
    """The (unit row, window row) pairs of the context windows of one size whose unit is a
    message of a run (`UnitTable.run_pairs`), grouped by family and row; and of them, those
    whose window holds another message of the run ("mates"), with the rows lo..hi
    (exclusive) of the run inside the window and the window's own rows first..last."""

    wins: np.ndarray  # each pair's window
    groups: np.ndarray  # where each (family, row) group of pairs starts
    rows: np.ndarray  # each group's row
    family: np.ndarray  # each group's family: 0 windows of units, 1 windows of turns
    mates: np.ndarray  # the pairs whose window holds a run-mate
    mate_rows: np.ndarray
    mate_wins: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    first: np.ndarray
    last: np.ndarray


@dataclass(frozen=True)
class Restriction:
    """The units a scoped search may see: a mask over the rows, the runs of rows it covers,
    and for BM25 their number and each field's average length."""

    mask: np.ndarray
    ranges: tuple[tuple[int, int], ...]
    units: int
    averages: Mapping[str, float]
    #: Per field, term number -> units holding it, when the rows are a sample of what the
    #: search sees (candidates read from an index server): BM25's idf counts these.
    frequencies: Mapping[str, Mapping[int, int]] | None = None


#: The least share of a section's messages that say "I", "my", "we" … for `in_own_account` to
#: read that section: an English chat told in quick messages holds far more (most of its
#: messages), a chat in another language next to none.
SELF_SHARE_READ = 0.2


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
        self.base = arrays["base"]
        self.extra = arrays["vec_extra"]
        self.vec_rows: np.ndarray | None = arrays.get("vec_rows")
        self.dims = int(self.base.shape[1])
        #: The name of the file `base` was saved in or mapped from (None: not saved yet).
        self.base_id: str | None = None
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
        self._context: dict[
            int,
            tuple[
                np.ndarray,
                np.ndarray,
                np.ndarray,
                list[tuple[np.ndarray, np.ndarray]],
                list[tuple[np.ndarray, np.ndarray]],
            ],
        ] = {}
        self._runs: tuple[np.ndarray, np.ndarray] | None = None
        self._lengths: tuple[float, np.ndarray] | None = None
        self._chatty: np.ndarray | None = None
        self._own: np.ndarray | None = None
        self._by_chattiness: dict[tuple[float, float], np.ndarray | float] = {}
        self._run_pairs: dict[tuple[int, bool], RunPairs | None] = {}
        self.text = FieldPostings(arrays, "tx")
        self.heading = FieldPostings(arrays, "hd")
        self.label = FieldPostings(arrays, "lb")  # lead-in labels (`lead_label`)
        self.self_named = FieldPostings(arrays, "me")  # "I'm Kate": tf 2 for "call me Kate"
        self.addressed = FieldPostings(arrays, "to")  # "Thanks, Kate!"
        self.question = arrays["question"]  # 1 where the unit ends by asking
        self.of_self = arrays["of_self"]  # 1 where it says "I", "my", "we" (`speaks_of_self`)
        # The first and last day of each range its relative dates name, `MOST_TOLD` pairs a
        # row (0: none): `tells`, `tells_within`, `tells_day_of`.
        self.told = arrays["told"]
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
                if units
                else 0.0
                for field in FIELDS
            }
            found = Restriction(np.zeros(0, dtype=bool), ranges, units, averages)
            self._restrictions[key] = found
        mask = np.zeros(len(self.ids), dtype=bool)
        for first, end in found.ranges:
            mask[first:end] = True
        return dataclasses.replace(found, mask=mask)

    def turn_family(
        self, size: int
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """The windows of `size` turns that are no window of `size` units (`_turn_windows`):
        their lengths, (unit rows, window rows) membership pairs and norms."""
        a = self.arrays
        members = [
            (a[f"t{size}_rows{k}"], a[f"t{size}_wins{k}"]) for k in range(TURN_UNITS_MOST * size)
        ]
        return a[f"t{size}_len"], members, a[f"t{size}_norm"]

    def context_windows(
        self, size: int, turns: bool = True
    ) -> tuple[
        np.ndarray,
        np.ndarray,
        np.ndarray,
        list[tuple[np.ndarray, np.ndarray]],
        list[tuple[np.ndarray, np.ndarray]],
    ]:
        """The context windows of `size` a unit is lifted by: the windows of `size` units
        and, with `turns`, those of `size` turns, numbered after them (one family: their
        scores are scaled together). Each window's first unit, lengths and norms, and the
        (unit rows, window rows) membership pairs of the units' windows and of the turns'
        (a unit at most once a pair)."""
        import numpy as np

        lengths, members = self.windows[size]
        norms = self.window_norms[size]
        if not turns:
            return members[0][0], lengths, norms, members, []
        found = self._context.get(size)
        if found is None:
            turn_lengths, turn_members, turn_norms = self.turn_family(size)
            if not len(turn_lengths):  # turns of one unit each (LoCoMo's, a flushed log)
                found = (members[0][0], lengths, norms, members, [])
            else:
                count = len(lengths)
                found = (
                    np.concatenate((members[0][0], turn_members[0][0])),
                    np.concatenate((lengths, turn_lengths)),
                    np.concatenate((norms, turn_norms)),
                    members,
                    [(rows, wins + count) for rows, wins in turn_members if len(rows)],
                )
            self._context[size] = found
        return found

    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the first row of its run and the row after its last: a run is one
        speaker's messages in a row in a conversation (`turn_on`); a row alone is a run of
        one. Found once a table."""
        import numpy as np

        if self._runs is None:
            on = self.arrays["turn_on"].astype(bool)
            n = len(on)
            at = np.arange(n)
            first = np.maximum.accumulate(np.where(on, 0, at)) if n else at
            opens_next = np.r_[~on[1:], True] if n else on
            end = np.minimum.accumulate(np.where(opens_next, at + 1, n)[::-1])[::-1]
            self._runs = (first, end)
        return self._runs

    def in_chatty_section(self) -> np.ndarray:
        """Per row, whether its section (a session of a chat) holds a run of one speaker's
        messages in a row (`runs`): a chat sent as quick messages, not one of whole turns
        that alternate. Found once a table."""
        import numpy as np

        if self._chatty is None:
            first, end = self.runs()
            section = self.section.astype(np.int64)
            chatty_sections = np.unique(section[(end - first) > 1])
            self._chatty = np.isin(section, chatty_sections)
        return self._chatty

    def in_own_account(self) -> np.ndarray:
        """Per row, whether it or a message before it in its run speaks of its sender ("I",
        "my", "we": `of_self`): the speaker's own account, which a message that speaks of no
        one ("the water was freezing") goes on with once it has begun. Found once a table."""
        import numpy as np

        if self._own is None:
            first, _ = self.runs()
            said = np.cumsum(self.of_self, dtype=np.int64)
            before = np.where(first > 0, said[np.maximum(first - 1, 0)], 0)
            # A section whose messages hardly ever say "I" is one the rule cannot read (a
            # chat in another language: the first-person words are English): all of it
            # counts as the speakers' own accounts, so none of it is marked down.
            rows = np.bincount(self.section)
            selves = np.bincount(self.section, weights=self.of_self)
            unread = selves < SELF_SHARE_READ * rows
            self._own = ((said - before) > 0) | unread[self.section]
        return self._own

    def by_chattiness(self, elsewhere: float, chatty: float) -> np.ndarray | float:
        """A setting's value for each row: `chatty` in the sections of a chat sent as quick
        messages (`in_chatty_section`), `elsewhere` in the others; one number when every row
        has the same (BM25's `b`: `FieldPostings.bm25`; the vector's weight). Found once a
        table."""
        import numpy as np

        key = (elsewhere, chatty)
        if key not in self._by_chattiness:
            value: np.ndarray | float = elsewhere
            if chatty != elsewhere and self.in_chatty_section().any():
                value = np.where(self.in_chatty_section(), chatty, elsewhere)
            self._by_chattiness[key] = value
        return self._by_chattiness[key]

    def run_pairs(self, size: int, turns: bool = True) -> RunPairs | None:
        """The (unit row, window row) pairs of `context_windows(size, turns)` whose unit is a
        message of a run of several (`runs`), each with the rows of its run inside the window
        (lo..hi, itself among them), grouped by family (windows of units, then of turns) and
        row: a message's own speaker's other messages that a window holds
        (`stages.shared_lifts`). None when no unit has a run-mate (LoCoMo's chats, whose
        speakers alternate; notes). Found once a table."""
        import numpy as np

        key = (size, turns)
        if key not in self._run_pairs:
            first, end = self.runs()
            in_run = (end - first) > 1
            found: RunPairs | None = None
            if in_run.any():
                starts, lengths, _, by_units, by_turns = self.context_windows(size, turns)
                parts: list[tuple[np.ndarray, ...]] = []
                for kind, members in enumerate((by_units, by_turns)):
                    for units, windows in members:
                        keep = in_run[units]
                        units, windows = units[keep], windows[keep]
                        lo = np.maximum(starts[windows], first[units])
                        hi = np.minimum(starts[windows] + lengths[windows], end[units])
                        parts.append((units, windows, lo, hi, np.full(len(units), kind)))
                joined = [np.concatenate(arrays) for arrays in zip(*parts, strict=True)]
                order = np.lexsort((joined[0], joined[4]))
                rows, wins, lo, hi, family = (a[order] for a in joined)
                group = np.r_[True, (rows[1:] != rows[:-1]) | (family[1:] != family[:-1])]
                mates = np.flatnonzero((hi - lo) > 1)
                found = RunPairs(
                    wins,
                    np.flatnonzero(group),
                    rows[group],
                    family[group],
                    mates,
                    rows[mates],
                    wins[mates],
                    lo[mates],
                    hi[mates],
                    starts[wins[mates]],
                    (starts + lengths)[wins[mates]],
                )
            self._run_pairs[key] = found
        return self._run_pairs[key]

    @property
    def matrix(self) -> np.ndarray:
        """Every row's vector, in row order (a copy for a patched table)."""
        import numpy as np

        if self.vec_rows is None:
            return self.base
        return self.vectors_of(np.arange(len(self.ids)))

    def vectors_of(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of `rows`."""
        return _gather(self.base, self.extra, self.vec_rows, rows)

    def cosines(
        self, query: np.ndarray, ranges: Sequence[tuple[int, int]] | None = None
    ) -> np.ndarray:
        """Every row's dot product with `query` (cosines: unit vectors), or only those of the
        rows in `ranges` (the others left 0, their vectors never multiplied)."""
        import numpy as np

        if ranges is None:
            if self.vec_rows is None:
                every: np.ndarray = self.base @ query
                return every.astype(np.float64)
            every = np.concatenate((self.base @ query, self.extra @ query))
            ordered: np.ndarray = every[self.vec_rows]
            return ordered.astype(np.float64)
        out = np.zeros(len(self.ids), dtype=np.float64)
        for first, end in ranges:
            if self.vec_rows is None:
                out[first:end] = self.base[first:end] @ query
            else:
                out[first:end] = self.vectors_of(np.arange(first, end)) @ query
        return out

    def appended_too_many(self) -> bool:
        """Whether the vectors patched in (or left behind by rows gone) grew past what a
        search should carry: then the table is `compacted` (and saved whole)."""
        n = len(self.ids)
        bound = max(APPENDED_MOST, n // APPENDED_SHARE)
        return len(self.extra) > bound or len(self.base) + len(self.extra) - n > bound

    def compacted(self) -> UnitTable:
        """This table with every row's vector in a base of its own, in row order (what
        `build` makes): a patched table whose appended vectors grew past a bound."""
        import numpy as np

        if self.vec_rows is None and len(self.extra) == 0:
            return self
        a = {k: v for k, v in self.arrays.items() if k not in VECTOR_ARRAYS}
        a["base"] = self.matrix
        a["vec_extra"] = np.zeros((0, self.dims), dtype=np.float32)
        return UnitTable(a, list(self.windows))

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
        files: FileMarks | None = None,
        memo: dict[str, dict[Any, Any]] | None = None,
    ) -> UnitTable:
        """rows: (unit id, file id, heading, date, salience, vector bytes or None, line count,
        analyzed terms, text[, scope]) in file order (grouped by scope here if they are not).
        files: what the store says of each file the rows come from (`Store.file_marks`), kept
        so that `patch` knows later which files changed. memo: what was derived from texts
        by earlier builds (their analyzed headings and labels, questions, named days), kept
        by a caller that builds many small tables of overlapping rows (a search's candidates
        read from an index server)."""
        import numpy as np

        _check_rows(len(rows))
        scope_of_row = [_scope(r) for r in rows]
        if any(x > y for x, y in zip(scope_of_row, scope_of_row[1:], strict=False)):
            order = sorted(range(len(rows)), key=scope_of_row.__getitem__)  # stable
            rows = [rows[i] for i in order]
        names = sorted(set(scope_of_row))
        terms = _field_terms(rows, memo)
        a = _row_arrays(rows, dims, names, terms, _length_bytes(), memo)
        vocab = sorted({t for flat, _ in terms.values() for t in flat})
        number = {t: i for i, t in enumerate(vocab)}
        for field, (flat, _) in terms.items():
            term_at = np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat))
            row_at = np.repeat(np.arange(len(rows), dtype=np.int64), a[f"{field}_count"])
            term, row, tf = _pairs(term_at, row_at, len(rows))
            a[f"{field}_rows"], a[f"{field}_tf"] = row, tf
            a[f"{field}_offsets"] = _offsets(term, len(vocab))
        a["vocab"] = _joined(vocab)
        a.update(_file_arrays(files, a))
        a["base"] = a.pop("matrix")
        a["vec_extra"] = np.zeros((0, dims), dtype=np.float32)
        _derive(a, names, windows, None)
        return cls(a, windows)

    def patch(
        self,
        changed: Sequence[int],
        rows: Sequence[UnitRow],
        dims: int,
        files: FileMarks | None = None,
    ) -> UnitTable:
        """This table with the units of the files `changed` (file ids: edited, added, gone)
        replaced by `rows` (those files' units now, in the order `build` takes), equal array
        for array to the table `build` makes of the whole index. Costs the changed rows plus
        copies of the unchanged ones (runs of rows, not one by one), not a pass of Python
        over every unit: no terms are analyzed again, no window norm of an unchanged section
        is summed again. In three steps: where each row goes (`_Splice.plan`), the arrays of
        one value a row spliced (`_Splice.row_arrays`), the vocabulary and postings merged
        (`_Splice.postings`)."""
        splice = _Splice.plan(self, changed, rows, dims)
        a = splice.row_arrays()
        a.update(splice.postings())
        a.update(_file_arrays(files, a))
        windows = list(self.windows)
        _derive(a, splice.names, windows, (self, splice.is_new, splice.new_row_of))
        patched = UnitTable(a, windows)
        patched.base_id = self.base_id
        return patched

    def file_marks(self) -> tuple[dict[int, int], dict[int, int]]:
        """What the store said of each file when this table was made (`Store.file_marks`),
        and the files with units that had no vector: how many."""
        import numpy as np

        keys = self.arrays["file_keys"].tolist()
        missing = self.arrays["file_unvectored"]
        return (
            dict(zip(keys, self.arrays["file_marks"].tolist(), strict=True)),
            {keys[i]: int(missing[i]) for i in np.flatnonzero(missing).tolist()},
        )

    def tells(self) -> np.ndarray:
        """Which units' text names days relative to their own ("yesterday", "in two weeks")."""
        return self.told[:, 0] > 0

    def tells_within(self, first: int, last: int) -> np.ndarray:
        """Which units name a range of days wholly inside `first`..`last` (date ordinals):
        a line's "next week" is not in a range of one day."""
        import numpy as np

        start, end = self.told[:, 0::2], self.told[:, 1::2]
        return np.asarray(((start > 0) & (start >= first) & (end <= last)).any(axis=1))

    def tells_day_of(self, days: list[Day]) -> np.ndarray:
        """Which units name one day (not a week) that is one of `days` (`dates.on_days`)."""
        import numpy as np

        start, end = self.told[:, 0::2], self.told[:, 1::2]
        found = np.zeros(len(self.told), dtype=bool)
        for k in range(start.shape[1]):
            found |= (start[:, k] == end[:, k]) & on_days(start[:, k], days)
        return found

    def recency(self, today: int, half_life_days: float, weight: float) -> np.ndarray:
        """`recency_factors` of every unit, computed once a day."""
        key = (today, half_life_days, weight)
        if self._recency is None or self._recency_key != key:
            self._recency = recency_factors(self.day_numbers, today, half_life_days, weight)
            self._recency_key = key
        return self._recency

    def length_factors(self, cost: float) -> np.ndarray:
        """`ranking.length_factors` of every unit by its analyzed words, once a table."""
        if self._lengths is None or self._lengths[0] != cost:
            self._lengths = (cost, length_factors(self.text.lengths, cost))
        return self._lengths[1]

    def positions(self, uids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The table rows of unit ids, -1 for ids the table does not hold."""
        import numpy as np

        wanted = np.asarray(uids, dtype=np.int64)
        if len(self._sorted_ids) == 0:
            return np.full(len(wanted), -1, dtype=np.int64)
        at = np.searchsorted(self._sorted_ids, wanted)
        at = np.minimum(at, len(self._sorted_ids) - 1)
        found = self._sorted_ids[at] == wanted
        return np.where(found, self._order[at].astype(np.int64), -1)


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
        return self._idf(self.frequency(term, within), within)

    def frequency(self, term: int | None, within: Restriction | None = None) -> int:
        """How many units (of `within`) hold the term: its postings, or the count
        `within.frequencies` gives when the rows are candidates."""
        return self._count(term, len(self.postings(term, within)[0]), within)

    def _count(self, term: int | None, held: int, within: Restriction | None) -> int:
        if within is None or within.frequencies is None or not held:
            return held
        return max(held, within.frequencies.get(self.field, {}).get(term or 0, 0))

    def _idf(self, n: int, within: Restriction | None) -> float:
        if n == 0:
            return 0.0
        units = self.units if within is None else within.units
        return math.log(1.0 + (units - n + 0.5) / (n + 0.5))

    def bm25(
        self,
        term: int | None,
        k1: float,
        b: float | np.ndarray,
        within: Restriction | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(unit rows, BM25 score of the term in each): Whoosh's BM25F formula per field;
        `b` one number, or one a unit (`UnitTable.by_chattiness`)."""
        rows, tf = self.postings(term, within)
        if len(rows) == 0:
            return rows, tf.astype("float64")
        b = at_rows(b, rows)
        average = (self.average if within is None else within.averages[self.field]) or 1.0
        norm = k1 * ((1.0 - b) + b * self.lengths[rows] / average)
        return rows, self._idf(self._count(term, len(rows), within), within) * (tf * (k1 + 1.0)) / (
            tf + norm
        )


@dataclass
class _Splice:
    """A patch of a unit table (`UnitTable.patch`): the kept rows (those of unchanged files)
    and the new ones (of the changed files, analyzed here), where each goes in the patched
    table, and the runs of kept rows that move together."""

    old: UnitTable
    rows: Sequence[UnitRow]  # the changed files' units, grouped by scope
    drop: np.ndarray  # old rows of the changed files
    keep: np.ndarray  # old rows kept, ascending
    names: list[str]  # the patched table's scopes
    recode: np.ndarray  # old scope code -> new one (-1: gone)
    terms: dict[str, tuple[list[str], list[int]]]  # the new rows' terms per field
    added: dict[str, np.ndarray]  # the new rows' arrays of one value a row
    new_slots: np.ndarray  # where each new row goes
    kept_slots: np.ndarray  # where each kept row goes
    is_new: np.ndarray
    new_row_of: np.ndarray  # old row -> its row in the patched table (-1: dropped)
    runs: list[tuple[int, int, int]]  # (old row, new row, length) of kept rows moving together
    size: int  # rows of the patched table

    @classmethod
    def plan(
        cls, old: UnitTable, changed: Sequence[int], rows: Sequence[UnitRow], dims: int
    ) -> _Splice:
        import numpy as np

        n = len(old.ids)
        drop = np.isin(old.file_ids, np.asarray(sorted(set(changed)), dtype=np.int64))
        keep = np.flatnonzero(~drop)
        _check_rows(len(keep) + len(rows))
        scope_of_row = [_scope(r) for r in rows]
        if any(x > y for x, y in zip(scope_of_row, scope_of_row[1:], strict=False)):
            order = sorted(range(len(rows)), key=scope_of_row.__getitem__)
            rows = [rows[i] for i in order]
            scope_of_row = [scope_of_row[i] for i in order]
        old_names = old.scope_names
        # (np.unique would import numpy.ma: 30 ms of a search after an edit)
        kept_codes = np.flatnonzero(np.bincount(old.scope_codes[keep], minlength=len(old_names)))
        names = sorted({old_names[c] for c in kept_codes.tolist()} | set(scope_of_row))
        code_of = {name: code for code, name in enumerate(names)}
        recode = np.asarray([code_of.get(name, -1) for name in old_names], dtype=np.int64)
        terms = _field_terms(rows)
        added = _row_arrays(rows, dims, names, terms, old.arrays["length_bytes"])
        # Where each new row goes among the kept ones: by (scope, file id), as `build` orders.
        kept_key = (recode[old.scope_codes[keep]] << 40) | old.file_ids[keep]
        new_key = (added["scope_codes"].astype(np.int64) << 40) | added["file_ids"]
        new_slots = np.searchsorted(kept_key, new_key, side="right") + np.arange(len(rows))
        size = len(keep) + len(rows)
        is_new = np.zeros(size, dtype=bool)
        is_new[new_slots] = True
        kept_slots = np.flatnonzero(~is_new)
        new_row_of = np.full(n, -1, dtype=ROW_DTYPE)
        new_row_of[keep] = kept_slots
        return cls(
            old,
            rows,
            drop,
            keep,
            names,
            recode,
            terms,
            added,
            new_slots,
            kept_slots,
            is_new,
            new_row_of,
            _runs(keep, kept_slots),
            size,
        )

    def _spliced(self, old: np.ndarray, new: np.ndarray) -> np.ndarray:
        return _splice(old, new, self.runs, self.new_slots, self.size)

    def row_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of one value a row: the kept rows' copied in runs, the new rows' put in
        their slots; the vectors' base shared, the new rows' vectors appended."""
        import numpy as np

        table, old, added = self.old, self.old.arrays, self.added
        n = len(table.ids)
        a: dict[str, np.ndarray] = {}
        same_codes = len(self.names) == len(table.scope_names) and bool(
            (self.recode == np.arange(len(self.recode))).all()
        )
        for name in (*_ROW_ARRAYS, *(f"{f}_{k}" for f in FIELDS for k in ("len", "count"))):
            source = (
                self.recode[old[name]].astype(np.int32)
                if name == "scope_codes" and not same_codes
                else old[name]
            )
            a[name] = self._spliced(source, added[name])
        # The vectors: the base is shared, the new rows' appended (no copy of the others).
        stored = len(table.base) + len(table.extra)
        _check_rows(stored + len(self.rows))
        old_vec_rows = (
            table.vec_rows if table.vec_rows is not None else np.arange(n, dtype=ROW_DTYPE)
        )
        a["vec_rows"] = self._spliced(
            old_vec_rows, stored + np.arange(len(self.rows), dtype=ROW_DTYPE)
        )
        a["base"] = table.base
        a["vec_extra"] = np.concatenate((table.extra, added["matrix"]))
        a["length_bytes"] = old["length_bytes"]
        a["section"] = self._spliced(
            old["section"], added["section"] + (int(old["section"][-1]) + 1 if n else 0)
        )
        return a

    def postings(self) -> dict[str, np.ndarray]:
        """The vocabulary and each field's postings: the kept ones renumbered (rows and
        terms, both in order: still sorted), the new rows' merged in, by offsets: no pass
        expands a term per posting."""
        old = self.old.arrays
        vocab = _Vocabulary.merged(old, self)
        a = {"vocab": vocab.joined if vocab.joined is not None else old["vocab"]}
        moves = _moves(self.runs)
        for field, (flat, _) in self.terms.items():
            a.update(self._field_postings(field, flat, vocab, moves))
        return a

    def _field_postings(
        self,
        field: str,
        flat: list[str],
        vocab: _Vocabulary,
        moves: list[tuple[int, int]] | None,
    ) -> dict[str, np.ndarray]:
        import numpy as np

        old = self.old.arrays
        term_at = np.fromiter(map(vocab.number.__getitem__, flat), dtype=np.int64, count=len(flat))
        row_at = np.repeat(self.new_slots, self.added[f"{field}_count"])
        add_term, add_row, add_tf = _pairs(term_at, row_at, self.size)
        gone_at, left = vocab.gone[field]
        counts = np.zeros(vocab.size, dtype=np.int64)
        counts[vocab.renumber[vocab.alive]] = left[vocab.alive]
        kept_offsets = np.concatenate(([0], np.cumsum(counts)))
        old_rows = old[f"{field}_rows"]
        # Each new posting goes into its term's kept run, before the first larger row.
        gone_before = gone_at - np.arange(len(gone_at))  # where they were, once deleted
        new_row_of = self.new_row_of

        def kept_row(at_kept: np.ndarray) -> np.ndarray:
            rows: np.ndarray = old_rows[
                at_kept + np.searchsorted(gone_before, at_kept, side="right")
            ]
            renumbered: np.ndarray = new_row_of[rows]
            return renumbered

        into = _insertion_points(kept_row, kept_offsets, add_term, add_row)
        pieces = _pieces(len(old_rows), gone_at, into)
        out = _copied(old_rows, pieces, gone_at, into)
        out = _moved(out, moves, new_row_of)
        out[into + np.arange(len(into))] = add_row
        tf = _copied(old[f"{field}_tf"], pieces, gone_at, into)
        tf[into + np.arange(len(into))] = add_tf
        return {
            f"{field}_rows": out,
            f"{field}_tf": tf,
            f"{field}_offsets": kept_offsets + _offsets(add_term, vocab.size),
        }


@dataclass
class _Vocabulary:
    """The vocabulary of a patched table: the old terms some row still holds and the new rows'
    terms, in sorted order, and how the old terms' numbers map to the new ones."""

    gone: dict[str, tuple[np.ndarray, np.ndarray]]  # field -> (dropped postings, kept a term)
    alive: np.ndarray  # the old terms still held
    renumber: np.ndarray  # old term number -> new (for the alive ones)
    number: dict[str, int]  # a new row's term -> its new number
    size: int
    joined: np.ndarray | None  # the new vocabulary (None: the old one, numbered alike)

    @classmethod
    def merged(cls, old: Mapping[str, np.ndarray], splice: _Splice) -> _Vocabulary:
        import numpy as np

        old_vocab = bytes(old["vocab"]).decode("utf-8").split("\n") if len(old["vocab"]) else []
        gone: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # field -> (positions, per term)
        alive = np.zeros(len(old_vocab), dtype=bool)
        for field in FIELDS:
            offsets = old[f"{field}_offsets"]
            gone_at = np.flatnonzero(_dropped(old[f"{field}_rows"], splice.drop))
            left = np.diff(offsets) - np.bincount(
                np.searchsorted(offsets, gone_at, side="right") - 1, minlength=len(offsets) - 1
            )
            gone[field] = (gone_at, left)
            alive |= left > 0
        inserted: dict[str, int] = {}  # a term the old vocabulary lacks -> where it goes in it
        for flat, _ in splice.terms.values():
            for t in dict.fromkeys(flat):
                at = bisect.bisect_left(old_vocab, t)
                if at < len(old_vocab) and old_vocab[at] == t:
                    alive[at] = True
                else:
                    inserted[t] = at
        new_terms = sorted(inserted, key=lambda t: (inserted[t], t))
        places = np.asarray([inserted[t] for t in new_terms], dtype=np.int64)
        before = np.concatenate(([0], np.cumsum(alive)))  # alive old terms before each
        renumber = before[:-1] + np.searchsorted(places, np.arange(len(old_vocab)), side="right")
        new_numbers = before[places] + np.arange(len(new_terms))
        size = int(before[-1]) + len(new_terms)
        joined = None
        if new_terms or size != len(old_vocab):  # else the same terms, numbered alike
            vocab: list[str] = [""] * size
            for i in np.flatnonzero(alive).tolist():
                vocab[int(renumber[i])] = old_vocab[i]
            for t, place in zip(new_terms, new_numbers.tolist(), strict=True):
                vocab[place] = t
            joined = _joined(vocab)
        number = dict(zip(new_terms, new_numbers.tolist(), strict=True))
        for t in {t for flat, _ in splice.terms.values() for t in flat} - set(number):
            number[t] = int(renumber[bisect.bisect_left(old_vocab, t)])
        return cls(gone, alive, renumber, number, size, joined)


_ROW_ARRAYS = (
    "scope_codes",
    "ids",
    "salience",
    "file_ids",
    "day_numbers",
    "line_counts",
    "question",
    "of_self",
    "told",
    "vectored",
    "turn_on",
)


def _scope(row: UnitRow) -> str:
    return row[9] if len(row) > 9 else ""


def _field_terms(
    rows: Sequence[UnitRow], memo: dict[str, dict[Any, Any]] | None = None
) -> dict[str, tuple[list[str], list[int]]]:
    """Each field's analyzed terms of every row, flat, and how many each row has: the text's
    as the indexer stored them, headings and lead-in labels analyzed here (once a string).
    With a `memo` (a searcher's, across the candidates of its searches), a row's five lists
    are derived once per (heading, terms, text) and looked up once a row after that."""
    readers = _field_readers(memo)
    if memo is None:
        per_row = [tuple(read(row) for _, read in readers) for row in rows]
    else:
        known: dict[tuple[str, str, str], tuple[list[str], ...]] = memo.setdefault("fields", {})
        per_row = []
        for row in rows:
            key = (row[2], row[7], row[8])
            found = known.get(key)
            if found is None:
                found = known[key] = tuple(read(row) for _, read in readers)
            per_row.append(found)
    out = {}
    for k, (name, _) in enumerate(readers):
        lists = [terms[k] for terms in per_row]
        out[name] = ([t for terms in lists for t in terms], list(map(len, lists)))
    return out


def _field_readers(
    memo: dict[str, dict[Any, Any]] | None,
) -> tuple[tuple[str, Callable[[UnitRow], list[str]]], ...]:
    """Per field of `FIELDS`, how a row's analyzed terms are read (headings, labels and the
    names people use analyzed once a string, kept in `memo` when there is one)."""
    by_string: dict[str | None, list[str]] = (
        {None: []} if memo is None else memo.setdefault("analyzed", {None: []})
    )

    def analyzed(text: str | None) -> list[str]:
        found = by_string.get(text)
        if found is None:
            found = by_string[text] = terms_of(text or "")
        return found

    names: dict[str, tuple[list[str], list[str]]] = (
        {} if memo is None else memo.setdefault("names", {})
    )

    def people(text: str) -> tuple[list[str], list[str]]:
        found = names.get(text)
        if found is None:
            messages = [after_label(line) for line in text.split("\n")]
            said = [
                t
                for message in messages
                for name, weight in self_names(message)
                for t in terms_of(name) * weight
            ]
            called = [t for m in messages for name in addressed_names(m) for t in terms_of(name)]
            found = names[text] = (said, called)
        return found

    return (
        ("tx", lambda r: r[7].split()),
        ("hd", lambda r: analyzed(r[2])),
        ("lb", lambda r: analyzed(lead_label(r[8]))),
        ("me", lambda r: people(r[8])[0]),
        ("to", lambda r: people(r[8])[1]),
    )


def _row_arrays(
    rows: Sequence[UnitRow],
    dims: int,
    names: Sequence[str],
    terms: Mapping[str, tuple[list[str], list[int]]],
    length_bytes: np.ndarray,
    memo: dict[str, dict[Any, Any]] | None = None,
) -> dict[str, np.ndarray]:
    """The arrays of one value per row, for rows grouped by scope (`names` in order) and in
    file order; "section" numbers the rows' runs of one file under one heading from 0.
    `length_bytes`: the lengths Whoosh's one length byte stands for (`_length_bytes`)."""
    import numpy as np

    n = len(rows)
    a: dict[str, np.ndarray] = {}
    code_of = {name: code for code, name in enumerate(names)}
    a["scope_codes"] = np.fromiter((code_of[_scope(r)] for r in rows), dtype=np.int32, count=n)
    a["ids"] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    a["salience"] = np.fromiter((r[4] for r in rows), dtype=np.float64, count=n)
    a["file_ids"] = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
    ordinals: dict[str | None, int] = {None: 0}  # date ordinals, 0 for undated units
    for r in rows:
        if r[3] is not None and r[3] not in ordinals:
            ordinals[r[3]] = dt.date.fromisoformat(r[3]).toordinal()
    a["day_numbers"] = np.fromiter((ordinals[r[3]] for r in rows), dtype=ROW_DTYPE, count=n)
    lines = np.fromiter((r[6] for r in rows), dtype=np.int64, count=n)
    a["line_counts"] = np.minimum(lines, MOST_LINES).astype(ROW_DTYPE)
    asks: dict[str, bool] = {} if memo is None else memo.setdefault("question", {})
    a["question"] = np.fromiter(
        (asks[r[8]] if r[8] in asks else asks.setdefault(r[8], is_question(r[8])) for r in rows),
        dtype=np.uint8,
        count=n,
    )
    # Read for a line of a speaker only (the rule reads it in chats; 7 us a unit): 0 where
    # the unit has no lead-in label.
    selves: dict[str, bool] = {} if memo is None else memo.setdefault("of_self", {})
    a["of_self"] = np.fromiter(
        (
            (selves[r[8]] if r[8] in selves else selves.setdefault(r[8], speaks_of_self(r[8])))
            if labelled
            else False
            for r, labelled in zip(rows, terms["lb"][1], strict=True)
        ),
        dtype=np.uint8,
        count=n,
    )
    # The days a dated unit's relative dates name ("yesterday", "last Fri"), from its own
    # text and date (so derivable file by file): the first and last day ordinal of each of
    # its first `MOST_TOLD` ranges, 0 for none.
    told = np.zeros((n, 2 * MOST_TOLD), dtype=ROW_DTYPE)
    named: dict[tuple[str, str], list[int]] = {} if memo is None else memo.setdefault("told", {})
    for i, r in enumerate(rows):
        if r[3] is not None:
            key = (r[8], r[3])
            if key not in named:
                ranges = told_ranges(r[8], dt.date.fromordinal(ordinals[r[3]]))
                named[key] = [d.toordinal() for days in ranges for d in days]
            found = named[key]
            if found:
                told[i, : len(found)] = found
    a["told"] = told
    matrix = np.zeros((n, dims), dtype=np.float32)
    # A vector of the wrong length (damage: `vault status` and `vault index` find it) is
    # left out: its unit goes by keywords, never shifts the other rows.
    with_vector = [i for i, r in enumerate(rows) if r[5] is not None and len(r[5]) == dims * 4]
    if with_vector:
        blob = b"".join(rows[i][5] for i in with_vector)  # type: ignore[misc]
        matrix[with_vector] = np.frombuffer(blob, dtype=np.float32).reshape(-1, dims)
    a["matrix"] = matrix
    vectored = np.zeros(n, dtype=np.uint8)
    vectored[with_vector] = 1
    a["vectored"] = vectored
    # Sections: runs of units of one file under one heading path.
    starts = np.zeros(n, dtype=ROW_DTYPE)
    if n:
        starts[1:] = [x[1] != y[1] or x[2] != y[2] for x, y in zip(rows, rows[1:], strict=False)]
    a["section"] = np.cumsum(starts, dtype=ROW_DTYPE)
    a["turn_on"] = _turns_on(terms["lb"], a["section"])
    for field, (_, sizes) in terms.items():
        # Each unit's length rounded to what Whoosh's one byte holds (the scores are then
        # exactly the Whoosh index's); the exact count for the averages.
        counts = np.asarray(sizes, dtype=np.int32)
        at = np.minimum(np.searchsorted(length_bytes, counts, side="left"), 255)
        a[f"{field}_len"] = length_bytes[at].astype(np.float32)
        a[f"{field}_count"] = counts
    a["length_bytes"] = np.asarray(length_bytes, dtype=np.int64)
    return a


def _length_bytes() -> np.ndarray:
    """The 256 lengths Whoosh's one length byte stands for, ascending: a length is stored as
    the first of them not below it (`length_to_byte`), the last for any longer. Kept in the
    table, so that a patch does not import Whoosh (50 ms with what it imports)."""
    import numpy as np
    from whoosh.util.numeric import byte_to_length

    return np.asarray([byte_to_length(i) for i in range(256)], dtype=np.int64)


def _pairs(
    term_at: np.ndarray, row_at: np.ndarray, rows: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One posting per (term, row) with its count, by term and then row: (terms, rows, tf)."""
    import numpy as np

    pairs, counts = np.unique(term_at * max(rows, 1) + row_at, return_counts=True)
    return (
        pairs // max(rows, 1),
        (pairs % max(rows, 1)).astype(np.int32),
        counts.astype(np.float32),
    )


def _offsets(term: np.ndarray, size: int) -> np.ndarray:
    import numpy as np

    counts = np.bincount(term, minlength=size)
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def _joined(words: Sequence[str]) -> np.ndarray:
    import numpy as np

    return np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8).copy()


#: file id -> a mark of what the store holds of it (`Store.file_marks`: changes whenever the
#: file is indexed again).
FileMarks = Mapping[int, int]


def _file_arrays(files: FileMarks | None, a: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The files the table was made from, their marks and how many of their units had no
    vector (the vectors a unit may get later, without its file changing)."""
    import numpy as np

    keys = np.asarray(sorted(files or ()), dtype=np.int64)
    marks = np.asarray([files[k] for k in keys.tolist()] if files else [], dtype=np.int64)
    file_ids = a["file_ids"]
    missing = file_ids[a["vectored"] == 0]
    at = np.searchsorted(keys, missing)
    known = at < len(keys)
    known[known] = keys[at[known]] == missing[known]
    unvectored = np.bincount(at[known], minlength=len(keys)).astype(np.int32)
    return {"file_keys": keys, "file_marks": marks, "file_unvectored": unvectored}


def _derive(
    a: dict[str, np.ndarray],
    names: Sequence[str],
    windows: Sequence[int],
    reuse: tuple[UnitTable, np.ndarray, np.ndarray] | None,
) -> None:
    """The arrays that follow from the per-row ones, the same way for a table built whole and
    a patched one: row order by id, scope bounds, sections numbered from 0, windows and their
    norms (with `reuse`, (old table, which rows are new, old row -> new row): the norms of the
    windows of unchanged sections are taken from the old table), field averages."""
    import numpy as np

    n = len(a["ids"])
    a["scope_bounds"] = np.searchsorted(a["scope_codes"], np.arange(len(names) + 1)).astype(
        np.int64
    )
    a["scope_names"] = _joined(names)
    a["order"] = np.argsort(a["ids"], kind="stable").astype(ROW_DTYPE)
    a["sorted_ids"] = a["ids"][a["order"]]
    has_vectors = bool(a["vectored"].any())
    a["has_vectors"] = np.array([has_vectors])

    def vectors_of(rows: np.ndarray) -> np.ndarray:
        return _gather(a["base"], a["vec_extra"], a.get("vec_rows"), rows)

    local = a["section"]
    starts = np.zeros(n, dtype=ROW_DTYPE)
    starts[1:] = local[1:] != local[:-1]
    a["section"] = np.cumsum(starts, dtype=ROW_DTYPE)
    section, turn_on = a["section"], a["turn_on"]
    for w in windows:
        for kind in ("w", "t"):  # windows of units, of turns
            make = functools.partial(_family, kind, section, turn_on, w)
            if reuse is None or has_vectors != reuse[0].has_vectors:
                lengths, members = make(slice(None))
                norms = _window_norms(vectors_of, has_vectors, lengths, members)
            else:
                old, is_new, new_row_of = reuse
                family = (
                    old.windows[w] + (old.window_norms[w],) if kind == "w" else old.turn_family(w)
                )
                lengths, members, norms = _spliced_windows(
                    make, vectors_of, has_vectors, family, is_new, new_row_of
                )
            a[f"{kind}{w}_len"] = lengths
            for k, (unit_rows, window_rows) in enumerate(members):
                a[f"{kind}{w}_rows{k}"] = unit_rows
                a[f"{kind}{w}_wins{k}"] = window_rows
            a[f"{kind}{w}_norm"] = norms
    bounds = a["scope_bounds"]
    for field in FIELDS:
        counts = a[f"{field}_count"].astype(np.int64)
        a[f"{field}_avg"] = np.array([counts.mean() if n else 0.0])
        # Each scope's rows are one run: its sum is a difference of running sums (exact
        # integers, as a bincount with weights gives them, in a tenth of its time).
        running = np.concatenate(([0], np.cumsum(counts)))
        a[f"{field}_scope_len"] = (running[bounds[1:]] - running[bounds[:-1]]).astype(np.float64)


def _family(
    kind: str, section: np.ndarray, turn_on: np.ndarray, size: int, rows: Any
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """The windows of `size` units ("w": `_windows`) or turns ("t": `_turn_windows`) of the
    table `rows` (an index or a slice): their lengths and membership pairs."""
    if kind == "w":
        return _windows(section[rows], size)
    return _turn_windows(section[rows], turn_on[rows], size)


def _spliced_windows(
    make: Callable[[Any], tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]],
    vectors_of: Callable[[np.ndarray], np.ndarray],
    has_vectors: bool,
    old: tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], np.ndarray],
    is_new: np.ndarray,
    new_row_of: np.ndarray,
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """The windows of a patched table as `make` (`_windows` or `_turn_windows` of the rows
    given) and `_window_norms` make them, from the old table's family `old` (lengths,
    membership, norms): a window of a kept row lies in a kept section (sections never span
    files), so it is the old one renumbered, with its norm; only the new rows' windows are
    made and summed. Windows are numbered by their first row, as `make` numbers them."""
    import numpy as np

    new_rows = np.flatnonzero(is_new)
    lengths_n, members_n = make(new_rows)
    members_n = [(new_rows[rows], wins) for rows, wins in members_n]
    norms_n = _window_norms(vectors_of, has_vectors, lengths_n, members_n)
    old_lengths, old_members, old_norms = old
    kept = new_row_of[old_members[0][0]] >= 0  # by each old window's first row
    kept_windows = np.flatnonzero(kept)
    slot_n = np.searchsorted(
        new_row_of[old_members[0][0][kept_windows]], members_n[0][0]
    ) + np.arange(len(lengths_n))
    total = len(kept_windows) + len(lengths_n)
    is_fresh = np.zeros(total, dtype=bool)
    is_fresh[slot_n] = True
    window_of = np.full(len(old_lengths), -1, dtype=ROW_DTYPE)
    window_of[kept_windows] = np.flatnonzero(~is_fresh)
    lengths = np.empty(total, dtype=ROW_DTYPE)
    lengths[~is_fresh], lengths[slot_n] = old_lengths[kept_windows], lengths_n
    norms = np.empty(total, dtype=np.float64)
    norms[~is_fresh], norms[slot_n] = old_norms[kept_windows], norms_n
    members = []
    for (rows, wins), (rows_n, wins_n) in zip(old_members, members_n, strict=True):
        stays = kept[wins]
        wins_k = window_of[wins[stays]]
        wins_n = slot_n[wins_n].astype(ROW_DTYPE)
        at = np.searchsorted(wins_k, wins_n)
        members.append(
            (np.insert(new_row_of[rows[stays]], at, rows_n), np.insert(wins_k, at, wins_n))
        )
    return lengths, members, norms


def _gather(
    base: np.ndarray, extra: np.ndarray, vec_rows: np.ndarray | None, rows: np.ndarray
) -> np.ndarray:
    """The vectors of table `rows`, held in base ++ extra at `vec_rows` (None: base[rows])."""
    import numpy as np

    if vec_rows is None:
        picked: np.ndarray = base[rows]
        return picked
    at = vec_rows[rows]
    out = np.empty((len(at), base.shape[1]), dtype=np.float32)
    inside = at < len(base)
    out[inside] = base[at[inside]]
    out[~inside] = extra[at[~inside] - len(base)]
    return out


#: Postings of dropped rows are found by comparing with the rows' bounds when they are at most
#: this many runs of rows (a few files changed), else by a lookup per posting.
MOST_DROPPED_RUNS = 8


def _dropped(rows: np.ndarray, drop: np.ndarray) -> np.ndarray:
    """drop[rows]: whether each posting's row is dropped (by comparisons when `drop` is a few
    runs: a fifth of a lookup's time over a million postings)."""
    import numpy as np

    edges = np.flatnonzero(np.diff(drop.astype(np.int8), prepend=0, append=0))
    if len(edges) > 2 * MOST_DROPPED_RUNS:
        dropped: np.ndarray = drop[rows]
        return dropped
    out = np.zeros(len(rows), dtype=bool)
    for first, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
        out |= (rows >= first) & (rows < end)
    return out


def _insertion_points(
    row_at: Callable[[np.ndarray], np.ndarray],
    offsets: np.ndarray,
    terms: np.ndarray,
    wanted: np.ndarray,
) -> np.ndarray:
    """For each (term, row) of `terms` and `wanted`, the first posting of the term's run
    offsets[t]:offsets[t + 1] (rows ascending in each run; `row_at` gives the rows of
    postings) whose row is not below it: a binary search of all the runs at once."""
    import numpy as np

    lo: np.ndarray = offsets[terms].copy()
    hi: np.ndarray = offsets[terms + 1].copy()
    while True:
        open_ = np.flatnonzero(lo < hi)
        if not len(open_):
            return lo
        mid = (lo[open_] + hi[open_]) // 2
        below = row_at(mid) < wanted[open_]
        lo[open_[below]] = mid[below] + 1
        hi[open_[~below]] = mid[~below]


#: A posting array is copied run by run when a patch deletes and inserts at most this many
#: places in it (a few files changed), else through masks over the whole array.
MOST_PIECES = 2048


def _pieces(size: int, gone: np.ndarray, into: np.ndarray) -> list[tuple[int, int, int]] | None:
    """(from, to, length) of the runs of an array of `size` entries that a copy without the
    entries at `gone` (ascending) and with new ones inserted before the remaining entries
    `into` (ascending, as np.insert takes them) keeps; None when there are more than
    `MOST_PIECES` of them."""
    import numpy as np

    if len(gone) + len(into) >= MOST_PIECES:
        return None
    starts = np.concatenate(([0], gone + 1)).astype(np.int64)  # kept old runs
    lengths = np.concatenate((gone, [size])) - starts
    at = np.concatenate(([0], np.cumsum(lengths)[:-1]))  # where each starts once deleted
    left = size - len(gone)
    at_or_into = np.sort(np.concatenate((at, into)))  # (np.union1d imports numpy.ma: 30 ms)
    cuts = at_or_into[np.concatenate(([True], np.diff(at_or_into) > 0))]
    cuts = cuts[cuts < left]
    run = np.searchsorted(at, cuts, side="right") - 1
    source = starts[run] + cuts - at[run]
    ends = np.concatenate((cuts[1:], [left]))
    target = cuts + np.searchsorted(into, cuts, side="right")
    return [
        (s, t, n)
        for s, t, n in zip(source.tolist(), target.tolist(), (ends - cuts).tolist(), strict=True)
        if n
    ]


def _copied(
    old: np.ndarray, pieces: list[tuple[int, int, int]] | None, gone: np.ndarray, into: np.ndarray
) -> np.ndarray:
    """np.insert(np.delete(old, gone), into, 0): a new array (by `_pieces` when given), the
    inserted entries to be written at into + arange."""
    import numpy as np

    if pieces is None:
        return np.insert(np.delete(old, gone), into, old.dtype.type(0))
    out = np.empty(len(old) - len(gone) + len(into), dtype=old.dtype)
    for source, target, length in pieces:
        out[target : target + length] = old[source : source + length]
    out[into + np.arange(len(into))] = 0
    return out


#: Kept rows are renumbered by comparisons when their runs shift at most this many times
#: (a few files changed), else by a lookup per posting.
MOST_MOVES = 8


def _moves(runs: list[tuple[int, int, int]]) -> list[tuple[int, int]] | None:
    """(first old row, added shift) where the shift of the kept rows' runs changes, or None
    when it changes more than `MOST_MOVES` times."""
    moves: list[tuple[int, int]] = []
    shift = 0
    for source, target, _ in runs:
        if target - source != shift:
            moves.append((source, target - source - shift))
            shift = target - source
            if len(moves) > MOST_MOVES:
                return None
    return moves


def _moved(
    rows: np.ndarray, moves: list[tuple[int, int]] | None, new_row_of: np.ndarray
) -> np.ndarray:
    """Kept rows (int32, a new array this may change) renumbered: `new_row_of` of each."""
    if moves is None:
        renumbered: np.ndarray = new_row_of[rows]
        return renumbered.astype(rows.dtype)
    import numpy as np

    old = rows if len(moves) < 2 else rows.copy()  # compared as they were
    for first, step in moves:  # (in place: a fresh array of a million rows costs its pages)
        np.add(rows, rows.dtype.type(step), out=rows, where=old >= first)
    return rows


def _check_rows(count: int) -> None:
    """Refuse a table of more rows (or stored vectors) than `ROW_DTYPE` numbers."""
    if count > MOST_ROWS:
        raise ValueError(f"a unit table holds at most {MOST_ROWS} rows, not {count}")


def _runs(keep: np.ndarray, slots: np.ndarray) -> list[tuple[int, int, int]]:
    """(old row, new row, length) of the runs of kept rows that stay together."""
    import numpy as np

    if len(keep) == 0:
        return []
    breaks = np.flatnonzero((np.diff(keep) != 1) | (np.diff(slots) != 1)) + 1
    first = np.concatenate(([0], breaks))
    end = np.concatenate((breaks, [len(keep)]))
    return [(int(keep[s]), int(slots[s]), int(e - s)) for s, e in zip(first, end, strict=True)]


def _splice(
    old: np.ndarray,
    new: np.ndarray,
    runs: list[tuple[int, int, int]],
    slots: np.ndarray,
    size: int,
) -> np.ndarray:
    import numpy as np

    out = np.empty((size, *old.shape[1:]), dtype=old.dtype)
    for source, target, length in runs:
        out[target : target + length] = old[source : source + length]
    out[slots] = new
    return out


def _window_norms(
    vectors_of: Callable[[np.ndarray], np.ndarray],
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
        acc: np.ndarray | None = None
        for rows, wins in membership:
            keep = (wins >= first) & (wins < first + block)
            got = vectors_of(rows[keep])
            if acc is None:
                acc = np.zeros((min(block, count - first), got.shape[1]), dtype=np.float32)
            acc[wins[keep] - first] += got
        assert acc is not None
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
        empty = np.zeros(0, dtype=ROW_DTYPE)
        return empty, [(empty, empty) for _ in range(size)]
    bounds = np.flatnonzero(np.diff(section)) + 1
    begins = np.concatenate(([0], bounds))
    section_lengths = np.diff(np.concatenate((begins, [n])))
    # A section of length L gives max(1, L - size + 1) windows starting at its first units.
    per_section = np.maximum(section_lengths - size + 1, 1)
    first_window = np.concatenate(([0], np.cumsum(per_section)[:-1]))
    total = int(per_section.sum())
    within = np.arange(total) - np.repeat(first_window, per_section)
    start = (np.repeat(begins, per_section) + within).astype(ROW_DTYPE)
    length = np.minimum(np.repeat(section_lengths, per_section), size).astype(ROW_DTYPE)
    index = np.arange(total, dtype=ROW_DTYPE)
    membership = []
    for offset in range(size):
        keep = length > offset
        membership.append((start[keep] + offset, index[keep]))
    return length, membership


def _turns_on(labels: tuple[list[str], list[int]], section: np.ndarray) -> np.ndarray:
    """1 where a unit goes on the turn of the unit before it: both open with one lead-in
    label (their analyzed terms `labels`: flat, and how many each unit has) in a section
    where two labels or more speak, a conversation. People in a chat send one turn as several
    messages; a log of one speaker's entries (a flushed session's `User: …` lines) is no
    conversation, and its entries stay turns of their own."""
    import numpy as np

    flat, sizes = labels
    n = len(sizes)
    on = np.zeros(n, dtype=np.uint8)
    if n < 2 or not flat:
        return on
    codes: dict[str, int] = {"": 0}
    key = np.zeros(n, dtype=np.int64)
    at = 0
    for row, size in enumerate(sizes):
        if size:
            key[row] = codes.setdefault(" ".join(flat[at : at + size]), len(codes))
            at += size
    labelled = np.flatnonzero(key)
    if not len(labelled):
        return on
    # A section is a conversation when a labelled unit's label is not its first one's.
    held, said = section[labelled], key[labelled]
    opens = np.flatnonzero(np.concatenate(([True], held[1:] != held[:-1])))
    first = np.repeat(said[opens], np.diff(np.concatenate((opens, [len(held)]))))
    talks = np.zeros(int(section[-1]) + 1, dtype=bool)
    talks[held[said != first]] = True
    on[1:] = (
        talks[section[1:]] & (section[1:] == section[:-1]) & (key[1:] == key[:-1]) & (key[1:] > 0)
    )
    return on


def _turn_windows(
    section: np.ndarray, turn_on: np.ndarray, size: int
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Sliding windows of `size` turns inside each section (`_turns_on`; a section of fewer
    turns is one window), as `_windows` makes windows of units, at most `TURN_UNITS_MOST`
    units a turn. Only the windows that hold more than `size` units are kept: the others are
    windows of `size` units already (in a chat whose every turn is one line, all of them).
    Their lengths and (unit rows, window rows) membership pairs, `TURN_UNITS_MOST * size` of
    them; windows numbered by their first row."""
    import numpy as np

    depth = TURN_UNITS_MOST * size
    n = len(section)
    first_rows = np.flatnonzero(turn_on == 0) if n else np.zeros(0, dtype=np.int64)
    if not turn_on.any():  # every turn one unit: every window of turns is one of units
        empty = np.zeros(0, dtype=ROW_DTYPE)
        return empty, [(empty, empty) for _ in range(depth)]
    turn_ends = np.concatenate((first_rows[1:], [n]))
    turn_lengths, members = _windows(section[first_rows], size)  # windows of turns
    start_turn = members[0][0]
    last_turn = start_turn + turn_lengths - 1
    start = first_rows[start_turn]
    length = np.minimum(turn_ends[last_turn] - start, depth)
    keep = length > size
    start, length = start[keep].astype(ROW_DTYPE), length[keep].astype(ROW_DTYPE)
    index = np.arange(len(start), dtype=ROW_DTYPE)
    membership = []
    for offset in range(depth):
        held = length > offset
        membership.append((start[held] + offset, index[held]))
    return length, membership
