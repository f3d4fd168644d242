"""`vault watch`: keep the index exact while people, editors and git change the vault.

watchdog reports file events; its handler only records the paths. One worker thread waits
until the vault has been quiet for `watch.quiet_ms` (or a change has waited 10 quiet periods,
so a long stream of writes is applied as it goes), then hands the paths to
`Vault.index(paths=...)`, which plans and applies them under the writer lock shared with
`vault index`, flush and dream. A folder created, deleted or moved stands for every file under
it, on disk or in the index.

The kernel drops inotify events when its queue overflows and watchdog only rebuilds its
watches, so an overflow (and a timer, every `watch.reconcile_minutes`, and the start) triggers
a reconcile: the whole vault compared with the index by stat.

It also drains the update queues (`Vault.updates`, capture/queue.py) that processes which
died left in `.vault/queue/`: at start and on every reconcile.

The same process answers `vault search` over a Unix socket in `.vault/` (see watch_client) and
runs the dream schedule (see scheduler). One index serves every scope of the vault: a search
bound to a scope names it in its request; each dream schedule dreams every scope on it that
has new daily-log entries (a scope's vault.toml may give it a schedule of its own), one diary
per scope. One watcher per vault: `.vault/watch.lock` is
flock-ed for the process's life, so a watcher killed with SIGKILL leaves nothing that blocks
the next one. A clean stop (SIGINT, SIGTERM, or a `stop` request over the socket: `vault
watch --stop`) removes the lock file while still holding the lock; whoever opened it before
then finds, once its flock succeeds, that the path names another file (or none) and opens it
anew, so two watchers never both believe they hold the lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import logging
import logging.handlers
import os
import signal
import socketserver
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..config import CACHE_DIR
from ..dream import DreamScheduler, write_json
from ..errors import ConfigError, LockTimeoutError, VaultError
from ..index import IGNORED_DIRS, IndexServerError, is_indexable
from ..text import plural
from .watch_client import LOCK_FILE, PROTOCOL, STATE_FILE, remove_socket, settings_key, socket_path

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


log = logging.getLogger("vault_memory")

LOG_FILE = "logs/watch.log"
LOCK_WAIT = 1.0  # seconds per attempt at the writer lock, so a stop request is seen quickly
SETTLE_TIMEOUT = 2.0  # a query waits at most this long for pending changes to be applied
ERROR_BACKOFF = 30.0
# An index server that cannot be reached (issue 21): the whole vault is compared again after
# 1, 2, 4 ... 60 seconds; nothing is lost meanwhile (the files stay the truth).
SERVER_RETRY_FIRST = 1.0
SERVER_RETRY_MAX = 60.0


class WatcherRunningError(VaultError):
    def __init__(self, pid: Any) -> None:
        self.pid = pid
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"a watcher already runs for this vault ({who}). Searches already go through it; "
            "stop it first (`Vault.stop_watcher()`) to start another."
        )


class _Abandoned(Exception):
    """Raised between two committed steps of an index run when the watcher stops."""


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


def ignored_folder(relpath: str) -> bool:
    return any(part.startswith(".") or part in IGNORED_DIRS for part in relpath.split("/"))


# -- watchdog -------------------------------------------------------------------------------


def _event_filter() -> list[type]:
    """The events worth a wake-up: not opens and reads (the indexer's own), not the
    "folder modified" that accompanies every file event."""
    from watchdog import events as ev

    kinds = [
        ev.FileCreatedEvent,
        ev.FileModifiedEvent,
        ev.FileDeletedEvent,
        ev.FileMovedEvent,
        ev.FileClosedEvent,
        ev.DirCreatedEvent,
        ev.DirDeletedEvent,
        ev.DirMovedEvent,
    ]
    attrib = getattr(ev, "FileAttribEvent", None)  # `touch` (watchdog >= 6)
    return kinds + ([attrib] if attrib else [])


def make_observer(on_overflow: Callable[[], None]) -> Any:
    """A watchdog observer; on Linux one whose inotify emitter calls `on_overflow` when the
    kernel reports IN_Q_OVERFLOW (watchdog itself only re-adds its watches)."""
    # watchdog warns when a new folder gets its watch twice (created while its parent's watch
    # was being added): harmless, and a RuntimeWarning in its reader thread would stop it
    # wherever warnings are errors.
    warnings.filterwarnings(
        "ignore", message="Callback with id .* already exists for watch", category=RuntimeWarning
    )
    if not sys.platform.startswith("linux"):
        from watchdog.observers import Observer

        return Observer()
    from watchdog.observers.inotify import InotifyEmitter, InotifyObserver

    class OverflowAwareEmitter(InotifyEmitter):
        def on_thread_start(self) -> None:
            super().on_thread_start()
            group = getattr(self, "_inotify", None)
            original = getattr(group, "on_queue_overflow", None)
            if original is None:
                log.warning(
                    "this watchdog version does not report inotify queue overflows; "
                    "lost events are found by the periodic reconcile only."
                )
                return

            def overflowed() -> None:
                original()
                on_overflow()

            group.on_queue_overflow = overflowed  # type: ignore[union-attr]

    observer = InotifyObserver()
    observer._emitter_class = OverflowAwareEmitter
    return observer


CACHE_KEYS = {CACHE_DIR, f"{CACHE_DIR}/{LOCK_FILE}", f"{CACHE_DIR}/index.sqlite"}
GONE = {"deleted", "moved"}


class _Recorder:
    """The watchdog handler: turns events into vault-relative paths and records them."""

    def __init__(
        self, root: str, record: Callable[[set[str]], None], cache_gone: Callable[[], None]
    ) -> None:
        self.root = root.rstrip(os.sep)
        self.record = record
        self.cache_gone = cache_gone

    def dispatch(self, event: Any) -> None:
        found: set[str] = set()
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw)
            if not path.startswith(self.root + os.sep):
                continue
            relpath = path[len(self.root) + 1 :].replace(os.sep, "/")
            if relpath in CACHE_KEYS and raw is event.src_path and event.event_type in GONE:
                self.cache_gone()
            elif event.is_directory:
                if not ignored_folder(relpath):
                    found.add(relpath)
            elif is_indexable(relpath):
                found.add(relpath)
        if found:
            self.record(found)


# -- the watcher ----------------------------------------------------------------------------


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
        self.quiet = quiet_ms / 1000
        self.max_delay = max(2.0, 10 * self.quiet)
        self.reconcile_every = minutes * 60 or None
        # Without a job of the caller's, scopes may dream on schedules of their own even when
        # the root's dreaming is off: `dream_schedules` says which (none: no scheduler).
        self.dream = dream and (vault.config.dream.enabled or dream_job is None)
        self.dream_job = dream_job
        self.dream_trigger = dream_trigger
        self.serve = serve
        # A search server (`[search] server = "auto"`, see watch_client.start_server): it
        # stops after this many minutes without a request, or when .vault/ is deleted; it
        # neither dreams, drains update queues nor prunes transcripts.
        self.idle_minutes = idle_minutes
        self._last_request = time.monotonic()
        self.report = WatchReport(started_at=time.time())
        self.ready = threading.Event()  # the first reconcile is done
        self.warm = threading.Event()  # the model and unit table are loaded
        self._table_stale = False  # the index changed since the search side was prepared
        self.scheduler: DreamScheduler | None = None  # the root's schedule (or the first)
        self.schedulers: dict[tuple[str, str], DreamScheduler] = {}  # one per schedule
        self.socket: Path | None = None

        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._full = True  # start with a reconcile
        self._first_event: float | None = None
        self._last_event: float | None = None
        self._last_event_wall: float | None = None
        self._recorded = 0  # events recorded so far...
        self._applied = 0  # ...and how many of them the index has taken in
        self._applying = 0  # paths in the batch being applied (-1: a reconcile)
        self._flush = False
        self._stopping = False
        self._next_reconcile: float | None = None
        self._server_retry = 0.0  # the last wait after an index server failure (0: none)
        self._index_inode: int | None = None  # index.sqlite as our last run left it
        self._stop_requested = threading.Event()
        self._failed = False

        self._lock_fd: int | None = None
        self._updates: Any = None  # drains the spools of dead processes (capture/queue.py)
        self._observer: Any = None
        self._worker: threading.Thread | None = None
        self._server: Any = None
        self._server_thread: threading.Thread | None = None
        self._reader = vault.clone()
        # A search server's reader never makes or writes .vault/ (only its writer does): a
        # cache deleted under it must stay deleted while the server notices and stops.
        self._reader.cache_writes = idle_minutes is None
        self._reader.config  # noqa: B018 - settings are read now, as the writer's are
        self._settings_key = settings_key(self._reader.config)
        self._search_lock = threading.Lock()
        self._log_handler: logging.Handler | None = None
        self._log_level: int | None = None

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> None:
        self.cache.mkdir(parents=True, exist_ok=True)
        self._take_pid_lock()
        try:
            # At once: a state file left by a killed watcher must not name its pid while we
            # hold the lock (`vault watch --stop` may signal the pid the state file names).
            self._write_state()
            self._start_log()
            # inotify does not follow a symlinked vault folder (watchdog sets IN_DONT_FOLLOW)
            real_root = os.path.realpath(self.root)
            self._observer = make_observer(self._overflowed)
            self._observer.schedule(
                _Recorder(real_root, self._record, self.reconcile),
                real_root,
                recursive=True,
                event_filter=_event_filter(),
            )
            self._observer.start()
            self._worker = threading.Thread(target=self._work, name="vault-watch", daemon=True)
            self._worker.start()
            if self.serve:
                self._start_server()
            if self.dream and self.idle_minutes is None:
                self._start_scheduler()
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
        previous: dict[signal.Signals, Any] = {}
        try:
            if threading.current_thread() is threading.main_thread():
                for signum in (signal.SIGINT, signal.SIGTERM):
                    previous[signum] = signal.signal(signum, self._on_signal)
            if on_ready:
                on_ready(self)
            self._stop_requested.wait()
        finally:
            self.stop()
            for number, handler in previous.items():
                signal.signal(number, handler)
        if self._failed:
            raise VaultError(
                f"the watcher stopped after an unexpected error; see {self.cache / LOG_FILE}."
            )
        return self.report

    def _on_signal(self, signum: int, frame: Any) -> None:
        log.info("received %s: stopping.", signal.Signals(signum).name)
        self._stop_requested.set()
        # A second signal acts at once (the default: KeyboardInterrupt / termination).
        signal.signal(
            signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
        )

    def request_stop(self) -> None:
        self._stop_requested.set()

    def _cache_gone(self) -> bool:
        """Whether .vault/watch.lock (so .vault/ itself) was deleted or replaced under us."""
        fd = self._lock_fd
        return fd is not None and self._inode(LOCK_FILE) != os.fstat(fd).st_ino

    def _idle_loop(self) -> None:
        """A search server stops after `idle_minutes` without a request, or once its cache
        is deleted."""
        idle = (self.idle_minutes or 0) * 60
        while not self._stop_requested.wait(min(max(idle / 4, 0.05), 5.0)):
            if self._cache_gone():
                log.info("%s was deleted: the search server stops.", self.cache)
            elif time.monotonic() - self._last_request >= idle:
                log.info("no request for %g minutes: the search server stops.", self.idle_minutes)
            else:
                continue
            self._stop_requested.set()
            return

    def stop(self) -> None:
        """Stop watching: the batch being applied stops at its next committed step (the next
        start reconciles the rest), the scheduler lets a running dream finish, the socket and
        the locks go away."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._stop_requested.set()
        if self._observer is not None:
            with contextlib.suppress(Exception):
                self._observer.stop()
                self._observer.join(timeout=10)
        if self._worker is not None:
            self._worker.join()
        for scheduler in self.schedulers.values():
            scheduler.shutdown(wait=True)
        if self._updates is not None:
            self._updates.close()
            self._updates = None
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self.socket is not None:
            remove_socket(self.socket)
        with self._search_lock:  # not under the warm-up's feet: SQLite closed in use crashes
            self._reader.close()
        if self._lock_fd is not None:
            with contextlib.suppress(FileNotFoundError):
                (self.cache / STATE_FILE).unlink()
            # Unlinked while still locked: see the module docstring and `_take_pid_lock`.
            if self._inode(LOCK_FILE) == os.fstat(self._lock_fd).st_ino:
                with contextlib.suppress(FileNotFoundError):
                    (self.cache / LOCK_FILE).unlink()
            os.close(self._lock_fd)  # releases the pid lock
            self._lock_fd = None
            self.report.stopped_at = time.time()
            log.info("stopped watching %s", self.root)
        self._stop_log()

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _take_pid_lock(self) -> None:
        path = self.cache / LOCK_FILE
        deadline = time.monotonic() + 1.0  # `vault status` may hold a shared lock for a moment
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() > deadline:
                    from .watch_client import read_state

                    raise WatcherRunningError((read_state(self.cache) or {}).get("pid")) from None
                time.sleep(0.02)
                continue
            if self._inode(LOCK_FILE) == os.fstat(fd).st_ino:
                break
            os.close(fd)  # a watcher that stopped removed this file: lock the one there now
        self._lock_fd = fd

    def _write_state(self) -> None:
        if self._lock_fd is None or self._stopping:
            # Stopping: the state file goes, and a dream that ends while its scheduler shuts
            # down must not ask that scheduler for its next run (APScheduler holds its job
            # store's lock while it waits for the dream: a deadlock).
            return
        runs = [s.next_run_at() for s in list(self.schedulers.values())]
        next_dream = min((r for r in runs if r is not None), default=None)
        write_json(
            self.cache / STATE_FILE,
            {
                "pid": os.getpid(),
                "started_at": self.report.started_at,
                "last_event_at": self._last_event_wall,
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

    # -- events -----------------------------------------------------------------------------

    def _record(self, paths: set[str]) -> None:
        """Called by watchdog's thread for every event: record and return at once."""
        now = time.monotonic()
        with self._cond:
            idle = not self._pending and not self._full
            self._pending |= paths
            self._recorded += 1
            self._last_event = now
            self._last_event_wall = time.time()
            if self._first_event is None:
                self._first_event = now
            if idle:  # the worker sleeps without a deadline; later events only move it
                self._cond.notify_all()

    def _overflowed(self) -> None:
        log.warning("the inotify event queue overflowed (events were lost): reconciling.")
        self.report.overflows += 1
        self.reconcile()

    def reconcile(self) -> None:
        """Compare the whole vault with the index once things are quiet (also what the
        deletion of `.vault/` or its index triggers)."""
        now = time.monotonic()
        with self._cond:
            self._full = True
            self._recorded += 1
            self._last_event = now
            if self._first_event is None:
                self._first_event = now
            self._cond.notify_all()

    def settle(self, timeout: float = SETTLE_TIMEOUT) -> bool:
        """Apply the pending changes now, without waiting out the quiet period, and wait until
        the index holds them. Returns False at once when a large change is under way (the
        query is then answered from the index as it is) or after `timeout`."""
        budget = self.vault.config.search.freshness_max_files
        with self._cond:
            target = self._recorded
            if self._applied >= target:
                return True
            if self._full or len(self._pending) > budget or not (0 <= self._applying <= budget):
                return False
            self._flush = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._applied >= target or self._stopping, timeout)

    # -- the worker -------------------------------------------------------------------------

    def _work(self) -> None:
        try:
            self._work_loop()
        except Exception:  # a bug: say so, and let `run` stop the watcher
            log.exception("the watcher stopped after an unexpected error")
            self._failed = True
            self._stop_requested.set()

    def _work_loop(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            paths, full, upto = batch
            if self.idle_minutes is not None and self._cache_gone():
                self._stop_requested.set()  # a search server goes with its cache (_idle_loop)
                return
            try:
                full = self._check_cache() or full
            except WatcherRunningError as exc:  # another watcher took over meanwhile
                log.error("%s Stopping.", exc)
                self._stop_requested.set()
                return
            done = self._apply(paths, full)
            if done:
                self._index_inode = self._inode("index.sqlite")
            with self._cond:
                self._applying = 0
                if done:
                    self._applied = max(self._applied, upto)
                elif not self._stopping:  # try again: nothing was lost
                    self._pending |= paths
                    self._full = self._full or full
                self._cond.notify_all()
            if done and full:
                self.ready.set()
                if self.dream and self.dream_job is None and not self._stopping:
                    self._sync_schedulers()  # scopes made or removed since
            if done and self._table_stale and self.warm.is_set() and not self._stopping:
                with self._cond:
                    idle = not (self._pending or self._full)
                if idle:  # not between the batches of a burst: each would rebuild it again
                    self._table_stale = False
                    self._prepare_reader()

    def _inode(self, name: str) -> int | None:
        try:
            return os.stat(self.cache / name).st_ino
        except FileNotFoundError:
            return None

    def _check_cache(self) -> bool:
        """Whether `.vault/` (or its index) was deleted or replaced under the running watcher,
        e.g. by `rm -rf .vault` or `vault index --rebuild`: then every handle on the old
        files is dropped (and the pid lock, log and socket are made anew if the folder went),
        and True is returned: the next run must be a reconcile."""
        if self._lock_fd is None:
            return False
        lock_lost = self._inode(LOCK_FILE) != os.fstat(self._lock_fd).st_ino
        replaced = self._index_inode is not None and self._inode("index.sqlite") != (
            self._index_inode
        )
        if not (lock_lost or replaced):
            return False
        self.ready.clear()  # queries are answered in-process until the index is back
        with self._search_lock:
            self._reader.close()
        self.vault.close()
        if lock_lost:
            self.cache.mkdir(parents=True, exist_ok=True)
            os.close(self._lock_fd)
            self._lock_fd = None
            self._take_pid_lock()
            self._stop_log()
            self._start_log()
            log.warning("%s was deleted: rebuilding it from the files.", self.cache)
            if self._server is not None:
                self._server.shutdown()
                self._server.server_close()
                self._start_server()
            self._write_state()
        else:
            log.info("the index was replaced by another process: reopening it.")
        self._index_inode = None
        return True

    def _next_batch(self) -> tuple[set[str], bool, int] | None:
        with self._cond:
            while True:
                if self._stopping:
                    return None
                now = time.monotonic()
                if self._next_reconcile is not None and now >= self._next_reconcile:
                    self._full = True
                    self._next_reconcile = None
                wait: float | None
                if self._pending or self._full:
                    wait = self._quiet_left(now)
                    if wait <= 0 or self._flush:
                        break
                else:
                    wait = None if self._next_reconcile is None else self._next_reconcile - now
                self._cond.wait(wait)
            paths, full = self._pending, self._full
            self._pending, self._full, self._flush = set(), False, False
            self._first_event = None
            self._applying = -1 if full else len(paths)
            return paths, full, self._recorded

    def _quiet_left(self, now: float) -> float:
        if self._last_event is None or self._first_event is None:
            return 0.0
        return min(self._last_event + self.quiet, self._first_event + self.max_delay) - now

    def _apply(self, paths: set[str], full: bool) -> bool:
        """One index run for `paths` (or the whole vault). False when it must be retried."""
        started = time.monotonic()
        try:
            # One onnxruntime thread: the watcher's embedder outlives the load a second
            # thread would be chosen for (Vault.index's `spare_cores`).
            if full:
                report = self.vault.index(
                    progress=self._progress, lock_timeout=LOCK_WAIT, spare_cores=False
                )
            else:
                report = self.vault.index(
                    paths=sorted(paths),
                    progress=self._progress,
                    lock_timeout=LOCK_WAIT,
                    spare_cores=False,
                )
        except LockTimeoutError:
            log.debug("another process is writing the index; trying again.")
            return False
        except _Abandoned:
            self.report.abandoned += 1
            log.info("stopping: left the rest of the batch for the next start.")
            return False
        except IndexServerError as exc:
            self.report.errors += 1
            self._server_retry = min(
                SERVER_RETRY_MAX, max(SERVER_RETRY_FIRST, 2 * self._server_retry)
            )
            log.warning("%s Trying again in %.0f s.", exc, self._server_retry)
            with self._cond:  # the reconcile then catches up with everything changed meanwhile
                self._next_reconcile = time.monotonic() + self._server_retry
            return True
        except Exception as exc:
            self.report.errors += 1
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
            with self._cond:  # compare everything later rather than spin on the same error
                self._next_reconcile = time.monotonic() + ERROR_BACKOFF
            return True
        if self._server_retry:
            log.info("the index server answers again.")
            self._server_retry = 0.0
        if full:
            self.report.reconciles += 1
            if self._updates is not None:
                self._updates.reclaim()
            if self.idle_minutes is None:
                self._prune_sessions()
            if self.reconcile_every:
                with self._cond:
                    self._next_reconcile = time.monotonic() + self.reconcile_every
        else:
            self.report.batches += 1
            self.report.paths += len(paths)
        changed = report.new + report.modified + report.moved + report.deleted
        if changed or report.rebuilt:
            self._table_stale = True
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
        if self._last_event_wall is not None:
            self._write_state()
        return True

    def _progress(self, phase: str, done: int, total: int) -> None:
        if self._stopping:
            raise _Abandoned()

    # -- queries ----------------------------------------------------------------------------

    def _start_server(self) -> None:
        path = socket_path(self.cache)
        remove_socket(path)  # we hold the pid lock: whatever is there is stale
        watcher = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                try:
                    request = json.loads(self.rfile.readline(1 << 20))
                    reply = watcher.answer(request)
                except ValueError:
                    reply = {"ok": False, "error": "the request is not one line of JSON"}
                data = json.dumps(reply, ensure_ascii=False) + "\n"
                with contextlib.suppress(OSError):
                    self.wfile.write(data.encode("utf-8"))

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        old_umask = os.umask(0o177)  # the socket answers with vault content: owner only
        try:
            self._server = Server(os.fsencode(path), Handler)
        finally:
            os.umask(old_umask)
        self.socket = path
        self._server_thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._server_thread.start()
        threading.Thread(target=self._warm_up, name="vault-warm-up", daemon=True).start()

    def _warm_up(self) -> None:
        """Load the unit table and the query encoder once the first reconcile is done, so the
        first query through the socket is as fast as the next."""
        while not self.ready.wait(1.0):
            if self._stopping:
                return
        self._prepare_reader()
        self.warm.set()

    def _prepare_reader(self) -> None:
        """Bring the search side up to date with the index now, rather than in the next query
        (the unit table is patched by the files that changed: search/table.py)."""
        with self._search_lock:
            if self.idle_minutes is not None and self._cache_gone():
                return  # a search server whose cache was deleted: it stops (`_idle_loop`)
            try:
                self._reader.prepare_search()
            except Exception as exc:  # only a head start: the next real query will say more
                log.debug("preparing the search side failed: %s", exc)
                if not isinstance(exc, VaultError):
                    self._reader.close()

    def answer(self, request: Any) -> dict[str, Any]:
        """The reply to one socket request (see watch_client)."""
        self._last_request = time.monotonic()
        if not isinstance(request, dict) or request.get("protocol") != PROTOCOL:
            return {"ok": False, "error": "unknown protocol version"}
        if request.get("op") == "ping":
            return {
                "ok": True,
                "pid": os.getpid(),
                "ready": self.ready.is_set(),  # searches are answered
                "warm": self.warm.is_set(),  # and the model and unit table are loaded
            }
        if request.get("op") == "stop":  # `vault watch --stop`: as SIGTERM does
            log.info("asked to stop over the socket: stopping.")
            self.request_stop()
            return {"ok": True, "pid": os.getpid(), "stopping": True}
        if request.get("op") == "settle":  # a search in another process: does the index hold
            # every change seen? Then it need not stat the vault's files (index/upkeep.py).
            return {"ok": True, "settled": self.ready.is_set() and self.settle()}
        if request.get("op") == "thin":  # cli/thin.py: what `vault search|context|get` prints
            from .thin_ops import answer_thin

            return answer_thin(self, request)
        if request.get("op") != "search":
            return {"ok": False, "error": f"unknown request {request.get('op')!r}"}
        if not self.ready.is_set():
            return {"ok": False, "error": "the watcher is still indexing the vault"}
        target: Any = self._reader
        scope = request.get("scope")
        if scope is not None:  # a search bound to a scope sees what the scope may see
            try:
                if not isinstance(scope, list):
                    raise VaultError("the scope of a search is a list of names")
                target = self._reader.scope(*scope)
                key = settings_key(target.config)
            except VaultError as exc:
                return {"ok": False, "error": str(exc)}
        else:
            key = self._settings_key
        if request.get("settings") != key:
            return {"ok": False, "error": "the watcher runs with other settings"}
        self.settle()
        try:
            hits = self._search(target, **request)
        except Exception as exc:  # the client then searches in-process and reports the error
            log.info("a search through the socket failed (%s); the client searches itself.", exc)
            return {"ok": False, "error": str(exc)}
        self.report.searches += 1
        return {
            "ok": True,
            "hits": [dataclasses.asdict(hit) for hit in hits],
            "warnings": list(getattr(hits, "warnings", [])),
        }

    def _search(self, target: WatchedVault, **request: Any) -> list[Any]:
        with self._search_lock:
            try:
                return target.search(
                    str(request.get("query", "")),
                    limit=request.get("limit"),
                    mode=request.get("mode", "hybrid"),
                    since=request.get("since"),
                    until=request.get("until"),
                    within=request.get("within"),
                    kinds=tuple(request.get("kinds") or ()),
                    fresh=False,
                )
            except Exception as exc:
                if not isinstance(exc, VaultError):
                    self._reader.close()  # replaced or damaged files: reopen on the next query
                raise

    def _prune_sessions(self) -> None:
        """`[sessions] keep_days`: old transcripts deleted, once a day (on a reconcile)."""
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

    # -- abandoned update queues ------------------------------------------------------------

    def _start_updates(self) -> None:
        """A queue of our own, which submits nothing: its worker flushes what dead processes
        left in `.vault/queue/` (at once, every minute, and on `reclaim`)."""
        from ..capture import UpdateQueue

        try:
            self._updates = UpdateQueue(self.vault)
        except VaultError as exc:  # bad [queue] settings: the watcher still indexes
            log.warning("not draining update queues: %s", exc)

    # -- the dream schedule -----------------------------------------------------------------

    def _start_scheduler(self) -> None:
        if self.dream_job is None:
            self._sync_schedulers(at_start=True)
            return
        self.scheduler = DreamScheduler(
            self.vault.config,
            self.dream_job,
            trigger=self.dream_trigger,
            on_run=self._write_state,
        )
        self.schedulers[("", "")] = self.scheduler
        self.scheduler.start()

    def _sync_schedulers(self, at_start: bool = False) -> None:
        """One scheduler per dream schedule of the vault's scopes (`dream_schedules`), made
        for schedules that appeared and shut down for those that are gone; the root's keeps
        `.vault/scheduler.json`, the others a state file named after their schedule. At start
        a bad schedule of the root stops the watcher; a scope's is logged and skipped."""
        try:
            groups = self.vault.dream_schedules()
        except VaultError as exc:
            if at_start:
                raise
            log.warning("the dream schedules could not be read: %s", exc)
            return
        for key in [k for k in self.schedulers if k not in groups]:
            self.schedulers.pop(key).shutdown(wait=False)
        for key, members in groups.items():
            if key in self.schedulers:
                continue
            first = self.vault.scope(*members[0])
            own_state: dict[str, Any] = {}  # the root's schedule: .vault/scheduler.json
            if () not in members:
                digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:12]
                own_state["state_file"] = f"scheduler-{digest}.json"
            try:
                scheduler = DreamScheduler(
                    first.config,
                    self._dream_job(key),
                    trigger=self.dream_trigger,
                    on_run=self._write_state,
                    **own_state,
                    diary_dirs=[self.root / self.vault.scope(*m).layout.diary_dir for m in members],
                )
                scheduler.start()
            except VaultError as exc:
                if at_start and () in members:
                    raise
                log.warning(
                    "the dream schedule of scope %s is not used: %s",
                    ", ".join("/".join(m) for m in members),
                    exc,
                )
                continue
            self.schedulers[key] = scheduler
        pool = [s for k, s in self.schedulers.items() if () in groups.get(k, [])]
        pool = pool or list(self.schedulers.values())
        self.scheduler = pool[0] if pool else None
        self._write_state()

    def _dream_job(self, schedule: tuple[str, str]) -> Callable[[], Any]:
        original = self.vault

        def job() -> Any:
            vault = original.clone()  # its own connections, in its own thread
            try:
                done = vault.dream_scopes(schedule)
            finally:
                vault.close()
            return {name or "/": getattr(r, "status", f"failed: {r}") for name, r in done.items()}

        return job
