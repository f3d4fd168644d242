"""The scale curve: search p50/p95 and index time at 1k, 10k and 100k synthetic units (1M on
demand), printed and drawn as a small PNG for the README. A benchmark, not a test.

    python bench/scale.py                       # 1k, 10k, 100k (about 10 minutes on 2 cores)
    python bench/scale.py --sizes 1000 10000    # some sizes only
    python bench/scale.py --huge                # and 1,000,000 units (about an hour)
    python bench/scale.py --plot docs/scale.png # where the PNG goes (this is the default)

Each size: bench/search.py's synthetic vault (realistic daily logs) is generated afresh,
indexed from scratch by `vault index` in a child process, keyword-only (embedding 100,000
units takes the model hours on two cores: its rate is bench/index.py's, about 110-135 units/s),
timed in wall and CPU seconds with the child's peak RSS. Then the units get random vectors
under the bundled model's id (as in bench/search.py) and a warm process runs hybrid searches
(`Vault.search`, the real query embedding): p50 and p95 of --runs queries.

matplotlib draws the PNG (`pip install -e ".[bench]"`); without it the figures are printed
only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _harness import ROOT, load_bench  # this checkout's vault_memory first

search_bench = load_bench("search")  # bench/search.py: the vault and the queries

SIZES = (1_000, 10_000, 100_000)
HUGE = 1_000_000
DEFAULT_PLOT = ROOT / "docs" / "scale.png"


def child_env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    return {**base, "PYTHONPATH": str(ROOT), **extra}


def index_once(root: Path) -> dict[str, float]:
    """`vault index` from scratch, keyword-only, in a child: wall, CPU seconds and the
    child's own peak RSS (os.wait4: RUSAGE_CHILDREN would give the largest of all children)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_memory", "--vault", str(root), "index"],
        env=child_env(VAULT_MODEL_DISABLED="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"vault index failed ({proc.returncode}) in {root}")
    return {
        "index_s": wall,
        "index_cpu_s": usage.ru_utime + usage.ru_stime,
        "index_rss_mb": usage.ru_maxrss / 1024,
    }


def measure_size(work: Path, units: int, runs: int) -> dict[str, Any]:
    root = work / f"vault-{units}"
    shape = search_bench.generate_vault(root, units)
    row: dict[str, Any] = {"units_asked": units, **shape}
    row.update(index_once(root))
    row["units"] = search_bench.add_synthetic_vectors(root)  # distinct texts, as vectors
    found = search_bench.in_process(root, runs, {}, only_hybrid=True)
    hybrid = found["configs"][0]
    row.update(
        search_p50_ms=hybrid["p50"],
        search_p95_ms=hybrid["p95"],
        search_cpu_p50_ms=hybrid["cpu_p50"],
    )
    shutil.rmtree(root, ignore_errors=True)
    return row


def plot(rows: list[dict[str, Any]], path: Path, load: str) -> bool:
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): no plot")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    units = [r["units_asked"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.5, 2.8), dpi=110)
    left.plot(units, [r["search_p50_ms"] for r in rows], "o-", label="p50")
    left.plot(units, [r["search_p95_ms"] for r in rows], "s--", label="p95")
    left.plot(units, [r["search_cpu_p50_ms"] for r in rows], "^:", label="CPU p50")
    left.set_title("hybrid search (warm process)", fontsize=9)
    left.set_ylabel("ms")
    right.plot(units, [r["index_s"] for r in rows], "o-", label="wall")
    right.plot(units, [r["index_cpu_s"] for r in rows], "s--", label="CPU")
    right.set_title("full index, keyword-only", fontsize=9)
    right.set_ylabel("s")
    left.set_ylim(bottom=0)
    right.set_yscale("log")
    right.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    right.yaxis.set_minor_formatter(NullFormatter())
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("units")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        ax.tick_params(labelsize=8)
    fig.suptitle(f"vault-memory scale curve ({os.cpu_count()} cores, {load})", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--huge", action="store_true", help="add 1,000,000 units (about an hour)")
    parser.add_argument("--runs", type=int, default=200, help="queries per size")
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT)
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--replot",
        type=Path,
        metavar="JSON",
        help="draw the PNG from the rows a --json run wrote, and stop",
    )
    args = parser.parse_args()
    if args.replot:
        saved = json.loads(args.replot.read_text())
        if isinstance(saved, list):  # rows alone
            saved = {"rows": saved, "load": "load not recorded"}
        plot(saved["rows"], args.plot, saved["load"])
        return
    sizes = sorted(set(args.sizes) | ({HUGE} if args.huge else set()))
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.2f} at the start"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="vault-scale-") as tmp:
        for units in sizes:
            row = measure_size(Path(tmp), units, args.runs)
            rows.append(row)
            print(
                f"{row['list_items']:>9,} units ({row['units']:,} distinct texts, "
                f"{row['daily_files']:,} daily logs): search p50 "
                f"{row['search_p50_ms']:.1f} ms, p95 {row['search_p95_ms']:.1f} ms (CPU p50 "
                f"{row['search_cpu_p50_ms']:.1f} ms); index {row['index_s']:.1f} s wall, "
                f"{row['index_cpu_s']:.1f} CPU-s, peak RSS {row['index_rss_mb']:.0f} MB; "
                f"load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
    load = f"load {os.getloadavg()[0]:.1f}"
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "load": load}, indent=1))
    if not args.no_plot and plot(rows, args.plot, load):
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
