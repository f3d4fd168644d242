"""What the parts of a watcher share (watch.py puts them together): the vault they keep up to
date, as a protocol (the facade is handed to the watcher and never imported here), and the
report they write to."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..config import Config
    from ..files import Layout
    from ..index import IndexReport, Progress


class WatchedVault(Protocol):
    """What a watcher needs of the vault it keeps up to date (`Vault` is one): it is handed
    the facade by its caller and never imports it."""

    root: Path
    cache_writes: bool  # False: its searches never make or write .vault/ (a server's reader)

    @property
    def config(self) -> Config: ...

    @property
    def cache_dir(self) -> Path: ...

    @property
    def layout(self) -> Layout: ...

    def index(
        self,
        rebuild: bool = False,
        paths: list[str] | None = None,
        progress: Progress | None = None,
        lock_timeout: float = 60.0,
        spare_cores: bool = True,
    ) -> IndexReport: ...

    def search(
        self,
        query: str,
        limit: int | None = None,
        mode: str = "hybrid",
        since: Any = None,
        until: Any = None,
        within: str | None = None,
        kinds: Any = (),
        fresh: bool = True,
        *,
        deep: bool = False,
    ) -> list[Any]: ...

    def prepare_search(self, mode: str = "hybrid") -> None: ...

    def flush(
        self, messages: Any, session: str | None = None, dry_run: bool = False, date: Any = None
    ) -> Any: ...

    def dream(self) -> Any: ...

    def prune_sessions_if_due(self) -> Any: ...

    def dream_schedules(self) -> dict[tuple[str, str], list[tuple[str, ...]]]: ...

    def dream_scopes(self, schedule: tuple[str, str] | None = None) -> dict[str, Any]: ...

    def scope(self, *names: str) -> WatchedVault: ...

    def clone(self) -> WatchedVault: ...

    def close(self) -> None: ...


@dataclass
class WatchReport:
    """What a watcher did while it ran."""

    started_at: float
    stopped_at: float | None = None
    batches: int = 0  # event batches applied
    paths: int = 0  # paths handed to the index in those batches
    reconciles: int = 0  # whole-vault comparisons (start, timer, overflow)
    overflows: int = 0  # inotify queue overflows seen
    abandoned: int = 0  # batches left for the next start when stopping
    errors: int = 0
    searches: int = 0  # queries answered over the socket

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
