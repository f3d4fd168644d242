"""Bulk indexing: the rows bench/perf.py prints (the contract: `run(quick) -> rows`).

    python bench/perf_bulk.py            # every row (about 25 minutes on 2 busy cores)
    python bench/perf_bulk.py --quick    # smaller sizes (about 6 minutes)
    python bench/perf_bulk.py --only keyword threads    # some rows
    python bench/perf_bulk.py --only keyword --rounds 9 --against /tmp/old   # A/B beside qmd

Rows:
- checkout: a 15,000-file `git checkout` under `vault watch` (keyword-only), from the checkout's
  start until the index equals the files (bench/watch.py); target <= 30 s. The watcher's CPU
  seconds are printed beside: the machine is shared, so wall time is load-bound.
- keyword: a keyword-only full index of 1,000 files (bench/index.py's vault), `vault index`
  beside qmd's (`qmd collection add`, its BM25 index in SQLite FTS5, with bun) on the same
  files, interleaved; CPU seconds of each whole process (wall is printed too: qmd's includes
  its fsyncs). If qmd does not run, SQLite FTS5 over the same units in this process stands in
  (the row says which). Target: <= 1.0x the reference. With `--against CHECKOUT` (another
  checkout of vault-memory, e.g. `git worktree add --detach /tmp/old main`), that checkout's
  `vault index` is timed in the same rounds too, and the row gives its CPU seconds beside.
- throughput: a full index with the bundled model against raw fastembed over the same texts,
  same loaded model and batch size (bench/index.py); target >= 0.95x.
- rss: peak RSS of `vault index` with the model on a 100,000-unit vault (bench/search.py's);
  embedding 100,000 units takes hours here, so the child runs until it has stored
  EMBED_CHECK vectors (by then every structure that grows with the vault is built and the
  embedding loop holds one batch at a time) and is stopped; target <= 500 MB.
- threads: onnxruntime with one thread against two, each phase in fresh processes
  (bench/embed_threads.py): chunks/s for a full index, the query encoder's one-shot and warm
  query; the choice the code makes (index/embedder.py: spare_threads for `vault index`,
  DEFAULT_THREADS for queries) is checked against
  the measurement (two threads only where 10% faster for at most 10% more CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _harness import ROOT, load_bench, time_command  # this checkout's vault_memory first

CHECKOUT_TARGET_S = 30.0
RSS_TARGET_MB = 500.0
THROUGHPUT_TARGET = 0.95
EMBED_CHECK = 2_048  # vectors stored before the RSS child is stopped
AGAINST: Path | None = None  # `--against`: another checkout timed beside in the keyword row
KEYWORD_ROUNDS: int | None = None  # `--rounds`


def child_env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    return {**base, "PYTHONPATH": str(ROOT), **extra}


def timed(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, its own children included) of one command."""
    timing = time_command(cmd, env=env, cwd=cwd)
    return timing.wall, timing.cpu


def row(
    name: str, figure: str, ratio: float | None, target: str, ok: bool | None
) -> dict[str, Any]:
    return {
        "name": name,
        "figure": figure,
        "ratio": None if ratio is None else round(ratio, 3),
        "target": target,
        "ok": ok,
    }


# -- rows ------------------------------------------------------------------------------------


def checkout_row(work: Path, quick: bool) -> dict[str, Any]:
    watch = load_bench("watch")
    files = 3_000 if quick else 15_000
    cpu: list[float] = []
    _, converged, _ = watch.bench_checkout(work, files, cpu)
    target = CHECKOUT_TARGET_S * files / 15_000
    return row(
        f"checkout {files // 1000}k files under the watcher, converged",
        f"{converged:.1f} s ({cpu[0]:.1f} CPU-s)",
        converged / target,
        f"<= {target:.0f} s",
        converged <= target,
    )


def qmd_available() -> bool:
    qmd = shutil.which("qmd")
    if qmd is None or shutil.which("bun") is None:
        return False
    done = subprocess.run([qmd, "--help"], capture_output=True, text=True)
    return "collection add" in done.stdout


