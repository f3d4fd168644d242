"""Shapes benchmark: indexing must be linear in file size on every shape.

Usage: python bench/shapes.py [--runs 3]

For each shape (a list nested 2,000 levels deep, a file of many short headings, one long
line, plain prose) at 1 MB and 4 MB: parsing the note and cutting it into units in process
(`parse_note` + `make_units`), then a whole `vault index` process of a vault holding that one
file, with embeddings off (VAULT_MODEL_DISABLED=1: the model's cost is per unit and measured
by bench/index.py; this times parsing, SQLite and Whoosh). Medians of --runs, wall and CPU
seconds; the 4 MB / 1 MB ratio of CPU seconds should be about 4 (linear); before indexing
was made linear it was 8-13 for deep lists and many headings (a 4 MB deep list took 270 s
to index).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _harness  # noqa: F401 - this checkout's vault_memory first on sys.path

from vault_memory import Vault  # noqa: E402
from vault_memory.files import parse_note  # noqa: E402
from vault_memory.index.units import make_units  # noqa: E402

MB = 1_000_000


def deep_list(size: int) -> str:
    lines, total, depth = [], 0, 0
    while total < size:
        line = "  " * depth + f"- item {len(lines)} at depth {depth}"
        lines.append(line)
        total += len(line) + 1
        depth = (depth + 1) % 2000
    return "\n".join(lines) + "\n"


def headings(size: int) -> str:
    parts, total, n = [], 0, 0
    while total < size:
        part = f"{'#' * (1 + n % 4)} Heading {n}\n\ntext under heading {n}.\n"
        parts.append(part)
        total += len(part)
        n += 1
    return "\n".join(parts)


def long_line(size: int) -> str:
    return " ".join(f"word{n % 997}" for n in range(size // 8)) + "\n"


def prose(size: int) -> str:
    sentence = (
        "The billing service retries refunds twice before it gives up, and the ledger "
        "keeps every attempt. "
    )
    paragraph = sentence * 4 + "\n\n"
    return paragraph * (size // len(paragraph) + 1)


SHAPES = {"deep list": deep_list, "headings": headings, "one long line": long_line, "prose": prose}


def in_process(text: str, runs: int) -> tuple[float, float, int]:
    walls, cpus, units = [], [], 0
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        units = len(make_units(parse_note("notes/shape.md", text)))
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), units


def index_process(text: str, runs: int) -> tuple[float, float]:
    walls, cpus = [], []
    env = {**os.environ, "VAULT_MODEL_DISABLED": "1"}
    for _ in range(runs):
        folder = Path(tempfile.mkdtemp(prefix="shapes-"))
        try:
            root = Vault.init(folder / "vault", git=False).root
            (root / "notes").mkdir(exist_ok=True)
            (root / "notes/shape.md").write_text(text, encoding="utf-8")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "vault_memory", "index"],
                cwd=root,
                env=env,
                check=True,
                capture_output=True,
            )
            walls.append(time.perf_counter() - wall)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'shape':14} {'size':>5} {'units':>7}  {'parse+units wall/CPU':>22}  "
        f"{'vault index wall/CPU':>22}"
    )
    for name, make in SHAPES.items():
        results = {}
        for size in (MB, 4 * MB):
            text = make(size)
            wall, cpu, units = in_process(text, args.runs)
            iwall, icpu = index_process(text, args.runs)
            results[size] = (cpu, icpu)
            print(
                f"{name:14} {size // MB:>4}M {units:>7}  {wall:>9.3f} s {cpu:>8.3f} s  "
                f"{iwall:>9.3f} s {icpu:>8.3f} s"
            )
        ratio = results[4 * MB][0] / results[MB][0]
        iratio = results[4 * MB][1] / results[MB][1]
        print(f"{'':14} 4M/1M CPU: parse+units x{ratio:.1f}, vault index x{iratio:.1f}")


if __name__ == "__main__":
    main()
