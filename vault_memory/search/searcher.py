"""Hybrid search: Whoosh BM25F candidates + vector cosine scores, fused, lifted by context
windows, weighed by the lines' subjects and by whether they ask or tell, then recency,
salience, an exact-token guard and coalesced spans (README, "Search").

The ranking decisions are pure functions over plain data (`fuse`, `window_bm25`, `lift`,
`lead_label`, `is_question`, `dense_query`, `recency_factors`, `exact_tokens`, `guard_exact`,
`coalesce`), tested without files; `Searcher` only gathers their inputs.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import clock
from ..index.fulltext import BM25_B, BM25_K1, terms_of

if TYPE_CHECKING:
    import numpy as np

    from ..index.indexer import Index

log = logging.getLogger("vault_memory")

MODES = ("hybrid", "keyword", "semantic")
TABLE_FORMAT = 4  # bump when UnitTable's arrays change meaning
RARE_MIN_UNITS = 5
RARE_SHARE = 0.01
GUARD_MAX_UNITS = 1000  # units read back to check an exact token's spelling

# (unit id, file id, heading, date, salience, vector or None, line count, analyzed terms, text)
UnitRow = tuple[int, int, str, str | None, float, bytes | None, int, str, str]


@dataclass(frozen=True)
class RankSettings:
    """The knobs of the ranking, with the values measured best on the retrieval benchmark
    (bench/eval_search.py; the figures are in the README)."""

    fusion: str = "weighted"  # "weighted" (normalised sum) or "rrf"; weighted measured better
    vector_weight: float = 0.6
    rrf_k: int = 60
    candidates: int = 200  # keyword evidence: the best N BM25 units (0: every matching unit)
    heading_boost: float = 0.5
    windows: tuple[int, ...] = (3, 5)  # context windows (consecutive units of one section)
    window_weight: float = 1.0  # a unit gains this times the best window holding it
    subject_boost: float = 0.5  # a unit whose lead-in label names a query word gains this share
    question_penalty: float = 0.15  # a unit that ends by asking loses this share
    subject_free_vector: bool = True  # hybrid: names found as labels leave the embedded query
    coalesce_depth: int = 3  # among the first N hits, adjacent units of a section merge...
    coalesce_max_units: int = 3  # ...into spans of at most this many units
    coalesce_max_lines: int = 5  # ...and lines
    recency_weight: float = 0.2  # at most this share of a score is lost to age
    half_life_days: float = 90.0
    # A hit holding no query word whose cosine is below this is flagged "weak": it may not
    # answer the query. 0.25 for the bundled MiniLM, measured on sample_vault/: nonsense
    # queries peak at 0.17-0.23 ("asdf" at 0.33), answers that share no word with their
    # question at 0.26-0.6 ("which database did we pick" / "Chose PostgreSQL for billing":
    # 0.26). No threshold separates them all; other models differ.
    weak_cosine: float = 0.25


@dataclass
class Hit:
    path: str
    start_line: int
    end_line: int
    heading: str
    text: str
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    date: str | None = None
    kind: str = "note"
    flags: list[str] = field(default_factory=list)  # "weak": no query word, low similarity

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "heading": self.heading,
            "text": self.text,
            "score": round(self.score, 4),
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "date": self.date,
            "kind": self.kind,
            "flags": list(self.flags),
        }


# -- pure ranking functions -------------------------------------------------------------------


def max_norm(x: np.ndarray) -> np.ndarray:
    """Keyword scores -> [0, 1] by the best one; units without a match stay 0."""
    import numpy as np

    hi = float(x.max()) if x.size else 0.0
    return x / hi if hi > 0 else np.zeros_like(x)


def minmax_norm(x: np.ndarray) -> np.ndarray:
    import numpy as np

    if not x.size:
        return x
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def rank_scores(x: np.ndarray, rrf_k: int, only_positive: bool) -> np.ndarray:
    """Reciprocal-rank scores 1/(k + rank) of an array of raw scores (rank 1 = best)."""
    import numpy as np

    order = np.argsort(-x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.arange(1, len(x) + 1)
    out = 1.0 / (rrf_k + ranks)
    return np.where(x > 0, out, 0.0) if only_positive else out


def fuse(
    keyword: np.ndarray | None,
    vector: np.ndarray | None,
    method: str = "weighted",
    vector_weight: float = 0.5,
    rrf_k: int = 60,
) -> np.ndarray:
    """Combine per-unit keyword (BM25, 0 = no match) and vector (cosine) scores.

    "weighted": (1 - w) * keyword / max + w * min-max(cosine). "rrf": the same weights over
    reciprocal ranks. Either side may be None (keyword-only or semantic search).
    """
    if keyword is None and vector is None:
        raise ValueError("nothing to fuse")
    if method == "weighted":
        kw = max_norm(keyword) if keyword is not None else None
        vec = minmax_norm(vector) if vector is not None else None
    elif method == "rrf":
        kw = rank_scores(keyword, rrf_k, True) if keyword is not None else None
        vec = rank_scores(vector, rrf_k, False) if vector is not None else None
    else:
        raise ValueError(f"unknown fusion method {method!r}")
    if vec is None:
        assert kw is not None
        return kw
    if kw is None:
        return vec
    return (1.0 - vector_weight) * kw + vector_weight * vec


def window_sums(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per window (the `lengths[i]` consecutive units from `starts[i]`), the sum of `x` over
    its units: two lookups in a running sum, whatever the window size."""
    import numpy as np

    running = np.concatenate(([0.0], np.cumsum(x, dtype=np.float64)))
    return running[starts + lengths] - running[starts]


