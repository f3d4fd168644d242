"""What a search does to the index before and while it reads it (the facade asks; the policy
is here): freshen the few files changed since the last index, within a budget and never the
whole vault inside a query (except to create a missing index); heal a damaged cache by
rebuilding it from the files; say once when the index cannot be written or holds no vectors;
and refuse a semantic search that cannot be one.

The facade hands in what lies above the index as callables: whether a watcher keeps the index
exact (live/watch_client.py), how to drop the searcher's unit table after a rebuild.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ..errors import (
    CannotWriteError,
    LockTimeoutError,
    NoVectorsError,
    SemanticUnavailableError,
    VaultError,
)
from .store import CorruptIndexError, SchemaVersionError

if TYPE_CHECKING:
    from ..files import Scope
    from .indexer import Index, Progress

log = logging.getLogger("vault_memory")

T = TypeVar("T")


@dataclass
class UpkeepState:
    """What a vault (or a view of it) has said or checked already, kept between searches."""

    warned_no_vectors: bool = False
    warned_read_only: bool = False
    counts_checked: bool = False  # the owner's: rows lost to damage, checked once a process


@dataclass
class SearchUpkeep:
    """The freshen-and-heal policy of one search (made for each: the index handle may have
    been reopened since the last)."""

    index: Index
    scope: Scope | None  # a bound scope: only the files it may see are freshened
    freshness_max_files: int  # `[search] freshness_max_files`
    progress: Progress | None
    state: UpkeepState  # the view's
    owner_state: UpkeepState  # the vault's (shared by its views)
    watcher_settled: Callable[[], bool]  # a running watcher says the index holds every change
    reset_searcher: Callable[[], None]  # drop the searcher (its table) after a rebuild
    heals: bool = True  # False: a search server's reader, whose caller searches in-process

    def freshen(self) -> None:
        """Index what changed since the last index, if it is little; never the whole vault
        inside a query (except to create a missing index)."""
        index = self.index
        if not self._has_index():
            return
        try:
            if not self.owner_state.counts_checked:  # once a process: rows lost to damage
                self.owner_state.counts_checked = True
                lost = index.store.count_problem()
                if lost:
                    raise CorruptIndexError(lost)
            if self.watcher_settled():
                return  # a running watcher keeps the index exact: no file to stat here
            stale = index.stale_paths(self.scope)  # a scope: only what it may see
        except Exception as exc:
            if not _is_damage(exc):
                raise
            self.heal(exc)  # of another schema, or damaged: rebuilt with one warning
            return
        if stale:
            self._index_stale(stale)

    def _has_index(self) -> bool:
        """Whether there is an index to freshen; else it is created (or, when `.vault/` is
        out of shape, healed) here, and False."""
        index = self.index
        cache = index.cache
        if not index.capabilities.local_file:  # an index server: nothing of it in .vault/
            if index.store.exists():
                return True
        elif (cache / "index.sqlite").is_file() and cache.is_dir():
            return True
        elif (cache / "index.sqlite").exists() or cache.exists() and not cache.is_dir():
            self.heal(None)  # .vault/ is out of shape (index/integrity.py)
            return False
        log.warning("no index yet: indexing the vault first (later searches are fast).")
        index.run(progress=self.progress)
        return False

    def _index_stale(self, stale: list[str]) -> None:
        """Index the files changed since the last index, unless there are more than the
        budget, another process is indexing, or the cache cannot be written (said once)."""
        if len(stale) > self.freshness_max_files:
            log.warning(
                "%d files changed since the last index; searching the index as it is. "
                "Run `vault index` (or `vault watch`) to include them.",
                len(stale),
            )
            return
        try:
            self.index.run(
                paths=stale,
                lock_timeout=0.2,
                progress=self.progress,
                embed_repairs=False,
                defer_fulltext=True,
            )
        except LockTimeoutError:
            log.info("another process is indexing; searching the index as it is.")
        except CannotWriteError as exc:
            if not self.state.warned_read_only:
                self.state.warned_read_only = True
                log.warning(
                    "searching the index as it is: %s, so files changed since the last "
                    "index are not searched.",
                    exc.reason,
                )

    def heal(self, exc: Exception | None) -> None:
        """Repair a damaged cache inside a search: rebuild the index from the files (its
        text only: the vectors are left for the next `vault index`, and this search and the
        next ones go by keywords meanwhile), with one warning."""
        index = self.index
        self.reset_searcher()
        index.store.close()
        if exc is not None:
            reason = (
                str(exc)
                if isinstance(exc, SchemaVersionError)
                else (f"the index is damaged ({exc})")
            )
            log.warning(
                "%s: rebuilding it from the files%s.",
                reason,
                "; searching by keywords until `vault index` adds the vectors"
                if index.model_id
                else "",
            )
        try:
            report = index.run(
                rebuild=exc is not None,
                progress=self.progress,
                lock_timeout=5.0,
                embed_repairs=False,
            )
        except CannotWriteError as error:
            raise VaultError(
                f"the index is damaged ({exc or 'see `vault status`'}) and cannot be repaired "
                f"here: {error.reason}. Run `vault doctor` where the cache can be written."
            ) from None
        self.reset_searcher()
        if report.rebuilt or exc is not None:
            self.state.warned_no_vectors = True

    def check_mode(self, mode: str, has_vectors: Callable[[], bool]) -> None:
        """Refuse a semantic search without the model or its vectors; say once that a hybrid
        one goes by keywords while the index holds no vectors."""
        index = self.index
        if mode == "semantic" and index.query_embedder() is None:
            raise SemanticUnavailableError(index._embedder_failed or "embeddings are turned off")
        if mode != "keyword" and index.model_id and not has_vectors():
            if mode == "semantic":
                raise NoVectorsError()
            if not self.state.warned_no_vectors:
                self.state.warned_no_vectors = True
                log.warning(
                    "the index holds no embeddings yet: searching by keywords only. "
                    "Run `vault index` to add them."
                )

    def healing(self, search: Callable[[str], T], mode: str) -> T:
        """`search(mode)`; when the query itself finds the index damaged, the index rebuilt
        from the files and `search("keyword")` (the vectors come with the next index)."""
        try:
            return search(mode)
        except Exception as exc:
            if not _is_damage(exc) or not self.heals:
                raise  # (a search server's reader: its caller searches in-process)
            self.heal(exc)
            return search("keyword")


def _is_damage(exc: Exception) -> bool:
    """Whether `exc` says the index is damaged (or of another schema): healed by a rebuild."""
    return isinstance(exc, (sqlite3.DatabaseError, CorruptIndexError))
