"""When a watcher applies what changed: the paths its event intake recorded wait until the
vault has been quiet for `quiet` seconds (or a change has waited `max_delay`, so a long
stream of writes is applied as it goes), then go to the index worker as one batch; a
reconcile (the whole vault compared with the index) is due at start, after an overflow or
the deletion of `.vault/`, on a timer, and after a failure (`reconcile_in`).

`PendingChanges` is the state the intake, the worker and the queries share, under one
condition; what is due when is decided by `quiet_left` and `PendingChanges.take_due`, which
take the time as an argument.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple


class Batch(NamedTuple):
    """What the worker applies in one index run."""

    paths: set[str]
    full: bool  # a reconcile: the whole vault
    upto: int  # the events recorded so far: the index holds them once this batch is done


def quiet_left(
    now: float, first_event: float | None, last_event: float | None, quiet: float, limit: float
) -> float:
    """Seconds until the changes are due: `quiet` after the last event, or `limit` after the
    first, whichever comes first (0 or less: due now)."""
    if last_event is None or first_event is None:
        return 0.0
    return min(last_event + quiet, first_event + limit) - now


class PendingChanges:
    """The paths recorded and not yet applied, and what the index holds of them."""

    def __init__(
        self,
        quiet: float,
        max_delay: float,
        reconcile_every: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.quiet = quiet
        self.max_delay = max_delay
        self.reconcile_every = reconcile_every  # seconds between timed reconciles (None: never)
        self.clock = clock
        self.cond = threading.Condition()
        self.paths: set[str] = set()
        self.full = True  # start with a reconcile
        self.first_event: float | None = None
        self.last_event: float | None = None
        self.last_event_wall: float | None = None
        self.recorded = 0  # events recorded so far...
        self.applied = 0  # ...and how many of them the index has taken in
        self.applying = 0  # paths in the batch being applied (-1: a reconcile)
        self.flush = False
        self.stopping = False
        self.next_reconcile: float | None = None

    def record(self, paths: set[str]) -> None:
        """Called by the event intake's thread for every event: record and return at once."""
        now = self.clock()
        with self.cond:
            idle = not self.paths and not self.full
            self.paths |= paths
            self.recorded += 1
            self.last_event = now
            self.last_event_wall = time.time()
            if self.first_event is None:
                self.first_event = now
            if idle:  # the worker sleeps without a deadline; later events only move it
                self.cond.notify_all()

    def reconcile(self) -> None:
        """A reconcile once things are quiet."""
        now = self.clock()
        with self.cond:
            self.full = True
            self.recorded += 1
            self.last_event = now
            if self.first_event is None:
                self.first_event = now
            self.cond.notify_all()

    def waiting(self) -> bool:
        """Whether anything waits to be applied."""
        with self.cond:
            return bool(self.paths or self.full)

    def settle(self, budget: int, timeout: float) -> bool:
        """Apply the pending changes now, without waiting out the quiet period, and wait until
        the index holds them. False at once when a reconcile or more than `budget` paths are
        under way (the query is then answered from the index as it is), or after `timeout`."""
        with self.cond:
            target = self.recorded
            if self.applied >= target:
                return True
            if self.full or len(self.paths) > budget or not (0 <= self.applying <= budget):
                return False
            self.flush = True
            self.cond.notify_all()
            return self.cond.wait_for(lambda: self.applied >= target or self.stopping, timeout)

    def next_batch(self) -> Batch | None:
        """Wait for the next batch that is due; None once stopping."""
        with self.cond:
            while not self.stopping:
                wait = self._due(self.clock())
                if wait is not None and wait <= 0:
                    return self._take()
                self.cond.wait(wait)
            return None

    def take_due(self, now: float) -> Batch | None:
        """The batch due at `now`, or None when none is (yet)."""
        with self.cond:
            wait = self._due(now)
            return self._take() if wait is not None and wait <= 0 else None

    def _due(self, now: float) -> float | None:
        """Seconds until a batch is due at `now` (0 or less: due; None: nothing waits)."""
        if self.next_reconcile is not None and now >= self.next_reconcile:
            self.full = True
            self.next_reconcile = None
        if self.paths or self.full:
            if self.flush:
                return 0.0
            return quiet_left(now, self.first_event, self.last_event, self.quiet, self.max_delay)
        return None if self.next_reconcile is None else self.next_reconcile - now

    def _take(self) -> Batch:
        batch = Batch(self.paths, self.full, self.recorded)
        self.paths, self.full, self.flush = set(), False, False
        self.first_event = None
        self.applying = -1 if batch.full else len(batch.paths)
        return batch

    def batch_done(self, batch: Batch, done: bool) -> None:
        """The worker is through with `batch`: held by the index, or (not `done`) to be tried
        again, nothing lost (unless stopping: the next start reconciles)."""
        with self.cond:
            self.applying = 0
            if done:
                self.applied = max(self.applied, batch.upto)
            elif not self.stopping:
                self.paths |= batch.paths
                self.full = self.full or batch.full
            self.cond.notify_all()

    def reconcile_in(self, seconds: float) -> None:
        """A reconcile in `seconds` (after a failure: it catches up with all that changed)."""
        with self.cond:
            self.next_reconcile = self.clock() + seconds

    def reconciled(self) -> None:
        """A reconcile was done: the next one on the timer."""
        if self.reconcile_every:
            self.reconcile_in(self.reconcile_every)

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
