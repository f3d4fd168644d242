"""The whole default suite run again in a child process with the project's clock fixed at
another date and the zone set far from UTC: the proof that no test depends on the day, the
zone or the machine's clock. Each date is its own test file (test_clock_at_*.py) so that the
slow suite's workers, which take a file each, run the proofs side by side."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

WORKTREE = Path(__file__).resolve().parents[2]


def a_year_from_today() -> str:
    today = dt.date.today()
    try:
        later = today.replace(year=today.year + 1)
    except ValueError:  # 29 February
        later = today.replace(year=today.year + 1, day=28)
    return f"{later.isoformat()}T10:00"


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
