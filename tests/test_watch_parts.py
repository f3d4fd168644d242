"""The watcher's parts, each on its own (live/: intake, planning, worker, serve, schedules,
pidlock); tests/test_watch.py runs them together as `vault watch` does. Times are given to
the planning as numbers: no test here waits out a quiet period."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.live import pidlock, watch_client
from vault_memory.live.intake import EventIntake, Recorder, event_filter, ignored_folder
from vault_memory.live.planning import Batch, PendingChanges, quiet_left
from vault_memory.live.schedules import DreamSchedules
from vault_memory.live.serve import QueryServer
from vault_memory.live.watch import WatchReport
from vault_memory.live.worker import IndexWorker

from .test_watch import wait_until, write

# -- planning --------------------------------------------------------------------------------


def test_quiet_left_waits_for_quiet_but_no_longer_than_the_limit() -> None:
    assert quiet_left(10.0, None, None, 0.5, 5.0) == 0.0  # nothing recorded: nothing to wait
    assert quiet_left(10.0, 9.0, 9.8, 0.5, 5.0) == pytest.approx(0.3)
    assert quiet_left(10.0, 9.0, 9.0, 0.5, 5.0) == pytest.approx(-0.5)
    assert quiet_left(10.0, 6.0, 9.9, 0.5, 5.0) == pytest.approx(0.4)
    assert quiet_left(10.0, 6.0, 9.9, 0.5, 4.2) == pytest.approx(0.2)  # the first waited 4 s
    assert quiet_left(10.0, 4.0, 9.9, 0.5, 5.0) == pytest.approx(-1.0)  # ...6 s: due


def changes_at(times: list[float], quiet: float = 0.5, every: float | None = None) -> Any:
    """Pending changes whose clock reads `times[0]` (the test moves it)."""
    return PendingChanges(quiet, 2.0, every, clock=lambda: times[0])


def test_a_batch_is_due_once_the_vault_is_quiet() -> None:
    now = [100.0]
    changes = changes_at(now)
    assert changes.take_due(100.0) == Batch(set(), True, 0)  # the start's reconcile
    changes.batch_done(Batch(set(), True, 0), done=True)
    assert not changes.waiting() and changes.take_due(100.0) is None
    changes.record({"a.md"})
    now[0] = 100.3
    changes.record({"b.md"})
    assert changes.take_due(100.6) is None  # 0.3 s since the last event
    assert changes.take_due(100.8) == Batch({"a.md", "b.md"}, False, 2)
    assert changes.applying == 2


def test_a_stream_of_events_is_applied_after_the_longest_delay() -> None:
    now = [0.0]
    changes = changes_at(now)
    changes.batch_done(changes.take_due(0.0), done=True)
    for step in range(10):  # an event every 0.3 s: never 0.5 s of quiet
        now[0] = step * 0.3
        changes.record({f"{step}.md"})
        if step * 0.3 < 2.0:
            assert changes.take_due(now[0]) is None
    assert len(changes.take_due(now[0]).paths) == 10  # 2 s after the first


def test_a_batch_that_failed_is_kept_and_tried_again() -> None:
    changes = changes_at([0.0])
    changes.batch_done(changes.take_due(0.0), done=True)
    changes.record({"a.md"})
    batch = changes.take_due(5.0)
    changes.record({"b.md"})
    changes.batch_done(batch, done=False)  # the writer lock was held elsewhere
    assert changes.paths == {"a.md", "b.md"} and changes.applied == 0
    changes.batch_done(changes.take_due(9.0), done=True)
    assert changes.applied == 2 and not changes.waiting()


def test_a_reconcile_is_due_on_its_timer_and_after_a_failure() -> None:
    now = [0.0]
    changes = changes_at(now, every=60.0)
    changes.batch_done(changes.take_due(0.0), done=True)
    changes.reconciled()
    assert changes.take_due(59.0) is None
    now[0] = 61.0
    assert changes.take_due(61.0).full
    changes.reconcile_in(30.0)
    assert changes.take_due(90.0) is None and changes.take_due(91.5).full


def test_settle_flushes_a_few_paths_but_not_a_large_change() -> None:
    changes = changes_at([0.0])
    changes.reconcile()
    assert changes.settle(budget=10, timeout=0.01) is False  # a reconcile is under way
    changes.batch_done(changes.take_due(5.0), done=True)
    assert changes.settle(budget=10, timeout=0.01) is True  # nothing pending
    changes.record({f"{i}.md" for i in range(11)})
    assert changes.settle(budget=10, timeout=0.01) is False  # too many: answered as it is
    changes.batch_done(changes.take_due(10.0), done=True)
    changes.record({"a.md"})
    done: list[bool] = []
    waiter = threading.Thread(target=lambda: done.append(changes.settle(10, 30.0)))
    waiter.start()
    wait_until(lambda: changes.flush, 10, "the settle to ask for a flush")
    batch = changes.take_due(10.0)  # due at once, quiet or not
    assert batch is not None and batch.paths == {"a.md"}
    changes.batch_done(batch, done=True)
    waiter.join(10)
    assert done == [True]


def test_next_batch_returns_none_once_stopping() -> None:
    changes = PendingChanges(0.0, 2.0, None)
    assert changes.next_batch() == Batch(set(), True, 0)
    stopper = threading.Timer(0.05, changes.stop)
    stopper.start()
    assert changes.next_batch() is None
    stopper.join()


# -- the event intake ------------------------------------------------------------------------


def event(kind: str, src: str, dest: str = "", directory: bool = False) -> Any:
    return SimpleNamespace(event_type=kind, src_path=src, dest_path=dest, is_directory=directory)


def test_the_recorder_turns_events_into_vault_paths(tmp_path: Path) -> None:
    recorded: list[set[str]] = []
    gone: list[bool] = []
    root = str(tmp_path)
    recorder = Recorder(root, recorded.append, lambda: gone.append(True))
    recorder.dispatch(event("modified", f"{root}/memory/2026-11-22.md"))
    recorder.dispatch(event("moved", f"{root}/notes/.x.md.tmp", f"{root}/notes/x.md"))
    recorder.dispatch(event("created", f"{root}/projects", directory=True))
    recorder.dispatch(event("created", f"{root}/.obsidian/workspace.json"))
    recorder.dispatch(event("modified", f"{root}/picture.png"))
    recorder.dispatch(event("created", f"{root}/.git", directory=True))
    recorder.dispatch(event("modified", "/elsewhere/a.md"))
    assert recorded == [{"memory/2026-11-22.md"}, {"notes/x.md"}, {"projects"}]
    recorder.dispatch(event("deleted", f"{root}/.vault", directory=True))
    recorder.dispatch(event("deleted", f"{root}/.vault/index.sqlite"))
    assert gone == [True, True] and len(recorded) == 3
    assert ignored_folder("a/.hidden/b") and not ignored_folder("a/b")
    names = {kind.__name__ for kind in event_filter()}
    assert "FileMovedEvent" in names and "DirModifiedEvent" not in names


def test_the_intake_records_what_watchdog_reports(tmp_path: Path) -> None:
    recorded: list[set[str]] = []
    (tmp_path / "notes").mkdir()
    intake = EventIntake(str(tmp_path), recorded.append, lambda: None, lambda: None)
    intake.start()
    try:
        write(tmp_path / "notes" / "seen.md", "# Seen\n")
        wait_until(lambda: any("notes/seen.md" in r for r in recorded), 10, "the event")
    finally:
        intake.stop()


# -- the pid lock ----------------------------------------------------------------------------


def test_one_pid_lock_per_cache_and_it_goes_with_a_clean_stop(tmp_path: Path) -> None:
    lock = pidlock.PidLock(tmp_path)
    lock.take()
    assert watch_client.lock_held(tmp_path / "watch.lock") and not lock.lost()
    (tmp_path / "watch.json").write_text(json.dumps({"pid": 4242}), encoding="utf-8")
    with pytest.raises(pidlock.WatcherRunningError, match="pid 4242"):
        pidlock.PidLock(tmp_path).take()
    os.unlink(tmp_path / "watch.lock")  # .vault/ deleted under the watcher
    assert lock.lost()
    lock.retake()
    assert not lock.lost() and watch_client.lock_held(tmp_path / "watch.lock")
    lock.release()
    assert lock.fd is None and not (tmp_path / "watch.lock").exists()


# -- the index worker ------------------------------------------------------------------------


class Host:
    """A worker's host that records what it is told (watch.py `Watcher` is the real one)."""

    def __init__(self) -> None:
        self.told: list[Any] = []

    def batch_starts(self, batch: Batch) -> bool | None:
        return batch.full

    def batch_ended(self, batch: Batch, done: bool) -> None:
        self.told.append(("ended", sorted(batch.paths), batch.full, done))

    def reconciled(self) -> None:
        self.told.append("reconciled")

    def index_changed(self) -> None:
        self.told.append("changed")

    def write_state(self) -> None:
        self.told.append("state")

    def request_stop(self) -> None:
        self.told.append("stop")