def fts5_index(root: Path, db: Path) -> None:
    """The reference when qmd does not run: SQLite FTS5 (porter tokenizer) over the same
    units `vault index` makes, parsed the same way, one transaction."""
    from vault_memory.files.notes import parse_note
    from vault_memory.index.indexer import scan
    from vault_memory.index.units import make_units

    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE VIRTUAL TABLE units USING fts5(path, heading, text, tokenize='porter unicode61')"
    )
    with conn:
        for relpath in sorted(scan(root)):
            note = parse_note(relpath, (root / relpath).read_text(encoding="utf-8"))
            conn.executemany(
                "INSERT INTO units VALUES (?, ?, ?)",
                [(relpath, u.heading, u.text) for u in make_units(note)],
            )
    conn.close()


FTS5_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import importlib.util
spec = importlib.util.spec_from_file_location("perf_bulk", sys.argv[1] + "/bench/perf_bulk.py")
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
from pathlib import Path
module.fts5_index(Path(sys.argv[2]), Path(sys.argv[3]))
"""


def keyword_row(work: Path, quick: bool) -> dict[str, Any]:
    index_bench = load_bench("index")
    files = 1_000
    source = work / "keyword-source"
    index_bench.generate(source, files, pool=None, seed=3)
    use_qmd = qmd_available()
    rounds = KEYWORD_ROUNDS or (3 if quick else 5)
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    other: list[tuple[float, float]] = []
    trees = [(ROOT, ours), *([(AGAINST, other)] if AGAINST is not None else [])]
    for number in range(rounds):  # interleaved: drifting load hits all alike
        for tree, times in trees:
            vault = work / f"keyword-{number}"
            shutil.copytree(source, vault)
            times.append(
                timed(
                    [sys.executable, "-m", "vault_memory", "--vault", str(vault), "index"],
                    cwd=tree,
                    env={**child_env(VAULT_INDEX_MODEL="none"), "PYTHONPATH": str(tree)},
                )
            )
            shutil.rmtree(vault)
        home = work / f"qmd-{number}"
        home.mkdir()
        if use_qmd:
            env = {
                **os.environ,
                "HOME": str(home),
                "XDG_CACHE_HOME": str(home / "cache"),
                "XDG_CONFIG_HOME": str(home / "config"),
                "NO_COLOR": "1",
            }
            theirs.append(
                timed(
                    [
                        "qmd",
                        "collection",
                        "add",
                        str(source),
                        "--name",
                        "bench",
                        "--mask",
                        "**/*.md",
                    ],
                    env=env,
                    cwd=home,
                )
            )
        else:
            theirs.append(
                timed(
                    [
                        sys.executable,
                        "-c",
                        FTS5_CHILD,
                        str(ROOT),
                        str(source),
                        str(home / "fts5.sqlite"),
                    ]
                )
            )
        shutil.rmtree(home)
    wall = statistics.median(w for w, _ in ours), statistics.median(w for w, _ in theirs)
    cpu = statistics.median(c for _, c in ours), statistics.median(c for _, c in theirs)
    reference = "qmd (bun, FTS5)" if use_qmd else "SQLite FTS5 in Python"
    ratio = cpu[0] / cpu[1]
    beside = ""
    if other:
        beside = (
            f"; {AGAINST}: {statistics.median(c for _, c in other):.2f} CPU-s (wall "
            f"{statistics.median(w for w, _ in other):.2f} s)"
        )
    return row(
        f"keyword-only full index 1k files / {reference}",
        f"{cpu[0]:.2f} / {cpu[1]:.2f} CPU-s (wall {wall[0]:.2f} / {wall[1]:.2f} s){beside}",
        ratio,
        "<= 1.0",
        ratio <= 1.0,
    )


def throughput_row(work: Path, quick: bool) -> dict[str, Any]:
    index_bench = load_bench("index")
    from vault_memory.index.embedder import BUNDLED_MODEL
    from vault_memory.index.indexer import shared_embedder

    args = argparse.Namespace(throughput_files=150 if quick else 300, rounds=3 if quick else 5)
    found = index_bench.throughput(work, args, shared_embedder(BUNDLED_MODEL))
    raw, full = statistics.median(found["raw"]), statistics.median(found["index"])
    return row(
        f"full index / raw fastembed ({found['units']} units)",
        f"{full:.1f} / {raw:.1f} units/s",
        full / raw,
        f">= {THROUGHPUT_TARGET}",
        full / raw >= THROUGHPUT_TARGET,
    )


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def rss_row(work: Path, quick: bool) -> dict[str, Any]:
    search_bench = load_bench("search")
    units = 10_000 if quick else 100_000
    root = work / "rss"
    search_bench.generate_vault(root, units)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_memory", "--vault", str(root), "index"],
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    db = root / ".vault" / "index.sqlite"
    peak = stored = 0.0
    units_indexed = 0
    try:
        while proc.poll() is None:
            peak = max(peak, vm_hwm_mb(proc.pid))
            if db.exists():
                try:
                    conn = sqlite3.connect(db.absolute().as_uri() + "?mode=ro", uri=True, timeout=1)
                    try:
                        stored = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
                        units_indexed = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
                    finally:
                        conn.close()
                except sqlite3.Error:
                    pass
            if stored >= EMBED_CHECK:
                peak = max(peak, vm_hwm_mb(proc.pid))
                break
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
    shutil.rmtree(root, ignore_errors=True)
    label = f"{units // 1000}k"
    return row(
        f"peak RSS, full index with the model, {label} units",
        f"{peak:.0f} MB ({units_indexed:,} units, stopped at {int(stored):,} vectors)",
        peak / RSS_TARGET_MB,
        f"<= {RSS_TARGET_MB:.0f} MB",
        peak <= RSS_TARGET_MB,
    )


SETTLE_S = 150.0  # the threads row's wait for the load the previous rows raised to fall


def settled_load() -> float:
    """The 1-minute load average once it has fallen to where `spare_threads` would give two
    threads, or after SETTLE_S (the machine is busy of its own: that load is the answer)."""
    from vault_memory.index.embedder import spare_threads

    deadline = time.monotonic() + SETTLE_S
    while spare_threads() < 2 and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def threads_row(work: Path, quick: bool) -> dict[str, Any]:
    """One onnxruntime thread against two for each phase, in fresh processes, interleaved: a
    full index (fastembed, chunks/s and CPU-ms a chunk) and the query path (the query
    encoder: a one-shot search's import + open + first query, and a warm process's query).
    Two threads are the measured choice of a phase when they make it at least 10% faster
    and cost at most 10% more CPU: on two shared cores a second thread that waits for a busy
    core costs the other work what it saves (query CPU doubles, bench/embed_threads.py).

    The code's choice for the index phase depends on the load (`spare_threads`: two threads
    for a `vault index` on idle cores), so it is taken at the machine's own load: the row
    first waits (at most SETTLE_S) for the 1-minute load average the previous rows raised to
    fall back to where a second thread would be chosen, and evaluates `spare_threads` on the
    load it finds."""
    from vault_memory.index.embedder import DEFAULT_THREADS, spare_threads

    script = ROOT / "bench" / "embed_threads.py"
    rounds = 2 if quick else 3
    load = settled_load()
    index: dict[str, list[dict[str, Any]]] = {"1": [], "2": []}
    query: dict[str, list[dict[str, Any]]] = {"1": [], "2": []}

    def last_json(command: list[str]) -> dict[str, Any]:
        out = subprocess.run(
            command, check=True, capture_output=True, text=True, cwd=ROOT, env=child_env()
        ).stdout
        return dict(json.loads(out.strip().splitlines()[-1]))

    for _ in range(rounds):
        for setting in index:
            index[setting].append(
                last_json(
                    [
                        sys.executable,
                        str(script),
                        "--one",
                        setting,
                        "--texts",
                        "200" if quick else "400",
                        "--runs",
                        "2",
                    ]
                )
            )
        for _ in range(2 if quick else 3):
            for setting in query:
                query[setting].append(
                    last_json([sys.executable, str(script), "--query-one", setting])
                )
    med = statistics.median
    rate = {s: med(x for r in rs for x in r["chunks_per_s"]) for s, rs in index.items()}
    chunk_cpu = {s: med(x for r in rs for x in r["cpu_ms_per_chunk"]) for s, rs in index.items()}
    cold = {s: med(r["cold_wall_s"] for r in rs) * 1000 for s, rs in query.items()}
    cold_cpu = {s: med(r["cold_cpu_s"] for r in rs) * 1000 for s, rs in query.items()}
    warm = {s: med(r["warm_ms"] for r in rs) for s, rs in query.items()}
    warm_cpu = {s: med(r["warm_cpu_ms"] for r in rs) for s, rs in query.items()}

    def best(faster: bool, cpu_two: float, cpu_one: float) -> str:
        return "2" if faster and cpu_two <= cpu_one * 1.1 else "1"

    query_threads = str(DEFAULT_THREADS or 1)
    chosen = {
        "index": str(spare_threads(load)),
        "one-shot query": query_threads,
        "warm query": query_threads,
    }
    choice = {
        "index": best(rate["2"] > rate["1"] * 1.1, chunk_cpu["2"], chunk_cpu["1"]),
        "one-shot query": best(cold["2"] < cold["1"] / 1.1, cold_cpu["2"], cold_cpu["1"]),
        "warm query": best(warm["2"] < warm["1"] / 1.1, warm_cpu["2"], warm_cpu["1"]),
    }
    ok = choice == chosen
    return row(
        "onnxruntime threads 2 vs 1: index, one-shot query, warm query",
        f"index {rate['2']:.0f} vs {rate['1']:.0f} chunks/s ({chunk_cpu['2']:.1f} vs "
        f"{chunk_cpu['1']:.1f} CPU-ms a chunk); one-shot query {cold['2']:.0f} vs "
        f"{cold['1']:.0f} ms ({cold_cpu['2']:.0f} vs {cold_cpu['1']:.0f} CPU-ms); warm "
        f"query {warm['2']:.1f} vs {warm['1']:.1f} ms ({warm_cpu['2']:.1f} vs "
        f"{warm_cpu['1']:.1f} CPU-ms); measured best "
        f"{'/'.join(choice.values())}, the code uses {'/'.join(chosen.values())} "
        f"(`vault index` at load {load:.2f})",
        rate["2"] / rate["1"],
        "choice = measured",
        ok,
    )


ROWS = {
    "checkout": checkout_row,
    "keyword": keyword_row,
    "throughput": throughput_row,
    "rss": rss_row,
    "threads": threads_row,
}


def run(
    quick: bool, only: list[str] | None = None, each: Callable[[dict[str, Any]], None] | None = None
) -> list[dict[str, Any]]:
    """The rows (bench/perf.py's contract); `each` is called with every row as it is made."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="vault-perf-bulk-") as tmp:
        for name, make in ROWS.items():
            if only and name not in only:
                continue
            work = Path(tmp) / name
            work.mkdir()
            rows.append(make(work, quick))
            shutil.rmtree(work, ignore_errors=True)
            if each is not None:
                each(rows[-1])
    return rows


def show(found: dict[str, Any]) -> None:
    verdict = {True: "ok", False: "MISSED", None: ""}[found["ok"]]
    ratio = "" if found["ratio"] is None else f"{found['ratio']:.2f}"
    print(
        f"{found['name']:<58} {found['figure']:<60} {ratio:>6} {found['target']:<18} "
        f"{verdict}  (load {os.getloadavg()[0]:.2f})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="+", choices=list(ROWS))
    parser.add_argument(
        "--against", type=Path, help="another checkout, timed beside in the keyword row"
    )
    parser.add_argument("--rounds", type=int, help="rounds of the keyword row")
    args = parser.parse_args()
    global AGAINST, KEYWORD_ROUNDS
    AGAINST = args.against.resolve() if args.against else None
    KEYWORD_ROUNDS = args.rounds
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
        f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )
    run(args.quick, args.only, show)


if __name__ == "__main__":
    main()
