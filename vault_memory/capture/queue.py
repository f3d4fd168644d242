"""`Vault.updates`: an agent hands a conversation over and goes on at once; the vault flushes it
in the background, debounced, and loses nothing when the process dies.

    vault.updates.submit(messages, session="support-42")     # returns in microseconds
    await vault.updates.asubmit(messages, session="support-42")
    vault.updates.flush_now()                                # flush what waits, and wait
    vault.updates.close(timeout=10)                          # also done at exit

**Submit** appends one JSON line to this process's spool segment in `.vault/queue/` (one
`write` on an `O_APPEND` descriptor: a kill -9 afterwards loses nothing, a kill during it leaves
a torn last line that no reader takes for a record) and hands the messages to a worker
thread. A conversation that only grew since the session's previous submission is spooled as
its new messages (`base` + `add`), so a submit costs what was added, not the whole
conversation again. Nothing else happens in the caller's thread: no parsing, no flush, no
lock held by anyone else.

**Debounce.** The worker keeps, per (scope, session), the newest version of the conversation
(a version that does not extend the previous one, such as a sliding window, is merged with
it: the older messages followed by those not already there) and flushes it once the session
has been quiet for `[queue] debounce_seconds` (5), or `max_delay_seconds` (60) after its first
waiting submission under a steady stream. A burst of 1,000 submissions is one flush, and with
an `[llm]` one extraction. The flush is `Vault.flush` (idempotent by content, redacted), with
the day of the submission.

**Crash safety.** After a flush the worker appends a `done` line naming the records it covered.
A process killed between the flush and that line leaves records that the next drain flushes
again, which adds nothing (flush writes only entries the session does not have yet). Each
process's spool belongs to an owner: `.vault/queue/OWNER.lock`, flock-ed for the life of the
queue (created locked, then renamed into place, so no one sees it unlocked). Whoever can take
that lock without waiting holds a dead process's spool: every queue does so at start and every
minute, and `vault watch` at start and on every reconcile; the flock makes one of them the
drainer. A drained segment is deleted; a partly drained one keeps its `done` lines.

**Errors** never reach the agent's call. A flush that fails for a reason that will pass (a
lock held too long, a full disk) is retried with a back-off; one that cannot succeed (a
malformed conversation, one over `flush.max_input_bytes`) is logged and recorded with its
messages in `.vault/queue/failed.jsonl`, which `vault status` counts ("3 updates failed: …").
When the spool grows past `max_spool_mb`, the queue stops waiting for quiet periods.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import datetime as dt
import errno
import json
import logging
import os
import secrets
import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .. import clock
from ..errors import LockTimeoutError, VaultError
from ..files import fcntl

if TYPE_CHECKING:
    from ..config import Config

log = logging.getLogger("vault_memory")

QUEUE_DIR = "queue"  # in .vault/
FAILED_FILE = "failed.jsonl"
SEGMENT_BYTES = 4_000_000  # a drained segment larger than this is replaced by a new one
RECLAIM_EVERY = 60.0  # seconds between looks for spools that dead processes left
RETRY_FIRST, RETRY_MAX = 1.0, 60.0  # back-off of a flush that failed for a passing reason
FORMAT = 1

Key = tuple[str | None, str | None]  # (scope, session); session None: derived from the talk


class QueuedVault(Protocol):
    """What the queue needs of the vault it flushes into (`Vault` is one): `flush`, and
    `scope(*names)` for a view of a scope below it with the same `flush`."""

    root: Path

    @property
    def config(self) -> Config: ...

    @property
    def cache_dir(self) -> Path: ...

    def flush(
        self,
        messages: Any,
        session: str | None = None,
        dry_run: bool = False,
        date: dt.date | str | None = None,
    ) -> Any: ...

    def scope(self, *names: str) -> QueuedVault: ...


class QueueClosedError(VaultError):
    def __init__(self) -> None:
        super().__init__(
            "the update queue of this vault is closed; submit before `close()`, or use "
            "`vault.updates` again (a closed queue is replaced by a new one)."
        )


@dataclass
class QueueStats:
    """What a queue did in this process, and what waits."""

    submitted: int = 0
    flushes: int = 0  # flush calls made (a burst of one session is one)
    pending: int = 0  # submissions not flushed yet (spooled)
    failed: int = 0
    last_error: str | None = None
    reclaimed: int = 0  # submissions of dead processes' spools flushed here
    spool_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# -- versions of a conversation ---------------------------------------------------------------


def merge_versions(old: Any, new: Any) -> list[Any]:
    """The parts to flush for two versions of one session's conversation, oldest first: the
    newer alone when it extends the older (a growing conversation), the older followed by what
    the newer adds beyond their overlap when both are message lists (a sliding window), both
    otherwise. `old` is a list of parts already."""
    if not old:
        return [new]
    last = old[-1]
    if isinstance(last, list) and isinstance(new, list):
        if new[: len(last)] == last:
            return [*old[:-1], new]
        if new:
            for start in range(len(last)):  # the longest suffix of `last` that `new` opens with
                if last[start] == new[0] and last[start:] == new[: len(last) - start]:
                    return [*old[:-1], last + new[len(last) - start :]]
        return [*old[:-1], last + new]
    if isinstance(last, str) and isinstance(new, str) and new.startswith(last):
        return [*old[:-1], new]
    if new == last:
        return old
    return [*old, new]


def _jsonable(value: Any) -> Any:
    """What an SDK's message object becomes in the spool (pydantic models, dataclasses)."""
    for method in ("model_dump", "to_dict", "dict"):
        dump = getattr(value, method, None)
        if callable(dump):
            with contextlib.suppress(Exception):
                return dump()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"a {type(value).__name__} cannot be stored as a message")


