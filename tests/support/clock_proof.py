"""The whole default suite run again in a child process with the project's clock fixed at
another date and the zone set far from UTC: the proof that no test depends on the day, the
zone or the machine's clock. Each date is its own test file (test_clock_at_*.py) so that the
slow suite's workers, which take a file each, run the proofs side by side.

Two dates, both a year or more ahead (a test that ages into failure fails here first), both at
a calendar's edge (a leap day; a new year's eve a minute before midnight), in the two zones
furthest from UTC: noon of 29 February in UTC-12 is already 1 March in UTC, and at 23:59 on
31 December in UTC+14 the year has 14 hours left in UTC, so code that takes a day from UTC
where it means the local one fails in one of them. Each run is the whole default suite in one
process (about 270 CPU-seconds): a third date would add that to every CI run and find no
class of fault the two do not."""

from __future__ import annotations

import calendar
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

WORKTREE = Path(__file__).resolve().parents[2]


def a_year_ahead() -> dt.date:
    """The first day a year or more after today: each proof's date lies past it, so that a
    test whose fixed dates age into the past (a "recent" log that one day is not) fails in a
    proof a year before it would fail for real."""
    return dt.date.today() + dt.timedelta(days=366)


def leap_day_a_year_ahead() -> str:
    """The first 29 February a year or more ahead, at noon."""
    year = a_year_ahead().year
    while not (calendar.isleap(year) and dt.date(year, 2, 29) >= a_year_ahead()):
        year += 1
    return f"{year}-02-29T12:00"


def new_years_eve_a_year_ahead() -> str:
    """The first new year's eve a year or more ahead, a minute before midnight in UTC+14."""
    year = a_year_ahead().year
    return f"{year}-12-31T23:59:00+14:00"


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    env.update(PYTHONPATH=str(WORKTREE), LC_ALL="C.UTF-8", **extra)
    return env


def short_basetemp() -> str:
    """A short temp folder for the inner run: a long one puts the watcher's socket path over
    the 107 bytes a Unix socket allows (it then moves to the temp folder, as it should)."""
    return f"{tempfile.mkdtemp(prefix='vc-')}/run"


def default_suite_passes(
    paths: list[str], env: dict[str, str], timeout: int, *, under: tuple[str, ...] = ()
) -> None:
    """The default (not slow) tests of `paths` pass in one child process (no workers: a clock
    faked by `under`, e.g. faketime, is in that process), in a short temp folder of its own."""
    basetemp = short_basetemp()
    try:
        done = subprocess.run(
            [
                *under,
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-m",
                "not slow",
                "-p",
                "no:cacheprovider",
                "-n",
                "0",  # in one process, as a user's run without workers would be
                "-x",
                f"--basetemp={basetemp}",
                *paths,
            ],
            cwd=WORKTREE,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        shutil.rmtree(Path(basetemp).parent, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]


def whole_suite_passes_at(now: str, zone: str) -> None:
    if not Path("/usr/share/zoneinfo", zone).exists():
        pytest.skip(f"no zoneinfo for {zone}")
    default_suite_passes([str(WORKTREE / "tests")], child_env(VAULT_NOW=now, TZ=zone), timeout=900)
