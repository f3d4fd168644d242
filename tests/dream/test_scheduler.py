"""The dream schedule with the real APScheduler: it fires, never overlaps, coalesces missed
runs, catches up one run missed while no watcher ran, and does nothing when disabled."""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from apscheduler.events import EVENT_JOB_MAX_INSTANCES
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from vault_memory import Vault
from vault_memory.config import load_config
from vault_memory.dream.scheduler import DreamScheduler, cron_trigger, crontab_weekdays, time_zone
from vault_memory.errors import ConfigError, VaultError
from vault_memory.live.watch import Watcher

from ..support.waiting import wait_until

UTC = dt.UTC


class Recorder:
    """A dream stand-in: counts calls, tracks overlap, can be held inside a run."""

    def __init__(self, hold: bool = False, fail: Exception | None = None) -> None:
        self.calls = 0
        self.running = 0
        self.most_at_once = 0
        self.release = threading.Event()
        if not hold:
            self.release.set()
        self.fail = fail
        self.cond = threading.Condition()

    def __call__(self) -> dict[str, int]:
        with self.cond:
            self.calls += 1
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            self.cond.notify_all()
        self.release.wait(30)
        with self.cond:
            self.running -= 1
            self.cond.notify_all()
        if self.fail:
            raise self.fail
        return {"added": 1}

    def wait_for(self, predicate: Callable[[Recorder], bool], timeout: float = 15) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: predicate(self), timeout), "timed out"


@pytest.fixture
def schedulers() -> Iterator[list[DreamScheduler]]:
    made: list[DreamScheduler] = []
    yield made
    for scheduler in made:
        scheduler.shutdown(wait=True)


def make(
    vault_dir: Path, made: list[DreamScheduler], job: Callable[[], Any], **options: Any
) -> DreamScheduler:
    scheduler = DreamScheduler(load_config(vault_dir), job, **options)
    made.append(scheduler)
    return scheduler


def state(vault_dir: Path) -> dict[str, Any]:
    return json.loads((vault_dir / ".vault" / "scheduler.json").read_text())


# -- the schedule itself ---------------------------------------------------------------------


def test_crontab_weekdays_are_read_as_crontab_reads_them() -> None:
    assert crontab_weekdays("*") == "*"
    assert crontab_weekdays("0") == crontab_weekdays("7") == "sun"
    assert crontab_weekdays("1-5") == "mon,tue,wed,thu,fri"
    assert crontab_weekdays("5-7") == "sun,fri,sat"
    assert crontab_weekdays("*/2") == "sun,tue,thu,sat"
    assert crontab_weekdays("1,3,sat") == "mon,wed,sat"
    sunday = cron_trigger("30 3 * * 0", UTC).get_next_fire_time(
        None, dt.datetime(2026, 11, 22, 12, tzinfo=UTC)
    )  # a Sunday noon
    assert sunday == dt.datetime(2026, 11, 29, 3, 30, tzinfo=UTC)
    assert sunday.weekday() == 6


def test_schedule_and_time_zone_come_from_the_config(vault_dir: Path) -> None:
    (vault_dir / "vault.toml").write_text(
        '[dream]\nschedule = "15 4 * * 1-5"\ntimezone = "Asia/Tokyo"\n'
    )
    scheduler = DreamScheduler(load_config(vault_dir), Recorder())
    after = dt.datetime(2026, 11, 20, 20, 0, tzinfo=UTC)  # Saturday 05:00 in Tokyo
    fire = scheduler.trigger.get_next_fire_time(None, after)
    assert fire.astimezone(time_zone("Asia/Tokyo")).isoformat() == "2026-11-23T04:15:00+09:00"