def _payload(messages: Any) -> tuple[Any, Any]:
    """(what the spool stores, what is flushed later) for what `submit` was given."""
    if isinstance(messages, bytes):
        text = messages.decode("utf-8", "surrogateescape")
        return {"bytes": text}, messages
    if isinstance(messages, dict) and set(messages) == {"messages"}:
        messages = messages["messages"]
    return messages, None


def _restore(stored: Any) -> Any:
    if isinstance(stored, dict) and set(stored) == {"bytes"} and isinstance(stored["bytes"], str):
        return stored["bytes"].encode("utf-8", "surrogateescape")
    return stored


# -- the spool on disk ------------------------------------------------------------------------


def queue_dir(cache_dir: Path) -> Path:
    return cache_dir / QUEUE_DIR


def _segments(folder: Path, owner: str) -> list[Path]:
    found = []
    for path in folder.glob(f"{owner}.*.jsonl"):
        number = path.name[len(owner) + 1 : -len(".jsonl")]
        if number.isdigit():
            found.append((int(number), path))
    return [path for _, path in sorted(found)]


def _owners(folder: Path) -> set[str]:
    owners = {p.name[: -len(".lock")] for p in folder.glob("*.lock")}
    for path in folder.glob("*.jsonl"):
        if path.name != FAILED_FILE:
            owners.add(path.name.split(".", 1)[0])
    return owners


def read_segment(path: Path) -> tuple[list[dict[str, Any]], set[int]]:
    """The records of a spool segment and the sequence numbers marked done. Lines that do not
    parse (the torn last line of a process killed mid-write) are skipped."""
    records: list[dict[str, Any]] = []
    done: set[int] = set()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return records, done
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("done"), list):
            done.update(n for n in item["done"] if isinstance(n, int))
        elif isinstance(item.get("seq"), int):
            records.append(item)
    return records, done


def replay(records: list[dict[str, Any]], done: set[Any]) -> dict[Key, _Pending]:
    """What is left to flush in one owner's records (all its segments, in order): per session,
    the versions not marked done, rebuilt from full records and `base` + `add` ones."""
    current: dict[Key, Any] = {}
    pending: dict[Key, _Pending] = {}
    for record in records:
        key: Key = (record.get("scope"), record.get("session"))
        base = None
        if "add" in record:
            base = current.get(key)
            if not isinstance(base, list) or record.get("base") != len(base):
                log.warning(
                    "update queue: record %s of session %s lost its base; skipped",
                    record.get("seq"),
                    key[1],
                )
                continue
            version: Any = base + list(record["add"])
        else:
            version = _restore(record.get("messages"))
        current[key] = version
        if record["seq"] in done:
            continue
        group = grouping_key(key, version, record["seq"])
        item = pending.setdefault(group, _Pending(group, key[1]))
        item.add(
            record["seq"], version, str(record.get("day") or ""), float(record.get("t", 0)), base
        )
    return pending


