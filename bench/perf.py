"""Every cost ratio (the query process, the first search after an edit, bulk indexing) in
one command. A benchmark, not a test.

    python bench/perf.py                  # every part (perf_query, perf_table, perf_bulk)
    python bench/perf.py --only query     # one part
    python bench/perf.py --quick          # smaller sizes, fewer runs
    python bench/perf.py --markdown       # the same table for the README

Each part is a module `bench/perf_<part>.py` with `run(quick: bool) -> list[dict]`, one dict per
row: {"name", "figure", "ratio", "target", "ok"} (`ratio`/`ok` None for an absolute figure).
Each part also runs alone (`python bench/perf_query.py`).

Whole processes are timed here from outside, as the operating system accounts them (user +
system CPU seconds of the reaped child, `os.wait4`) and by a monotonic clock around the start
and the reaping. Two commands are compared in one run, interleaved A B A B ..., and the ratio
is the median of the per-pair ratios, so a machine whose speed drifts (it is shared: 2 cores,
other work running) moves both sides alike. The table says the date, the load and the cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _harness import time_command  # this checkout's vault_memory first

BENCH = Path(__file__).resolve().parent
PARTS = ("query", "table", "bulk")


@dataclass
class Timed:
    """One whole process: CPU seconds (user + system) and wall seconds."""

    cpu: float
    wall: float
    code: int


def timed(
    cmd: Sequence[str], env: dict[str, str] | None = None, cwd: str | Path | None = None
) -> Timed:
    """Run `cmd` once, its output thrown away; its own and its waited-for children's CPU."""
    timing = time_command(cmd, env=env, cwd=cwd, check=False)
    return Timed(timing.cpu, timing.wall, timing.result)


@dataclass
class Pair:
    """Medians of A and of B, and the median of the per-pair ratios A/B."""

    a_cpu: float
    b_cpu: float
    a_wall: float
    b_wall: float
    cpu_ratio: float
    wall_ratio: float
    runs: int

    def figure(self, what: str = "cpu") -> str:
        if what == "wall":
            return f"{self.a_wall:.3f} / {self.b_wall:.3f} wall-s"
        return f"{self.a_cpu:.3f} / {self.b_cpu:.3f} CPU-s"


def pair(
    a: Sequence[str],
    b: Sequence[str],
    runs: int = 11,
    warmup: int = 1,
    env_a: dict[str, str] | None = None,
    env_b: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    check: bool = True,
) -> Pair:
    """A and B run in turn `runs` times each (after `warmup` uncounted runs of each)."""
    for _ in range(warmup):
        timed(a, env_a, cwd)
        timed(b, env_b, cwd)
    got_a: list[Timed] = []
    got_b: list[Timed] = []
    for _ in range(runs):
        got_a.append(timed(a, env_a, cwd))
        got_b.append(timed(b, env_b, cwd))
    if check:
        for cmd, got in ((a, got_a), (b, got_b)):
            bad = [t.code for t in got if t.code != 0]
            if bad:
                raise SystemExit(f"{' '.join(cmd)} exited with {bad[0]}")
    med = statistics.median
    return Pair(
        med(t.cpu for t in got_a),
        med(t.cpu for t in got_b),
        med(t.wall for t in got_a),
        med(t.wall for t in got_b),
        med(x.cpu / max(y.cpu, 1e-6) for x, y in zip(got_a, got_b, strict=True)),
        med(x.wall / max(y.wall, 1e-6) for x, y in zip(got_a, got_b, strict=True)),
        runs,
    )


def row(
    name: str, figure: str, ratio: float | None, target: str, limit: float | None = None
) -> dict[str, Any]:
    """A table row; `ok` is ratio <= limit when both are given."""
    ok = None if ratio is None or limit is None else ratio <= limit
    return {
        "name": name,
        "figure": figure,
        "ratio": None if ratio is None else round(ratio, 2),
        "target": target,
        "ok": ok,
    }


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def header() -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"{now}, {os.cpu_count()} CPUs, {load()}, Python {sys.version.split()[0]}"


def table(rows: list[dict[str, Any]], markdown: bool) -> str:
    cells = [("what", "figure (A / B)", "ratio", "target", "")]
    for r in rows:
        mark = "" if r["ok"] is None else ("yes" if r["ok"] else "NO")
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
        cells.append((r["name"], r["figure"], ratio, r["target"], mark))
    if markdown:
        lines = ["| " + " | ".join(c) + " |" for c in cells]
        lines.insert(1, "|" + "---|" * len(cells[0]))
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    return "\n".join(
        "  ".join(c[i].ljust(widths[i]) for i in range(len(c))).rstrip() for c in cells
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", choices=PARTS, action="append", help="only this part (repeatable)"
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    sys.modules.setdefault("perf", sys.modules[__name__])
    rows: list[dict[str, Any]] = []
    started = header()
    for part in args.only or PARTS:
        path = BENCH / f"perf_{part}.py"
        if not path.is_file():
            print(f"(no bench/perf_{part}.py on this branch)", file=sys.stderr)
            continue
        spec = importlib.util.spec_from_file_location(f"perf_{part}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(f"-- {part} ...", file=sys.stderr, flush=True)
        rows += module.run(args.quick)
    print(f"started {started}\nended   {header()}")
    print(table(rows, args.markdown))


if __name__ == "__main__":
    main()