def window_bm25(
    matched: Mapping[str, np.ndarray],
    idf: Mapping[str, float],
    starts: np.ndarray,
    lengths: np.ndarray,
    k1: float = 1.2,
) -> np.ndarray:
    """BM25 of each window as one passage: per query term, the number of its units holding
    the term, saturated (a word repeated on every line counts less than several different
    query words), times the term's idf. `matched[t]` marks the units whose text holds t."""
    import numpy as np

    out = np.zeros(len(starts), dtype=np.float64)
    for term, held in matched.items():
        if not held.any():
            continue
        tf = window_sums(held, starts, lengths)
        out += idf[term] * tf * (k1 + 1.0) / (tf + k1)
    return out


def lift(
    unit_scores: np.ndarray,
    window_scores: np.ndarray,
    membership: Sequence[tuple[np.ndarray, np.ndarray]],
    weight: float,
) -> np.ndarray:
    """A unit's score plus `weight` times the best score of the windows that hold it: a line
    whose neighbours also match is more likely the evidence (a question and its answer, a
    decision and its reason)."""
    import numpy as np

    best = np.zeros_like(unit_scores)
    for rows, windows in membership:
        best[rows] = np.maximum(best[rows], window_scores[windows])
    return unit_scores + weight * best


def recency_factor(
    date: dt.date | None, today: dt.date, half_life_days: float, weight: float
) -> float:
    """1.0 for undated files (MEMORY.md, notes) and today's; older dated units lose up to
    `weight` of their score, half of it every `half_life_days`."""
    import numpy as np

    day = np.array([date.toordinal() if date else 0])
    return float(recency_factors(day, today.toordinal(), half_life_days, weight)[0])


def recency_factors(
    day_numbers: np.ndarray, today: int, half_life_days: float, weight: float
) -> np.ndarray:
    """`recency_factor` over an array of date ordinals (0 = undated)."""
    import numpy as np

    if half_life_days <= 0 or weight <= 0:
        return np.ones(len(day_numbers))
    age = np.maximum(today - day_numbers, 0)
    factors = 1.0 - weight + weight * np.power(0.5, age / half_life_days)
    return np.where(day_numbers > 0, factors, 1.0)


