"""Hybrid search: BM25F keyword scores from the unit table's postings + vector cosine
scores, fused, lifted by context windows, weighed by the lines' subjects (a speaker known by
two labels, or by a name they asked to be called, as one), by whether they ask or tell and
whether they say anything at all ("lol"), then recency, salience, an exact-token guard
and coalesced spans (README, "Search"). The stages of a search are the functions of
`stages` (candidates, expansion, signals, fusion, weighing, ranking, assembly), their
formulas those of `ranking`; `Searcher` runs them in order and gathers what they need from
the index and the unit table (`table`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from ..index import terms_of
from .hits import Hit as Hit, SearchResults as SearchResults, hit_flags as hit_flags
from .kinds import kind_members
from .people import named_speakers, names_meant
from .ranking import (
    RankSettings,
    coalesce,
    dense_query,
    exact_tokens,
    guard_exact,
    label_partners,
    resolve_names,
)
from .restated import without_restatements
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
from .stages import (
    Candidates,
    Evidence,
    KeywordSignal,
    Words,
    admissible,
    assemble,
    competing_rows,
    cosines,
    exact_shares,
    fusion,
    guard_rows,
    has_evidence,
    keyword_signal,
    let_in_told,
    narrowed,
    no_subjects,
    pool,
    subject_turns,
    subjects,
    weigh,
    with_aliases,
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
NAME_VOTES_READ = 200  # messages calling a name that vote for whom it names
MAX_NAME_WORDS = 8  # the longest name (in analyzed words) a query is searched for


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
    limited: contextlib.AbstractContextManager[Any] = _BLAS.limit(limits=1, user_api="blas")
    return limited


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
        self.expander: Any = None  # the deep mode's model (search/deep.py), loaded when asked

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

    def model_for(self, mode: str) -> str | None:
        """The model whose vectors a search in `mode` uses, None for keywords only."""
        model_id: str | None = self.index.store.get_meta("model_id") or None
        if mode in ("hybrid", "semantic") and model_id and model_id == self.index.model_id:
            return model_id
        return None

    def prepare(self, mode: str = "hybrid") -> None:
        """Load (or build and save) the unit table a search in `mode` needs now, so that the
        next query does not pay for it. A search on an index server holds no table: nothing
        to load but the query encoder (the caller's)."""
        if self._serves(Filters()):
            return
        self.table(self.model_for(mode))

    def search(
        self,
        query: str,
        limit: int = 10,
        mode: str = "hybrid",
        filters: Filters | None = None,
        today: dt.date | None = None,
        settings: RankSettings | None = None,
        deep: bool = False,
    ) -> SearchResults:
        """The best `limit` hits for `query`. `deep`: a small local generative model first
        names the words an answer would use, which join the keywords (search/deep.py;
        `DeepUnavailableError` when its extra is not installed)."""
        expanded = self.deep_terms(query) if deep and mode != "semantic" else {}
        with self.reads() if self._serves(filters or Filters()) else contextlib.nullcontext():
            found = self._search_once(query, limit, mode, filters, today, settings, expanded)
            if self.index.store.stale:  # the server changed meanwhile
                found = self._search_once(query, limit, mode, filters, today, settings, expanded)
        return found

    def deep_terms(self, query: str) -> dict[str, float]:
        """The terms the deep mode's model names for `query`, each with its share."""
        from .deep import Expander, expanded_terms

        if self.expander is None:
            self.expander = Expander()
        return expanded_terms(self.expander.words(query), self.settings.deep_weight)

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
        expanded: dict[str, float] | None = None,
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
            hits = self._search(query, limit, mode, filters, today, warnings, settings, expanded)
        hits = order_superseded(hits)  # what is true now first
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
        expanded: dict[str, float] | None = None,
    ) -> list[Hit]:
        """The best `limit` hits for `query`, through the stages of search/stages.py. With
        `filters.scopes`, the search sees only the units of those scopes, and ranks them as
        if the vault held nothing else: keyword idf and lengths, vector and window
        normalisation and the exact-token guard count only them, and the other rows' vectors
        are never multiplied. `settings` replace the searcher's own for this query (a scope's
        [search] settings). `expanded`: the deep mode's terms and their shares."""
        s = settings or self.settings
        filters = filters or Filters()
        today = today or clock.today()
        model_id = self.model_for(mode)
        found = self._candidates(query, model_id, mode, filters, s, limit)
        if found is None:
            return []
        table, within, listing = found.table, found.within, found.listing
        words = self._expansion(query, found, mode, s)
        if expanded and found.served is None:  # (an index server picks by the query's words)
            words.expanded = {t: w for t, w in expanded.items() if t not in words.terms}
        ranks_words = mode in ("hybrid", "keyword") and not listing
        keyword = keyword_signal(table, words, within, found.allowed, s) if ranks_words else None
        guard = self._rare(table, exact_tokens(query), within) if ranks_words else []
        subject = (
            subjects(table, words, within)
            if ranks_words and s.subject_boost
            else no_subjects(len(table.ids))
        )
        vector = self._vector_signal(query, found, model_id, mode, subject.labels, s, warnings)
        if keyword is None and vector is None and not listing:
            return []  # (a semantic search whose query could not be embedded, too)
        named = self._named_rows(query, found)
        if not has_evidence(keyword, vector, guard, named):
            return []
        fused = fusion(table, keyword, vector, within, s, listing)
        factors = weigh(
            table,
            fused.relevance,
            subject.rows,
            self._one_word_rows(table) if s.short_penalty and not listing else None,
            keyword.has_term if keyword is not None else None,
            query,
            today,
            s,
            listing,
        )
        score, exact = self._guarded(found, factors.score, guard, keyword)
        score = admissible(
            score,
            found.allowed,
            factors.relevance,
            named,
            mode == "keyword" and not listing,
            table.file_ids,
        )
        ranked = pool(score, limit)
        restated = without_restatements(
            score, ranked, table, found.store.units_by_id, partial(self._ids_in_file, found)
        )
        if restated is not None:  # entries that only restate their log lines: the lines
            score, ranked = restated, pool(restated, limit)
        raised: set[int] = set()  # rows the subjects' turns moved up
        if s.subject_turns and len(subject.labels) >= 2 and not listing:
            ranked, raised = subject_turns(ranked, table, query, words, subject.labels, within)
        spans = coalesce(
            ranked,
            table.section,
            table.line_counts,
            0 if listing else s.coalesce_depth,
            s.coalesce_max_units,
            s.coalesce_max_lines,
        )
        rows = found.store.units_by_id(int(table.ids[r]) for span in spans for r in span)
        evidence = Evidence(
            score,
            fused,
            factors,
            exact,
            subject,
            found.told,
            raised,
            keyword,
            vector,
            named,
            listing,
            s.weak_cosine,
        )
        judged = found.store.flagged_ids(rows)  # units flagged as instructions when indexed
        return assemble(spans, rows, judged, table, evidence, found.allowed, limit)

    def _ids_in_file(self, found: Candidates, path: str) -> list[int]:
        """The unit ids of one file the ranking can see: from an index server, the units that
        came with the candidates (a line outside them has no row either way, and asking the
        server would cost a warm search its one statement); here, the store's."""
        if found.served is not None:
            return [u.id for u in found.served.units.values() if u.path == path]
        return self.index.store.unit_ids_where(within=path)

    def _candidates(
        self,
        query: str,
        model_id: str | None,
        mode: str,
        filters: Filters,
        s: RankSettings,
        limit: int,
    ) -> Candidates | None:
        """The rows the search ranks (the unit table, or the candidates an index server
        picked) and those it may return; None when there are none."""
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
        store: Any  # the index's store, or the server's candidates (`Served` answers as one)
        if served is not None:  # candidates from the index server, ranked the same way
            table, within, store = served.table, served.within, served
        else:
            table, store = self.table(model_id), self.index.store
        if len(table.ids) == 0:
            return None
        if served is None and filters.scopes is not None:
            within = table.restrict(filters.scopes)
        if within is not None and within.units == 0:
            return None
        # Operators without free text (`tag:#decision`): every unit they select, the most
        # salient and recent first (then in file order), nothing to rank them by.
        listing = filters.select is not None and not query.strip()
        found = Candidates(table, store, served, within, listing)
        return found if self._admit(found, filters) else None

    def _admit(self, found: Candidates, filters: Filters) -> bool:
        """Set the rows the filters, the scope and the operators let `found` return (and
        those let in by the days their text names); False when operators select none."""
        import numpy as np

        table = found.table
        allowed: np.ndarray | None = None
        told: np.ndarray | None = None
        if found.served is not None:
            allowed = found.served.allowed
        elif filters.active:
            where = found.store.unit_ids_where(**filters.conditions())
            allowed = np.isin(table.ids, np.array(where, dtype=np.int64))
            allowed, told = let_in_told(allowed, self._told(table, filters))
        elif filters.hidden_kinds:
            allowed = self._visible(table, filters.hidden_kinds)
        if found.within is not None:
            allowed = narrowed(allowed, found.within.mask)
        if filters.select is not None:
            chosen = self._select(filters.select, table)
            if chosen is not None:
                allowed = narrowed(allowed, chosen)
            if allowed is not None and not allowed.any():
                return False
        found.allowed, found.told = allowed, told
        return True

    def _expansion(self, query: str, found: Candidates, mode: str, s: RankSettings) -> Words:
        """The query's words, with the labels their names stand for and their spellings."""
        terms = list(dict.fromkeys(terms_of(query, query=True)))  # keywords and subjects
        aliases: dict[str, list[str]] = {}
        partners: dict[str, list[str]] = {}  # a label the query names -> its other labels
        ranks_words = mode in ("hybrid", "keyword") and not found.listing
        if s.name_aliases and ranks_words:
            aliases, partners = self._aliases(query, terms, found, s)
            terms = with_aliases(terms, aliases)
        variants = (
            self._variants(found.table, query, terms, aliases, found.within, s)
            if ranks_words and found.served is None
            else {}
        )
        words = Words(terms, aliases, partners, variants)
        if s.kind_weight and ranks_words:  # (an index server sent the instances' units)
            table = found.table
            names = {*self.label_terms(table), *aliases}
            words.kinds = kind_members(query, terms, table.vocab, names)
        return words

    def _aliases(
        self, query: str, terms: list[str], found: Candidates, s: RankSettings
    ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """A query word -> the labels it names under another name (a nickname or a
        misspelling of a speaker's name, a name a speaker said to be called by, a named
        speaker's other label), and a label -> its person's other labels."""
        table, within = found.table, found.within
        capitalised = {t for token in exact_tokens(query) for t in terms_of(token, query=True)}
        label_list = self.label_terms(table)
        aliases = resolve_names(
            [(t, t in capitalised) for t in terms],
            label_list,
            found.served.knows if found.served else table.vocab.__contains__,
            s.nicknames,
        )
        partners: dict[str, list[str]] = {}
        if not s.label_partners:
            return aliases, partners
        if s.message_names:
            self._named_in_messages(
                terms, capitalised, aliases, table, label_list, within, s.nicknames
            )
        for term in terms:  # a named speaker's other label (`Jo` for `Joanna`)
            same = [o for o in self._partners(table, term, label_list, within) if o not in terms]
            if same:
                partners[term] = same
                aliases[term] = same
        return aliases, partners

    def _vector_signal(
        self,
        query: str,
        found: Candidates,
        model_id: str | None,
        mode: str,
        labels: set[str],
        s: RankSettings,
        warnings: list[str],
    ) -> np.ndarray | None:
        """Every row's cosine to the query's vector (embedded without the names of the
        subjects it asks about, in hybrid mode), or None: no vectors, no encoder, or the
        provider failed (then a warning says so)."""
        table = found.table
        if model_id is None or not table.has_vectors or found.listing:
            return None
        encoder = self.index.query_embedder()
        if encoder is None:
            return None
        text = query
        if labels and mode == "hybrid" and s.subject_free_vector:
            text = dense_query(query, labels.__contains__)
        try:
            embedded = found.served.vectors.get(text) if found.served else None
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
            return None
        return cosines(table, embedded, found.within)

    def _named_rows(self, query: str, found: Candidates) -> np.ndarray | None:
        """The rows of the notes the query names (`_named`), None when it names none."""
        if found.served is not None:
            return found.served.named(found.table)
        return self._named(found.table, query) if not found.listing else None

    def _one_word_rows(self, table: UnitTable) -> np.ndarray:
        """The table's units of one word at most but their label, found once a table."""
        memo = self._names_memo(table, None)
        if "short" not in memo:
            memo["short"] = (table.text.lengths - table.label.lengths) <= 1
        short: np.ndarray = memo["short"]
        return short

    def _guarded(
        self,
        found: Candidates,
        score: np.ndarray,
        guard: list[str],
        keyword: KeywordSignal | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """`score` with the rows that spell the query's rare exact tokens (`guard`) above
        those only similar to it (`ranking.guard_exact`), and each row's share of them."""
        import numpy as np

        table = found.table
        if not guard or keyword is None:
            return score, np.zeros(len(table.ids))
        guard_terms, holders = guard_rows(table, guard, found.within, found.allowed)
        held = found.store.units_by_id(int(table.ids[r]) for r in holders[:GUARD_MAX_UNITS])
        exact = exact_shares(table, held, guard)
        competing = competing_rows(keyword.matched, guard_terms, len(table.ids))
        return guard_exact(score, exact, competing), exact

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
            known: list[str] = memo[("partners", label)]
            return known
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

    def _named_in_messages(
        self,
        terms: list[str],
        capitalised: set[str],
        aliases: dict[str, list[str]],
        table: UnitTable,
        labels: list[str],
        within: Restriction | None,
        nicknames: bool,
    ) -> None:
        """Add to `aliases` the speakers the query's names stand for by the messages that use
        them (`_introduced`): a capitalised word that is such a name, or misspells one or
        begins one (`Kat`, `Kathrine` for the `Kate` the chat calls her), or with
        `nicknames` is a nickname or the full name of one (`Katherine`, `Katie`)."""
        names = self._message_names(table)
        for term in terms:
            if term not in capitalised or term in aliases or len(term) < 3:
                continue
            said = self._introduced(table, term, labels, within)
            if not said and term not in table.vocab:  # a name the vault never spells so
                meant = names_meant(term, names, nicknames)
                if len(meant) == 1:
                    said = self._introduced(table, meant[0], labels, within)
            if said:
                aliases[term] = said

    def _message_names(self, table: UnitTable) -> list[str]:
        """The names the table's messages give their speakers or call others by (`people`),
        read from its `me` and `to` postings once a table."""
        import numpy as np

        memo = self._names_memo(table, None)
        if "message names" not in memo:
            held = (np.diff(table.self_named.offsets) > 0) | (np.diff(table.addressed.offsets) > 0)
            words = {number: word for word, number in table.vocab.items()}
            memo["message names"] = [words[int(t)] for t in np.flatnonzero(held)]
        found: list[str] = memo["message names"]
        return found

    def _introduced(
        self, table: UnitTable, name: str, labels: list[str], within: Restriction | None
    ) -> list[str]:
        """The speaker label a name stands for by the messages that use it: the speaker who
        gave themself the name ("I'm Kate", "call me Bob") and the one the other speaker of a
        chat of two calls so ("Thanks, Kate!"): `people.named_speakers`."""
        if name in self._label_set(labels):
            return []
        memo = self._names_memo(table, within)
        if ("introduced", name) not in memo:
            memo[("introduced", name)] = self._name_votes(table, name, labels, within)
        found: list[str] = memo[("introduced", name)]
        return found

    def _name_votes(
        self, table: UnitTable, name: str, labels: list[str], within: Restriction | None
    ) -> list[str]:
        import numpy as np

        number = table.vocab.get(name)
        said, weights = table.self_named.postings(number, within)
        called, _ = table.addressed.postings(number, within)
        if not len(said) and not len(called):
            return []
        speaker, run_of, run_starts = self._speakers(table, labels)
        self_votes: Counter[str] = Counter()
        for row, weight in zip(said.tolist(), weights.tolist(), strict=True):
            if speaker[row] >= 0:
                self_votes[labels[speaker[row]]] += int(weight)
        addressed_votes: Counter[str] = Counter()
        for row in called[:NAME_VOTES_READ].tolist():
            run = run_of[row]
            voices = np.unique(speaker[run_starts[run] : run_starts[run + 1]])
            others = [int(v) for v in voices if v >= 0 and v != speaker[row]]
            if speaker[row] >= 0 and len(others) == 1:  # a chat of two: the other one
                addressed_votes[labels[others[0]]] += 1
        return named_speakers(self_votes, addressed_votes)

    def _speakers(
        self, table: UnitTable, labels: list[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per row, the number of its label in `labels` (-1: none), the number of its section's
        run of rows, and where each run starts (and the table ends): found once a table."""
        import numpy as np

        memo = self._names_memo(table, None)
        if "speakers" not in memo:
            n = len(table.ids)
            speaker = np.full(n, -1, dtype=np.int64)
            for k, label in enumerate(labels):
                speaker[table.label.postings(table.vocab.get(label))[0]] = k
            section = table.section
            starts = np.flatnonzero(np.r_[True, section[1:] != section[:-1]][:n])
            run_of = np.searchsorted(starts, np.arange(n), side="right") - 1
            memo["speakers"] = (speaker, run_of, np.r_[starts, n].astype(np.int64))
        found: tuple[np.ndarray, np.ndarray, np.ndarray] = memo["speakers"]
        return found

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


def _base_path(path: Path, base_id: str) -> Path:
    return path.with_name(f"{path.stem}.base-{base_id}.arrays")


def _read_table(path: Path, windows: Sequence[int]) -> tuple[dict[str, Any], UnitTable] | None:
    """The saved unit table at `path` and its stamp (without the name of its base), or None
    when there is none whole: its file, or the file of vectors it names (`base`), missing,
    of another format (another `TABLE_FORMAT`: it is built again, never read) or damaged
    (logged: then made anew from the store), or saved with other context windows (a search
    with other `RankSettings.windows` makes its own)."""
    from ..index import read_arrays, read_stamped

    found = read_stamped(path)
    if found is None or not isinstance(found[0].get("base"), str):
        return None
    if found[0].get("format") != TABLE_FORMAT:  # another format's arrays: made anew
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
