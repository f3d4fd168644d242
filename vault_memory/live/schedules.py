"""A watcher's dream schedules: one APScheduler (dream/scheduler.py) per dream schedule of
the vault's scopes. Each schedule dreams every scope on it that has new daily-log entries (a
scope's vault.toml may give it a schedule of its own), one diary per scope. The root's
schedule keeps `.vault/scheduler.json`, the others a state file named after their schedule.
A caller may give one job of its own instead (`dream_job`): then one scheduler runs it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..dream import DreamScheduler
from ..errors import VaultError

if TYPE_CHECKING:
    import datetime as dt

    from .shared import WatchedVault

log = logging.getLogger("vault_memory")


class DreamSchedules:
    """The schedulers of one watched vault; `on_run` is called after each dream and whenever
    the next run may have changed (the watcher's state file names it)."""

    def __init__(
        self,
        vault: WatchedVault,
        root: Path,
        on_run: Callable[[], None],
        dream_job: Callable[[], Any] | None = None,
        dream_trigger: Any = None,
    ) -> None:
        self.vault = vault
        self.root = root
        self.on_run = on_run
        self.dream_job = dream_job
        self.dream_trigger = dream_trigger
        self.scheduler: DreamScheduler | None = None  # the root's schedule (or the first)
        self.schedulers: dict[tuple[str, str], DreamScheduler] = {}  # one per schedule

    def start(self) -> None:
        if self.dream_job is None:
            self.sync(at_start=True)
            return
        self.scheduler = DreamScheduler(
            self.vault.config, self.dream_job, trigger=self.dream_trigger, on_run=self.on_run
        )
        self.schedulers[("", "")] = self.scheduler
        self.scheduler.start()

    def sync(self, at_start: bool = False) -> None:
        """One scheduler per dream schedule of the vault's scopes (`dream_schedules`), made
        for schedules that appeared and shut down for those that are gone. At start a bad
        schedule of the root stops the watcher; a scope's is logged and skipped."""
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
            if key not in self.schedulers:
                self._add(key, members, at_start)
        pool = [s for k, s in self.schedulers.items() if () in groups.get(k, [])]
        pool = pool or list(self.schedulers.values())
        self.scheduler = pool[0] if pool else None
        self.on_run()

    def _add(self, key: tuple[str, str], members: list[tuple[str, ...]], at_start: bool) -> None:
        """The scheduler of the schedule `key`, which the scopes `members` dream on."""
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
                on_run=self.on_run,
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
            return
        self.schedulers[key] = scheduler

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

    def next_run_at(self) -> dt.datetime | None:
        """When the next dream of any schedule runs (None: none is scheduled)."""
        runs = [s.next_run_at() for s in list(self.schedulers.values())]
        return min((r for r in runs if r is not None), default=None)

    def shutdown(self) -> None:
        """Stop scheduling; a running dream finishes first."""
        for scheduler in self.schedulers.values():
            scheduler.shutdown(wait=True)