_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[_\-./:#@][A-Za-z0-9]+)+|\w*\d\w*|\w*_\w*")
_HAS_LETTER = re.compile(r"[A-Za-z]")
_QUOTED = re.compile(r"\"([^\"]{2,})\"|`([^`]{2,})`")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w'’-]*[^\W_]|[A-Z]{2,})\b")


def exact_tokens(query: str) -> list[str]:
    """Tokens of the query that must be matched literally when they occur: identifiers and
    error codes (digits, underscores, joined parts), quoted strings, and capitalised words
    inside the sentence (names). Lower-cased, in query order."""
    found: list[str] = []
    for match in _QUOTED.finditer(query):
        found.append((match[1] or match[2]).strip())
    rest = _QUOTED.sub(" ", query)
    for match in _IDENTIFIER.finditer(rest):
        token = match[0].strip("-./:#@_")
        is_code = _HAS_LETTER.search(token) and re.search(r"[\d_]", token)
        if is_code or (token.isdigit() and len(token) >= 5):  # not years or small counts
            found.append(token)
    for match in _CAPITALISED.finditer(rest.strip()):
        found.append(match[1])
    seen: dict[str, None] = {}
    for token in found:
        seen.setdefault(token.lower(), None)
    return list(seen)


def guard_exact(score: np.ndarray, exact: np.ndarray, competing: np.ndarray) -> np.ndarray:
    """Units holding the query's exact tokens (`exact` > 0, the share of tokens held) are lifted
    above every unit that does not hold them and matches none of the query's other words (a
    vaguely similar dense hit, a near-miss id like BIL-1447 for BIL-1423, a line carried by its
    neighbours); units that match other words of the query (`competing`) compete on relevance."""
    import numpy as np

    holders = exact > 0
    vague = (~holders) & (~competing)
    if not holders.any() or not vague.any():
        return score
    ceiling = float(score[vague].max())
    top = float(score[holders].max()) or 1.0
    # Just above the ceiling, in the holders' own order (more tokens held, then relevance).
    lifted = np.maximum(score, ceiling + 1e-3 * (exact + score / top))
    return np.where(holders, lifted, score)


def contains_token(text: str, token: str) -> bool:
    """Whole-token, case-insensitive containment: `BIL-142` is not in `BIL-1423`, nor `v2.3`
    in `v2.3.1` (a joined part such as `.1` or `-b` continues the token)."""
    pattern = r"(?<!\w)(?<!\w[.\-/:])" + re.escape(token) + r"(?!\w)(?![.\-/:]\w)"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


# A unit's lead-in label: what a Markdown line is about, written before a colon at its start
# (`- **Alice**: …`, `- **Decision:** …`, `- Billing cutover window: …`, `Bob: …`). Plain labels
# are at most six words and hold no sentence punctuation, so a sentence that merely contains a
# colon has none.
_LEAD = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?")
_BOLD_LABEL = re.compile(r"\*\*([^*\n]{1,60}?)\*\*\s*:|\*\*([^*\n]{1,60}?):\*\*")
_PLAIN_LABEL = re.compile(r"([^\s:*`#>|\[][^:.!?;`*\n]{0,59}?):\s")
_TRAILING_TAG = re.compile(r"(?:^|\s)#[\w/-]+$")


def lead_label(text: str) -> str | None:
    """The label a unit's first line opens with, or None: its subject (a speaker, a person,
    a field name) that a query may name."""
    first = text.split("\n", 1)[0]
    if ":" not in first:
        return None
    rest = first[_LEAD.match(first).end():]  # type: ignore[union-attr]
    bold = _BOLD_LABEL.match(rest)
    if bold:
        label = (bold[1] or bold[2]).strip()
    else:
        plain = _PLAIN_LABEL.match(rest)
        if not plain or len(plain[1].split()) > 6:
            return None
        label = plain[1].strip()
    return label if any(c.isalpha() for c in label) else None


def is_question(text: str) -> bool:
    """Whether a unit ends by asking (its last sentence ends with "?", a trailing remark in
    parentheses, a comment or tags aside): a question names a topic without stating a fact,
    the same reason `vault flush` keeps no questions."""
    end = text.rstrip()
    while end and not end.endswith("?"):
        if end.endswith("-->"):
            cut = end.rfind("<!--")
        elif end.endswith(")"):
            cut = end.rfind("(")
        else:
            tag = _TRAILING_TAG.search(end) if "#" in end else None
            cut = tag.start() if tag else -1
        if cut < 0:
            return False
        end = end[:cut].rstrip()
    return bool(end)


def dense_query(query: str, is_label: Callable[[str], bool]) -> str:
    """The query to embed when the ranking already favours the units whose label a query
    word names: without those names (capitalised words all of whose terms are labels). A
    name says little to the embedding model except "lines that mention this name"; the rest
    of the question is what the evidence is about. The query itself if nothing would be left."""
    kept: list[str] = []
    dropped = False
    for word in query.split():
        core = word.strip("\"'“”‘’()[],.;:!?")
        terms = terms_of(core)
        if core[:1].isupper() and terms and all(is_label(t) for t in terms):
            dropped = True
            continue
        kept.append(word)
    rest = " ".join(kept)
    return rest if dropped and terms_of(rest) else query


# -- gathering the inputs ---------------------------------------------------------------------


@dataclass
class Filters:
    since: dt.date | None = None
    until: dt.date | None = None
    within: str | None = None  # a vault-relative file or folder
    kinds: tuple[str, ...] = ()
    hidden_kinds: tuple[str, ...] = ()  # left out unless asked for (the dream diary)

    @property
    def active(self) -> bool:
        """Whether a filter selects units (hiding kinds alone is cheaper: see `Searcher`)."""
        return bool(self.since or self.until or self.within or self.kinds)

    def sql(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if self.since:
            clauses.append("c.date >= ?")
            params.append(self.since.isoformat())
        if self.until:
            clauses.append("c.date <= ?")
            params.append(self.until.isoformat())
        if self.kinds:
            clauses.append(f"c.kind IN ({','.join('?' * len(self.kinds))})")
            params.extend(self.kinds)
        if self.hidden_kinds:
            clauses.append(f"c.kind NOT IN ({','.join('?' * len(self.hidden_kinds))})")
            params.extend(self.hidden_kinds)
        if self.within:
            clauses.append("(f.path = ? OR substr(f.path, 1, ?) = ?)")
            prefix = self.within.rstrip("/") + "/"
            params.extend([self.within.rstrip("/"), len(prefix), prefix])
        return " AND ".join(clauses) or "1", params


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
        self._vocab: dict[str, int] | None = None
        self._recency_key: tuple[int, float, float] | None = None
        self._recency: np.ndarray | None = None

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
        analyzed terms, text) in file order."""
        import numpy as np

        n = len(rows)
        a: dict[str, np.ndarray] = {}
        a["ids"] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        a["order"] = np.argsort(a["ids"], kind="stable")
        a["sorted_ids"] = a["ids"][a["order"]]
        a["salience"] = np.fromiter((r[4] for r in rows), dtype=np.float64, count=n)
        ordinals: dict[str | None, int] = {None: 0}  # date ordinals, 0 for undated units
        for r in rows:
            if r[3] is not None and r[3] not in ordinals:
                ordinals[r[3]] = dt.date.fromisoformat(r[3]).toordinal()
        a["day_numbers"] = np.fromiter((ordinals[r[3]] for r in rows), dtype=np.int64, count=n)
        a["line_counts"] = np.fromiter((r[6] for r in rows), dtype=np.int64, count=n)
        a["question"] = np.fromiter((is_question(r[8]) for r in rows), dtype=np.uint8, count=n)
        matrix = np.zeros((n, dims), dtype=np.float32)
        with_vector = [i for i, r in enumerate(rows) if r[5] is not None]
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
        a.update(_postings(rows))
        return cls(a, windows)

    def recency(self, today: int, half_life_days: float, weight: float) -> np.ndarray:
        """`recency_factors` of every unit, computed once a day."""
        key = (today, half_life_days, weight)
        if self._recency is None or self._recency_key != key:
            self._recency = recency_factors(self.day_numbers, today, half_life_days, weight)
            self._recency_key = key
        return self._recency

    def positions(self, uids: Sequence[int]) -> np.ndarray:
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
    rows[offsets[t]:offsets[t+1]] with their term frequencies; plus each unit's length."""

    def __init__(self, arrays: Mapping[str, np.ndarray], field: str) -> None:
        self.offsets = arrays[f"{field}_offsets"]
        self.rows = arrays[f"{field}_rows"]
        self.tf = arrays[f"{field}_tf"]
        self.lengths = arrays[f"{field}_len"]
        self.average = float(arrays[f"{field}_avg"][0])
        self.units = len(self.lengths)

    def postings(self, term: int | None) -> tuple[np.ndarray, np.ndarray]:
        if term is None or term + 1 >= len(self.offsets):
            return self.rows[:0], self.tf[:0]
        start, end = int(self.offsets[term]), int(self.offsets[term + 1])
        return self.rows[start:end], self.tf[start:end]

    def idf(self, term: int | None) -> float:
        """Robertson idf, log(1 + (N - n + 0.5) / (n + 0.5)), as the Whoosh weighting."""
        rows, _ = self.postings(term)
        n = len(rows)
        if n == 0:
            return 0.0
        return math.log(1.0 + (self.units - n + 0.5) / (n + 0.5))

    def bm25(self, term: int | None, k1: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        """(unit rows, BM25 score of the term in each): Whoosh's BM25F formula per field."""
        rows, tf = self.postings(term)
        if len(rows) == 0:
            return rows, tf.astype("float64")
        average = self.average or 1.0
        norm = k1 * ((1.0 - b) + b * self.lengths[rows] / average)
        return rows, self.idf(term) * (tf * (k1 + 1.0)) / (tf + norm)


def _postings(rows: Sequence[UnitRow]) -> dict[str, np.ndarray]:
    """The text, heading and label fields' inverted index as arrays (see FieldPostings), built
    from the analyzed terms the indexer stored with each unit (headings and lead-in labels are
    analyzed here, once per distinct string)."""
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


class Searcher:
    """Answers queries over one vault's cache; keeps the unit table in memory between queries."""

    def __init__(self, index: Index, settings: RankSettings) -> None:
        self.index = index
        self.settings = settings
        self._table: UnitTable | None = None
        self._table_version: tuple[Any, ...] | None = None
        self._hidden: dict[tuple[str, ...], np.ndarray] = {}  # kinds -> unit ids, per table

    def table(self, model_id: str | None) -> UnitTable:
        """The unit table for the index as it is now: kept in memory while the index is
        unchanged, mapped from `.vault/` when a previous process saved it for this state,
        otherwise built from the store and saved."""
        store = self.index.store
        version = (model_id, store.conn.execute("PRAGMA data_version").fetchone()[0],
                   store.get_meta("last_index_at"))
        if self._table is not None and version == self._table_version:
            return self._table
        from ..index.arrays import read_arrays, write_arrays

        stamp = {"format": TABLE_FORMAT, "model": model_id, "windows": list(self.settings.windows),
                 **store.state_stamp()}
        path = self.index.cache / f"units-{'vectors' if model_id else 'plain'}.arrays"
        arrays = read_arrays(path, stamp)
        if arrays is not None:
            table = UnitTable(arrays, self.settings.windows)
        else:
            dims = int(store.get_meta("dims", "384") or 384)
            table = UnitTable.build(store.unit_rows(model_id), dims, self.settings.windows)
            if store.state_stamp() == {k: stamp[k] for k in store.state_stamp()}:
                try:
                    write_arrays(path, stamp, dict(table.arrays))
                except OSError as exc:  # a read-only cache still answers queries
                    log.debug("could not save the unit table: %s", exc)
        self._table, self._table_version = table, version
        self._hidden = {}
        return table

    def _visible(self, table: UnitTable, kinds: tuple[str, ...]) -> np.ndarray | None:
        """The mask of units not of `kinds`, or None when the vault has none of them (the
        common case costs one indexed query per table, not a pass over every unit)."""
        import numpy as np

        if kinds not in self._hidden:
            marks = ",".join("?" * len(kinds))
            self._hidden[kinds] = np.fromiter(
                (r[0] for r in self.index.store.conn.execute(
                    f"SELECT c.id FROM files f JOIN chunks c ON c.file_id = f.id "
                    f"WHERE f.kind IN ({marks})", kinds)),
                dtype=np.int64,
            )
        hidden = self._hidden[kinds]
        return ~np.isin(table.ids, hidden) if len(hidden) else None

    def _rare(self, table: UnitTable, tokens: list[str]) -> list[str]:
        """Keep the exact tokens that are rare in the vault: a name on every line (a speaker,
        the vault owner) carries no signal, an error code or a seldom-seen name does."""
        kept = []
        total = len(table.ids)
        for token in tokens:
            terms = terms_of(token)
            if not terms:
                continue
            frequency = min(len(table.text.postings(table.vocab.get(t))[0]) for t in terms)
            if 0 < frequency <= max(RARE_MIN_UNITS, RARE_SHARE * total):
                kept.append(token)
        return kept

    def _model_for(self, mode: str) -> str | None:
        """The model whose vectors a search in `mode` uses, None for keywords only."""
        model_id = self.index.store.get_meta("model_id") or None
        if mode in ("hybrid", "semantic") and model_id and model_id == self.index.model_id:
            return model_id
        return None

    def prepare(self, mode: str = "hybrid") -> None:
        """Load (or build and save) the unit table a search in `mode` needs now, so that the
        next query does not pay for it."""
        self.table(self._model_for(mode))

    def search(
        self,
        query: str,
        limit: int = 10,
        mode: str = "hybrid",
        filters: Filters | None = None,
        today: dt.date | None = None,
    ) -> list[Hit]:
        import numpy as np

        s = self.settings
        filters = filters or Filters()
        today = today or clock.today()
        store = self.index.store
        model_id = self._model_for(mode)
        use_vectors = model_id is not None
        table = self.table(model_id)
        n = len(table.ids)
        if n == 0:
            return []
        allowed: np.ndarray | None = None
        if filters.active:
            where, params = filters.sql()
            allowed = np.isin(table.ids, np.fromiter(
                (r[0] for r in store.conn.execute(
                    f"SELECT c.id FROM chunks c JOIN files f ON f.id=c.file_id WHERE {where}",
                    params)),
                dtype=np.int64,
            ))
        elif filters.hidden_kinds:
            allowed = self._visible(table, filters.hidden_kinds)

        terms = list(dict.fromkeys(terms_of(query)))  # analyzed once: keywords and subjects
        keyword: np.ndarray | None = None
        has_term: np.ndarray | None = None  # units holding a query word
        guard: list[str] = []
        if mode in ("hybrid", "keyword"):
            # BM25F over the text and heading fields, from the postings arrays of the table:
            # the formula and idf of the Whoosh index (fulltext.weighting), without its
            # pure-Python matcher (10-100 ms a query; bench/search.py).
            keyword = np.zeros(n, dtype=np.float64)
            matched = {t: np.zeros(n, dtype=np.float64) for t in terms}
            idf = {}
            for term in terms:
                number = table.vocab.get(term)
                units, scores = table.text.bm25(number, BM25_K1, BM25_B)
                keyword[units] += scores
                matched[term][units] = 1.0
                idf[term] = table.text.idf(number)
                if s.heading_boost:
                    units, scores = table.heading.bm25(number, BM25_K1, BM25_B)
                    keyword[units] += s.heading_boost * scores
            if allowed is not None:  # filters restrict the keyword signal before it is scaled
                keyword *= allowed
            has_term = keyword > 0
            nonzero = np.flatnonzero(keyword)
            if s.candidates and len(nonzero) > s.candidates:
                # Only the best keyword matches count as keyword evidence, as a search engine's
                # top-N would; a unit holding one common query word among thousands does not.
                values = keyword[nonzero]
                cut = np.partition(values, len(values) - s.candidates)[len(values) - s.candidates]
                keyword[nonzero[values < cut]] = 0.0
            for marks in matched.values():
                marks *= keyword > 0
            guard = self._rare(table, exact_tokens(query))
        # Units whose lead-in label (their speaker, person or field) a query word names.
        subject = np.zeros(n, dtype=bool)
        labels: set[str] = set()
        if mode in ("hybrid", "keyword") and s.subject_boost:
            for term in terms:
                units, _ = table.label.postings(table.vocab.get(term))
                if len(units):
                    subject[units] = True
                    labels.add(term)
        vector: np.ndarray | None = None
        if use_vectors and table.has_vectors:
            encoder = self.index.query_embedder()
            if encoder is not None:
                text = query
                if labels and mode == "hybrid" and s.subject_free_vector:
                    text = dense_query(query, labels.__contains__)
                vector = (table.matrix @ encoder.embed_query(text)).astype(np.float64)
        if keyword is None and vector is None:
            return []
        if vector is None and keyword is not None and not keyword.any() and not guard:
            return []

        weight = s.vector_weight
        fused = fuse(keyword, vector, s.fusion, weight, s.rrf_k)
        components = {"keyword": fused * 0, "vector": fused * 0}
        if keyword is not None:
            components["keyword"] = max_norm(keyword)
        if vector is not None:
            components["vector"] = minmax_norm(vector)
        context = np.zeros(n)
        for size, (lengths, membership) in table.windows.items():
            starts = membership[0][0]  # every window has a first unit, in window order
            w_kw = window_bm25(matched, idf, starts, lengths) if keyword is not None else None
            w_vec = (
                window_sums(vector, starts, lengths) / table.window_norms[size]
                if vector is not None
                else None
            )
            window_scores = fuse(w_kw, w_vec, s.fusion, weight, s.rrf_k)
            context = lift(context, window_scores, membership, s.window_weight)
        relevance = fused + context
        subject_factor = np.where(subject, 1.0 + s.subject_boost, 1.0)
        question_factor = np.where(table.question > 0, 1.0 - s.question_penalty, 1.0)
        relevance = relevance * subject_factor * question_factor

        recency = table.recency(today.toordinal(), s.half_life_days, s.recency_weight)
        score = relevance * recency * table.salience
        exact = np.zeros(n)
        if guard:
            guard_terms = list(dict.fromkeys(t for tok in guard for t in terms_of(tok)))
            holders = np.unique(np.concatenate(
                [table.text.postings(table.vocab.get(t))[0] for t in guard_terms]))
            if allowed is not None:
                holders = holders[allowed[holders]]
            held = store.chunks_by_id(int(table.ids[r]) for r in holders[:GUARD_MAX_UNITS])
            for position, chunk in zip(table.positions(list(held)), held.values(),
                                       strict=True):
                if position >= 0:
                    exact[position] = sum(contains_token(chunk.text, t) for t in guard) / len(guard)
            competing = np.zeros(n, dtype=bool)
            for term, marks in matched.items():
                if term not in guard_terms:
                    competing |= marks > 0
            score = guard_exact(score, exact, competing)
        if allowed is not None:
            score = np.where(allowed, score, -np.inf)
        if mode == "keyword":  # only units that match a query word (or its neighbours do)
            score = np.where(relevance > 0, score, -np.inf)

        pool_size = min(n, max(limit * 3, 30))
        best_rows = np.argpartition(-score, pool_size - 1)[:pool_size]
        best_rows = best_rows[np.argsort(-score[best_rows], kind="stable")]
        ranked = [int(r) for r in best_rows if np.isfinite(score[r])]
        spans = coalesce(
            ranked,
            table.section,
            table.line_counts,
            s.coalesce_depth,
            s.coalesce_max_units,
            s.coalesce_max_lines,
        )
        rows = store.chunks_by_id(int(table.ids[r]) for span in spans for r in span)
        hits: list[Hit] = []
        seen_text: set[str] = set()
        for span in spans:
            parts = [rows[int(table.ids[r])] for r in span]
            best_at = max(range(len(span)), key=lambda i: score[span[i]])
            lo, hi = best_at, best_at  # only line-contiguous units merge
            while lo > 0 and parts[lo].start_line == parts[lo - 1].end_line + 1:
                lo -= 1
            while hi < len(parts) - 1 and parts[hi + 1].start_line == parts[hi].end_line + 1:
                hi += 1
            parts, span = parts[lo : hi + 1], span[lo : hi + 1]
            text = "\n".join(p.text for p in parts)
            if text in seen_text:
                continue  # the same lines elsewhere (a copied entry): no budget spent twice
            seen_text.add(text)
            best = max(span, key=lambda r: score[r])
            details = {
                "keyword": float(components["keyword"][best]),
                "vector": float(components["vector"][best]),
                "context": float(context[best]),
                "recency": float(recency[best]),
                "salience": float(table.salience[best]),
                "subject": float(subject_factor[best]),
                "question": float(question_factor[best]),
                "exact": float(exact[best]),
            }
            first = parts[0]
            worded = bool(exact[best]) or (has_term is not None and bool(has_term[span].any()))
            similar = vector is not None and float(vector[best]) >= s.weak_cosine
            hits.append(
                Hit(
                    first.path,
                    first.start_line,
                    parts[-1].end_line,
                    first.heading,
                    text,
                    float(score[best]),
                    details,
                    first.date,
                    first.kind,
                    [] if worded or similar else ["weak"],
                )
            )
            if len(hits) >= limit:
                break
        return hits


def coalesce(
    ranked: Sequence[int],
    section: np.ndarray,
    line_counts: np.ndarray,
    depth: int,
    max_units: int,
    max_lines: int,
) -> list[list[int]]:
    """Ranked unit rows -> ranked spans of rows. Among the first `depth` rows, a row next to
    (or one row away from) a span of the same section extends it, up to `max_units` units and
    `max_lines` lines; a row already inside a span is dropped, so no context is paid for twice."""
    spans: list[list[int]] = []
    for rank, row in enumerate(ranked):
        placed = False
        for span in spans:
            lo, hi = span[0], span[-1]
            if lo <= row <= hi:
                placed = True
                break
            if rank < depth and section[row] == section[lo] and lo - 2 <= row <= hi + 2:
                merged = list(range(min(lo, row), max(hi, row) + 1))
                if len(merged) <= max_units and int(line_counts[merged].sum()) <= max_lines:
                    span[:] = merged
                    placed = True
                    break
        if not placed:
            spans.append([row])
    return spans
