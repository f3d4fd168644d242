"""A watcher's index worker: one thread that takes the batches planning.py hands out and
applies each through `Vault.index(paths=...)` (or the whole vault, a reconcile), under the
writer lock shared with `vault index`, flush and dream.

A batch that meets the writer lock held by another process, or a stop, is tried again later
(nothing is lost: the files stay the truth); an index server that cannot be reached is tried
again after 1, 2, 4 ... 60 seconds by a reconcile; another failure is logged and followed by
a reconcile after ERROR_BACKOFF seconds rather than a spin on the same error.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import LockTimeoutError, VaultError
from ..index import IndexServerError
from ..text import plural
from .planning import Batch, PendingChanges

if TYPE_CHECKING:
    from .shared import WatchedVault, WatchReport

log = logging.getLogger("vault_memory")

LOCK_WAIT = 1.0  # seconds per attempt at the writer lock, so a stop request is seen quickly
ERROR_BACKOFF = 30.0
# An index server that cannot be reached: the whole vault is compared again after 1, 2, 4 ...
# 60 seconds; nothing is lost meanwhile (the files stay the truth).
SERVER_RETRY_FIRST = 1.0
SERVER_RETRY_MAX = 60.0


class Abandoned(Exception):
    """Raised between two committed steps of an index run when the watcher stops."""


class WorkerHost(Protocol):
    """What the worker asks of the watcher it works for (watch.py `Watcher`)."""

    def batch_starts(self, batch: Batch) -> bool | None:
        """Before a batch: whether it must be a reconcile (the cache was replaced), or None
        when the worker must stop."""
        ...

    def batch_ended(self, batch: Batch, done: bool) -> None: ...

    def reconciled(self) -> None:
        """After a reconcile: the chores done with it."""
        ...

    def index_changed(self) -> None: ...

    def write_state(self) -> None: ...

    def request_stop(self) -> None: ...


class IndexWorker:
    """The thread applying `changes`' batches to `vault` (see the module docstring)."""

    def __init__(
        self,
        vault: WatchedVault,
        changes: PendingChanges,
        report: WatchReport,
        host: WorkerHost,
    ) -> None:
        self.vault = vault
        self.changes = changes
        self.report = report
        self.host = host
        self.failed = False  # stopped by an unexpected error (a bug)
        self.server_retry = 0.0  # the last wait after an index server failure (0: none)
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._work, name="vault-watch", daemon=True)
        self.thread.start()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()

    def _work(self) -> None:
        try:
            self._work_loop()
        except Exception:  # a bug: say so, and let the watcher stop
            log.exception("the watcher stopped after an unexpected error")
            self.failed = True
            self.host.request_stop()

    def _work_loop(self) -> None:
        while True:
            batch = self.changes.next_batch()
            if batch is None:
                return
            full = self.host.batch_starts(batch)
            if full is None:
                return
            batch = batch._replace(full=full)
            done = self.apply(batch.paths, full)
            self.changes.batch_done(batch, done)
            self.host.batch_ended(batch, done)

    def apply(self, paths: set[str], full: bool) -> bool:
        """One index run for `paths` (or the whole vault). False when it must be retried."""
        started = time.monotonic()
        try:
            report = self._index(paths, full)
        except LockTimeoutError:
            log.debug("another process is writing the index; trying again.")
            return False
        except Abandoned:
            self.report.abandoned += 1
            log.info("stopping: left the rest of the batch for the next start.")
            return False
        except IndexServerError as exc:
            self.report.errors += 1
            self.server_retry = min(
                SERVER_RETRY_MAX, max(SERVER_RETRY_FIRST, 2 * self.server_retry)
            )
            log.warning("%s Trying again in %.0f s.", exc, self.server_retry)
            # the reconcile then catches up with everything changed meanwhile
            self.changes.reconcile_in(self.server_retry)
            return True
        except Exception as exc:
            self.report.errors += 1
            self._failed(paths, full, exc)
            # compare everything later rather than spin on the same error
            self.changes.reconcile_in(ERROR_BACKOFF)
            return True
        if self.server_retry:
            log.info("the index server answers again.")
            self.server_retry = 0.0
        self._done(paths, full, report, started)
        return True

    def _index(self, paths: set[str], full: bool) -> Any:
        # One onnxruntime thread: the watcher's embedder outlives the load a second thread
        # would be chosen for (Vault.index's `spare_cores`).
        if full:
            return self.vault.index(
                progress=self._progress, lock_timeout=LOCK_WAIT, spare_cores=False
            )
        return self.vault.index(
            paths=sorted(paths),
            progress=self._progress,
            lock_timeout=LOCK_WAIT,
            spare_cores=False,
        )

    def _failed(self, paths: set[str], full: bool, exc: Exception) -> None:
        where = (
            "the whole vault"
            if full
            else ", ".join(
                os.fsencode(p).decode("utf-8", "backslashreplace") for p in sorted(paths)[:5]
            )
            + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        )
        if isinstance(exc, VaultError):
            log.warning("could not apply changes to %s: %s", where, exc)
        else:
            log.exception("could not apply changes to %s", where)

    def _done(self, paths: set[str], full: bool, report: Any, started: float) -> None:
        """What follows a run that went through: the report, a reconcile's chores, a log."""
        if full:
            self.report.reconciles += 1
            self.host.reconciled()
            self.changes.reconciled()
        else:
            self.report.batches += 1
            self.report.paths += len(paths)
        changed = report.new + report.modified + report.moved + report.deleted
        if changed or report.rebuilt:
            self.host.index_changed()
            log.info(
                "%s: %d new, %d modified, %d moved, %d deleted (%s embedded) in %.2f s",
                "reconciled" if full else plural(len(paths), "changed path"),
                report.new,
                report.modified,
                report.moved,
                report.deleted,
                plural(report.units_embedded, "unit"),
                time.monotonic() - started,
            )
        if self.changes.last_event_wall is not None:
            self.host.write_state()

    def _progress(self, phase: str, done: int, total: int) -> None:
        if self.changes.stopping:
            raise Abandoned()
