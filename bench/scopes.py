"""Scoped against unscoped search at 100,000 units spread over 200 scopes, side by side in one
process. A benchmark, not a test.

    python bench/scopes.py                  # vault cached under /tmp/vault-bench/
    python bench/scopes.py --runs 400       # more timed queries per side

The vault: 10 organisations, each with 19 agents (`scopes/org-N/agent-M/`): 200 scopes plus the
root, every one with its MEMORY.md and daily logs of the synthetic text bench/search.py writes
(1–5 bullets per entry, so about 500 units a scope). It is indexed keyword-only by the real
indexer and then given random unit vectors under the bundled model's id, as in
bench/search.py: queries are embedded by the real model, latency is real, ranking is not.

One warm process (model, unit table loaded) answers each query twice, once unbound (the whole
vault) and once bound to an agent scope (its own units, its organisation's and the root's),
alternating which goes first; the agent changes with every query, so the per-scope masks are
built during the timed runs, as a server with many agents would. Both run `fresh=False` (what
a watcher does) unless `--fresh`: then each query first stats the files it may see (every
file unscoped, the scope's and its ancestors' folders scoped). Reported: p50 / p95 / max wall
time and p50 / p95 CPU time per side, and the ratio of the p95s.

Target: scoped p95 no slower than unscoped p95.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from search import (  # the synthetic text of the search benchmark
    CONTINUATIONS,
    END_DATE,
    QUERIES,
    SOURCES,
    TEMPLATES,
    _fill,
    add_synthetic_vectors,
    cli_env,
    machine,
    percentile,
)

GENERATOR_VERSION = 1
DEFAULT_ROOT = Path("/tmp/vault-bench")
ORGS = 10
AGENTS = 19  # per organisation: 10 + 190 = 200 scopes


def scope_folders() -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for org in range(ORGS):
        found.append((f"org-{org}",))
        found += [(f"org-{org}", f"agent-{agent}") for agent in range(AGENTS)]
    return found


def _daily_logs(folder: Path, units: int, rnd: random.Random) -> int:
    """Daily logs going back from END_DATE until about `units` list items exist."""
    (folder / "memory").mkdir(parents=True, exist_ok=True)
    day, written = END_DATE, 0
    while written < units:
        lines = [f"# {day.isoformat()}", ""]
        minute = rnd.randint(8 * 60, 10 * 60)
        for _ in range(rnd.randint(2, 5)):
            source = rnd.choice(SOURCES)
            lines.append(f"## {minute // 60:02d}:{minute % 60:02d} · {source}")
            for _ in range(rnd.randint(1, 5)):
                lines.append(f"- {_fill(rnd.choice(TEMPLATES), rnd, day)}")
                if rnd.random() < 0.15:
                    lines.append(_fill(rnd.choice(CONTINUATIONS), rnd, day))
                written += 1
            lines.append("")
            minute = min(minute + rnd.randint(15, 120), 23 * 60 + 59)
        (folder / "memory" / f"{day.isoformat()}.md").write_text("\n".join(lines), encoding="utf-8")
        day -= dt.timedelta(days=1)
    return written


def generate_vault(root: Path, units: int, seed: int = 3) -> dict[str, int]:
    from vault_memory import Vault

    rnd = random.Random(seed)
    Vault.init(root)
    folders = [root] + [root / "scopes" / Path(*s) for s in scope_folders()]
    per_folder = units // len(folders)
    written = 0
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        memory = ["# MEMORY", "", "## Decisions"]
        memory += [f"- {_fill(rnd.choice(TEMPLATES), rnd, END_DATE)}" for _ in range(20)]
        (folder / "MEMORY.md").write_text("\n".join(memory) + "\n", encoding="utf-8")
        written += 20 + _daily_logs(folder, per_folder - 20, rnd)
    return {"scopes": len(folders) - 1, "list_items": written}


def prepare(base: Path, units: int) -> tuple[Path, dict[str, Any]]:
    from vault_memory import Vault

    root = base / f"scoped-{units}"
    manifest_path = base / f"scoped-{units}.json"
    if manifest_path.exists() and root.is_dir():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("generator") == GENERATOR_VERSION:
            with Vault(root) as vault:
                info = vault.status()
            if info["problem"] is None and info["drift"] == {"new": 0, "changed": 0, "deleted": 0}:
                return root, manifest
            print(
                f"  {root}: the index is not usable as it is ({info['problem'] or 'drift'}); "
                "regenerating"
            )
    shutil.rmtree(root, ignore_errors=True)
    print(f"  generating {root} (about {units:,} units over 200 scopes) ...", flush=True)
    started = time.perf_counter()
    shape = generate_vault(root, units)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    os.environ["VAULT_MODEL_DISABLED"] = "1"
    try:
        with Vault(root) as vault:
            report = vault.index()
    finally:
        del os.environ["VAULT_MODEL_DISABLED"]
    indexed = time.perf_counter() - started
    vectors = add_synthetic_vectors(root)
    manifest = {
        "generator": GENERATOR_VERSION,
        "units": report.units,
        "files": report.files,
        **shape,
        "distinct_texts": vectors,
        "generate_s": round(generated, 1),
        "index_keyword_only_s": round(indexed, 1),
    }
    manifest_path.write_text(json.dumps(manifest, indent=1))
    return root, manifest


def measure(root: Path, runs: int, mode: str, fresh: bool = False) -> dict[str, Any]:
    """In a child process: `runs` queries, each answered unbound and bound to an agent."""
    from vault_memory import Vault

    agents = [s for s in scope_folders() if len(s) == 2]
    rnd = random.Random(5)
    out: dict[str, Any] = {}
    with Vault(root) as vault:
        for query in QUERIES:  # warm: model, unit table, postings (no scope masks)
            vault.search(query, mode=mode, fresh=fresh)
        views = {agent: vault.scope(*agent) for agent in agents}
        times: dict[str, list[float]] = {"unscoped": [], "scoped": []}
        cpu: dict[str, list[float]] = {"unscoped": [], "scoped": []}
        visible: list[int] = []
        for number in range(runs):
            query = QUERIES[number % len(QUERIES)]
            agent = rnd.choice(agents)
            sides = [("unscoped", vault), ("scoped", views[agent])]
            for side, target in sides if number % 2 == 0 else sides[::-1]:
                started, cpu_started = time.perf_counter(), time.process_time()
                hits = target.search(query, mode=mode, fresh=fresh)
                times[side].append((time.perf_counter() - started) * 1000)
                cpu[side].append((time.process_time() - cpu_started) * 1000)
                if side == "scoped":
                    assert all(
                        h.path.startswith(
                            (
                                "scopes/" + "/".join(agent) + "/",
                                f"scopes/{agent[0]}/memory",
                                f"scopes/{agent[0]}/MEMORY.md",
                            )
                        )
                        or not h.path.startswith("scopes/")
                        for h in hits
                    ), hits
        table = vault.searcher.table(vault.cache.store.get_meta("model_id") or None)
        for agent in agents[:20]:
            names = ["", agent[0], "/".join(agent)]
            visible.append(table.restrict(names).units)
        out["units"] = len(table.ids)
        out["visible_units_median"] = statistics.median(visible)
    for side in ("unscoped", "scoped"):
        out[side] = {
            "p50": statistics.median(times[side]),
            "p95": percentile(times[side], 95),
            "max": max(times[side]),
            "cpu_p50": statistics.median(cpu[side]),
            "cpu_p95": percentile(cpu[side], 95),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=300, help="timed queries per side")
    parser.add_argument("--modes", default="hybrid,keyword")
    parser.add_argument("--fresh", action="store_true", help="stat the files before a query")
    parser.add_argument(
        "--measure", nargs=4, metavar=("ROOT", "RUNS", "MODE", "FRESH"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.measure:
        root, runs, mode, fresh = args.measure
        print(json.dumps(measure(Path(root), int(runs), mode, fresh == "1")))
        return
    for name in [n for n in os.environ if n.startswith("VAULT_")]:
        del os.environ[name]
    args.root.mkdir(parents=True, exist_ok=True)
    print(f"vault-memory scoped search benchmark — {machine()}")
    root, manifest = prepare(args.root, args.units)
    print(
        f"  {root}: {manifest['units']:,} units in {manifest['files']:,} files, "
        f"{manifest['scopes']} scopes + the root"
    )
    for mode in args.modes.split(","):
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--measure",
                str(root),
                str(args.runs),
                mode,
                "1" if args.fresh else "0",
            ],
            capture_output=True,
            text=True,
            env=cli_env(),
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"\n{mode}, fresh={args.fresh}, {args.runs} queries per side, alternating "
            f"(a scoped query sees about {result['visible_units_median']:,.0f} of "
            f"{result['units']:,} units):"
        )
        print(f"  {'':<10} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p50':>8} {'cpu p95':>8}")
        for side in ("unscoped", "scoped"):
            r = result[side]
            print(
                f"  {side:<10} {r['p50']:8.1f} {r['p95']:8.1f} {r['max']:8.1f} "
                f"{r['cpu_p50']:8.1f} {r['cpu_p95']:8.1f}"
            )
        ratio = result["scoped"]["p95"] / result["unscoped"]["p95"]
        verdict = "meets" if ratio <= 1.0 else "MISSES"
        print(f"  scoped / unscoped p95 = {ratio:.2f} ({verdict} the target <= 1.00)")


if __name__ == "__main__":
    main()
