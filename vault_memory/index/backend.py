"""The index-backend interface (docs/postgres-design.md §1): what the indexer, search, the
watcher and `vault status` ask of the derived index's database (registry.py opens the one
`[index] backend` names).

`store.Store` (SQLite, `.vault/index.sqlite`) is its first implementation and `pgstore.PgStore`
(a PostgreSQL server with pgvector) the second; mypy checks that both conform (`_conforms`
in each) and tests/index/test_backend_contract.py runs one suite of expectations against both. `Tx`
is the backend's open write transaction, handed back to the write methods.

Rows are named tuples (index/rows.py). What differs between backends is declared by each as
its `capabilities` (`Capabilities`): callers ask those, never the backend's name nor whether
it has some attribute. Nothing above `index/` runs SQL of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from .rows import (
    ChangedRows,
    Embedding,
    FileRow,
    FileStat,
    FulltextRow,
    LinkRow,
    NewLink,
    NewUnit,
    Property,
    ScopeCount,
    ServedRows,
    SkippedFile,
    StoredUnit,
    TableRows,
    TextToEmbed,
    UnitDigest,
    UnitRow,
)

Tx = Any


@dataclass(frozen=True)
class Capabilities:
    """What sets one index backend apart, declared by the backend's class."""

    #: The backend's name, as `[index] backend` and `vault status` spell it.
    name: str
    #: How a finding of `vault doctor` names the index.
    where: str
    #: The index is a file in `.vault/` (its presence, shape and writability are checked on
    #: disk); otherwise it lives on a server and `.vault/` holds only this machine's part.
    local_file: bool
    #: Several machines may index into it: a file's stat is each machine's own (a checkout
    #: has other mtimes), its content is what they share; and what one machine's keyword
    #: index lags behind by cannot be recorded in it (a search's run never defers that).
    shared: bool
    #: `changes_key` gives a cheap key of every commit (SQLite: `data_version` and the
    #: connection's `total_changes`); otherwise it gives None and callers compare
    #: `state_stamp`s.
    change_counter: bool
    #: `file_marks` and `changed_unit_rows` answer, so a saved unit table is patched by the
    #: files that changed; otherwise the table is built whole.
    patches_unit_table: bool
    #: The backend is a `ServesCandidates`: a search's candidates come from it in one
    #: statement (`served`), not from a unit table of the whole index read into the process.
    serves_candidates: bool


