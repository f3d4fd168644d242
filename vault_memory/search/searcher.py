"""Hybrid search: BM25F keyword scores from the unit table's postings + vector cosine
scores, fused, lifted by context windows, weighed by the lines' subjects and by whether they
ask or tell, then recency, salience, an exact-token guard and coalesced spans (README,
"Search"). The decisions are the pure functions of `ranking`; `Searcher` gathers their inputs
from the index and the unit table (`table`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import clock
from ..index import BM25_B, BM25_K1, terms_of
from .ranking import (
    RankSettings,
    cited_lines,
    coalesce,
    contains_token,
    dense_query,
    exact_tokens,
    fuse,
    guard_exact,
    lift,
    lift_named,
    max_norm,
    minmax_norm,
    window_bm25,
    window_sums,
)
from .table import TABLE_FORMAT, Restriction, UnitTable

if TYPE_CHECKING:
    import numpy as np

    from ..index import Index

log = logging.getLogger("vault_memory")

MODES = ("hybrid", "keyword", "semantic")
RARE_MIN_UNITS = 5
RARE_SHARE = 0.01
GUARD_MAX_UNITS = 1000  # units read back to check an exact token's spelling
MAX_NAME_WORDS = 8  # the longest name (in analyzed words) a query is searched for


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


class SearchResults(list[Hit]):
    """The hits of a search, best first (a plain list), with `warnings`: why the search was
    less than asked for, e.g. keywords only because the embedding provider failed. The CLI's
    `--json` prints them as a top-level "warning"; each is also logged."""

    def __init__(self, hits: Any = (), warnings: list[str] | None = None) -> None:
        super().__init__(hits)
        self.warnings: list[str] = list(warnings or [])


# -- gathering the inputs ---------------------------------------------------------------------


@dataclass
class Filters:
    since: dt.date | None = None
    until: dt.date | None = None
    within: str | None = None  # a vault-relative file or folder
    kinds: tuple[str, ...] = ()
    hidden_kinds: tuple[str, ...] = ()  # left out unless asked for (the dream diary)
    #: The scopes whose units a bound scope may see ("org/acme", "" for the root); None: all.
    #: Applied to the unit table's rows before anything is scored (see `Searcher.search`).
    scopes: tuple[str, ...] | None = None
    #: What a query's search operators select (`ParsedQuery.filter`, see search/query.py and
    #: search/select.py); None: no operators.
    select: Any = None

    @property
    def active(self) -> bool:
        """Whether a filter selects units (hiding kinds alone is cheaper: see `Searcher`)."""
        return bool(self.since or self.until or self.within or self.kinds)

    def conditions(self) -> dict[str, Any]:
        """The filters as the index backend's `unit_ids_where` takes them."""
        return {"since": self.since.isoformat() if self.since else None,
                "until": self.until.isoformat() if self.until else None,
                "kinds": tuple(self.kinds or ()), "hidden_kinds": tuple(self.hidden_kinds or ()),
                "within": self.within or None}


_BLAS: Any = None  # threadpoolctl's controller of the BLAS numpy loaded, made on first use


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """OpenBLAS limited to one thread for the length of a query, then set back as the caller
    had it (`threadpoolctl`). On 2 cores its second thread, spinning after each product, takes
    the core the query's onnxruntime thread needs: `bench/search.py` at 10,000 units, a warm
    hybrid query 18.0 ms median / 24.3 ms p95 with the default threads, 8.0 / 9.8 with one.
    The CLI sets `OPENBLAS_NUM_THREADS=1` before numpy loads; a library caller gets the same
    here without its own settings changed outside the call. Nothing to do when the process
    already runs one BLAS thread (the CLI: no controller, no cost)."""
    global _BLAS
    if os.environ.get("OPENBLAS_NUM_THREADS") == "1":
        return contextlib.nullcontext()
    if _BLAS is None:
        import numpy  # noqa: F401 - the controller sees the BLAS libraries loaded when it is made
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


