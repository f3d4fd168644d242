"""An edit costs what it changed: the first search after editing one file against a
search with no edit (cold `vault search` processes, no watcher), the freshness check, and the
first index run of a vault copied with `cp -r` against a warm one. A benchmark, not a test.

    python bench/perf_table.py              # 10k and 100k units
    python bench/perf_table.py --quick      # 10k units only
    python bench/perf.py --only table       # the same rows in the table of every ratio
    python bench/perf_table.py --against /tmp/old --sizes 100k   # A/B: this checkout and
        # another (a `git worktree add` of an older commit), runs interleaved, edit rows only

Part module of bench/perf.py: `run(quick) -> list[dict]`, one dict a row (name, figure, ratio,
target, ok). The vaults are bench/search.py's (10k units, 591 files) and bench/scopes.py's
(100k units over 200 scopes, 9,437 files), generated once under /tmp/vault-bench-table/ and
copied to a temporary folder for each run, since the runs edit them. Each edit appends a line
to one daily log in place (as an editor that writes in place does), then `vault search` runs;
the no-edit searches alternate with them, so both sides see the same machine load. CPU is
user + system of the child process (os.wait4), peak RSS its ru_maxrss.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness  # noqa: F401 - this checkout's vault_memory first on sys.path

BASE = Path(os.environ.get("VAULT_BENCH_TABLE", "/tmp/vault-bench-table"))
CHECKOUT = Path(__file__).resolve().parent.parent
EDIT_TARGET = 1.3
FRESH_TARGET_MS = 10.0


def vault_cmd(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "vault_memory", "--vault", str(root), *args]


def env(code: Path | None = None) -> dict[str, str]:
    """The environment of a child: no VAULT_ settings; with `code`, that checkout's package."""
    found = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    if code is not None:
        found["PYTHONPATH"] = str(code)
    return found


def child(cmd: list[str], code: Path | None = None) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stderr) of one process (of the package in `code`)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        # `python -m` puts the working folder first on the path: the checkout's own
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env(code), cwd=code or CHECKOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        message = err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {message}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, message


def vaults(quick: bool, sizes: tuple[str, ...] = ("10k", "100k")) -> dict[str, Path]:
    import scopes
    import search

    found = {}
    if "10k" in sizes:
        found["10k"] = search.prepare(BASE, 10_000)[0]
    if "100k" in sizes and not quick:
        found["100k"] = scopes.prepare(BASE, 100_000)[0]
    return found


def private_copy(root: Path, into: Path) -> Path:
    target = into / root.name
    subprocess.run(["cp", "-a", str(root), str(target)], check=True)
    return target


def edited_search(root: Path, runs: int) -> dict[str, dict[str, float]]:
    """Medians of cold `vault search` with no edit and right after one in-place edit."""
    return edited_searches({"this": (root, None)}, runs)["this"]


def edited_searches(
    vaults: dict[str, tuple[Path, Path | None]], runs: int
) -> dict[str, dict[str, dict[str, float]]]:
    """For each (vault copy, checkout of the package or None for this one): medians of cold
    `vault search` with no edit and right after one in-place edit, the checkouts' runs
    interleaved (their order turned each run) so that all see the same machine load. Each
    copy is indexed first by its own code (an analyzer upgrade re-indexes a stale copy)."""
    from search import QUERIES

    for root, code in vaults.values():
        child(vault_cmd(root, "index"), code)
        child(vault_cmd(root, "search", "warm the caches", "--json"), code)  # its table
    sides: dict[str, dict[str, list[tuple[float, float, float]]]] = {
        name: {"none": [], "edit": []} for name in vaults
    }
    names = list(vaults)
    for number in range(runs):
        query = QUERIES[(number * 7) % len(QUERIES)]
        order = names if number % 2 == 0 else names[::-1]
        for name in order:
            root, code = vaults[name]
            wall, cpu, rss, _ = child(vault_cmd(root, "search", query, "--json"), code)
            sides[name]["none"].append((wall, cpu, rss))
        for name in order:
            root, code = vaults[name]
            daily = sorted((root / "memory").glob("*.md"))[-1]
            with daily.open("a", encoding="utf-8") as out:
                out.write(f"- Edited for the benchmark, run {number}: {query}\n")
            wall, cpu, rss, _ = child(vault_cmd(root, "search", query, "--json"), code)
            sides[name]["edit"].append((wall, cpu, rss))
    return {
        name: {
            side: {
                "wall": statistics.median(v[0] for v in values),
                "cpu": statistics.median(v[1] for v in values),
                "rss": max(v[2] for v in values),
            }
            for side, values in got.items()
        }
        for name, got in sides.items()
    }


