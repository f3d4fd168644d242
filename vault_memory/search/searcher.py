"""Hybrid search: BM25F keyword scores from the unit table's postings + vector cosine
scores, fused, lifted by context windows, weighed by the lines' subjects (a speaker known by
two labels, or by a name they asked to be called, as one), by whether they ask or tell and
whether they say anything at all ("lol"), then recency, salience, an exact-token guard
and coalesced spans (README, "Search"). The decisions are the pure functions of `ranking`;
`Searcher` gathers their inputs from the index and the unit table (`table`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from ..index import BM25_B, BM25_K1, lead_label, terms_of
from .dates import asked_days, on_days
from .ranking import (
    RankSettings,
    asks_when,
    best_rows,
    best_window,
    cited_lines,
    coalesce,
    contains_token,
    dense_query,
    exact_tokens,
    fuse,
    guard_exact,
    introduced_names,
    label_partners,
    lift_named,
    max_norm,
    minmax_norm,
    resolve_names,
    take_turns,
    window_bm25,
    window_sums,
)
from .served import ServerCandidates
from .spelling import (
    Stretched,
    is_word,
    joined_words,
    short_forms,
    spelling_variants,
    split_words,
    stretched_lines,
    stretched_terms,
    stretched_variants,
)
from .supersede import order_superseded
from .table import TABLE_FORMAT, Restriction, UnitTable

if TYPE_CHECKING:
    import numpy as np

    from ..index import Index

log = logging.getLogger("vault_memory")

MODES = ("hybrid", "keyword", "semantic")
RARE_MIN_UNITS = 5
RARE_SHARE = 0.01
#: The unit table is patched by the files that changed while they are at most this many or a
#: quarter of the vault's; built whole beyond (about as fast then, and simpler).
PATCH_MOST_FILES = 200
PATCHABLE = ("format", "model", "windows", "backend")  # a saved table of another state
# can be patched
GUARD_MAX_UNITS = 1000  # units read back to check an exact token's spelling
INTRODUCTIONS_READ = 50  # lines read back to find who said "call me <name>"
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
    # "weak": no query word, low similarity; "instruction": reads as an instruction to a model
    flags: list[str] = field(default_factory=list)
    # "path#Lline" of a newer hit stating a different value for the same subject and
    # attribute, or of the entry a dream marked this one superseded by (search/supersede.py)
    superseded_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {"superseded_by": self.superseded_by} if self.superseded_by else {}
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
        } | found


def hit_flags(text: str, weak: bool, flagged: bool | None = None) -> list[str]:
    """A hit's flags: "weak" (found by neither a query word nor a close meaning) and
    "instruction" (its text would steer the agent it is read back to: files/injection.py).
    `flagged` is the judgement the index made of its units (any of them); None (an index
    that predates it, read-only) judges the text as returned."""
    if flagged is None:  # imported here: an index that judged its units needs none of it
        from ..files import is_instruction

        flagged = is_instruction(text)
    instruction = flagged
    return (["weak"] if weak else []) + (["instruction"] if instruction else [])


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
        return {
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "kinds": tuple(self.kinds or ()),
            "hidden_kinds": tuple(self.hidden_kinds or ()),
            "within": self.within or None,
        }


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


def _provider_error() -> type[Exception]:
    """index.EmbeddingProviderError, imported when one is raised: its module (HTTP, TLS) is
    not needed by a search with the bundled model (a cold search pays for every import)."""
    from ..index import EmbeddingProviderError

    return EmbeddingProviderError


class Searcher:
    """Answers queries over one vault's cache; keeps the unit table in memory between queries."""

    def __init__(self, index: Index, settings: RankSettings) -> None:
        self.index = index
        self.settings = settings
        self._table: UnitTable | None = None
        self._table_version: tuple[Any, ...] | None = None
        self._hidden: dict[tuple[str, ...], np.ndarray] = {}  # kinds -> unit ids, per table
        self._has_names: tuple[UnitTable, bool] | None = None  # whether any note has a name
        self._label_terms: tuple[UnitTable, list[str]] | None = None  # terms of lead-in labels
        self._stretched: tuple[UnitTable, Stretched] | None = None  # a table's stretched terms
        self._labels_set: tuple[list[str], set[str]] | None = None
        self._names: tuple[UnitTable, dict[Any, Any]] | None = None
        self.saves = True  # False: the unit table is never written to `.vault/` from here
        self._changes: Hashable | None = None  # the store's `changes_key` as a table was made
        #: With an index server: rank candidates the server picks (phase 2), not a unit table
        #: of the whole index read into this process (phase 1; `[search] on_server = false`).
        self.on_server = True
        self._server = ServerCandidates()  # what queries to an index server keep (served.py)

    def table(self, model_id: str | None) -> UnitTable:
        """The unit table for the index as it is now: kept in memory while the index is
        unchanged, mapped from `.vault/` when a previous process saved it for this state,
        patched by the files that changed when one was made for an earlier state (in memory
        or saved: `UnitTable.patch`), otherwise built from the store; saved when made."""
        store = self.index.store
        version = (model_id, store.data_version(), store.get_meta("last_index_at"))
        if self._table is not None and version == self._table_version:
            return self._table
        state = store.state_stamp()
        self._changes = store.changes_key()
        stamp = {
            "format": TABLE_FORMAT,
            "model": model_id,
            "windows": list(self.settings.windows),
            **state,
        }
        if not store.capabilities.local_file:  # a table of the server's rows (other ids):
            stamp["backend"] = "server"  # never patched by, nor taken for, the embedded index's
        path = self.index.cache / f"units-{'vectors' if model_id else 'plain'}.arrays"
        dims = int(store.get_meta("dims", "384") or 384)
        base = self._table if self._table_version and self._table_version[0] == model_id else None
        # A table in memory is patched; otherwise the saved one is mapped, or patched when
        # it was saved for an earlier state.
        found = _read_table(path, self.settings.windows) if base is None else None
        if found is not None and found[0] == json.loads(json.dumps(stamp)):
            table = found[1]
        else:
            if found is not None and {k: found[0].get(k) for k in PATCHABLE} == {
                k: stamp.get(k) for k in PATCHABLE
            }:
                base = found[1]
            made = self._patched(base, model_id, dims) if base is not None else None
            if made is None:
                rows, marks = store.unit_rows_and_marks(model_id)
                made = UnitTable.build(rows, dims, self.settings.windows, marks)
            if made.appended_too_many():
                made = made.compacted()
            table = made
            if self.saves and self._unchanged_since(version, state):
                try:
                    _save_table(path, stamp, table)
                except OSError as exc:  # a read-only cache still answers queries
                    log.debug("could not save the unit table: %s", exc)
        self._table, self._table_version = table, version
        self._hidden = {}
        return table

    def _unchanged_since(self, version: tuple[Any, ...], state: dict[str, Any]) -> bool:
        """Whether the index is still in `state` (no writer committed while the table was
        made): a backend with a change counter says so by its `changes_key` (SQLite: the
        commits of other connections and of ours), without the count `state_stamp` makes."""
        store = self.index.store
        if (
            self._changes is not None
            and version[1:] == (store.data_version(), store.get_meta("last_index_at"))
            and self._changes == store.changes_key()
        ):
            return True
        return bool(store.state_stamp() == state)

    def _patched(self, base: UnitTable, model_id: str | None, dims: int) -> UnitTable | None:
        """`base` brought up to the index as it is now by the files that changed since it was
        made; None when its vectors have another length or too much changed to patch."""
        if base.dims != dims or list(base.windows) != list(self.settings.windows):
            return None
        marks, unvectored = base.file_marks()
        got = self.index.store.changed_unit_rows(
            model_id, dims, marks, unvectored, most=max(PATCH_MOST_FILES, len(marks) // 4)
        )
        if got is None:
            return None
        now, changed, rows = got
        return base.patch(changed, rows, dims, now) if changed else base

    def _visible(self, table: UnitTable, kinds: tuple[str, ...]) -> np.ndarray | None:
        """The mask of units not of `kinds`, or None when the vault has none of them (the
        common case costs one indexed query per table, not a pass over every unit)."""
        import numpy as np

        if kinds not in self._hidden:
            self._hidden[kinds] = np.array(
                self.index.store.unit_ids_of_kinds(kinds), dtype=np.int64
            )
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
            frequency = min(table.text.frequency(table.vocab.get(t), within) for t in terms)
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
        next query does not pay for it. A search on an index server holds no table: nothing
        to load but the query encoder (the caller's)."""
        if self._serves(Filters()):
            return
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
        with self.reads() if self._serves(filters or Filters()) else contextlib.nullcontext():
            found = self._search_once(query, limit, mode, filters, today, settings)
            if self.index.store.stale:  # the server changed meanwhile
                found = self._search_once(query, limit, mode, filters, today, settings)
        return found

    def reads(self) -> contextlib.AbstractContextManager[Any]:
        """Where a search's reads of the index go: with an index server that serves
        candidates, the meta rows come with the previous search's one statement (checked by
        this one's), so a warm search is one round trip (`PgStore.search_reads`)."""
        return self.index.store.search_reads() if self.on_server else contextlib.nullcontext()

    def has_vectors(self) -> bool:
        """`Index.has_vectors`, read as a search reads (`reads`)."""
        with self.reads():
            return self.index.has_vectors()

    def _search_once(
        self,
        query: str,
        limit: int,
        mode: str,
        filters: Filters | None,
        today: dt.date | None,
        settings: RankSettings | None,
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
        hits = order_superseded(hits)  # what is true now first (issue 25)
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

        s = settings or self.settings
        filters = filters or Filters()
        today = today or clock.today()
        store: Any = self.index.store  # or the server's candidates (`Served` answers as one)
        model_id = self._model_for(mode)
        use_vectors = model_id is not None
        served = (
            self._server.fetch(
                self.index,
                query,
                model_id,
                mode,
                filters,
                s,
                limit,
                tuple(self.settings.windows),
                self._name_keys(query),
                self.label_terms,
            )
            if self._serves(filters)
            else None
        )
        within: Restriction | None = None
        if served is not None:  # candidates from the index server, ranked the same way
            table, within, store = served.table, served.within, served
        else:
            table = self.table(model_id)
        n = len(table.ids)
        if n == 0:
            return []
        if served is None:
            within = table.restrict(filters.scopes) if filters.scopes is not None else None
        if within is not None and within.units == 0:
            return []
        # Operators without free text (`tag:#decision`): every unit they select, the most
        # salient and recent first (then in file order), nothing to rank them by.
        listing = filters.select is not None and not query.strip()
        allowed: np.ndarray | None = None
        told: np.ndarray | None = None  # units let in by the days their text names
        if served is not None:
            allowed = served.allowed
        elif filters.active:
            allowed = np.isin(
                table.ids, np.array(store.unit_ids_where(**filters.conditions()), dtype=np.int64)
            )
            told = self._told(table, filters)
            if told is not None:
                told &= ~allowed  # only those the file's date left out
                allowed |= told
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
        aliases: dict[str, list[str]] = {}
        partners: dict[str, list[str]] = {}  # a label the query names -> its other labels
        if s.name_aliases and mode in ("hybrid", "keyword") and not listing:
            # A nickname or a misspelling of a speaker's name names that speaker.
            capitalised = {t for token in exact_tokens(query) for t in terms_of(token, query=True)}
            label_list = self.label_terms(table)
            aliases = resolve_names(
                [(t, t in capitalised) for t in terms],
                label_list,
                served.knows if served else table.vocab.__contains__,
            )
            if s.label_partners:  # a name a speaker said to be called by ("call me Bob")
                for term in terms:
                    if term in capitalised and term not in aliases:
                        said = self._introduced(table, store, term, label_list, within)
                        if said:
                            aliases[term] = said
            if s.label_partners:  # a named speaker's other label (`Jo` for `Joanna`)
                for term in terms:
                    same = [
                        o for o in self._partners(table, term, label_list, within) if o not in terms
                    ]
                    if same:
                        partners[term] = same
                        aliases[term] = same
            terms = list(
                dict.fromkeys([t for term in terms for t in [term, *aliases.get(term, ())]])
            )
        variants = (
            self._variants(table, query, terms, aliases, within, s)
            if (mode in ("hybrid", "keyword") and not listing and served is None)
            else {}
        )
        keyword: np.ndarray | None = None
        otherwise: dict[str, np.ndarray] = {}
        has_term: np.ndarray | None = None  # units holding a query word
        guard: list[str] = []
        if mode in ("hybrid", "keyword") and not listing:
            # BM25F over the text and heading fields, from the postings arrays of the table:
            # the formula and idf of the Whoosh index (fulltext.weighting), without its
            # pure-Python matcher (10-100 ms a query; bench/search.py).
            keyword = np.zeros(n, dtype=np.float64)
            matched = {t: np.zeros(n, dtype=np.float64) for t in terms}
            # units matched by a typing slip of a query word, by a short form of it
            otherwise = {kind: np.zeros(n, dtype=bool) for kind in ("spelling", "form")}
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
                spelt_idf = 0.0  # the idf of the vault's other spellings, the rarest
                for variant, weight, kind in variants.get(term, ()):  # a slip, a short form
                    units, scores, own_idf = _spelt(table, variant, within)
                    if not len(units):
                        continue
                    spelt_idf = max(spelt_idf, own_idf)
                    # a rare spelling weighs what the word does (its own idf would be higher)
                    share = weight * (min(1.0, idf[term] / own_idf) if idf[term] else 1.0)
                    keyword[units] += share * scores
                    matched[term][units] = np.maximum(matched[term][units], share)
                    otherwise[kind][units] = True
                if not idf[term]:  # the vault spells it otherwise only: its windows count
                    idf[term] = spelt_idf  # the vault's spellings (marked at their shares)
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
        alias_subject = np.zeros(n, dtype=bool)  # ...named through a nickname or misspelling
        labels: set[str] = set()
        if mode in ("hybrid", "keyword") and s.subject_boost and not listing:
            for term in terms:
                units, _ = table.label.postings(table.vocab.get(term), within)
                if len(units):
                    subject[units] = True
                    labels.add(term)
            for alias, named_labels in aliases.items():
                if any(label in labels for label in named_labels):
                    labels.add(alias)  # left out of the embedded query with the names
                    for label in named_labels:
                        units, _ = table.label.postings(table.vocab.get(label), within)
                        alias_subject[units] = True
        vector: np.ndarray | None = None
        if use_vectors and table.has_vectors and not listing:
            encoder = self.index.query_embedder()
            if encoder is not None:
                text = query
                if labels and mode == "hybrid" and s.subject_free_vector:
                    text = dense_query(query, labels.__contains__)
                try:
                    embedded = served.vectors.get(text) if served else None
                    if embedded is None:
                        embedded = encoder.embed_query(text)
                    if embedded.shape != (table.dims,):
                        from ..index import EmbeddingProviderError

                        raise EmbeddingProviderError(
                            f"the query's vector has {embedded.shape[-1]} dimensions, the "
                            f"index's {table.dims}"
                        )
                except _provider_error() as exc:  # (evaluated only when one is raised)
                    warnings.append(f"searched by keywords only: {exc}")
                    if mode == "semantic":
                        return []
                else:
                    vector = _cosines(table, embedded, within)
        if keyword is None and vector is None and not listing:
            return []
        if served is not None:
            named = served.named(table)
        else:
            named = self._named(table, query) if not listing else None
        if (
            vector is None
            and keyword is not None
            and not keyword.any()
            and not guard
            and (named is None or not named.any())
        ):
            return []

        weight = s.vector_weight
        fused = np.ones(n) if listing else fuse(keyword, vector, s.fusion, weight, s.rrf_k)
        components = {"keyword": fused * 0, "vector": fused * 0}
        if keyword is not None:
            components["keyword"] = max_norm(keyword)
        if vector is not None:
            components["vector"] = minmax_norm(vector)
        context = np.zeros(n)
        by_turns = np.zeros(n, dtype=bool)  # units lifted by a window of turns
        for size in table.windows if not listing else ():
            starts, lengths, norms, by_units, by_turns_of = table.context_windows(
                size, s.turn_windows
            )
            w_kw = window_bm25(matched, idf, starts, lengths) if keyword is not None else None
            w_vec = window_sums(vector, starts, lengths) / norms if vector is not None else None
            if w_vec is not None and within is not None:  # others' windows: no part in scaling
                w_vec = _floored(w_vec, within.mask[starts])
            window_scores = fuse(w_kw, w_vec, s.fusion, weight, s.rrf_k)
            lifted = best_window(window_scores, by_units, n)
            if by_turns_of:  # windows of turns too: the better lifts, and says so
                of_turns = best_window(window_scores, by_turns_of, n)
                by_turns |= of_turns > lifted
                lifted = np.maximum(lifted, of_turns)
            context += s.window_weight * lifted
        relevance = fused + context
        subject_factor = np.where(subject, 1.0 + s.subject_boost, 1.0)
        question_factor = np.where(table.question > 0, 1.0 - s.question_penalty, 1.0)
        relevance = relevance * subject_factor * question_factor
        short_factor: Any = 1.0
        if s.short_penalty and not listing:  # "lol", "ok": one word at most but the label
            memo = self._names_memo(table, None)
            if "short" not in memo:  # the table's one-word turns, found once
                memo["short"] = (table.text.lengths - table.label.lengths) <= 1
            short = memo["short"]
            if has_term is not None:
                short = short & ~has_term  # not in place: the table's own
            short_factor = np.where(short, 1.0 - s.short_penalty, 1.0)
            relevance = relevance * short_factor
        when_factor: Any = 1.0
        if s.when_boost and not listing and asks_when(query):
            when_factor = np.where(table.tells(), 1.0 + s.when_boost, 1.0)
            relevance = relevance * when_factor
        date_factor: Any = 1.0
        if s.date_boost and not listing:
            days = asked_days(query, today)
            if days:  # lines of a day the question names, or telling of that one day
                date_factor = np.where(
                    on_days(table.day_numbers, days) | table.tells_day_of(days),
                    1.0 + s.date_boost,
                    1.0,
                )
                relevance = relevance * date_factor

        recency = table.recency(today.toordinal(), s.half_life_days, s.recency_weight)
        score = relevance * recency * table.salience
        exact = np.zeros(n)
        if guard:
            guard_terms = list(dict.fromkeys(t for tok in guard for t in terms_of(tok, query=True)))
            holders = np.unique(
                np.concatenate(
                    [table.text.postings(table.vocab.get(t), within)[0] for t in guard_terms]
                )
            )
            if allowed is not None:
                holders = holders[allowed[holders]]
            held = store.units_by_id(int(table.ids[r]) for r in holders[:GUARD_MAX_UNITS])
            for position, chunk in zip(table.positions(list(held)), held.values(), strict=True):
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
            score = np.where(
                (relevance > 0) | (named if named is not None else False), score, -np.inf
            )
        if named is not None:
            score = lift_named(score, named, table.file_ids)

        pool_size = min(n, max(limit * 3, 30))
        ranked = [int(r) for r in best_rows(score, pool_size) if np.isfinite(score[r])]
        raised: set[int] = set()  # rows the subjects' turns moved up
        if s.subject_turns and len(labels) >= 2 and not listing:
            # Names only (capitalised words, nicknames): not a field label such as "decision".
            capitalised = {t for token in exact_tokens(query) for t in terms_of(token)}
            nicknamed = {t for named in aliases.values() for t in named}
            other_names = {o for same in partners.values() for o in same}  # one person's
            named_subjects = sorted(
                t
                for t in labels
                if t in terms and t not in other_names and (t in capitalised or t in nicknamed)
            )
            if len(named_subjects) >= 2:
                groups = [
                    set().union(
                        *(
                            table.label.postings(table.vocab.get(name), within)[0].tolist()
                            for name in [t, *partners.get(t, ())]
                        )
                    )
                    for t in named_subjects
                ]
                turned = take_turns(ranked, groups)
                before = {row: at for at, row in enumerate(ranked)}
                raised = {row for at, row in enumerate(turned) if at < before[row]}
                ranked = turned
        spans = coalesce(
            ranked,
            table.section,
            table.line_counts,
            0 if listing else s.coalesce_depth,
            s.coalesce_max_units,
            s.coalesce_max_lines,
        )
        rows = store.units_by_id(int(table.ids[r]) for span in spans for r in span)
        judged = store.flagged_ids(rows)  # units flagged as instructions when indexed
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
            while (
                lo > 0
                and parts[lo].start_line == parts[lo - 1].end_line + 1
                and (allowed is None or allowed[span[lo - 1]])
            ):
                lo -= 1
            while (
                hi < len(parts) - 1
                and parts[hi + 1].start_line == parts[hi].end_line + 1
                and (allowed is None or allowed[span[hi + 1]])
            ):
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
                "turn_window": float(by_turns[best]),
                "recency": float(recency[best]),
                "salience": float(table.salience[best]),
                "subject": float(subject_factor[best]),
                "question": float(question_factor[best]),
                "short": float(np.broadcast_to(short_factor, (n,))[best]),
                "exact": float(exact[best]),
                "alias": float(alias_subject[best]),
                "told_date": float(told is not None and bool(told[best])),
                "turn": float(best in raised),
                "when": float(np.broadcast_to(when_factor, (n,))[best]),
                "date": float(np.broadcast_to(date_factor, (n,))[best]),
                **{
                    kind: float(
                        kind in otherwise
                        and bool(otherwise[kind][best])
                        and keyword is not None
                        and keyword[best] > 0
                    )
                    for kind in ("spelling", "form")
                },
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
                    hit_flags(
                        text,
                        not (worded or similar),
                        None if judged is None else any(p.id in judged for p in parts),
                    ),
                )
            )
            if len(hits) >= limit:
                break
        return hits

    def _variants(
        self,
        table: UnitTable,
        query: str,
        terms: list[str],
        aliases: dict[str, list[str]],
        within: Restriction | None,
        s: RankSettings,
    ) -> dict[str, list[tuple[str, float, str]]]:
        """Query word -> the vault's other spellings of it, each with its weight and kind:
        typing slips of it, or that it is a slip of ("spelling": `spelling_variants`), and
        the short forms of a chat, its words stretched for emphasis, two words in a row
        typed as one (a variant of each) and one word typed as two ("road trip": a pair
        of terms) ("form": `short_forms`, `stretched_variants`, `joined_words`,
        `split_words`). Names are left to `resolve_names`; a word the query holds itself
        is no variant."""
        if not (s.typo_weight or s.form_weight):
            return {}
        vocab = table.vocab
        labels = set(self.label_terms(table))

        def frequency(word: str) -> int:
            number = vocab.get(word)
            return 0 if number is None else table.text.frequency(number, within)

        found: dict[str, list[tuple[str, float, str]]] = {}
        joined: dict[str, list[str]] = {}  # "ic" and "cream" -> "icecream", when the vault has it
        if s.form_weight:
            for first, second, together in joined_words(query):
                if frequency(together) and not {first, second} & labels:
                    joined.setdefault(first, []).append(together)
                    joined.setdefault(second, []).append(together)
            for word, first, second in split_words(query):  # "roadtrip" -> "road trip"
                if frequency(first) and frequency(second) and word not in labels:
                    joined.setdefault(word, []).append(f"{first} {second}")
        for term in terms:
            if term in labels or term in aliases:
                continue
            variants = [
                (v, s.form_weight, "form")
                for v in short_forms(term)
                if s.form_weight and frequency(v)
            ]
            variants += [(v, s.form_weight, "form") for v in joined.get(term, ())]
            if s.form_weight:  # "loveee", "goooood" for "love", "good", and the other way
                variants += [
                    (v, s.form_weight, "form")
                    for v in stretched_variants(term, self._stretched_terms(table), frequency)
                ]
            if s.typo_weight:
                variants += [
                    (v, s.typo_weight, "spelling")
                    for v in spelling_variants(term, frequency, is_word)
                ]
            kept: dict[str, tuple[str, float, str]] = {}
            for variant in variants:  # a short form first: it is the word itself
                if variant[0] not in labels and variant[0] not in terms:
                    kept.setdefault(variant[0], variant)
            if kept:
                found[term] = list(kept.values())
        return found

    def _serves(self, filters: Filters) -> bool:
        """Whether this search asks the index server for candidates (phase 2): with a backend
        that serves them, unless `on_server` is off, and for what phase 2 covers (search
        operators and `--since/--until` read the whole table: `_told` and `select` need it)."""
        return (
            self.on_server
            and self.index.store.capabilities.serves_candidates
            and filters.select is None
            and not (filters.since or filters.until)
        )

    def _told(self, table: UnitTable, filters: Filters) -> np.ndarray | None:
        """The units outside `--since/--until` by their file's date whose relative dates
        ("yesterday" in the next day's log) name days wholly inside (a line's "next week" is
        not in a range of one day), and that the other filters keep; None when there are
        none."""
        import dataclasses

        import numpy as np

        if not (filters.since or filters.until) or not table.told.any():
            return None
        first = filters.since.toordinal() if filters.since else 1
        last = filters.until.toordinal() if filters.until else dt.date.max.toordinal()
        told = table.tells_within(first, last)
        if not told.any():
            return None
        rest = dataclasses.replace(filters, since=None, until=None)
        if rest.active or rest.hidden_kinds:
            told &= np.isin(
                table.ids,
                np.array(self.index.store.unit_ids_where(**rest.conditions()), dtype=np.int64),
            )
        return told if told.any() else None

    def _stretched_terms(self, table: UnitTable) -> Stretched:
        """The `stretched_terms` of the table's vocabulary, read once per table."""
        if self._stretched is None or self._stretched[0] is not table:
            self._stretched = (table, stretched_terms(stretched_lines(table.arrays["vocab"])))
        return self._stretched[1]

    def label_terms(self, table: UnitTable) -> list[str]:
        """The analyzed terms of the vault's lead-in labels (speakers, people, field names),
        read from the table's label postings once per table."""
        import numpy as np

        if self._label_terms is None or self._label_terms[0] is not table:
            held = np.flatnonzero(np.diff(table.label.offsets) > 0)
            words = {number: word for word, number in table.vocab.items()}
            self._label_terms = (table, [words[int(t)] for t in held if int(t) in words])
        return self._label_terms[1]

    def _partners(
        self, table: UnitTable, label: str, labels: list[str], within: Restriction | None
    ) -> list[str]:
        """The labels that are `label`'s person under another name (`label_partners`) and
        speak in one of its sessions (sections); remembered for the table."""
        import numpy as np

        if label not in self._label_set(labels):
            return []
        memo = self._names_memo(table, within)
        if ("partners", label) in memo:
            return memo[("partners", label)]
        rows, _ = table.label.postings(table.vocab.get(label), within)
        sessions = np.unique(table.section[rows])
        found = []
        for other in label_partners(label, labels):
            others, _ = table.label.postings(table.vocab.get(other), within)
            if np.isin(table.section[others], sessions).any():
                found.append(other)
        memo[("partners", label)] = found
        return found

    def _names_memo(self, table: UnitTable, within: Restriction | None) -> dict[Any, Any]:
        """What `_partners` and `_introduced` found for this table (the whole vault's)."""
        if within is not None:
            return {}
        if self._names is None or self._names[0] is not table or len(self._names[1]) > 4096:
            self._names = (table, {})
        return self._names[1]

    def _introduced(
        self, table: UnitTable, store: Any, name: str, labels: list[str], within: Restriction | None
    ) -> list[str]:
        """The labels of the speakers who said they are called `name` ("call me Bob", "my
        name is Bob"): read from the few lines that hold the name and "call" or "name"."""

        if name in self._label_set(labels):
            return []
        memo = self._names_memo(table, within)
        if ("introduced", name) not in memo:
            memo[("introduced", name)] = self._read_introductions(
                table, store, name, labels, within
            )
        return memo[("introduced", name)]

    def _read_introductions(
        self, table: UnitTable, store: Any, name: str, labels: list[str], within: Restriction | None
    ) -> list[str]:
        import numpy as np

        holders, _ = table.text.postings(table.vocab.get(name), within)
        if not len(holders):
            return []
        asked = [table.text.postings(table.vocab.get(word), within)[0] for word in ("call", "name")]
        rows = np.intersect1d(holders, np.concatenate(asked))[:INTRODUCTIONS_READ]
        if not len(rows):
            return []
        found: list[str] = []
        label_set = self._label_set(labels)
        for unit in store.units_by_id(int(table.ids[r]) for r in rows).values():
            speaker = lead_label(unit.text)
            if speaker and any(terms_of(said) == [name] for said in introduced_names(unit.text)):
                found += [t for t in terms_of(speaker) if t in label_set and t != name]
        return list(dict.fromkeys(found))

    def _label_set(self, labels: list[str]) -> set[str]:
        if self._labels_set is None or self._labels_set[0] is not labels:
            self._labels_set = (labels, set(labels))
        return self._labels_set[1]

    def _select(self, tree: Any, table: UnitTable) -> np.ndarray | None:
        """The rows a query's operators select (search/select.py); a keyword index that cannot
        be read is a `VaultError` that says how to mend it."""
        from ..errors import VaultError
        from .select import select

        try:
            self.index.catch_up_fulltext()  # what searches' runs left for the keyword index
        except VaultError as exc:  # another writer holds the lock long, a read-only cache
            log.warning("the search operators read the keyword index as it is: %s", exc)
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

    @staticmethod
    def _name_keys(query: str) -> set[str]:
        """The runs of the query's analyzed words that may name a note (see `_named`)."""
        words = terms_of(query)
        shortest = 1 if len(set(words)) == 1 else 2
        return {
            " ".join(words[i:j])
            for i in range(len(words))
            for j in range(i + shortest, min(len(words), i + MAX_NAME_WORDS) + 1)
        }

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
        found = store.named_files(self._name_keys(query))
        if not found:
            return None
        files = np.fromiter({f for ids in found.values() for f in ids}, dtype=np.int64)
        named = np.isin(table.file_ids, files)
        return named if named.any() else None


def _spelt(
    table: UnitTable, variant: str, within: Restriction | None
) -> tuple[np.ndarray, np.ndarray, float]:
    """The units holding `variant` (a term of the vault, or two, "road trip", for a query
    word typed as one: the units holding both), its BM25 in each (of two: their mean), and
    its idf (of two: the rarer's)."""
    import numpy as np

    if " " not in variant:
        number = table.vocab[variant]
        units, scores = table.text.bm25(number, BM25_K1, BM25_B, within)
        return units, scores, table.text.idf(number, within)
    first, second = (table.vocab[part] for part in variant.split(" "))
    units_a, scores_a = table.text.bm25(first, BM25_K1, BM25_B, within)
    units_b, scores_b = table.text.bm25(second, BM25_K1, BM25_B, within)
    units, at_a, at_b = np.intersect1d(units_a, units_b, assume_unique=True, return_indices=True)
    return (
        units,
        (scores_a[at_a] + scores_b[at_b]) / 2,
        max(table.text.idf(first, within), table.text.idf(second, within)),
    )


def _base_path(path: Path, base_id: str) -> Path:
    return path.with_name(f"{path.stem}.base-{base_id}.arrays")


def _read_table(path: Path, windows: Sequence[int]) -> tuple[dict[str, Any], UnitTable] | None:
    """The saved unit table at `path` and its stamp (without the name of its base), or None
    when there is none whole: its file, or the file of vectors it names (`base`), missing,
    of another format or damaged (logged: then made anew from the store), or saved with
    other context windows (a search with other `RankSettings.windows` makes its own)."""
    from ..index import read_arrays, read_stamped

    found = read_stamped(path)
    if found is None or not isinstance(found[0].get("base"), str):
        return None
    if found[0].get("windows") != list(windows):
        return None
    stamp, arrays = found
    base_id = stamp.pop("base")
    if not base_id.isalnum():
        return None
    vectors = read_arrays(_base_path(path, base_id), {"base": base_id})
    if vectors is None or "base" not in vectors or "vec_extra" not in arrays:
        return None
    table = UnitTable({**arrays, "base": vectors["base"]}, windows)
    table.base_id = base_id
    return stamp, table


def _save_table(path: Path, stamp: dict[str, Any], table: UnitTable) -> None:
    """Save `table` at `path`: its vectors' base in a file of its own when it has none yet
    (a table built or compacted: the whole matrix, written once), then the rest, naming that
    base (a patched table: its rows, the vectors appended since and where each row's vector
    is; a small write). Both atomic: a crash between leaves the old table, or a base no table
    names (removed by the next save of a new base). A base another process removed meanwhile
    is found missing by the next reader, which makes the table anew."""
    import secrets

    from ..index import write_arrays

    new_base = table.base_id is None or not _base_path(path, table.base_id).is_file()
    if new_base:
        base_id = secrets.token_hex(6)
        write_arrays(_base_path(path, base_id), {"base": base_id}, {"base": table.base})
        table.base_id = base_id
    write_arrays(
        path,
        {**stamp, "base": table.base_id},
        {k: v for k, v in table.arrays.items() if k != "base"},
    )
    if new_base:
        for old in path.parent.glob(f"{path.stem}.base-*.arrays*"):
            if not old.name.startswith(_base_path(path, table.base_id or "").name):
                with contextlib.suppress(OSError):
                    old.unlink()


def _cosines(table: UnitTable, query: np.ndarray, within: Restriction | None) -> np.ndarray:
    """Every unit's cosine to the query vector (unit vectors: a dot product). Restricted to a
    scope, only its rows are multiplied (the others' vectors are never read), and the others
    get the lowest of its cosines, so they take no part in min-max scaling."""
    if within is None:
        return table.cosines(query)
    return _floored(table.cosines(query, within.ranges), within.mask)


def _floored(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """`values` with every entry outside `keep` set to the lowest kept one (0 with none)."""
    import numpy as np

    kept = values[keep]
    return np.where(keep, values, float(kept.min()) if len(kept) else 0.0)
