"""Hybrid search: Whoosh BM25F candidates + vector cosine candidates, fused, then recency,
salience, an exact-token guard and diversity. DESIGN §4.

The ranking decisions are pure functions over plain data (`fuse`, `recency_factor`,
`exact_tokens`, `diversify`), tested without files; `Searcher` only gathers their inputs.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from .index.indexer import Index
    from .index.store import ChunkRow

MODES = ("hybrid", "keyword", "semantic")
RARE_MIN_UNITS = 5
RARE_SHARE = 0.01


@dataclass(frozen=True)
class RankSettings:
    """The knobs of the ranking, with the values measured best (see bench/eval_search.py)."""

    fusion: str = "weighted"  # "weighted" (min-max normalised sum) or "rrf"
    vector_weight: float = 0.5
    rrf_k: int = 60
    candidates: int = 100  # per retriever
    heading_boost: float = 0.3
    recency_weight: float = 0.2  # at most this share of a score is lost to age
    half_life_days: float = 90.0
    exact_bonus: float = 1.0
    mmr_lambda: float = 0.85  # 1.0 = no diversity penalty
    salience_power: float = 1.0


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
        }


# -- pure ranking functions -------------------------------------------------------------------


def minmax(scores: Mapping[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi <= lo:
        return {k: 1.0 for k in scores}
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def fuse(
    keyword: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    method: str = "weighted",
    vector_weight: float = 0.5,
    rrf_k: int = 60,
) -> dict[int, dict[str, float]]:
    """Combine two ranked candidate lists (id, raw score), best first.

    Returns id -> {"fused", "keyword", "vector"} where keyword/vector are the normalised
    component scores (0 when a retriever did not return the id).
    """
    kw_w = 1.0 - vector_weight
    out: dict[int, dict[str, float]] = {}
    if method == "rrf":
        for rank, (uid, _) in enumerate(keyword):
            out.setdefault(uid, {"fused": 0.0, "keyword": 0.0, "vector": 0.0})
            out[uid]["keyword"] = 1.0 / (rrf_k + rank + 1)
        for rank, (uid, _) in enumerate(vector):
            out.setdefault(uid, {"fused": 0.0, "keyword": 0.0, "vector": 0.0})
            out[uid]["vector"] = 1.0 / (rrf_k + rank + 1)
    elif method == "weighted":
        kw = minmax(dict(keyword))
        vec = minmax(dict(vector))
        for uid in kw.keys() | vec.keys():
            out[uid] = {"fused": 0.0, "keyword": kw.get(uid, 0.0), "vector": vec.get(uid, 0.0)}
    else:
        raise ValueError(f"unknown fusion method {method!r}")
    for parts in out.values():
        parts["fused"] = kw_w * parts["keyword"] + vector_weight * parts["vector"]
    return out


def recency_factor(
    date: dt.date | None, today: dt.date, half_life_days: float, weight: float
) -> float:
    """1.0 for undated files (MEMORY.md, notes) and today's; older dated units lose up to
    `weight` of their score, half of it every `half_life_days`."""
    if date is None or half_life_days <= 0 or weight <= 0:
        return 1.0
    age = max((today - date).days, 0)
    return 1.0 - weight + weight * math.pow(0.5, age / half_life_days)


_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[_\-./:#@][A-Za-z0-9]+)+|\w*\d\w*|\w*_\w*")
_HAS_LETTER = re.compile(r"[A-Za-z]")
_QUOTED = re.compile(r"\"([^\"]{2,})\"|`([^`]{2,})`")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w'’-]*[A-Za-z0-9]|[A-Z]{2,})\b")


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


def contains_token(text: str, token: str) -> bool:
    """Whole-token, case-insensitive containment (`BIL-142` does not match `BIL-1423`)."""
    pattern = r"(?<![\w])" + re.escape(token) + r"(?![\w])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def diversify(scores: Sequence[float], similarity: np.ndarray, limit: int,
              mmr_lambda: float) -> list[int]:
    """Maximal marginal relevance: positions of `scores` (best first) to keep, in order.

    `similarity` is the n×n similarity of the candidates (0..1); a pair at >= 0.999 counts
    as a duplicate (same text, or overlapping lines) and the later one is dropped outright.
    """
    import numpy as np

    n = len(scores)
    if n == 0:
        return []
    relevance = np.asarray(scores, dtype=np.float64)
    scale = relevance.max() if relevance.max() > 0 else 1.0
    relevance = relevance / scale
    max_sim = np.zeros(n)
    available = np.ones(n, dtype=bool)
    chosen: list[int] = []
    while len(chosen) < limit and available.any():
        value = mmr_lambda * relevance - (1.0 - mmr_lambda) * max_sim
        value[~available] = -np.inf
        best = int(np.argmax(value))
        chosen.append(best)
        available[best] = False
        max_sim = np.maximum(max_sim, similarity[:, best])
        available &= max_sim < 0.999
    return chosen


# -- gathering the inputs ---------------------------------------------------------------------


@dataclass
class Filters:
    since: dt.date | None = None
    until: dt.date | None = None
    within: str | None = None  # a vault-relative file or folder
    kinds: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
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
        if self.within:
            clauses.append("(f.path = ? OR substr(f.path, 1, ?) = ?)")
            prefix = self.within.rstrip("/") + "/"
            params.extend([self.within.rstrip("/"), len(prefix), prefix])
        return " AND ".join(clauses) or "1", params

    def whoosh(self) -> Any:
        if not self.active:
            return None
        from whoosh.query import And, Or, Prefix, Term, TermRange

        parts: list[Any] = []
        if self.since or self.until:
            parts.append(TermRange("date", self.since.isoformat() if self.since else None,
                                   self.until.isoformat() if self.until else None))
        if self.kinds:
            parts.append(Or([Term("kind", k) for k in self.kinds]))
        if self.within:
            base = self.within.rstrip("/")
            parts.append(Or([Term("path", base), Prefix("path", base + "/")]))
        return And(parts) if len(parts) > 1 else parts[0]


class VectorTable:
    """All unit vectors of one model as a float32 matrix (rows normalised), reloaded when the
    index changes."""

    def __init__(self, ids: Sequence[int], blobs: Sequence[bytes], dims: int) -> None:
        import numpy as np

        self.ids = np.asarray(ids, dtype=np.int64)
        if blobs:
            self.matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dims)
        else:
            self.matrix = np.zeros((0, dims), dtype=np.float32)
        self.row_of = {int(uid): row for row, uid in enumerate(self.ids)}

    def top(self, query: np.ndarray, count: int, allowed: set[int] | None) -> list[tuple[int, float]]:
        import numpy as np

        if not len(self.ids):
            return []
        scores = self.matrix @ query
        if allowed is not None:
            mask = np.isin(self.ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
            scores = np.where(mask, scores, -np.inf)
        count = min(count, len(scores))
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in best if np.isfinite(scores[i])]

    def similarity(self, a: int, b: int) -> float | None:
        ra, rb = self.row_of.get(a), self.row_of.get(b)
        if ra is None or rb is None:
            return None
        return float(self.matrix[ra] @ self.matrix[rb])


class Searcher:
    """Answers queries over one vault's cache; keeps the vectors in memory between queries."""

    def __init__(self, index: Index, settings: RankSettings) -> None:
        self.index = index
        self.settings = settings
        self._vectors: VectorTable | None = None
        self._vectors_version: tuple[Any, ...] | None = None

    def _vector_table(self, model_id: str) -> VectorTable:
        store = self.index.store
        version = (model_id, store.conn.execute("PRAGMA data_version").fetchone()[0],
                   store.get_meta("last_index_at"))
        if self._vectors is None or version != self._vectors_version:
            ids, blobs = store.vectors(model_id)
            dims = int(store.get_meta("dims", "384") or 384)
            self._vectors = VectorTable(ids, blobs, dims)
            self._vectors_version = version
        return self._vectors

    def _rare(self, tokens: list[str]) -> list[str]:
        """Keep the exact tokens that are rare in the vault: a name on every line (a speaker,
        the vault owner) carries no signal, an error code or a seldom-seen name does."""
        kept = []
        for token in tokens:
            terms = self.index.fulltext.analyze(token)
            if not terms:
                continue
            frequency, total = min(self.index.fulltext.document_frequency(t) for t in terms)
            if 0 < frequency <= max(RARE_MIN_UNITS, RARE_SHARE * total):
                kept.append(token)
        return kept

    def search(
        self, query: str, limit: int = 10, mode: str = "hybrid",
        filters: Filters | None = None, today: dt.date | None = None,
    ) -> list[Hit]:
        s = self.settings
        filters = filters or Filters()
        today = today or dt.date.today()
        store = self.index.store
        allowed: set[int] | None = None
        if filters.active:
            where, params = filters.sql()
            allowed = {
                r[0] for r in store.conn.execute(
                    f"SELECT c.id FROM chunks c JOIN files f ON f.id=c.file_id WHERE {where}", params
                )
            }
            if not allowed:
                return []

        keyword: list[tuple[int, float]] = []
        vector: list[tuple[int, float]] = []
        table: VectorTable | None = None
        guard = exact_tokens(query) if mode != "semantic" else []
        if mode in ("hybrid", "keyword"):
            terms = list(dict.fromkeys(self.index.fulltext.analyze(query)))
            keyword = self.index.fulltext.search(
                terms, s.candidates, heading_boost=s.heading_boost, allowed=filters.whoosh()
            )
            guard = self._rare(guard)
            if guard:  # make sure every unit holding an exact token is a candidate
                seen = {uid for uid, _ in keyword}
                guard_terms = [t for tok in guard for t in self.index.fulltext.analyze(tok)]
                extra = self.index.fulltext.search(
                    list(dict.fromkeys(guard_terms)), s.candidates, heading_boost=0,
                    allowed=filters.whoosh(),
                )
                keyword += [(uid, sc * 0.5) for uid, sc in extra if uid not in seen]
        model_id = store.get_meta("model_id") or None
        if mode in ("hybrid", "semantic") and model_id == self.index.model_id and model_id:
            embedder = self.index.embedder()
            if embedder is not None:
                table = self._vector_table(model_id)
                vector = table.top(embedder.embed_query(query), s.candidates, allowed)

        weight = s.vector_weight if mode == "hybrid" else (1.0 if mode == "semantic" else 0.0)
        fused = fuse(keyword, vector, s.fusion, weight, s.rrf_k)
        if not fused:
            return []
        rows = store.chunks_by_id(fused)
        scored: list[tuple[int, float]] = []
        details: dict[int, dict[str, float]] = {}
        for uid, parts in fused.items():
            row = rows.get(uid)
            if row is None:
                continue
            date = dt.date.fromisoformat(row.date) if row.date else None
            rec = recency_factor(date, today, s.half_life_days, s.recency_weight)
            sal = row.salience ** s.salience_power
            exact = 0.0
            if guard:
                exact = sum(contains_token(row.text, t) for t in guard) / len(guard)
            score = parts["fused"] * rec * sal + s.exact_bonus * exact
            details[uid] = {**parts, "recency": rec, "salience": sal, "exact": exact}
            scored.append((uid, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        pool = scored[: max(limit * 3, 30)]
        pool_rows = [rows[uid] for uid, _ in pool]
        chosen = diversify([score for _, score in pool], similarity_matrix(pool_rows, table),
                           limit, s.mmr_lambda)
        hits = []
        for position in chosen:
            uid, score = pool[position]
            row = rows[uid]
            hits.append(Hit(row.path, row.start_line, row.end_line, row.heading, row.text, score,
                            details[uid], row.date, row.kind))
        return hits


def similarity_matrix(rows: Sequence[ChunkRow], table: VectorTable | None) -> np.ndarray:
    """Cosine similarity of the candidates' vectors (0 where one has none); 1.0 for the same
    text or overlapping lines of one file."""
    import numpy as np

    n = len(rows)
    sim = np.zeros((n, n), dtype=np.float64)
    if table is not None and n:
        positions = [table.row_of.get(r.id) for r in rows]
        have = [i for i, p in enumerate(positions) if p is not None]
        if have:
            vecs = table.matrix[[positions[i] for i in have]]
            sim[np.ix_(have, have)] = np.clip(vecs @ vecs.T, 0.0, 1.0)
    by_sha: dict[str, list[int]] = {}
    by_path: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_sha.setdefault(r.sha256, []).append(i)
        by_path.setdefault(r.path, []).append(i)
    for group in by_sha.values():
        for i in group:
            for j in group:
                sim[i, j] = 1.0
    for group in by_path.values():
        for i in group:
            for j in group:
                if rows[i].start_line <= rows[j].end_line and rows[j].start_line <= rows[i].end_line:
                    sim[i, j] = 1.0
    return sim


def parse_date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def collect(hits: Iterable[Hit]) -> list[dict[str, Any]]:
    return [h.to_dict() for h in hits]