def test_bad_schedule_or_zone_is_a_config_error(vault_dir: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        cron_trigger("every night", UTC)
    assert str(caught.value) == (
        "dream.schedule 'every night' is not a cron expression (2 fields instead of 5). Use "
        "five fields, minute hour day month weekday, e.g. '30 3 * * *' for 03:30 every night."
    )
    with pytest.raises(ConfigError, match=r"dream.schedule '61 3 \* \* \*' is not a cron"):
        cron_trigger("61 3 * * *", UTC)
    with pytest.raises(ConfigError) as caught:
        time_zone("Mars/Olympus")
    assert str(caught.value) == (
        "dream.timezone 'Mars/Olympus' is not a known time zone. Use a name such as "
        "'Europe/Berlin' or 'UTC', or leave it empty for the machine's local zone."
    )


# -- running with the real APScheduler -------------------------------------------------------


def test_job_fires_and_its_time_is_stored(
    vault_dir: Path, schedulers: list[DreamScheduler]
) -> None:
    job = Recorder()
    scheduler = make(vault_dir, schedulers, job, trigger=CronTrigger(second="*", timezone=UTC))
    before = time.time()
    scheduler.start()
    job.wait_for(lambda r: r.calls >= 1)
    scheduler.shutdown(wait=True)
    assert before <= state(vault_dir)["last_dream_at"] <= time.time()
    assert state(vault_dir)["last_error"] is None


@pytest.mark.slow
def test_overlapping_runs_never_overlap(vault_dir: Path, schedulers: list[DreamScheduler]) -> None:
    """A dream still running when the next fire time comes is not started twice."""
    job = Recorder(hold=True)
    scheduler = make(vault_dir, schedulers, job, trigger=CronTrigger(second="*", timezone=UTC))
    skipped = threading.Semaphore(0)
    scheduler.start(paused=True)
    scheduler.scheduler.add_listener(lambda event: skipped.release(), EVENT_JOB_MAX_INSTANCES)
    scheduler.scheduler.resume()
    job.wait_for(lambda r: r.calls == 1)
    for _ in range(2):  # two more fire times pass while the first run is held
        assert skipped.acquire(timeout=15)
    assert (job.calls, job.most_at_once) == (1, 1)
    job.release.set()
    job.wait_for(lambda r: r.running == 0)


def test_missed_fire_times_coalesce_into_one_run(
    vault_dir: Path, schedulers: list[DreamScheduler]
) -> None:
    job = Recorder()
    scheduler = make(vault_dir, schedulers, job, trigger=IntervalTrigger(hours=1, timezone=UTC))
    scheduler.start(paused=True)
    now = dt.datetime.now(UTC)
    # five hourly fire times passed while the process was asleep (within the grace time)
    scheduler.scheduler.modify_job("dream", next_run_time=now - dt.timedelta(hours=5))
    scheduler.scheduler.resume()
    job.wait_for(lambda r: r.calls >= 1 and r.running == 0)
    next_run = scheduler.next_run_at()
    assert next_run is not None and next_run > now + dt.timedelta(minutes=50)
    assert job.calls == 1


def test_a_dream_missed_while_down_runs_once_at_start(
    vault_dir: Path, schedulers: list[DreamScheduler]
) -> None:
    from vault_memory.dream.scheduler import write_json

    two_days_ago = time.time() - 2 * 86400
    write_json(vault_dir / ".vault" / "scheduler.json", {"last_dream_at": two_days_ago})
    job = Recorder()
    recorded = threading.Event()
    first = make(vault_dir, schedulers, job, on_run=recorded.set)  # the vault's "30 3 * * *"
    started = time.time()
    first.start()
    assert first.caught_up
    assert recorded.wait(15)
    assert job.calls == 1
    assert state(vault_dir)["last_dream_at"] >= started
    next_run = first.next_run_at()
    assert next_run is not None and (next_run.hour, next_run.minute) == (3, 30)
    assert next_run.timestamp() > time.time()
    first.shutdown()

    second = make(vault_dir, schedulers, job)  # a restart right after: nothing to catch up
    second.start()
    assert not second.caught_up
    assert second.next_run_at() == next_run
    assert job.calls == 1


def test_last_run_survives_a_deleted_cache_through_the_diary(vault_dir: Path) -> None:
    diary = vault_dir / "dreams" / "2026-11-19.md"
    diary.write_text("# Dream 2026-11-19\n")
    scheduler = DreamScheduler(load_config(vault_dir), Recorder())
    assert not (vault_dir / ".vault" / "scheduler.json").exists()
    old = time.time() - 3 * 86400
    os.utime(diary, (old, old))
    assert scheduler.last_run() == pytest.approx(old)
    assert scheduler.missed()  # a 03:30 passed since the last diary entry
    os.utime(diary)  # written just now
    assert not scheduler.missed()


def test_a_new_vault_does_not_dream_at_first_start(vault_dir: Path) -> None:
    scheduler = DreamScheduler(load_config(vault_dir), Recorder())
    assert scheduler.last_run() is None
    assert not scheduler.missed()
    since = state(vault_dir)["since"]
    assert abs(since - time.time()) < 60
    later = dt.datetime.fromtimestamp(since, UTC) + dt.timedelta(days=1, minutes=1)
    assert scheduler.missed(later)  # ...but one missed after that first start counts


@pytest.mark.slow
def test_a_failed_dream_is_logged_and_the_schedule_goes_on(
    vault_dir: Path, schedulers: list[DreamScheduler], vault_warnings: Callable[[], list[str]]
) -> None:
    job = Recorder(fail=VaultError("MEMORY.md changed during the dream; nothing was written."))
    scheduler = make(vault_dir, schedulers, job, trigger=CronTrigger(second="*", timezone=UTC))
    scheduler.start()
    job.wait_for(lambda r: r.calls >= 2)  # it fired again after the failure
    scheduler.shutdown(wait=True)
    assert "last_dream_at" not in state(vault_dir)
    assert state(vault_dir)["last_error"].startswith("VaultError: MEMORY.md changed")
    assert (
        "the scheduled dream failed: MEMORY.md changed during the dream; nothing was written."
    ) in vault_warnings()


# -- inside the watcher ----------------------------------------------------------------------


@pytest.fixture
def keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")


def test_watcher_runs_the_dream_job_and_shows_the_next_run(
    vault_dir: Path, keyword_only: None
) -> None:
    job = Recorder()
    watcher = Watcher(
        Vault(vault_dir),
        quiet_ms=50,
        dream_job=job,
        dream_trigger=CronTrigger(second="*", timezone=UTC),
    )
    with watcher:
        job.wait_for(lambda r: r.calls >= 1 and r.running == 0)
        info = Vault(vault_dir).status()["watcher"]
        assert info["running"]
        assert dt.datetime.fromisoformat(info["next_dream_at"]).tzinfo is not None
    assert watcher.scheduler is not None and not watcher.scheduler.scheduler.running


@pytest.mark.parametrize("how", ["--no-dream", "dream.enabled = false"])
def test_a_disabled_dream_has_no_side_effects(
    vault_dir: Path, keyword_only: None, how: str
) -> None:
    write_json_time = time.time() - 2 * 86400  # a dream would be due at once if enabled
    from vault_memory.dream.scheduler import write_json

    write_json(vault_dir / ".vault" / "scheduler.json", {"last_dream_at": write_json_time})
    before = (vault_dir / ".vault" / "scheduler.json").read_bytes()
    job = Recorder()
    if how == "--no-dream":
        watcher = Watcher(Vault(vault_dir), dream=False, dream_job=job)
    else:
        toml = (vault_dir / "vault.toml").read_text().replace("enabled = true", "enabled = false")
        (vault_dir / "vault.toml").write_text(toml)
        watcher = Watcher(Vault(vault_dir), dream_job=job)
    with watcher:
        assert watcher.ready.wait(30)
        assert watcher.scheduler is None
        assert Vault(vault_dir).status()["watcher"]["next_dream_at"] is None
    assert job.calls == 0
    assert (vault_dir / ".vault" / "scheduler.json").read_bytes() == before


def test_default_job_is_the_facades_dream(vault_dir: Path, keyword_only: None) -> None:
    with Watcher(Vault(vault_dir)) as watcher:
        assert watcher.ready.wait(30)
        assert watcher.scheduler is not None and not watcher.scheduler.caught_up
        assert watcher.scheduler.next_run_at() is not None  # the cron of vault.toml


@pytest.mark.slow
def test_the_scheduled_job_runs_a_real_dream(
    tmp_path: Path, keyword_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's scheduler fires, the facade's dream consolidates sample_vault/ into
    MEMORY.md and writes its diary, and the run is recorded for the catch-up logic."""
    from ..support.vaults import SAMPLE_VAULT, copy_vault

    # The dream's clock: a day the sample's logs fall within the lookback of (the scheduler
    # itself fires on the real clock).
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T03:30:00+00:00")

    root = copy_vault(SAMPLE_VAULT, tmp_path / "vault")
    memory_before = (root / "MEMORY.md").read_bytes()
    watcher = Watcher(
        Vault(root), quiet_ms=50, dream_trigger=CronTrigger(second="*/2", timezone=UTC)
    )
    with watcher:
        assert watcher.ready.wait(60)
        wait_until(lambda: watcher.scheduler.state().get("last_dream_at"), 60, "a dream")
    diaries = list((root / "dreams").glob("*.md"))
    assert len(diaries) == 1
    diary = diaries[0].read_text()
    assert "· dream · offline" in diary and "### Added" in diary
    assert (root / "MEMORY.md").read_bytes() != memory_before
    assert "<!-- src: memory/" in (root / "MEMORY.md").read_text()
    assert state(root)["last_error"] is None