@pytest.fixture
def keyword_vault(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Vault:
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    return Vault(vault_dir)


def test_the_worker_applies_batches_and_retries_when_the_index_is_busy(
    keyword_vault: Vault,
) -> None:
    vault = keyword_vault
    changes = PendingChanges(0.0, 2.0, None)
    report, host = WatchReport(started_at=0.0), Host()
    worker = IndexWorker(vault, changes, report, host)
    assert worker.apply(set(), full=True)
    assert report.reconciles == 1 and host.told == ["reconciled", "changed"]
    write(vault.root / "notes" / "new.md", "# New\n\n- a new note\n")
    with vault._index.writer_lock():  # another process writes the index meanwhile
        assert not worker.apply({"notes/new.md"}, full=False)
    assert report.batches == 0
    changes.record({"notes/new.md"})
    assert worker.apply({"notes/new.md"}, full=False)
    assert (report.batches, report.paths) == (1, 1) and host.told[-2:] == ["changed", "state"]
    vault.close()


def test_the_worker_thread_applies_what_planning_hands_out(keyword_vault: Vault) -> None:
    changes = PendingChanges(0.0, 2.0, None)
    host = Host()
    report = WatchReport(started_at=0.0)
    worker = IndexWorker(keyword_vault, changes, report, host)
    worker.start()
    wait_until(lambda: ("ended", [], True, True) in host.told, 30, "the first reconcile")
    write(keyword_vault.root / "notes" / "new.md", "# New\n\n- a new note\n")
    changes.record({"notes/new.md"})
    wait_until(lambda: changes.applied == 1, 30, "the batch")
    assert ("ended", ["notes/new.md"], False, True) in host.told
    changes.stop()
    worker.join()
    assert not worker.failed and report.batches == 1


def test_a_run_is_left_for_the_next_start_when_the_watcher_stops(keyword_vault: Vault) -> None:
    """The run stops at its next committed step; the batch is not done (nor kept)."""
    changes = PendingChanges(0.0, 2.0, None)
    report = WatchReport(started_at=0.0)
    worker = IndexWorker(keyword_vault, changes, report, Host())
    changes.stop()
    assert not worker.apply(set(), full=True)
    assert report.abandoned == 1 and report.reconciles == 0
    keyword_vault.close()


# -- the queries -----------------------------------------------------------------------------


def test_the_queries_answer_over_the_socket(keyword_vault: Vault, tmp_path: Path) -> None:
    write(keyword_vault.root / "notes" / "renderer.md", "# Renderer\n\n- WeasyPrint renders it\n")
    keyword_vault.index()
    ready, warm, stops = threading.Event(), threading.Event(), []
    queries = QueryServer(
        keyword_vault.clone(),
        WatchReport(started_at=0.0),
        ready,
        warm,
        lambda: True,
        lambda: stops.append(True),
        lambda: False,
        None,
    )
    proto = watch_client.PROTOCOL
    assert queries.answer({"op": "ping"}) == {"ok": False, "error": "unknown protocol version"}
    assert queries.answer({"op": "search", "protocol": proto})["error"].startswith("the watcher")
    queries.start_socket(keyword_vault.cache_dir)
    try:
        ready.set()
        wait_until(warm.is_set, 30, "the reader to be prepared")
        cache = keyword_vault.cache_dir
        pong = watch_client.request(cache, {"op": "ping", "protocol": proto})
        assert pong == {"ok": True, "pid": os.getpid(), "ready": True, "warm": True}
        request = {"op": "search", "protocol": proto, "query": "WeasyPrint", "mode": "keyword"}
        assert "other settings" in watch_client.request(cache, request)["error"]
        request["settings"] = queries.settings_key
        reply = watch_client.request(cache, request)
        assert reply["ok"] and reply["hits"][0]["path"] == "notes/renderer.md"
        assert queries.report.searches == 1
        assert watch_client.request(cache, {"op": "stop", "protocol": proto})["stopping"]
        assert stops == [True]
        assert watch_client.request(cache, {"op": "what", "protocol": proto})["ok"] is False
    finally:
        queries.stop_socket()
        queries.close_reader()
        keyword_vault.close()
    assert not queries.serving


# -- the dream schedules ---------------------------------------------------------------------


def test_one_scheduler_per_schedule_made_and_dropped_as_scopes_change(
    keyword_vault: Vault,
) -> None:
    root = keyword_vault.root
    ran: list[bool] = []
    schedules = DreamSchedules(keyword_vault, root, lambda: ran.append(True))
    schedules.start()
    try:
        assert list(schedules.schedulers) == [("30 3 * * *", "")]  # the default schedule
        first = dict(schedules.schedulers)
        assert schedules.scheduler is next(iter(first.values()))
        assert schedules.next_run_at() is not None and ran
        scope = root / "scopes" / "night"
        scope.mkdir(parents=True)
        (scope / "vault.toml").write_text('[dream]\nschedule = "30 4 * * *"\n', encoding="utf-8")
        schedules.sync()
        assert len(schedules.schedulers) == len(first) + 1
        assert schedules.scheduler is next(iter(first.values()))  # the root's stays first
        shutil.rmtree(scope)
        schedules.sync()
        assert list(schedules.schedulers) == list(first)
    finally:
        schedules.shutdown()
        keyword_vault.close()