def against(code: Path, sizes: tuple[str, ...], runs: int) -> None:
    """Print the edit rows of this checkout and of `code`, measured interleaved."""
    with tempfile.TemporaryDirectory(prefix="perf-table-ab-") as tmp:
        for label, source in vaults(False, sizes).items():
            copies = {}
            for name, tree in (("before", code), ("after", None)):
                (Path(tmp) / name).mkdir(exist_ok=True)
                copies[name] = (private_copy(source, Path(tmp) / name), tree)
            got = edited_searches(copies, runs)
            load = os.getloadavg()
            print(
                f"  {label} units, {runs} runs each, medians; load {load[0]:.2f} "
                f"{load[1]:.2f} {load[2]:.2f}"
            )
            for name in copies:
                none, edit = got[name]["none"], got[name]["edit"]
                print(
                    f"    {name:<7} edit / no edit: {edit['cpu']:.2f} / {none['cpu']:.2f} "
                    f"CPU-s ({edit['cpu'] / none['cpu']:.2f}x), {edit['wall']:.2f} / "
                    f"{none['wall']:.2f} s, peak RSS {edit['rss']:.0f} / {none['rss']:.0f} MB"
                )
            for root, _ in copies.values():
                shutil.rmtree(root, ignore_errors=True)


def freshness(root: Path, runs: int = 21) -> tuple[int, float, float]:
    """(files, median wall ms, median CPU ms) of the freshness check of an unchanged vault."""
    from vault_memory import Vault

    with Vault(root) as vault:
        files = len(vault.cache.store.file_stats())
        vault.cache.stale_paths()
        walls, cpus = [], []
        for _ in range(runs):
            started, cpu = time.perf_counter(), time.process_time()
            stale = vault.cache.stale_paths()
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            assert not stale, stale[:5]
    return files, statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def watched_freshness(root: Path, runs: int = 21) -> tuple[float, float] | None:
    """(median wall ms, median CPU ms) of the freshness check of a search while `vault watch`
    runs for the vault (its state, asked over the socket), or None if it did not start."""
    from vault_memory.live import watch_client

    cache = root / ".vault"
    proc = subprocess.Popen(
        vault_cmd(root, "watch", "--no-dream"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env(),
    )
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            reply = watch_client.ping(cache)
            if reply and reply.get("ready"):
                break
            if proc.poll() is not None:
                return None
            time.sleep(0.2)
        else:
            return None
        walls, cpus = [], []
        for _ in range(runs):
            started, cpu = time.perf_counter(), time.process_time()
            settled = watch_client.settled(cache)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            assert settled
        return statistics.median(walls) * 1000, statistics.median(cpus) * 1000
    finally:
        watch_client.request(cache, {"op": "stop", "protocol": watch_client.PROTOCOL})
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def copied_open(root: Path, into: Path) -> dict[str, Any]:
    """`vault index` on a warm vault against the first one in a `cp -r` copy of it (new file
    times): CPU, wall, and whether the copy rebuilt anything."""
    warm = child(vault_cmd(root, "index"))
    copy = into / "copied"
    subprocess.run(["cp", "-r", str(root), str(copy)], check=True)
    cold = child(vault_cmd(copy, "index"))
    shutil.rmtree(copy, ignore_errors=True)
    return {"warm": warm, "copy": cold, "rebuilt": "rebuild" in cold[3].lower()}


def run(quick: bool, sizes: tuple[str, ...] = ("10k", "100k")) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    runs = 3 if quick else 5
    with tempfile.TemporaryDirectory(prefix="perf-table-") as tmp:
        for label, source in vaults(quick, sizes).items():
            root = private_copy(source, Path(tmp))
            child(vault_cmd(root, "index"))  # a copy generated by older code is brought up
            files, wall_ms, cpu_ms = freshness(root)
            rows.append(
                {
                    "name": f"freshness check, {files:,} files (no change)",
                    "figure": f"{cpu_ms:.1f} CPU-ms / {wall_ms:.1f} ms",
                    "ratio": None,
                    "target": f"<= {FRESH_TARGET_MS:g} ms at 10k files",
                    "ok": cpu_ms <= FRESH_TARGET_MS if files >= 5000 else None,
                }
            )
            watched = watched_freshness(root)
            if watched is not None:
                rows.append(
                    {
                        "name": f"freshness check, {files:,} files, watcher running",
                        "figure": f"{watched[1]:.1f} CPU-ms / {watched[0]:.1f} ms",
                        "ratio": None,
                        "target": f"<= {FRESH_TARGET_MS:g} ms at 10k files",
                        "ok": watched[0] <= FRESH_TARGET_MS if files >= 5000 else None,
                    }
                )
            got = edited_search(root, runs)
            none, edit = got["none"], got["edit"]
            rows.append(
                {
                    "name": f"first search after one edit / no edit, {label} units",
                    "figure": (
                        f"{edit['cpu']:.2f} / {none['cpu']:.2f} CPU-s, "
                        f"{edit['wall']:.2f} / {none['wall']:.2f} s, peak RSS "
                        f"{edit['rss']:.0f} / {none['rss']:.0f} MB"
                    ),
                    "ratio": round(edit["cpu"] / none["cpu"], 2),
                    "target": f"<= {EDIT_TARGET}",
                    "ok": edit["cpu"] / none["cpu"] <= EDIT_TARGET,
                }
            )
            if label == "10k":
                opened = copied_open(root, Path(tmp))
                (warm_wall, warm_cpu, _, _), (copy_wall, copy_cpu, _, _) = (
                    opened["warm"],
                    opened["copy"],
                )
                rows.append(
                    {
                        "name": f"`vault index` after cp -r / warm, {label} units",
                        "figure": (
                            f"{copy_cpu:.2f} / {warm_cpu:.2f} CPU-s, {copy_wall:.2f} / "
                            f"{warm_wall:.2f} s, "
                            f"{'rebuilt' if opened['rebuilt'] else 'nothing rebuilt'}"
                        ),
                        "ratio": round(copy_cpu / warm_cpu, 2),
                        "target": "nothing rebuilt",
                        "ok": not opened["rebuilt"],
                    }
                )
            shutil.rmtree(root, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k units only")
    parser.add_argument("--sizes", default="10k,100k", help="10k, 100k or both (10k,100k)")
    parser.add_argument("--against", type=Path, help="a checkout of other code: A/B edit rows")
    parser.add_argument("--runs", type=int, default=5, help="searches of each kind (A/B)")
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs"
    )
    if args.against:
        against(args.against.resolve(), tuple(args.sizes.split(",")), args.runs)
        return
    for row in run(args.quick, tuple(args.sizes.split(","))):
        ok = {True: "ok", False: "MISSED", None: ""}[row["ok"]]
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.2f}"
        print(f"  {row['name']:<52} {row['figure']:<70} {ratio:>6} {row['target']:<22} {ok}")


if __name__ == "__main__":
    main()
