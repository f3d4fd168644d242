"""What staying POSIX-only costs and saves: the package's own locks (flock through
files/fsutil.py) beside a cross-platform lock library (filelock) doing the same job, and how
many places of the package rely on a POSIX call that such a library would not replace.

    python bench/platform_locks.py [--pairs 2000] [--rounds 7]

Rows (medians of --rounds rounds, CPU beside wall; both sides interleaved in each round):
- a writer's lock file (`.vault/write.lock`): fsutil.lock_file / filelock.FileLock, one
  acquire and release each, microseconds;
- an append's lock on a folder (fsutil.locked: the lock survives an atomic `os.replace` of the
  file): filelock has no folder lock, so it locks a file beside the folder instead;
- the POSIX calls the package makes that no lock library replaces (counted in its source):
  Unix sockets, fsync of a folder, files unlinked while open or locked, uids, signals.

Figures go to bench/results/platform_locks.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout

from vault_memory.files import fsutil  # noqa: E402

#: name -> a pattern of source text that uses a POSIX-only call (one hit a line)
POSIX_CALLS = {
    "flock": r"fcntl\.flock",
    "unix socket": r"UnixStreamServer|AF_UNIX",
    "a folder opened (flocked or fsynced)": r"os\.open\((path\.parent|folder|parent), os\.O_RDONLY",
    "a lock file unlinked while held": r"release\(\)  # the lock file goes while still locked",
    "uid": r"os\.(getuid|geteuid)",
    "signals": r"signal\.SIG(TERM|INT)\b",
}


def count_posix_calls() -> dict[str, int]:
    found = dict.fromkeys(POSIX_CALLS, 0)
    for path in (ROOT / "vault_memory").rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            for name, pattern in POSIX_CALLS.items():
                if re.search(pattern, line):
                    found[name] += 1
    return found


def timed(pairs: int, step: Callable[[], None]) -> tuple[float, float]:
    """Microseconds of wall and CPU per call of `step`."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(pairs):
        step()
    return (
        (time.perf_counter() - wall) / pairs * 1e6,
        (time.process_time() - cpu) / pairs * 1e6,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    try:
        import filelock
    except ImportError:
        raise SystemExit("filelock is not installed: pip install filelock") from None
    folder = Path(tempfile.mkdtemp(prefix="vault-locks-"))
    (folder / "memory").mkdir()
    note = folder / "memory" / "2026-11-22.md"
    note.write_text("# 2026-11-22\n", encoding="utf-8")

    def ours_file() -> None:
        with fsutil.lock_file(folder / "write.lock", "index writer"):
            pass

    def theirs_file() -> None:
        with filelock.FileLock(folder / "write.filelock"):
            pass

    def ours_folder() -> None:
        with fsutil.locked(note):
            pass

    def theirs_folder() -> None:
        with filelock.FileLock(folder / "memory.lock"):
            pass

    sides = {
        "lock file: fsutil.lock_file": ours_file,
        "lock file: filelock.FileLock": theirs_file,
        "append lock: fsutil.locked (the folder)": ours_folder,
        "append lock: filelock.FileLock (a file beside it)": theirs_folder,
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, step in sides.items():
            times[name].append(timed(args.pairs, step))
    figures: dict[str, object] = {}
    for name, found in times.items():
        wall = statistics.median(w for w, _ in found)
        cpu = statistics.median(c for _, c in found)
        figures[name] = {"wall_us": round(wall, 1), "cpu_us": round(cpu, 1)}
        print(f"{name:52} {wall:7.1f} us wall {cpu:7.1f} us CPU (median of {args.rounds})")
    calls = count_posix_calls()
    figures["posix calls no lock library replaces"] = calls
    for name, count in calls.items():
        print(f"{'POSIX call: ' + name:52} {count:4d} lines")
    result = {
        "name": "platform_locks",
        "date": time.strftime("%Y-%m-%d"),
        "machine": {
            "cores": os.cpu_count(),
            "load": [round(x, 2) for x in os.getloadavg()],
            "platform": platform.platform(),
        },
        "versions": {
            "python": platform.python_version(),
            "filelock": getattr(filelock, "__version__", "?"),
        },
        "figures": figures,
    }
    out = ROOT / "bench" / "results" / "platform_locks.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
