"""`vault watch`: keep the index exact while people, editors and git change the vault.

A `Watcher` puts together five parts, each a module of its own:
- the event intake (intake.py): watchdog's handler only records the paths that changed;
- planning (planning.py): the paths wait until the vault has been quiet for
  `watch.quiet_ms` (or a change has waited 10 quiet periods, so a long stream of writes is
  applied as it goes); a reconcile (the whole vault compared with the index by stat) is due
  at start, on an inotify overflow, every `watch.reconcile_minutes`, and after a failure;
- the index worker (worker.py): one thread applies each batch with `Vault.index(paths=...)`
  under the writer lock shared with `vault index`, flush and dream;
- the queries (serve.py): `vault search` answered over a Unix socket in `.vault/`;
- the dream schedules (schedules.py).
The watcher itself keeps one watcher per vault (pidlock.py: `.vault/watch.lock`, flock-ed for
its life), its state file and log, heals a `.vault/` deleted or replaced under it, drains the
update queues (capture/queue.py) that processes which died left in `.vault/queue/` (at start
and on every reconcile), and stops cleanly on SIGINT, SIGTERM or a `stop` request over the
socket (`vault watch --stop`).
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..dream import write_json
from ..errors import ConfigError, VaultError
from .intake import EventIntake
from .pidlock import PidLock, WatcherRunningError, inode
from .planning import Batch, PendingChanges
from .schedules import DreamSchedules
from .serve import QueryServer
from .shared import WatchedVault, WatchReport
from .signals import stopping_on_signals
from .watch_client import PROTOCOL, STATE_FILE, remove_socket
from .worker import IndexWorker

log = logging.getLogger("vault_memory")

LOG_FILE = "logs/watch.log"
SETTLE_TIMEOUT = 2.0  # a query waits at most this long for pending changes to be applied

__all__ = ["WatchReport", "Watcher", "WatcherRunningError", "WatchedVault"]


class Watcher:
    """Keeps one vault's index in line with its files; see the module docstring.

    `start()` and `stop()` for use inside a program (or `with Watcher(vault):`), `run()` to
    block until SIGINT/SIGTERM or a `stop` request over the socket, as `vault watch` does.
    Under `start()` such a request only sets what `request_stop()` sets: the program decides."""

    def __init__(
        self,
        vault: WatchedVault,
        *,
        dream: bool = True,
        quiet_ms: int | None = None,
        reconcile_minutes: float | None = None,
        dream_job: Callable[[], Any] | None = None,
        dream_trigger: Any = None,
        serve: bool = True,
        idle_minutes: float | None = None,
    ) -> None:
        self.vault = vault
        self.root = vault.root
        self.cache = vault.cache_dir
        settings = vault.config.watch
        quiet_ms = settings.quiet_ms if quiet_ms is None else quiet_ms
        minutes = settings.reconcile_minutes if reconcile_minutes is None else reconcile_minutes
        if quiet_ms < 0 or quiet_ms > 600_000:
            raise ConfigError(f"watch.quiet_ms must be between 0 and 600000, got {quiet_ms}.")
        if minutes < 0:
            raise ConfigError(f"watch.reconcile_minutes must be 0 (never) or more, got {minutes}.")
        quiet = quiet_ms / 1000
        self.changes = PendingChanges(quiet, max(2.0, 10 * quiet), minutes * 60 or None)
        # Without a job of the caller's, scopes may dream on schedules of their own even when
        # the root's dreaming is off: `dream_schedules` says which (none: no scheduler).
        self.dream = dream and (vault.config.dream.enabled or dream_job is None)
        self.dream_job = dream_job
        self.serve = serve
        # A search server (`[search] server = "auto"`, see watch_client.start_server): it
        # stops after this many minutes without a request, or when .vault/ is deleted; it
        # neither dreams, drains update queues nor prunes transcripts.
        self.idle_minutes = idle_minutes
        self.report = WatchReport(started_at=time.time())
        self.ready = threading.Event()  # the first reconcile is done
        self.warm = threading.Event()  # the model and unit table are loaded
        self.schedules = DreamSchedules(
            vault, self.root, lambda: self._write_state(), dream_job, dream_trigger
        )
        self.pid_lock = PidLock(self.cache)
        self._index_inode: int | None = None  # index.sqlite as our last run left it
        self._stop_requested = threading.Event()
        self._updates: Any = None  # drains the spools of dead processes (capture/queue.py)
        self.intake = EventIntake(
            str(self.root), lambda paths: self.record(paths), self.reconcile, self.overflowed
        )
        self.worker = IndexWorker(vault, self.changes, self.report, self)
        reader = vault.clone()
        # A search server's reader never makes or writes .vault/ (only its writer does): a
        # cache deleted under it must stay deleted while the server notices and stops.
        reader.cache_writes = idle_minutes is None
        reader.config  # noqa: B018 - settings are read now, as the writer's are
        self.queries = QueryServer(
            reader,
            self.report,
            self.ready,
            self.warm,
            self.settle,
            self.request_stop,
            lambda: self.changes.stopping,
            (lambda: self.cache_gone()) if idle_minutes is not None else None,
        )
        self._log_handler: logging.Handler | None = None
        self._log_level: int | None = None

    # -- what tests and callers tune and read -------------------------------------------------

    @property
    def quiet(self) -> float:
        return self.changes.quiet

    @quiet.setter
    def quiet(self, seconds: float) -> None:
        self.changes.quiet = seconds

    @property
    def max_delay(self) -> float:
        return self.changes.max_delay

    @max_delay.setter
    def max_delay(self, seconds: float) -> None:
        self.changes.max_delay = seconds

    @property
    def reconcile_every(self) -> float | None:
        return self.changes.reconcile_every

    @reconcile_every.setter
    def reconcile_every(self, seconds: float | None) -> None:
        self.changes.reconcile_every = seconds

    @property
    def scheduler(self) -> Any:
        """The root's dream scheduler (or the first), None when none runs."""
        return self.schedules.scheduler

    @property
    def schedulers(self) -> dict[tuple[str, str], Any]:
        return self.schedules.schedulers

    @property
    def socket(self) -> Path | None:
        return self.queries.socket

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested.is_set()

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> None:
        self.cache.mkdir(parents=True, exist_ok=True)
        self.pid_lock.take()
        try:
            # At once: a state file left by a killed watcher must not name its pid while we
            # hold the lock (`vault watch --stop` may signal the pid the state file names).
            self._write_state()
            self._start_log()
            self.intake.start()
            self.worker.start()
            if self.serve:
                self.queries.start_socket(self.cache)
            if self.dream and self.idle_minutes is None:
                self.schedules.start()
            if self.idle_minutes is None:
                self._start_updates()
            else:
                threading.Thread(target=self._idle_loop, name="vault-idle", daemon=True).start()
            self._write_state()
            log.info("watching %s (pid %d)", self.root, os.getpid())
        except BaseException:
            self.stop()
            raise

    def run(self, on_ready: Callable[[Watcher], None] | None = None) -> WatchReport:
        """Start, then block until SIGINT or SIGTERM (or `stop()`), then stop cleanly."""
        self.start()
        try:
            with stopping_on_signals(self._stop_requested, self._on_signal):
                if on_ready:
                    on_ready(self)
                self._stop_requested.wait()
        finally:
            self.stop()
        if self.worker.failed:
            raise VaultError(
                f"the watcher stopped after an unexpected error; see {self.cache / LOG_FILE}."
            )
        return self.report

    def _on_signal(self, signum: signal.Signals) -> None:
        log.info("received %s: stopping.", signum.name)

    def request_stop(self) -> None:
        self._stop_requested.set()

    def cache_gone(self) -> bool:
        """Whether .vault/watch.lock (so .vault/ itself) was deleted or replaced under us."""
        return self.pid_lock.lost()

    def _idle_loop(self) -> None:
        """A search server stops after `idle_minutes` without a request, or once its cache
        is deleted."""
        idle = (self.idle_minutes or 0) * 60
        while not self._stop_requested.wait(min(max(idle / 4, 0.05), 5.0)):
            if self.cache_gone():
                log.info("%s was deleted: the search server stops.", self.cache)
            elif time.monotonic() - self.queries.last_request >= idle:
                log.info("no request for %g minutes: the search server stops.", self.idle_minutes)
            else:
                continue
            self._stop_requested.set()
            return

    def stop(self) -> None:
        """Stop watching: the batch being applied stops at its next committed step (the next
        start reconciles the rest), the scheduler lets a running dream finish, the socket and
        the locks go away."""
        self.changes.stop()
        self._stop_requested.set()
        self.intake.stop()
        self.worker.join()
        self.schedules.shutdown()
        if self._updates is not None:
            self._updates.close()
            self._updates = None
        self.queries.stop_socket()
        if self.socket is not None:
            remove_socket(self.socket)
        self.queries.close_reader()
        if self.pid_lock.fd is not None:
            with contextlib.suppress(FileNotFoundError):
                (self.cache / STATE_FILE).unlink()
            self.pid_lock.release()  # the lock file goes while still locked: see pidlock.py
            self.report.stopped_at = time.time()
            log.info("stopped watching %s", self.root)
        self._stop_log()

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _write_state(self) -> None:
        if self.pid_lock.fd is None or self.changes.stopping:
            # Stopping: the state file goes, and a dream that ends while its scheduler shuts
            # down must not ask that scheduler for its next run (APScheduler holds its job
            # store's lock while it waits for the dream: a deadlock).
            return
        next_dream = self.schedules.next_run_at()
        write_json(
            self.cache / STATE_FILE,
            {
                "pid": os.getpid(),
                "started_at": self.report.started_at,
                "last_event_at": self.changes.last_event_wall,
                "socket": str(self.socket) if self.socket else None,
                "next_dream_at": next_dream.isoformat() if next_dream else None,
                "protocol": PROTOCOL,
            },
        )

    def _start_log(self) -> None:
        path = self.cache / LOG_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
        )
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        handler.setLevel(logging.INFO)
        self._log_handler = handler
        log.addHandler(handler)
        if log.getEffectiveLevel() > logging.INFO:
            self._log_level = log.level
            log.setLevel(logging.INFO)
        for name in ("watchdog", "apscheduler"):
            logging.getLogger(name).addHandler(handler)

    def _stop_log(self) -> None:
        if self._log_handler is None:
            return
        for name in ("vault_memory", "watchdog", "apscheduler"):
            logging.getLogger(name).removeHandler(self._log_handler)
        self._log_handler.close()
        self._log_handler = None
        if self._log_level is not None:
            log.setLevel(self._log_level)
            self._log_level = None

    # -- events (the intake's and the queries' doors into planning) ---------------------------

    def record(self, paths: set[str]) -> None:
        """Called by the event intake's thread for every event: record and return at once."""
        self.changes.record(paths)

    def overflowed(self) -> None:
        """What the intake calls when the kernel's event queue overflowed."""
        log.warning("the inotify event queue overflowed (events were lost): reconciling.")
        self.report.overflows += 1
        self.reconcile()

    def reconcile(self) -> None:
        """Compare the whole vault with the index once things are quiet (also what the
        deletion of `.vault/` or its index triggers)."""
        self.changes.reconcile()

    def settle(self, timeout: float = SETTLE_TIMEOUT) -> bool:
        """Apply the pending changes now, without waiting out the quiet period, and wait until
        the index holds them. Returns False at once when a large change is under way (the
        query is then answered from the index as it is) or after `timeout`."""
        return self.changes.settle(self.vault.config.search.freshness_max_files, timeout)

    def answer(self, request: Any) -> dict[str, Any]:
        """The reply to one socket request (see watch_client)."""
        return self.queries.answer(request)

    # -- the worker's host (worker.WorkerHost) ------------------------------------------------

    def batch_starts(self, batch: Batch) -> bool | None:
        if self.idle_minutes is not None and self.cache_gone():
            self._stop_requested.set()  # a search server goes with its cache (_idle_loop)
            return None
        try:
            return self._check_cache() or batch.full
        except WatcherRunningError as exc:  # another watcher took over meanwhile
            log.error("%s Stopping.", exc)
            self._stop_requested.set()
            return None

    def batch_ended(self, batch: Batch, done: bool) -> None:
        if done:
            self._index_inode = inode(self.cache / "index.sqlite")
        if done and batch.full:
            self.ready.set()
            if self.dream and self.dream_job is None and not self.changes.stopping:
                self.schedules.sync()  # scopes made or removed since
        if (
            done
            and self.queries.table_stale
            and self.warm.is_set()
            and not self.changes.stopping
            and not self.changes.waiting()  # not between the batches of a burst: each
        ):  # would rebuild it again
            self.queries.table_stale = False
            self.queries.prepare_reader()

    def reconciled(self) -> None:
        if self._updates is not None:
            self._updates.reclaim()
        if self.idle_minutes is None:
            self._prune_sessions()

    def index_changed(self) -> None:
        self.queries.table_stale = True

    def write_state(self) -> None:
        self._write_state()

    def _check_cache(self) -> bool:
        """Whether `.vault/` (or its index) was deleted or replaced under the running watcher,
        e.g. by `rm -rf .vault` or `vault index --rebuild`: then every handle on the old
        files is dropped (and the pid lock, log and socket are made anew if the folder went),
        and True is returned: the next run must be a reconcile."""
        if self.pid_lock.fd is None:
            return False
        lock_lost = self.pid_lock.lost()
        replaced = self._index_inode is not None and inode(self.cache / "index.sqlite") != (
            self._index_inode
        )
        if not (lock_lost or replaced):
            return False
        self.ready.clear()  # queries are answered in-process until the index is back
        self.queries.close_reader()
        self.vault.close()
        if lock_lost:
            self.cache.mkdir(parents=True, exist_ok=True)
            self.pid_lock.retake()
            self._stop_log()
            self._start_log()
            log.warning("%s was deleted: rebuilding it from the files.", self.cache)
            if self.queries.serving:
                self.queries.stop_socket()
                self.queries.start_socket(self.cache)
            self._write_state()
        else:
            log.info("the index was replaced by another process: reopening it.")
        self._index_inode = None
        return True

    def _prune_sessions(self) -> None:
        """`[sessions] keep_days`: old transcripts deleted, once a day (on a reconcile)."""
        from ..text import plural

        try:
            report = self.vault.prune_sessions_if_due()
        except VaultError as exc:
            log.warning("could not prune old transcripts: %s", exc)
            return
        if report is not None and report.deleted:
            log.info(
                "pruned %s older than %d days",
                plural(len(report.deleted), "transcript"),
                report.older_than_days,
            )

    def _start_updates(self) -> None:
        """A queue of our own, which submits nothing: its worker flushes what dead processes
        left in `.vault/queue/` (at once, every minute, and on `reclaim`)."""
        from ..capture import UpdateQueue

        try:
            self._updates = UpdateQueue(self.vault)
        except VaultError as exc:  # bad [queue] settings: the watcher still indexes
            log.warning("not draining update queues: %s", exc)