class IndexBackend(Protocol):
    capabilities: Capabilities
    readonly: bool
    fell_back: bool  # opened read-only because the index cannot be written
    #: Why the index cannot be written when the disk said so (full, an I/O error), else None.
    write_problem: str | None
    #: Set by a search's reads (`search_reads`) when the index changed under the search: the
    #: caller searches again. Never set where reads see one state.
    stale: bool

    @property
    def location(self) -> str:
        """Where the index is, as messages name it: its file, or the server's host:port/db
        (never a password)."""
        ...

    def versions(self) -> dict[str, str]:
        """The software holding the index, by name (`vault status` shows them): SQLite's
        library, or the server's PostgreSQL and pgvector."""
        ...

    def open(self) -> None: ...
    def exists(self) -> bool: ...
    def reset(self) -> None: ...
    def close(self) -> None: ...
    def transaction(self) -> AbstractContextManager[Tx]: ...
    def search_reads(self) -> AbstractContextManager[None]: ...

    # meta and bookkeeping
    def get_meta(self, key: str, default: str | None = None) -> str | None: ...
    def set_meta(self, conn: Tx, key: str, value: Any) -> None: ...
    def state_stamp(self) -> dict[str, Any]: ...
    def changes_key(self) -> Hashable | None: ...
    def record_counts(self, conn: Tx) -> None: ...
    def count_problem(self) -> str | None: ...

    # files and units (indexer, status)
    def files(self) -> dict[str, FileRow]: ...
    def file_stats(self) -> dict[str, FileStat]: ...
    def delete_file(self, conn: Tx, path: str) -> None: ...
    def analyzed_otherwise(self, analyze: Callable[[str], str]) -> list[str]: ...
    def files_with_units(self, match: Callable[[str], bool]) -> list[str]: ...
    def texts_holding(self, match: Callable[[str], bool]) -> list[str]: ...
    def forget_content(self, conn: Tx, paths: Iterable[str]) -> None: ...
    def touch_file(self, conn: Tx, path: str, mtime_ns: int, size: int) -> None: ...
    def replace_file(
        self,
        conn: Tx,
        path: str,
        kind: str,
        mtime_ns: int,
        size: int,
        sha256: str,
        date: str | None,
        title: str,
        tags: Iterable[str],
        units: Iterable[NewUnit],
        scope: str = "",
        note_tags: Iterable[str] = (),
        properties: Iterable[Property] = (),
        names: Iterable[str] = (),
        links: Iterable[NewLink] = (),
    ) -> None: ...
    def skipped(self) -> dict[str, SkippedFile]: ...
    def set_skipped(self, conn: Tx, path: str, mtime_ns: int, size: int, reason: str) -> None: ...
    def forget_skipped(self, conn: Tx, paths: Iterable[str]) -> None: ...
    def scope_counts(self) -> dict[str, ScopeCount]: ...
    def counts(self, model: str | None, scopes: Sequence[str] | None = None) -> dict[str, int]: ...

    # what search reads
    def unit_rows(self, model: str | None) -> list[UnitRow]: ...
    def units_by_id(self, ids: Iterable[int]) -> dict[int, StoredUnit]: ...
    def named_files(self, keys: Iterable[str]) -> dict[str, list[int]]: ...
    def has_names(self) -> bool: ...
    def links(
        self, paths: Iterable[str] | None = None, keys: Iterable[str] | None = None
    ) -> list[LinkRow]: ...

    # what the keyword index (Whoosh, for the search operators) is fed from
    def fulltext_rows(self, paths: Iterable[str] | None = None) -> Iterator[FulltextRow]: ...
    def properties_of(self, file_ids: Iterable[int]) -> dict[int, list[Property]]: ...

    # asked besides (search filters, cache freshness, integrity)
    def data_version(self) -> int: ...
    def has_units(self) -> bool: ...
    def unit_ids_where(
        self,
        since: str | None = None,
        until: str | None = None,
        kinds: Sequence[str] = (),
        hidden_kinds: Sequence[str] = (),
        within: str | None = None,
    ) -> list[int]: ...
    def unit_ids_of_kinds(self, kinds: Sequence[str]) -> list[int]: ...
    def quick_check(self, most: int = 1) -> list[str]: ...
    def unit_digests(self) -> Iterator[UnitDigest]: ...
    def vector_shas(self, model: str) -> set[str]: ...

    # embeddings, keyed by (unit text sha256, model)
    def missing_embeddings(self, model: str) -> list[TextToEmbed]: ...
    def add_embeddings(self, conn: Tx, model: str, rows: Iterable[Embedding]) -> None: ...
    def bad_vectors(self, model: str) -> int: ...
    def drop_bad_vectors(self, model: str) -> int: ...
    def drop_vectors(self, conn: Tx, model: str, shas: Iterable[str]) -> None: ...
    def prune_embeddings(self, conn: Tx, model: str, keep: Iterable[str] = ()) -> int: ...

    # a run over a few files: the vectors of their units alone
    def shas_of(self, paths: Sequence[str]) -> set[str]: ...
    def missing_embeddings_of(self, model: str, paths: Sequence[str]) -> list[TextToEmbed]: ...
    def prune_embeddings_of(self, conn: Tx, shas: Iterable[str]) -> int: ...

    # the unit table patched by the files that changed (`capabilities.patches_unit_table`;
    # otherwise no marks, nothing to patch by, and the table is built whole)
    def file_marks(self) -> dict[int, int]: ...
    def unit_rows_and_marks(self, model: str | None) -> TableRows: ...
    def changed_unit_rows(
        self,
        model: str | None,
        dims: int,
        marks: dict[int, int],
        unvectored: dict[int, int],
        most: int,
    ) -> ChangedRows | None: ...

    # units judged as instructions when indexed: None where not kept
    def flagged_ids(self, ids: Iterable[int]) -> set[int] | None: ...
    def flagged_count(self, scopes: Sequence[str] | None = None) -> int | None: ...


class ServesCandidates(IndexBackend, Protocol):
    """A backend whose `capabilities.serves_candidates`: it picks a search's candidates
    itself, in one statement (search/served.py ranks them)."""

    def served(
        self,
        model: str | None,
        vector: bytes | None,
        keywords: Sequence[str],
        terms: Sequence[str],
        names: Sequence[str],
        scopes: Sequence[str] | None,
        conditions: dict[str, Any],
        near: int,
        words: int,
        pad: int,
        known: str | None,
        instances: Sequence[str] = (),
    ) -> ServedRows: ...
