"""The freshness check without a watcher: what it costs at N files against the floor
of any check that sees an in-place edit, measured in one process, medians of CPU and wall.

    python bench/freshness.py VAULT [--runs 21]

VAULT is an indexed vault (e.g. bench/index.py's `generate` and `vault index`). Rows:
- stale_paths: the check a search runs (Index.stale_paths: list, stat, compare with SQLite);
- listing only: os.scandir of every folder, no stat (what directory times could save);
- folder stats: one stat per folder (a check that trusted folder mtimes alone: it would miss
  every in-place edit, which changes a file's mtime and not its folder's);
- tight: os.scandir per folder + one lstat per Markdown file into (path, mtime, size) tuples,
  compared with SQLite's rows as sets (no per-file objects beyond the stat result);
- bare lstat: one os.lstat per known path, nothing else (the floor of a per-file check).
A watcher, when one runs, answers from its own state instead (bench/perf_table.py).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _harness import time_call  # this checkout's vault_memory first


def measure(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median CPU and wall milliseconds of `fn` after one untimed call."""
    timing = time_call(fn, runs, warmup=1)
    return timing.cpu * 1000, timing.wall * 1000


def folders(root: str) -> list[str]:
    found, pending = [], [root]
    while pending:
        folder = pending.pop()
        found.append(folder)
        with os.scandir(folder) as entries:
            pending += [
                e.path
                for e in entries
                if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
            ]
    return found


def tight(root: str, db: Path) -> list[str]:
    disk = set()
    pending = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as entries:
            for e in entries:
                name = e.name
                if e.is_dir(follow_symlinks=False):
                    if not name.startswith("."):
                        pending.append((e.path, f"{prefix}{name}/"))
                elif name.endswith(".md"):
                    st = e.stat(follow_symlinks=False)
                    disk.add((prefix + name, st.st_mtime_ns, st.st_size))
    conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True)
    try:
        known = set(conn.execute("SELECT path, mtime_ns, size FROM files"))
    finally:
        conn.close()
    changed = disk - known
    gone = {p for p, _, _ in known} - {p for p, _, _ in disk}
    return [p for p, _, _ in changed] + sorted(gone)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    from vault_memory import Vault

    root = str(args.vault.resolve())
    db = args.vault / ".vault" / "index.sqlite"
    with Vault(root) as vault:
        index = vault.cache
        paths = list(index.store.file_stats())
        assert not index.stale_paths(), "the vault has changes: index it first"
        assert not tight(root, db)
        dirs = folders(root)
        rows = {
            "stale_paths (the check a search runs)": lambda: index.stale_paths(),
            "listing only (os.scandir, no stat)": lambda: [list(os.scandir(d)) for d in dirs],
            "folder stats only (misses in-place edits)": lambda: [os.stat(d) for d in dirs],
            "tight: scandir + lstat + set compare": lambda: tight(root, db),
            "bare lstat of every known file": lambda: [os.lstat(f"{root}/{p}") for p in paths],
        }
        print(
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
            f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {len(paths):,} files in "
            f"{len(dirs):,} folders, {args.runs} runs, medians"
        )
        for name, fn in rows.items():
            cpu, wall = measure(fn, args.runs)
            print(f"  {name:<44} {cpu:6.1f} CPU-ms {wall:7.1f} ms wall")


if __name__ == "__main__":
    main()