def grouping_key(key: Key, version: Any, seq: Any) -> Key:
    """The key a submission is coalesced under: its session, or for a submission without one
    the id `flush` will derive from how the conversation opens (two conversations submitted
    without ids are not mixed). One that does not parse stays alone (its flush fails)."""
    if key[1] is not None:
        return key
    from .conversation import derive_session_id, parse_conversation

    try:
        return key[0], "derived:" + derive_session_id(parse_conversation(version))
    except VaultError:
        return key[0], f"unparsed:{seq}"


@dataclass
class _Pending:
    """One session's submissions that wait to be flushed."""

    key: Key
    session: str | None  # what `flush` is given (None: it derives the id)
    parts: list[Any] = field(default_factory=list)
    seqs: list[Any] = field(default_factory=list)  # what a `done` line names
    day: str = ""
    first: float = 0.0  # monotonic time of the first and the last submission
    last: float = 0.0
    retry_at: float = 0.0
    failures: int = 0

    def add(self, seq: Any, version: Any, day: str, at: float, extends: Any = None) -> None:
        """Add a submission; `extends` is the version it was spooled as an extension of."""
        self.add_many([seq], version, day, at, at, extends)

    def add_many(
        self,
        seqs: list[Any],
        version: Any,
        day: str,
        first: float,
        last: float,
        extends: Any = None,
    ) -> None:
        if extends is not None and self.parts and self.parts[-1] is extends:
            self.parts[-1] = version  # a grown conversation: no need to compare
        else:
            self.parts = merge_versions(self.parts, version)
        self.seqs += seqs
        self.day = day or self.day
        self.first = self.first or first
        self.last = last


@dataclass
class _Inbound:
    """Submissions handed to the worker: a session's growing conversation is one entry whose
    version is replaced (the caller's thread keeps no chain of old versions alive)."""

    key: Key
    seqs: list[tuple[int, int]]
    version: Any
    day: str
    first: float
    last: float
    base: Any  # the version the first of them extends, if spooled as an extension


