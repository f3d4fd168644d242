"""The injectable clock, and the proof that no test depends on the day, the zone or the
machine's clock: the whole default suite runs again with the clock fixed at two dates a year or
more ahead (a leap day at noon in UTC-12, a new year's eve at 23:59 in UTC+14; one file each,
test_clock_at_*.py, so that they run side by side).

libfaketime fakes the clock of the whole process, time.sleep and lock waits included (measured
here: `OSError: [Errno 22]` in every test that sleeps), so it is used only on the test files
that never sleep, as a second witness."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from vault_memory import Vault, clock
from vault_memory.errors import ConfigError

from ..support.clock_proof import WORKTREE, child_env, default_suite_passes


def test_the_real_clock_runs_without_vault_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VAULT_NOW", raising=False)
    before = dt.datetime.now()
    assert before <= clock.now() <= dt.datetime.now()
    assert clock.fixed() is None
    assert clock.now(dt.UTC).tzinfo is dt.UTC


def test_vault_now_fixes_local_wall_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_NOW", "2028-02-29T23:59:30")
    assert clock.now() == dt.datetime(2028, 2, 29, 23, 59, 30)
    assert clock.today() == dt.date(2028, 2, 29)
    assert clock.now_local().replace(tzinfo=None) == dt.datetime(2028, 2, 29, 23, 59, 30)


def test_an_instant_is_shown_in_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-12-31T23:59:00+14:00")
    instant = dt.datetime(2026, 12, 31, 9, 59, tzinfo=dt.UTC)
    assert clock.now(dt.UTC) == instant
    assert clock.now() == instant.astimezone().replace(tzinfo=None)
    kiritimati = dt.timezone(dt.timedelta(hours=14))
    assert clock.now(kiritimati).date() == dt.date(2026, 12, 31)


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "22/11/2026 10:00"])
def test_a_bad_vault_now_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("VAULT_NOW", bad)
    with pytest.raises(ConfigError, match="is not an ISO 8601 date-time; use e.g."):
        clock.now()


def test_every_dated_write_follows_the_clock(
    vault_dir: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2028-02-29T23:59")
    report = Vault(vault_dir).add("Leap day entry")
    assert (report.path, report.heading) == ("memory/2028-02-29.md", "23:59 · note")
    result = run_cli("--vault", str(vault_dir), "add", "From the CLI")
    assert result.stdout.startswith("memory/2028-02-29.md:")
    chat = '[{"role": "user", "content": "I prefer tea over coffee in the mornings."}]'
    flushed = Vault(vault_dir).flush(chat, session="leap")
    assert flushed.path == "memory/2028-02-29.md" and flushed.heading == (
        "23:59 · flush · session leap"
    )


# -- the proofs (slow) ------------------------------------------------------------------------


# The test files that never sleep (no locks waited on, no watcher, no scheduler): the only
# ones libfaketime can run without breaking time.sleep. The README's tour is not one of them:
# its search leaves a background search server behind and its dream then waits on a lock,
# and a faked sleep fails with EINVAL; the whole-suite runs (test_clock_at_*.py: another
# date, another zone, the project's own clock) cover it.
NON_SLEEPING = [
    "cli/test_cli_flush.py",
    "test_config.py",
    "search/test_context.py",
    "dream/test_junk.py",
    "cli/test_manage.py",
    "files/test_memoryfile.py",
    "files/test_notes.py",
    "index/test_plan.py",
    "capture/test_redact.py",
    "search/test_search_ranking.py",
    "agents/test_window.py",
]


@pytest.mark.slow
def test_the_non_sleeping_tests_pass_under_faketime() -> None:
    if shutil.which("faketime") is None:
        pytest.skip("needs faketime (apt-get install faketime)")
    default_suite_passes(
        [str(WORKTREE / "tests" / name) for name in NON_SLEEPING],
        child_env(TZ="Pacific/Kiritimati", FAKETIME_DONT_FAKE_MONOTONIC="1"),
        timeout=600,
        under=("faketime", "-f", "@2026-12-31 23:59:00"),
    )
