"""The dream on a schedule: APScheduler's `BackgroundScheduler` inside `vault watch`.

The cron expression and time zone come from `[dream]` in vault.toml. Runs never overlap
(`max_instances=1`), runs missed while the process was busy or asleep collapse into one
(`coalesce=True`, a generous `misfire_grace_time`), and a run missed while no watcher was
running is caught up once at start-up.

When did the last dream run? `.vault/scheduler.json` says so, but `.vault/` may be deleted at
any time, so the newest file of the dream diary (`dreams/*.md`, written by every dream) counts
too. With neither, the scheduler starts counting from its first start: a new vault never
dreams the moment a watcher starts.

Scopes whose own vault.toml gives another schedule get a scheduler of their own (the watcher
makes one per schedule), with its own state file and the diaries of its scopes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import ConfigError, VaultError
from ..files import DIARY_DIR

log = logging.getLogger("vault_memory")

STATE_FILE = "scheduler.json"
MISFIRE_GRACE_SECONDS = 6 * 3600  # a laptop asleep at 03:30 still dreams when it wakes up

_WEEKDAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field in APScheduler 3's spelling (day names).

    crontab counts 0 (and 7) as Sunday; APScheduler 3.x counts 0 as Monday (its documented
    "historical mistake"), so `30 3 * * 0` would dream on Mondays. Numeric fields are expanded
    to day names, which both read the same way."""
    if field == "*":
        return field
    days: set[int] = set()
    for part in field.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if body == "*":
            first, last = 0, 6
        elif "-" in body:
            a, b = body.split("-", 1)
            first, last = _weekday_number(a), _weekday_number(b)
        else:
            first = _weekday_number(body)
            last = 6 if step_text else first
        if last == 0 and first > 0:  # "5-7" and "fri-sun" end on Sunday
            last = 7
        if step < 1 or first > last:
            raise ValueError(f"bad day-of-week range {part!r}")
        days.update(day % 7 for day in range(first, last + 1, step))
    return ",".join(_WEEKDAY_NAMES[day] for day in sorted(days))


def _weekday_number(text: str) -> int:
    text = text.strip().lower()
    if text.isdigit() and 0 <= int(text) <= 7:
        return int(text) % 7 if int(text) != 7 else 0
    if text[:3] in _WEEKDAY_NAMES:
        return _WEEKDAY_NAMES.index(text[:3])
    raise ValueError(f"bad day of week {text!r}")


def time_zone(name: str) -> dt.tzinfo:
    """The zone called `name`, or the machine's local zone for an empty name."""
    if not name.strip():
        from tzlocal import get_localzone

        return get_localzone()
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"dream.timezone {name!r} is not a known time zone. Use a name such as "
            "'Europe/Berlin' or 'UTC', or leave it empty for the machine's local zone."
        ) from None


def cron_trigger(schedule: str, zone: dt.tzinfo) -> Any:
    """APScheduler's `CronTrigger` for a five-field crontab line (minute hour day month
    weekday), weekdays counted as crontab counts them."""
    from apscheduler.triggers.cron import CronTrigger

    fields = schedule.split()
    try:
        if len(fields) != 5:
            raise ValueError(f"{len(fields)} fields instead of 5")
        fields[4] = crontab_weekdays(fields[4])
        return CronTrigger.from_crontab(" ".join(fields), timezone=zone)
    except ValueError as exc:
        raise ConfigError(
            f"dream.schedule {schedule!r} is not a cron expression ({exc}). Use five fields, "
            "minute hour day month weekday, e.g. '30 3 * * *' for 03:30 every night."
        ) from None


class DreamScheduler:
    """Runs `job` (normally `Vault.dream`) on the `[dream]` schedule of `config`.

    `trigger` replaces the cron trigger (tests use an interval); `on_run` is called after
    every run, e.g. to publish the next run time."""

    def __init__(
        self,
        config: Config,
        job: Callable[[], Any],
        *,
        trigger: Any = None,
        on_run: Callable[[], None] | None = None,
        state_file: str = STATE_FILE,
        diary_dirs: list[Path] | None = None,
    ) -> None:
        self.job = job
        self.zone = time_zone(config.dream.timezone)
        self.trigger = trigger or cron_trigger(config.dream.schedule, self.zone)
        self.state_path = config.cache_dir / state_file
        self.diary_dir = config.root / DIARY_DIR
        self.diary_dirs = diary_dirs if diary_dirs is not None else [self.diary_dir]
        self.on_run = on_run
        self.scheduler: Any = None
        self.caught_up = False
        self._state_lock = threading.Lock()

    # -- what happened before ---------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, **changes: Any) -> None:
        with self._state_lock:
            data = {**self.state(), **changes}
            write_json(self.state_path, data)

    def last_run(self) -> float | None:
        """When the last dream ran (epoch seconds): the later of the recorded run and the
        newest dream diary file."""
        candidates = [self.state().get("last_dream_at")]
        for folder in self.diary_dirs:
            with contextlib.suppress(OSError):
                candidates += [p.stat().st_mtime for p in folder.glob("*.md")]
        known = [float(c) for c in candidates if isinstance(c, int | float)]
        return max(known) if known else None

    def missed(self, now: dt.datetime | None = None) -> bool:
        """Whether a scheduled dream fell between the last run (or the first start) and now."""
        now = now or dt.datetime.now(self.zone)
        baseline = self.last_run() or self.state().get("since")
        if baseline is None:
            self._save(since=now.timestamp())
            return False
        after = dt.datetime.fromtimestamp(float(baseline) + 1, self.zone)
        due = self.trigger.get_next_fire_time(None, after)
        return due is not None and due <= now

    # -- running ----------------------------------------------------------------------------

    def start(self, paused: bool = False) -> None:
        from apscheduler.schedulers.background import BackgroundScheduler

        now = dt.datetime.now(self.zone)
        self.caught_up = self.missed(now)
        extra: dict[str, Any] = {"next_run_time": now} if self.caught_up else {}
        if self.caught_up:
            log.info("a scheduled dream was missed while no watcher ran: dreaming now.")
        self.scheduler = BackgroundScheduler(timezone=self.zone)
        self.scheduler.add_job(
            self._run,
            self.trigger,
            id="dream",
            name="dream",
            coalesce=True,
            max_instances=1,
            misfire_grace_time=MISFIRE_GRACE_SECONDS,
            **extra,
        )
        self.scheduler.start(paused=paused)
        log.info("next dream at %s", self.next_run_at())

    def next_run_at(self) -> dt.datetime | None:
        if self.scheduler is None or not self.scheduler.running:
            return None  # shutting down: its job store is locked until the running dream ends
        job = self.scheduler.get_job("dream")
        return job.next_run_time if job else None

    def _run(self) -> None:
        started = time.time()
        self._save(last_attempt_at=started)
        try:
            result = self.job()
        except Exception as exc:  # a failed dream must not stop the schedule
            if isinstance(exc, VaultError):
                log.warning("the scheduled dream failed: %s", exc)
            else:
                log.exception("the scheduled dream failed")
            self._save(last_error=f"{type(exc).__name__}: {exc}")
        else:
            self._save(last_dream_at=started, last_error=None)
            summary = result.to_dict() if hasattr(result, "to_dict") else result
            log.info("dream finished in %.1f s: %s", time.time() - started, summary)
        if self.on_run:
            self.on_run()

    def shutdown(self, wait: bool = True) -> None:
        """Stop scheduling; with `wait`, let a running dream finish first."""
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.shutdown(wait=wait)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace a small cache file atomically (a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, path)