class Searcher:
    """Answers queries over one vault's cache; keeps the unit table in memory between queries."""

    def __init__(self, index: Index, settings: RankSettings) -> None:
        self.index = index
        self.settings = settings
        self._table: UnitTable | None = None
        self._table_version: tuple[Any, ...] | None = None
        self._hidden: dict[tuple[str, ...], np.ndarray] = {}  # kinds -> unit ids, per table
        self._has_names: tuple[UnitTable, bool] | None = None  # whether any note has a name

    def table(self, model_id: str | None) -> UnitTable:
        """The unit table for the index as it is now: kept in memory while the index is
        unchanged, mapped from `.vault/` when a previous process saved it for this state,
        otherwise built from the store and saved."""
        store = self.index.store
        version = (model_id, store.data_version(), store.get_meta("last_index_at"))
        if self._table is not None and version == self._table_version:
            return self._table
        from ..index import read_arrays, write_arrays

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
            self._hidden[kinds] = np.array(
                self.index.store.unit_ids_of_kinds(kinds), dtype=np.int64)
        hidden = self._hidden[kinds]
        return ~np.isin(table.ids, hidden) if len(hidden) else None

    def _rare(
        self, table: UnitTable, tokens: list[str], within: Restriction | None = None
    ) -> list[str]:
        """Keep the exact tokens that are rare in the vault (in what a scope sees): a name on
        every line (a speaker, the vault owner) carries no signal, an error code or a
        seldom-seen name does."""
        kept = []
        total = len(table.ids) if within is None else within.units
        for token in tokens:
            terms = terms_of(token, query=True)
            if not terms:
                continue
            frequency = min(len(table.text.postings(table.vocab.get(t), within)[0])
                            for t in terms)
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
        settings: RankSettings | None = None,
    ) -> SearchResults:
        warnings: list[str] = []
        if mode != "keyword" and self.index.model_id:
            pending, why = self.index.pending_vectors()
            if pending:
                warnings.append(
                    f"searched by keywords only: {pending} units wait for their vectors "
                    f"({why}); the next `vault index` adds them."
                )
                mode = "keyword" if mode == "hybrid" else mode
        with one_blas_thread():
            hits = self._search(query, limit, mode, filters, today, warnings, settings)
        for message in warnings:
            log.warning("%s", message)
        return SearchResults(hits, warnings)

    def _search(
        self,
        query: str,
        limit: int,
        mode: str,
        filters: Filters | None,
        today: dt.date | None,
        warnings: list[str],
        settings: RankSettings | None = None,
    ) -> list[Hit]:
        """The best `limit` hits for `query`. With `filters.scopes`, the search sees only the
        units of those scopes, and ranks them as if the vault held nothing else: keyword idf
        and lengths, vector and window normalisation and the exact-token guard count only
        them, and the other rows' vectors are never multiplied. `settings` replace the
        searcher's own for this query (a scope's [search] settings)."""
        import numpy as np

        from ..index import EmbeddingProviderError

        s = settings or self.settings
        filters = filters or Filters()
        today = today or clock.today()
        store = self.index.store
        model_id = self._model_for(mode)
        use_vectors = model_id is not None
        table = self.table(model_id)
        n = len(table.ids)
        if n == 0:
            return []
        within = table.restrict(filters.scopes) if filters.scopes is not None else None
        if within is not None and within.units == 0:
            return []
        # Operators without free text (`tag:#decision`): every unit they select, the most
        # salient and recent first (then in file order), nothing to rank them by.
        listing = filters.select is not None and not query.strip()
        allowed: np.ndarray | None = None
        if filters.active:
            allowed = np.isin(table.ids, np.array(store.unit_ids_where(**filters.conditions()),
                                                  dtype=np.int64))
        elif filters.hidden_kinds:
            allowed = self._visible(table, filters.hidden_kinds)
        if within is not None:
            allowed = within.mask if allowed is None else allowed & within.mask
        if filters.select is not None:
            chosen = self._select(filters.select, table)
            if chosen is not None:
                allowed = chosen if allowed is None else allowed & chosen
            if allowed is not None and not allowed.any():
                return []

        terms = list(dict.fromkeys(terms_of(query, query=True)))  # keywords and subjects
        keyword: np.ndarray | None = None
        has_term: np.ndarray | None = None  # units holding a query word
        guard: list[str] = []
        if mode in ("hybrid", "keyword") and not listing:
            # BM25F over the text and heading fields, from the postings arrays of the table:
            # the formula and idf of the Whoosh index (fulltext.weighting), without its
            # pure-Python matcher (10-100 ms a query; bench/search.py).
            keyword = np.zeros(n, dtype=np.float64)
            matched = {t: np.zeros(n, dtype=np.float64) for t in terms}
            idf = {}
            for term in terms:
                number = table.vocab.get(term)
                units, scores = table.text.bm25(number, BM25_K1, BM25_B, within)
                keyword[units] += scores
                matched[term][units] = 1.0
                idf[term] = table.text.idf(number, within)
                if s.heading_boost:
                    units, scores = table.heading.bm25(number, BM25_K1, BM25_B, within)
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
            guard = self._rare(table, exact_tokens(query), within)
        # Units whose lead-in label (their speaker, person or field) a query word names.
        subject = np.zeros(n, dtype=bool)
        labels: set[str] = set()
        if mode in ("hybrid", "keyword") and s.subject_boost and not listing:
            for term in terms:
                units, _ = table.label.postings(table.vocab.get(term), within)
                if len(units):
                    subject[units] = True
                    labels.add(term)
        vector: np.ndarray | None = None
        if use_vectors and table.has_vectors and not listing:
            encoder = self.index.query_embedder()
            if encoder is not None:
                text = query
                if labels and mode == "hybrid" and s.subject_free_vector:
                    text = dense_query(query, labels.__contains__)
                try:
                    embedded = encoder.embed_query(text)
                    if embedded.shape != (table.matrix.shape[1],):
                        raise EmbeddingProviderError(
                            f"the query's vector has {embedded.shape[-1]} dimensions, the "
                            f"index's {table.matrix.shape[1]}"
                        )
                except EmbeddingProviderError as exc:
                    warnings.append(f"searched by keywords only: {exc}")
                    if mode == "semantic":
                        return []
                else:
                    vector = _cosines(table.matrix, embedded, within)
        if keyword is None and vector is None and not listing:
            return []
        named = self._named(table, query) if not listing else None
        if (vector is None and keyword is not None and not keyword.any() and not guard
                and (named is None or not named.any())):
            return []

        weight = s.vector_weight
        fused = np.ones(n) if listing else fuse(keyword, vector, s.fusion, weight, s.rrf_k)
        components = {"keyword": fused * 0, "vector": fused * 0}
        if keyword is not None:
            components["keyword"] = max_norm(keyword)
        if vector is not None:
            components["vector"] = minmax_norm(vector)
        context = np.zeros(n)
        for size, (lengths, membership) in table.windows.items() if not listing else ():
            starts = membership[0][0]  # every window has a first unit, in window order
            w_kw = window_bm25(matched, idf, starts, lengths) if keyword is not None else None
            w_vec = (
                window_sums(vector, starts, lengths) / table.window_norms[size]
                if vector is not None
                else None
            )
            if w_vec is not None and within is not None:  # others' windows: no part in scaling
                w_vec = _floored(w_vec, within.mask[starts])
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
            guard_terms = list(dict.fromkeys(t for tok in guard for t in terms_of(tok, query=True)))
            holders = np.unique(np.concatenate(
                [table.text.postings(table.vocab.get(t), within)[0] for t in guard_terms]))
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
        if mode == "keyword" and not listing:  # units that match a query word (or their
            # neighbours do), and those of a note the query names
            score = np.where((relevance > 0) | (named if named is not None else False), score,
                             -np.inf)
        if named is not None:
            score = lift_named(score, named, table.file_ids)

        pool_size = min(n, max(limit * 3, 30))
        best_rows = np.argpartition(-score, pool_size - 1)[:pool_size]
        best_rows = best_rows[np.argsort(-score[best_rows], kind="stable")]
        ranked = [int(r) for r in best_rows if np.isfinite(score[r])]
        spans = coalesce(
            ranked,
            table.section,
            table.line_counts,
            0 if listing else s.coalesce_depth,
            s.coalesce_max_units,
            s.coalesce_max_lines,
        )
        rows = store.chunks_by_id(int(table.ids[r]) for span in spans for r in span)
        hits: list[Hit] = []
        seen_text: set[str] = set()
        cited: set[tuple[str, int]] = set()  # lines the returned entries were promoted from
        returned: set[tuple[str, int]] = set()
        for span in spans:
            if any(int(table.ids[r]) not in rows for r in span):
                continue  # rewritten by a writer after the table was read: the next query has it
            parts = [rows[int(table.ids[r])] for r in span]
            best_at = max(range(len(span)), key=lambda i: score[span[i]])
            lo, hi = best_at, best_at  # only line-contiguous units merge, and (with search
            # operators) only units the filter keeps: a bridged gap may be one it left out
            while (lo > 0 and parts[lo].start_line == parts[lo - 1].end_line + 1
                   and (allowed is None or allowed[span[lo - 1]])):
                lo -= 1
            while (hi < len(parts) - 1 and parts[hi + 1].start_line == parts[hi].end_line + 1
                   and (allowed is None or allowed[span[hi + 1]])):
                hi += 1
            parts, span = parts[lo : hi + 1], span[lo : hi + 1]
            text = "\n".join(p.text for p in parts)
            if text in seen_text:
                continue  # the same lines elsewhere (a copied entry): no budget spent twice
            lines = {(parts[0].path, n) for n in range(parts[0].start_line, parts[-1].end_line + 1)}
            cites = cited_lines(text)
            if lines <= cited or (cites and cites <= returned):
                continue  # a promoted entry and the log lines it came from: the same, once
            seen_text.add(text)
            cited |= cites
            returned |= lines
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
            worded = worded or listing or (named is not None and bool(named[best]))
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

    def _select(self, tree: Any, table: UnitTable) -> np.ndarray | None:
        """The rows a query's operators select (search/select.py); a keyword index that cannot
        be read is a `VaultError` that says how to mend it."""
        from ..errors import VaultError
        from .select import select

        try:
            return select(tree, table, self.index)
        except VaultError:
            raise
        except Exception as exc:  # Whoosh raises many kinds of errors on damaged segments
            self.index.fulltext.close()
            raise VaultError(
                f"the keyword index cannot answer the search operators ({type(exc).__name__}: "
                f"{exc}); run `vault index` to rebuild it."
            ) from exc

    def _named(self, table: UnitTable, query: str) -> np.ndarray | None:
        """The units of the notes the query names by their file name or an alias (each name
        as its analyzed words, found in a row in the query's), or None when it names none.
        A name of one word names a note only when it is all the query says ("Jonas", "who is
        Jonas?"): in a longer question one word is as likely a plain word ("what is the plan
        for billing?" is not about the note `Plan.md`)."""
        import numpy as np

        store = self.index.store
        if self._has_names is None or self._has_names[0] is not table:
            self._has_names = (table, store.has_names())
        if not self._has_names[1]:
            return None
        words = terms_of(query)
        shortest = 1 if len(set(words)) == 1 else 2
        keys = {" ".join(words[i:j]) for i in range(len(words))
                for j in range(i + shortest, min(len(words), i + MAX_NAME_WORDS) + 1)}
        found = store.named_files(keys)
        if not found:
            return None
        files = np.fromiter({f for ids in found.values() for f in ids}, dtype=np.int64)
        named = np.isin(table.file_ids, files)
        return named if named.any() else None


def _cosines(matrix: np.ndarray, query: np.ndarray, within: Restriction | None) -> np.ndarray:
    """Every unit's cosine to the query vector (unit vectors: a dot product). Restricted to a
    scope, only its rows are multiplied (the others' vectors are never read), and the others
    get the lowest of its cosines, so they take no part in min-max scaling."""
    import numpy as np

    if within is None:
        return (matrix @ query).astype(np.float64)
    out = np.empty(len(matrix), dtype=np.float64)
    for first, end in within.ranges:
        out[first:end] = matrix[first:end] @ query
    return _floored(out, within.mask)


def _floored(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """`values` with every entry outside `keep` set to the lowest kept one (0 with none)."""
    import numpy as np

    kept = values[keep]
    return np.where(keep, values, float(kept.min()) if len(kept) else 0.0)
