"""Bringing a vault's index up to date in a background thread, for servers that must answer at
once: `vault mcp` would otherwise index the whole vault inside its first tool call (seconds on
a small vault, minutes on a large one), and MCP clients time out.

`BackgroundIndex(vault).start()` runs `index()` of a `Vault` of its own (its own SQLite and
Whoosh handles) in a daemon thread. It waits as long as it takes for the writer lock that
another process may hold (a watcher, `vault index`); the wait and the run end at their next
step once `stop()` is called. Each committed batch is readable at once (SQLite WAL), so a
search meanwhile reads the index as it is (see `tools.search_memory`). Errors are logged
(stderr under `vault mcp`), never raised; `start()` again retries.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from ..errors import LockTimeoutError, VaultError

if TYPE_CHECKING:
    from ..index import IndexReport
    from ..vault import Vault

log = logging.getLogger("vault_memory")

LOCK_WAIT = 1.0  # seconds per attempt at the writer lock, so that `stop()` is seen quickly
STOP_WAIT = 30.0  # seconds `stop()` waits for the run to reach its next step


class _Stopped(Exception):
    """Raised between two committed steps of the run when the owner stops."""


class BackgroundIndex:
    """One vault's index, brought up to date in a thread. `state` is "idle" (not started),
    "building" (a run is under way or waits for the writer lock), "ready" (the last run
    finished) or "failed" (it raised, or was stopped: `error`); `describe()` says how far a
    run has come."""

    def __init__(self, vault: Vault) -> None:
        self.root = vault.root
        self._vault = vault
        from ..index import capabilities_of, index_file

        self._index_file = index_file(vault.config)
        # An index on a server is there as soon as it is reached (its schema is made in one
        # transaction, each batch is committed whole): no file in .vault/ ever tells.
        self._on_server = not capabilities_of(vault.config).local_file
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self._stopping = threading.Event()
        self.error: str | None = None  # why the last run failed
        self.report: IndexReport | None = None  # what the last finished run did
        self._started = 0.0
        self.had_index = False  # the index existed when the run began
        self._waiting = False  # for the writer lock, held by another process
        self._step: tuple[str, int, int] | None = None  # the last (phase, done, total)

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> BackgroundIndex:
        """Begin a run, unless one is under way."""
        # What a search imports, imported here first: two threads importing numpy at once
        # can fail ("partially initialized module"; see indexer.prefetch_query_encoder).
        import numpy  # noqa: F401

        from ..index import indexer  # noqa: F401
        from ..search import searcher  # noqa: F401

        with self._guard:
            if self._thread is not None and self._thread.is_alive():
                return self
            self._stopping.clear()
            self.report, self._step, self._waiting = None, None, False
            self._started = time.monotonic()
            self.had_index = self.index_exists
            self._thread = threading.Thread(
                target=self._run, name="vault-background-index", daemon=True
            )
            self._thread.start()
        return self

    def stop(self, timeout: float = STOP_WAIT) -> bool:
        """Let the run end at its next committed step; False if it is still running after
        `timeout` seconds (it is a daemon thread: it does not keep the process alive)."""
        self._stopping.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the run has finished (well or not); False after `timeout` seconds."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.state != "building"

    @property
    def state(self) -> str:
        thread = self._thread
        if thread is None:
            return "idle"
        if thread.is_alive():
            return "building"
        return "failed" if self.error is not None else "ready"

    @property
    def index_exists(self) -> bool:
        return self._on_server or self._index_file.exists()

    @property
    def searchable(self) -> bool:
        """Whether the index can be read meanwhile: it existed before the run, or the run
        has committed its first step (before that, a reader could race the run's creation
        of the schema)."""
        return self.index_exists and (self.had_index or self._step is not None)

    def describe(self) -> str:
        """How far the run has come, in a few words."""
        if self._waiting:
            return "waiting for another process that is writing it"
        step = self._step
        if step is None:
            return f"reading the files; started {time.monotonic() - self._started:.0f} s ago"
        phase, done, total = step
        if phase == "embedding":
            return f"embeddings: {done:,} of {total:,} units done"
        return f"files: {done:,} of {total:,} done"

    # -- the run ----------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            with self._vault.clone() as vault:
                report = self._index(vault)
            self.report, self.error = report, None
            log.info(
                "the index is up to date: %d files, %d units (%.1f s)",
                report.files,
                report.units,
                report.seconds,
            )
        except _Stopped:
            self.error = "stopped before it finished"
            log.info("stopped bringing the index up to date; the next run takes it on.")
        except VaultError as exc:
            self.error = str(exc)
            log.warning("could not bring the index up to date: %s", exc)
        except Exception as exc:  # a bug or a broken disk: said on stderr, the server goes on
            self.error = f"{type(exc).__name__}: {exc}"
            log.exception("could not bring the index up to date")

    def _index(self, vault: Vault) -> IndexReport:
        """`vault.index()` once the writer lock is free, waiting in steps of `LOCK_WAIT` for
        another process (a watcher, `vault index`) to finish, so that `stop()` is seen."""
        from ..files import fsutil
        from ..index import WRITE_LOCK

        lock = vault.cache_dir / WRITE_LOCK
        wait = 0.0  # at once first: whether another process writes the index shows now
        while True:
            try:
                with fsutil.lock_file(lock, "index writer", wait):
                    pass  # free: the run takes it at once (unless another process does first)
                self._waiting = False
                # spare_cores=False: the agent's process keeps this embedder (see watch).
                return vault.index(
                    progress=self._progress, lock_timeout=LOCK_WAIT, spare_cores=False
                )
            except LockTimeoutError:
                if self._stopping.is_set():
                    raise _Stopped() from None
                self._waiting, wait = True, LOCK_WAIT

    def _progress(self, phase: str, done: int, total: int) -> None:
        self._waiting = False
        self._step = (phase, done, total)
        if self._stopping.is_set():
            raise _Stopped()