class _Append:
    """An `O_APPEND` spool segment: whole lines, one `write` each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.size = os.fstat(self.fd).st_size
        if self.size:
            with open(path, "rb") as fh:  # a torn last line: end it, so ours stay whole
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    self.write(b"\n")

    def write(self, data: bytes) -> None:
        written = os.write(self.fd, data)
        while written < len(data):  # a short write (a full disk): never leave half a line
            more = os.write(self.fd, data[written:])
            if more == 0:
                raise OSError(errno.ENOSPC, "short write to the update spool")
            written += more
        self.size += len(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _line(record: dict[str, Any]) -> bytes:
    return (
        json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=_jsonable).encode(
            "utf-8", "surrogateescape"
        )
        + b"\n"
    )


def _lock_owner(folder: Path, owner: str) -> int | None:
    """Create `OWNER.lock` already flock-ed (made aside, locked, then linked into place), or
    None when it exists."""
    tmp = folder / f".{owner}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.link(tmp, folder / f"{owner}.lock")
    except OSError:
        os.close(fd)
        return None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return fd


def _claim(folder: Path, owner: str) -> int | None:
    """The flock-ed lock of a spool whose process is gone, or None (alive, or being drained)."""
    path = folder / f"{owner}.lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:  # segments without a lock: an owner that never got one
        return _lock_owner(folder, owner) if _segments(folder, owner) else None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path).st_ino != os.fstat(fd).st_ino:
            raise FileNotFoundError(path)  # drained and removed meanwhile
    except OSError:
        os.close(fd)
        return None
    return fd


def _release(folder: Path, owner: str, fd: int, remove: bool) -> None:
    if remove:
        with contextlib.suppress(FileNotFoundError):
            if os.stat(folder / f"{owner}.lock").st_ino == os.fstat(fd).st_ino:
                (folder / f"{owner}.lock").unlink()
    os.close(fd)


# -- the queue --------------------------------------------------------------------------------

_open_queues: weakref.WeakSet[UpdateQueue] = weakref.WeakSet()


@atexit.register
def _close_at_exit() -> None:
    for queue in list(_open_queues):
        with contextlib.suppress(Exception):
            queue.close()


class UpdateQueue:
    """The vault's update queue; see the module docstring. Thread-safe."""

    def __init__(self, vault: QueuedVault) -> None:
        self.vault = vault
        settings = vault.config.queue
        for name in (
            "debounce_seconds",
            "max_delay_seconds",
            "max_spool_mb",
            "close_timeout_seconds",
        ):
            if getattr(settings, name) < 0:
                from ..errors import ConfigError

                raise ConfigError(f"queue.{name} must be 0 or more, got {getattr(settings, name)}.")
        self.debounce = settings.debounce_seconds
        self.max_delay = max(settings.max_delay_seconds, settings.debounce_seconds)
        self.max_spool = int(settings.max_spool_mb * 1_000_000)
        self.close_timeout = settings.close_timeout_seconds
        self.folder = queue_dir(vault.cache_dir)
        self.owner = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.stats = QueueStats()

        self._lock = threading.Lock()  # the spool file and the inbox
        self._cond = threading.Condition(self._lock)
        self._inbox: list[_Inbound] = []
        self._inbox_tail: dict[Key, _Inbound] = {}  # each session's last entry in the inbox
        self._idle = True  # the worker waits with nothing pending
        self._seq = 0
        self._segment_no = 0
        self._spool: _Append | None = None
        self._lock_fd: int | None = None
        self._snapshots: dict[Key, tuple[int, list[Any]]] = {}  # for base + add records
        self._handled = 0  # every submission up to this seq is flushed or failed
        self._outstanding = 0  # submissions not flushed yet
        self._force_upto = 0  # flush_now: flush these without waiting for quiet
        self._reclaim = True
        self._closing = False
        self._closed = False
        self._spool_warned = False
        self._worker = threading.Thread(target=self._run, name="vault-updates", daemon=True)
        self._worker.start()
        _open_queues.add(self)

    def __repr__(self) -> str:
        return f"UpdateQueue({str(self.vault.root)!r}, owner={self.owner!r})"

    # -- the agent's side -------------------------------------------------------------------

    def submit(self, messages: Any, session: str | None = None, scope: str | None = None) -> int:
        """Queue a conversation (OpenAI-style messages, or any form `Vault.flush` takes) for
        a debounced flush; returns its sequence number at once. Never raises for what the
        flush may later find wrong with it (see `vault status`)."""
        scope = self._check_scope(scope)
        stored, original = _payload(messages)
        key: Key = (scope, session)
        day = clock.today().isoformat()
        with self._lock:
            if self._closed:
                raise QueueClosedError()
            if not messages:
                return self._seq  # nothing to remember
            seq = self._seq + 1
            record: dict[str, Any] = {
                "seq": seq,
                "t": round(time.time(), 3),
                "day": day,
                "session": session,
                "scope": scope,
            }
            version: Any = original
            snapshot = self._snapshots.get(key) if session is not None else None
            if (
                snapshot is not None
                and snapshot[0] == self._segment_no
                and isinstance(stored, list)
                and len(stored) >= len(snapshot[1])
                and stored[: len(snapshot[1])] == snapshot[1]
            ):
                base = snapshot[1]
                record["base"], record["add"] = len(base), stored[len(base) :]
            else:
                base = None
                record["messages"] = stored
            try:
                line = _line(record)
            except (TypeError, ValueError) as exc:
                self._fail_now(key, f"the messages cannot be stored ({exc})", None)
                return seq
            if version is None:
                # Our own copy (the caller may change its list afterwards): decoded from what
                # was written, so the worker flushes exactly what a drain would.
                decoded = json.loads(line)
                added = decoded["add"] if base is not None else decoded["messages"]
                version = base + added if base is not None else added
            # What the next record of the session may build on: what a replay rebuilds.
            if isinstance(version, list) and session is not None:
                self._snapshots[key] = (self._segment_no, version)
            else:
                self._snapshots.pop(key, None)
            self._append(line)
            self._seq = seq
            self._outstanding += 1
            self.stats.submitted += 1
            now = time.monotonic()
            entry = self._inbox_tail.get(key)
            if base is not None and entry is not None and entry.version is base:
                entry.version = version
                entry.seqs.append((self._segment_no, seq))
                entry.day, entry.last = day, now
            else:
                entry = _Inbound(key, [(self._segment_no, seq)], version, day, now, now, base)
                self._inbox.append(entry)
                self._inbox_tail[key] = entry
            # A worker that waits for a deadline needs no wake-up (this one's is later), and
            # each wake-up would take the interpreter's lock from agents that submit.
            if self._idle or self._spool_bytes() > self.max_spool:
                self._idle = False
                self._cond.notify_all()
        return seq

    async def asubmit(
        self, messages: Any, session: str | None = None, scope: str | None = None
    ) -> int:
        """`submit` for async callers (it does not block: one append to the spool)."""
        return self.submit(messages, session=session, scope=scope)

    def flush_now(self, timeout: float | None = None) -> bool:
        """Flush every submission made so far without waiting for quiet periods, and wait
        until that is done (at most `timeout` seconds, default `close_timeout_seconds`).
        True when everything submitted before the call was flushed (or failed: see `stats`)."""
        timeout = self.close_timeout if timeout is None else timeout
        with self._cond:
            target = self._seq
            self._force_upto = max(self._force_upto, target)
            self._idle = False
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._handled >= target, timeout)

    def reclaim(self) -> None:
        """Look now for spools of processes that died, and drain them in the background."""
        with self._cond:
            self._reclaim = True
            self._cond.notify_all()

    def close(self, timeout: float | None = None) -> bool:
        """Flush what waits (at most `timeout` seconds, default `[queue]
        close_timeout_seconds`), then stop. What is not flushed by then stays in the spool
        for the next queue of this vault (or `vault watch`). True when nothing was left."""
        with self._cond:
            if self._closed:
                return self._handled >= self._seq
        finished = self.flush_now(timeout)
        with self._cond:
            self._closing = True
            self._closed = True
            self._cond.notify_all()
        self._worker.join(timeout=1.0)  # at most one flush under way, left to finish alone
        with self._cond:
            self._close_files(remove=finished and self._handled >= self._seq)
        _open_queues.discard(self)
        return finished

    def status(self) -> QueueStats:
        """What this queue did, and what waits."""
        with self._lock:
            self.stats.pending = self._outstanding
            self.stats.spool_bytes = self._spool_bytes()
            return dataclasses.replace(self.stats)

    # -- helpers of the agent's side (called with the lock held) ----------------------------

    def _check_scope(self, scope: Any) -> str | None:
        if scope is None:
            return None
        from ..files import check_scope, scope_text

        names = scope if isinstance(scope, tuple | list) else str(scope).strip().split("/")
        # a bad name is refused here, in the caller's call, not later in the worker
        return scope_text(check_scope(name for name in names if name)) or None

    def _append(self, line: bytes) -> None:
        try:
            if self._spool is None:
                self._open_spool()
            assert self._spool is not None
            self._spool.write(line)
        except OSError as exc:  # kept in memory: flushed by this process, not crash-safe
            self.stats.last_error = f"cannot write the spool in {self.folder} ({exc})"
            log.warning(
                "update queue: %s; this submission is kept in memory only.", self.stats.last_error
            )
            return
        if self._spool_bytes() > self.max_spool and not self._spool_warned:
            self._spool_warned = True
            log.warning(
                "update queue: the spool is over %s MB; flushing without waiting "
                "for quiet periods.",
                self.max_spool // 1_000_000,
            )

    def _open_spool(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if self._lock_fd is None:
            self._lock_fd = _lock_owner(self.folder, self.owner)
            if self._lock_fd is None:
                raise OSError(errno.EEXIST, f"{self.owner}.lock exists")
        self._spool = _Append(self.folder / f"{self.owner}.{self._segment_no}.jsonl")

    def _spool_bytes(self) -> int:
        return self._spool.size if self._spool else 0

    def _fail_now(self, key: Key, why: str, messages: Any) -> None:
        self.stats.failed += 1
        self.stats.last_error = why
        log.warning("update queue: session %s: %s", key[1] or "(derived)", why)
        _record_failure(self.folder, key, why, messages)

    # -- the worker -------------------------------------------------------------------------

    def _run(self) -> None:
        pending: dict[Key, _Pending] = {}
        next_reclaim = time.monotonic()
        while True:
            with self._cond:
                inbox, self._inbox, self._inbox_tail = self._inbox, [], {}
            for entry in inbox:  # without the lock: a talk without a session id is parsed here
                group = grouping_key(entry.key, entry.version, entry.seqs[0][1])
                pending.setdefault(group, _Pending(group, entry.key[1])).add_many(
                    entry.seqs, entry.version, entry.day, entry.first, entry.last, entry.base
                )
            with self._cond:
                if self._inbox:
                    continue
                self._handled = self._low_water(pending)
                self._cond.notify_all()
                if self._closing:  # `close` forced what it could wait for already
                    return
                now = time.monotonic()
                if now >= next_reclaim:
                    self._reclaim = True
                urgent = self._spool_bytes() > self.max_spool
                due = [p for p in pending.values() if self._due(p, now, urgent)]
                if not due and not self._reclaim:
                    wake = [self._wake_at(p) for p in pending.values()] + [next_reclaim]
                    self._idle = not pending
                    self._cond.wait(max(0.0, min(wake) - now))
                    self._idle = False
                    continue
                reclaim, self._reclaim = self._reclaim, False
            if reclaim:
                next_reclaim = time.monotonic() + RECLAIM_EVERY
                self._reclaim_spools()
            for item in due:
                if self._closing:
                    break
                if self._flush(item, own=True):
                    pending.pop(item.key, None)
                    with self._lock:
                        self._outstanding -= len(item.seqs)
            with self._cond:
                self._handled = self._low_water(pending)
                self._rotate()
                self._cond.notify_all()

    def _due(self, item: _Pending, now: float, urgent: bool) -> bool:
        if item.retry_at and now < item.retry_at:
            return False
        if urgent or item.seqs[0][1] <= self._force_upto:  # seqs grow: the first is the least
            return True
        return now - item.last >= self.debounce or now - item.first >= self.max_delay

    def _wake_at(self, item: _Pending) -> float:
        at = min(item.last + self.debounce, item.first + self.max_delay)
        return max(at, item.retry_at)

    def _low_water(self, pending: dict[Key, _Pending]) -> int:
        """The highest seq up to which every submission is flushed or failed."""
        waiting = [seq for item in pending.values() for _, seq in item.seqs]
        waiting += [entry.seqs[0][1] for entry in self._inbox]
        return min(waiting) - 1 if waiting else self._seq

    def _flush(self, item: _Pending, own: bool, done_to: Path | None = None) -> bool:
        """Flush one session's waiting parts; True when they are handled (flushed, or failed
        for good and recorded), False to try again later."""
        scope, session = item.key[0], item.session
        try:
            target: Any = self.vault
            if scope:
                target = self.vault.scope(*scope.split("/"))
            for part in item.parts:
                target.flush(part, session=session, date=item.day or None)
                self.stats.flushes += 1
        except (LockTimeoutError, OSError) as exc:  # passes: try again after a back-off
            item.failures += 1
            wait = min(RETRY_MAX, RETRY_FIRST * 2 ** (item.failures - 1))
            item.retry_at = time.monotonic() + wait
            self.stats.last_error = str(exc)
            log.warning(
                "update queue: flushing session %s failed (%s); retrying in %.0f s.",
                session or "(derived)",
                exc,
                wait,
            )
            return False
        except Exception as exc:  # cannot succeed: recorded with its messages, never retried
            why = str(exc) if isinstance(exc, VaultError) else f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, VaultError):
                log.exception("update queue: flushing session %s failed", session)
            self.stats.failed += 1
            self.stats.last_error = why
            log.warning(
                "update queue: session %s could not be flushed: %s", session or "(derived)", why
            )
            _record_failure(self.folder, item.key, why, item.parts)
        self._mark_done(item, own, done_to)
        return True

    def _mark_done(self, item: _Pending, own: bool, done_to: Path | None) -> None:
        by_segment: dict[Any, list[int]] = {}
        for segment, seq in item.seqs:
            by_segment.setdefault(segment, []).append(seq)
        for segment, seqs in by_segment.items():
            line = _line({"done": seqs})
            try:
                if own:
                    with self._lock:
                        # A rotated segment was deleted: everything in it was handled.
                        if self._spool is not None and segment == self._segment_no:
                            self._spool.write(line)
                else:
                    path = segment if isinstance(segment, Path) else done_to
                    if path is not None:
                        _append_line(path, line)
            except OSError as exc:  # the flush is done; a later drain repeats it harmlessly
                log.warning("update queue: could not record a flush as done (%s)", exc)

    def _rotate(self) -> None:
        """Called with the lock held: once the segment is large and every submission in it is
        handled, delete it; the next submission starts a new one."""
        limit = min(SEGMENT_BYTES, max(1, self.max_spool // 2))
        if self._spool is not None and self._spool.size > limit and self._handled >= self._seq:
            self._spool.close()
            with contextlib.suppress(FileNotFoundError):
                self._spool.path.unlink()
            self._spool = None
            self._segment_no += 1
            self._snapshots.clear()
            self._spool_warned = False

    def _close_files(self, remove: bool) -> None:
        if self._spool is not None:
            self._spool.close()
            if remove:
                with contextlib.suppress(FileNotFoundError):
                    self._spool.path.unlink()
        self._spool = None
        if self._lock_fd is not None:
            _release(self.folder, self.owner, self._lock_fd, remove)
            self._lock_fd = None

    # -- dead processes' spools -------------------------------------------------------------

    def _reclaim_spools(self) -> None:
        if not self.folder.is_dir():
            return
        for owner in sorted(_owners(self.folder)):
            if owner == self.owner or self._closing:
                continue
            fd = _claim(self.folder, owner)
            if fd is None:
                continue
            drained = False
            try:
                drained = self._drain(owner)
            except Exception:  # a bug: the spool stays for the next look
                log.exception("update queue: draining the spool of %s failed", owner)
            finally:
                if drained:
                    for path in _segments(self.folder, owner):
                        with contextlib.suppress(FileNotFoundError):
                            path.unlink()
                _release(self.folder, owner, fd, remove=drained)

    def _drain(self, owner: str) -> bool:
        """Flush what a dead process's spool still holds; True when all of it is handled."""
        records: list[dict[str, Any]] = []
        done: set[tuple[Path, int]] = set()
        for path in _segments(self.folder, owner):
            found, marked = read_segment(path)
            for record in found:
                record["seq"] = (path, record["seq"])  # seqs restart in no segment, but be sure
            records += found
            done.update((path, n) for n in marked)
        # `replay` keys versions by session; sequence numbers become (segment, seq) pairs.
        left = replay(records, done)
        if not left:
            return True
        log.info(
            "update queue: flushing %d sessions left by a process that stopped (%s)",
            len(left),
            owner,
        )
        ok = True
        for item in left.values():
            if self._closing:
                return False
            if self._flush(item, own=False):
                self.stats.reclaimed += len(item.seqs)
            else:
                ok = False
        return ok


def _append_line(path: Path, line: bytes) -> None:
    spool = _Append(path)
    try:
        spool.write(line)
    finally:
        spool.close()


def _record_failure(folder: Path, key: Key, why: str, messages: Any) -> None:
    record = {
        "at": clock.now_local().isoformat(timespec="seconds"),
        "scope": key[0],
        "session": key[1],
        "error": why,
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            line = _line({**record, "messages": messages})
        except (TypeError, ValueError):
            line = _line(record)
        _append_line(folder / FAILED_FILE, line)
    except OSError as exc:
        log.warning("update queue: could not record the failure in %s (%s)", folder, exc)


def queue_status(cache_dir: Path) -> dict[str, Any]:
    """What waits in `.vault/queue/` and what failed, for `vault status`. Reads only."""
    folder = queue_dir(cache_dir)
    info: dict[str, Any] = {
        "pending": 0,
        "sessions": 0,
        "processes": 0,
        "abandoned": 0,
        "failed": 0,
        "last_error": None,
    }
    if not folder.is_dir():
        return info
    sessions: set[tuple[str, Key]] = set()
    for owner in sorted(_owners(folder)):
        records: list[dict[str, Any]] = []
        done: set[int] = set()
        alive = _alive(folder, owner)
        for path in _segments(folder, owner):
            found, marked = read_segment(path)
            records += [r for r in found if r["seq"] not in marked]
            done |= marked
        if alive:
            info["processes"] += 1
        elif records:
            info["abandoned"] += 1
        info["pending"] += len(records)
        sessions.update((owner, (r.get("scope"), r.get("session"))) for r in records)
    info["sessions"] = len(sessions)
    for line in _lines(folder / FAILED_FILE):
        info["failed"] += 1
        info["last_error"] = line.get("error")
    return info


def _alive(folder: Path, owner: str) -> bool:
    try:
        fd = os.open(folder / f"{owner}.lock", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    for raw in data.split(b"\n"):
        with contextlib.suppress(ValueError):
            item = json.loads(raw)
            if isinstance(item, dict):
                yield item
