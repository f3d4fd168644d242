"""Live sync figures for `vault watch`. A benchmark, not a test.

    python bench/watch.py                     # everything (about 10 minutes on 2 busy cores)
    python bench/watch.py --files 2000        # a smaller checkout
    python bench/watch.py --skip-checkout     # latency and search only

1. Edit -> searchable: a watcher (its own process, bundled model, default quiet period) on a
   copy of sample_vault/. Each round appends an entry with a unique token to a daily log, the
   way `vault add` does, then polls SQLite read-only until a unit holding the token has its
   embedding (so hybrid search finds it). No query is sent: a query would apply pending
   changes at once and hide the debounce. Target p95 <= 1.0 s.
2. `vault search` through the running watcher: the wall time of whole `python -m vault_memory
   search ... --json` processes, against a bare interpreter and the in-process search when
   no watcher runs. Target p50 <= 0.1 s. Then a query through the watcher 2 s after an
   edit on bench/search.py's 10,000-unit vault (`--large-units`), timed at the socket: the
   watcher has rebuilt the unit table while idle, so the query does not.
3. A 15,000-file `git checkout` into a watched vault: a real repository with an almost empty
   branch and one holding the files; the time from the start of `git checkout` until the
   index holds exactly the files on disk (path and sha256 of every file, the keyword index
   caught up). The watcher runs keyword-only here: embedding 15,000 files' units is bound by
   the model (about 110-135 units/s on two cores with the bundled MiniLM), not by the watcher.

The package is byte-compiled first (this environment sets PYTHONDONTWRITEBYTECODE=1; an
installed package has its .pyc files). Medians are reported; the machine is shared.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import hashlib
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import ROOT, time_command  # noqa: E402 - this checkout's vault_memory first

SAMPLE = ROOT / "sample_vault"
EDIT_TARGET_P95 = 1.0
SEARCH_TARGET_P50 = 0.1


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    return {**base, "PYTHONPATH": str(ROOT), **extra}


def vault_cmd(vault: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "vault_memory", "--vault", str(vault), *args]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values) * 1000:.0f} ms, p95 {percentile(values, 0.95) * 1000:.0f}"
        f" ms, min {min(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms (n={len(values)})"
    )


def connect(vault: Path) -> sqlite3.Connection:
    db = vault / ".vault" / "index.sqlite"
    return sqlite3.connect(db.absolute().as_uri() + "?mode=ro", uri=True, timeout=10)


def ping(vault: Path) -> bool:
    from vault_memory.live import watch_client

    reply = watch_client.ping(vault / ".vault")
    return bool(reply and reply.get("ready") and reply.get("warm"))


class WatcherProcess:
    def __init__(self, vault: Path, **extra_env: str) -> None:
        self.vault = vault
        self.log = open(vault.parent / f"{vault.name}-watch.err", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            vault_cmd(vault, "watch", "--no-dream"),
            env=env(**extra_env),
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )

    def wait_ready(self, timeout: float = 600) -> float:
        started = time.monotonic()
        while not ping(self.vault):
            if self.proc.poll() is not None:
                raise SystemExit(f"the watcher exited; see {self.log.name}")
            if time.monotonic() - started > timeout:
                raise SystemExit("the watcher did not get ready")
            time.sleep(0.05)
        return time.monotonic() - started

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=120)
        self.log.close()


# -- 1. edit -> searchable --------------------------------------------------------------------


def bench_edits(work: Path, rounds: int) -> list[float]:
    vault = work / "edits"
    shutil.copytree(SAMPLE, vault, ignore=shutil.ignore_patterns(".vault"))
    watcher = WatcherProcess(vault)
    print(f"edit -> searchable: watcher ready in {watcher.wait_ready():.1f} s (first index)")
    daily = vault / "memory" / f"{dt.date.today().isoformat()}.md"
    if not daily.exists():
        daily.write_text(f"# {dt.date.today().isoformat()}\n", encoding="utf-8")
    latencies = []
    conn = connect(vault)
    try:
        for i in range(rounds):
            token = f"WOMBAT{i:03d}X{os.getpid()}"
            entry = f"\n## {dt.datetime.now():%H:%M} · note\n- Remember {token} for the demo.\n"
            started = time.monotonic()
            with daily.open("a", encoding="utf-8") as fh:
                fh.write(entry)
            while True:
                row = conn.execute(
                    "SELECT 1 FROM chunks c JOIN embeddings e ON e.sha256 = c.sha256 "
                    "WHERE c.text LIKE ? AND (SELECT value FROM meta WHERE key = "
                    "'fulltext_dirty') = '0' LIMIT 1",
                    (f"%{token}%",),
                ).fetchone()
                if row:
                    break
                if time.monotonic() - started > 30:
                    raise SystemExit(f"{token} never became searchable")
                time.sleep(0.005)
            latencies.append(time.monotonic() - started)
            time.sleep(0.5)  # the next edit comes later, as a person's would
    finally:
        conn.close()
    watcher.stop()
    return latencies


# -- 2. `vault search` through the watcher ---------------------------------------------------


def bench_search(work: Path, rounds: int) -> dict[str, list[float]]:
    vault = work / "search"
    shutil.copytree(SAMPLE, vault, ignore=shutil.ignore_patterns(".vault"))
    subprocess.run(vault_cmd(vault, "index"), env=env(), check=True, capture_output=True)
    queries = ["which database did we pick for billing?", "ERR_LEDGER_409", "standup time"]
    results: dict[str, list[float]] = {"bare": [], "in-process": [], "via watcher": []}
    for i in range(rounds):
        results["bare"].append(time_command([sys.executable, "-c", "pass"], env=env()).wall)
        cmd = vault_cmd(vault, "search", queries[i % len(queries)], "--json")
        results["in-process"].append(time_command(cmd, env=env()).wall)
    watcher = WatcherProcess(vault)
    watcher.wait_ready()
    for i in range(rounds):
        cmd = vault_cmd(vault, "search", queries[i % len(queries)], "--json")
        results["via watcher"].append(time_command(cmd, env=env()).wall)
    watcher.stop()
    return results


def bench_search_after_edit(work: Path, rounds: int, units: int) -> list[float]:
    """A query through the watcher 2 s after an edit, on bench/search.py's vault of `units`
    units: after each change the watcher rebuilds the unit table while idle, so the query
    finds it ready (it used to rebuild it itself: about 0.4 s at 10,000 units)."""
    import search as search_bench  # bench/search.py: the synthetic vault, cached in /tmp

    from vault_memory.config import load_config
    from vault_memory.live import watch_client

    source, _ = search_bench.prepare(search_bench.DEFAULT_ROOT, units)
    vault = work / "large"
    shutil.copytree(source, vault, symlinks=True)
    watcher = WatcherProcess(vault)
    watcher.wait_ready()
    config = load_config(vault)
    daily = sorted((vault / "memory").glob("*.md"))[-1]
    latencies = []
    for i in range(rounds):
        token = f"NUMBAT{i:03d}X{os.getpid()}"
        with daily.open("a", encoding="utf-8") as fh:
            fh.write(f"\n- Remember {token} for the demo.\n")
        time.sleep(2.0)  # quiet period, indexing and the idle table rebuild
        started = time.perf_counter()
        hits = watch_client.search(
            config,
            query=token,
            limit=5,
            mode="hybrid",
            since=None,
            until=None,
            within=None,
            kinds=[],
        )
        latencies.append(time.perf_counter() - started)
        if not hits or token not in hits[0]["text"]:
            raise SystemExit(f"the watcher did not find {token}")
    watcher.stop()
    return latencies


# -- 3. a 15,000-file checkout ---------------------------------------------------------------


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
        },
    )


def page(i: int) -> str:
    lines = [f"# Page {i}", "", f"Notes on topic {i % 211} for project P-{i % 97}.", ""]
    lines += [
        f"- Point {j} of page {i}: decision {i * 7 + j} about item {j * 13}."
        for j in range(i % 5 + 2)
    ]
    return "\n".join(lines) + "\n"


def disk_state(vault: Path) -> dict[str, str]:
    from vault_memory.index.indexer import scan

    return {p: hashlib.sha256((vault / p).read_bytes()).hexdigest() for p in scan(vault)}


def index_state(vault: Path) -> dict[str, str] | None:
    try:
        conn = connect(vault)
        try:
            dirty = conn.execute("SELECT value FROM meta WHERE key = 'fulltext_dirty'").fetchone()
            if dirty and dirty[0] != "0":
                return None
            return dict(conn.execute("SELECT path, sha256 FROM files"))
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_checkout(
    work: Path, files: int, cpu: list[float] | None = None
) -> tuple[float, float, float]:
    """Seconds: git's checkout, until the index equals the files, and back. `cpu`, when
    given, gets the watcher's CPU seconds for the convergence (from the checkout's start)."""
    vault = work / "checkout"
    subprocess.run(vault_cmd(vault, "init"), env=env(), check=True, capture_output=True)
    git(vault, "init", "-q", "-b", "small")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "small")
    git(vault, "checkout", "-q", "-b", "big")
    for i in range(files):
        path = vault / "kb" / f"area-{i % 50:02d}" / f"page-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(i), encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "big")
    git(vault, "checkout", "-q", "small")
    watcher = WatcherProcess(vault, VAULT_INDEX_MODEL="none")
    watcher.wait_ready()
    cpu_before = cpu_seconds(watcher.proc.pid)
    started = time.monotonic()
    git(vault, "checkout", "-q", "big")
    checkout_done = time.monotonic() - started
    expected = disk_state(vault)
    assert len(expected) == files + 1, len(expected)  # + MEMORY.md
    while index_state(vault) != expected:
        if time.monotonic() - started > 1800:
            raise SystemExit("the index did not converge within 30 minutes")
        time.sleep(0.1)
    converged = time.monotonic() - started
    if cpu is not None:
        cpu.append(cpu_seconds(watcher.proc.pid) - cpu_before)
    # back to the small branch: 15,000 deletions
    started = time.monotonic()
    git(vault, "checkout", "-q", "small")
    expected = disk_state(vault)
    while index_state(vault) != expected:
        time.sleep(0.1)
    back = time.monotonic() - started
    watcher.stop()
    return checkout_done, converged, back


def report_checkout(work: Path, files: int) -> None:
    cpu: list[float] = []
    checkout, converged, back = bench_checkout(work, files, cpu)
    print(
        f"git checkout of {files:,} files: git took {checkout:.1f} s; index equal "
        f"to disk {converged:.1f} s after the checkout started (keyword-only; the "
        f"watcher spent {cpu[0]:.1f} CPU-s); "
        f"checkout back (all deleted) converged in {back:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--searches", type=int, default=30)
    parser.add_argument("--files", type=int, default=15_000)
    parser.add_argument("--skip-checkout", action="store_true")
    parser.add_argument(
        "--only-checkout", action="store_true", help="the 15,000-file checkout alone"
    )
    parser.add_argument(
        "--large-units",
        type=int,
        default=10_000,
        help="vault size for the query after an edit (0: skip)",
    )
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "vault_memory"), quiet=1)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="vault-watch-bench-") as tmp:
        work = Path(tmp)
        if args.only_checkout:
            report_checkout(work, args.files)
            return
        edits = bench_edits(work, args.edits)
        print(
            f"edit -> searchable (model, quiet 300 ms): {summary(edits)}; target p95 <= "
            f"{EDIT_TARGET_P95:.1f} s"
        )
        searches = bench_search(work, args.searches)
        for name, values in searches.items():
            print(f"`vault search --json` {name:>12}: {summary(values)}")
        print(f"target: p50 <= {SEARCH_TARGET_P50 * 1000:.0f} ms through the watcher")
        if args.large_units:
            after_edit = bench_search_after_edit(work, args.searches // 3 or 1, args.large_units)
            print(
                f"query through the watcher 2 s after an edit, {args.large_units:,} units "
                f"(socket round trip, no process start): {summary(after_edit)}"
            )
        if not args.skip_checkout:
            report_checkout(work, args.files)
        print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
