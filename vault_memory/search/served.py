"""Search on an index server (docs/postgres-design.md §4, phase 2): the candidates of a
query, read from the server in one statement (`ServesCandidates.served`), as a small unit table
with the statistics of everything the search sees, so that `Searcher` ranks them with the
same code as the unit table of a whole index.

The server picks the units nearest the query by its HNSW index (at least 3 × the hits asked
for: the pool ranked here) and its best keyword matches by the idf of the keywords each holds
(as many as `RankSettings.candidates`, the keyword evidence the whole table keeps), filtered
by scope and kind in SQL, with their neighbours within the widest context window; BM25 is
computed here from the server's document frequencies, unit count and field lengths
(`Restriction`). A question asking for a kind ("What instruments does she play?") also gets
the best units holding an instance of it (search/kinds.py); the joint idf of the instances
is counted over the candidates, as exact as the unit table's when every unit holding one is
a candidate.
Measured on the LoCoMo dev split: 300 nearest and 400 keyword matches score as 150 and 200
(r@2000ch 0.808 both), at twice the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..index import terms_of
from .kinds import asked_instances
from .ranking import RankSettings, dense_query
from .table import Restriction, UnitTable

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from ..index import ServesCandidates, StoredUnit

SERVED_NEAR = 150
SERVED_WORDS_SHARE = 1  # keyword matches read: this many times `RankSettings.candidates`
SERVED_MEMO_MOST = 200_000  # texts whose derived values a searcher keeps between queries


@dataclass
class Served:
    """A search's candidates from an index server: their unit table, the statistics of all
    the search sees, which rows the filters allow, the rows' texts (it answers `units_by_id`
    and `flagged_ids` for them, as the store would), the query vectors embedded."""

    table: UnitTable
    within: Restriction
    allowed: np.ndarray | None
    units: dict[int, StoredUnit]
    vectors: dict[str, np.ndarray]
    known_terms: set[str]
    named_files: list[int]
    flags: dict[int, bool | None]  # judged when indexed; None: written before judgements

    def knows(self, term: str) -> bool:
        """Whether any unit the search sees holds `term` (not only the candidates)."""
        return term in self.known_terms or term in self.table.vocab

    def named(self, table: UnitTable) -> np.ndarray | None:
        """The rows of the notes the query names (their units came with the candidates)."""
        import numpy as np

        if not self.named_files:
            return None
        named = np.isin(table.file_ids, np.asarray(self.named_files, dtype=np.int64))
        return named if named.any() else None

    def units_by_id(self, ids: Any) -> dict[int, StoredUnit]:
        return {int(i): self.units[int(i)] for i in ids if int(i) in self.units}

    def flagged_ids(self, ids: Any) -> set[int] | None:
        """As the store's: None when one of them was written before judgements were kept."""
        flags = [(int(i), self.flags.get(int(i))) for i in ids]
        if any(flagged is None for _, flagged in flags):
            return None
        return {i for i, flagged in flags if flagged}


class ServerCandidates:
    """What a searcher keeps between the queries it asks a server: the visible units'
    statistics per scope set (with the server generation they were counted at), the lead-in
    labels seen among candidates, and what earlier candidate texts derived (`UnitTable.build`
    memo)."""

    def __init__(self) -> None:
        self.stats: dict[tuple[str, ...] | None, tuple[str | None, tuple[int, ...]]] = {}
        self.labels: set[str] = set()
        self.memo: dict[str, dict] = {}

    def fetch(
        self,
        index: Any,
        query: str,
        model_id: str | None,
        mode: str,
        filters: Any,
        s: RankSettings,
        limit: int,
        windows: tuple[int, ...],
        name_keys: set[str],
        label_terms: Callable[[UnitTable], list[str]],
    ) -> Served:
        """The candidates of `query` (see the module docstring)."""
        import numpy as np

        store = cast("ServesCandidates", index.store)  # `capabilities.serves_candidates`
        terms = list(dict.fromkeys(terms_of(query, query=True)))
        vectors: dict[str, np.ndarray] = {}
        vector = None
        if model_id is not None and mode != "keyword":
            encoder = index.query_embedder()
            # The text the search will embed: without the lead-in labels it names (guessed
            # from the labels of earlier candidates; a wrong guess costs a second embedding)
            labels = {t for t in terms if t in self.labels}
            text = query
            if labels and mode == "hybrid" and s.subject_boost and s.subject_free_vector:
                text = dense_query(query, labels.__contains__)
            if encoder is not None:
                try:
                    vector = vectors[text] = encoder.embed_query(text)
                except _provider_error():  # said when the search embeds it again
                    pass
        conditions = (
            filters.conditions()
            if filters.active
            else {"hidden_files": tuple(filters.hidden_kinds)}
        )
        scopes = tuple(sorted(set(filters.scopes))) if filters.scopes is not None else None
        known = self.stats.get(scopes, (None, ()))
        worded = mode in ("hybrid", "keyword")
        got = store.served(
            model_id,
            np.asarray(vector, dtype=np.float32).tobytes() if vector is not None else None,
            terms if worded else [],
            terms if worded else [],
            sorted(name_keys),
            scopes,
            conditions,
            max(SERVED_NEAR, 3 * limit),
            SERVED_WORDS_SHARE * max(s.candidates, 100),
            max(windows, default=1) - 1,
            known[0],
            # the instances of a kind the question asks for, a candidate stream of their
            # own: the lines that answer such a question often share no word with it
            asked_instances(query, terms) if worded and s.kind_weight else (),
        )
        if got.stats is not None:
            self.stats[scopes] = known = (got.generation, got.stats)
        rows = [served.row for served in got.rows]
        dims = (
            len(vector)
            if vector is not None
            else next((len(r[5]) // 4 for r in rows if r[5] is not None), 1)
        )
        if sum(len(kept) for kept in self.memo.values()) > SERVED_MEMO_MOST:
            self.memo = {}
        table = UnitTable.build(rows, dims, windows, memo=self.memo)
        self.labels.update(label_terms(table))
        units, text_terms, heading_terms = known[1]
        vocab = table.vocab
        frequencies = {
            field: {vocab[t]: counts[k] for t, counts in got.df.items() if t in vocab}
            for k, field in enumerate(("tx", "hd"))
        }
        n = len(rows)
        within = Restriction(
            np.ones(n, dtype=bool),
            ((0, n),),
            units,
            {
                "tx": text_terms / units if units else 0.0,
                "hd": heading_terms / units if units else 0.0,
                "lb": table.label.average,
            },
            frequencies,
        )
        allowed = np.fromiter((served.allowed for served in got.rows), dtype=bool, count=n)
        return Served(
            table,
            within,
            None if allowed.all() else allowed,
            {served.unit.id: served.unit for served in got.rows},
            vectors,
            {t for t, (a, b) in got.df.items() if a or b},
            got.named,
            {served.unit.id: served.flagged for served in got.rows},
        )


def _provider_error() -> type[Exception]:
    """index.EmbeddingProviderError, imported when one is raised (as searcher.py does: its
    module is not needed by a search with the bundled model)."""
    from ..index import EmbeddingProviderError

    return EmbeddingProviderError
