"""Deep Dream costs: the search hit log, a dream of sample_vault/, and consolidation at scale.
A benchmark, not a test.

    python bench/dream.py                # everything
    python bench/dream.py --runs 7       # more repetitions per figure

Figures (medians):
- `hitlog.record`: one query's 10 hits appended to `.vault/hits.jsonl` (target < 1 ms).
- a dry-run dream of a copy of sample_vault/ (14-day window, 54 new entries) with the bundled
  model (vectors cached after the first run, as in a long-running watcher) and with token
  overlap only; plus the first run of a fresh process's model (load + embedding).
- `consolidate` on a synthetic window of 700 new items (50 a day for 14 days) against a
  200-entry MEMORY.md, token overlap (the pure-Python part every dream pays).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from _harness import ROOT, median_ms  # noqa: E402 - this checkout's vault_memory first

NOW = dt.datetime(2026, 11, 22, 3, 30, tzinfo=dt.UTC)


def bench_hitlog(tmp: Path, runs: int) -> str:
    from vault_memory.search import hitlog

    cache = tmp / ".vault"
    cache.mkdir()
    hits = [
        SimpleNamespace(
            path=f"memory/2026-11-{d:02d}.md",
            start_line=4,
            end_line=6,
            text="- a line of a daily log\n- and another one #decision\n- x",
        )
        for d in range(1, 11)
    ]
    samples = []
    for _ in range(max(runs, 1) * 300):
        start = time.perf_counter()
        hitlog.record(cache, hits)
        samples.append(time.perf_counter() - start)
    start = time.perf_counter()
    found = hitlog.counts(cache)
    read = time.perf_counter() - start
    return (
        f"hitlog.record (10 hits): median {median_ms(samples, 2)}, p99 "
        f"{sorted(samples)[int(len(samples) * 0.99)] * 1000:.2f} ms over {len(samples)}; "
        f"hitlog.counts of {len(samples)} lines: {read * 1000:.1f} ms ({len(found)} keys)"
    )


def bench_sample(tmp: Path, runs: int, model: bool) -> str:
    from vault_memory import Vault

    if model:
        os.environ.pop("VAULT_MODEL_DISABLED", None)
    else:
        os.environ["VAULT_MODEL_DISABLED"] = "1"
    vault_dir = tmp / ("sample-model" if model else "sample-tokens")
    shutil.copytree(ROOT / "sample_vault", vault_dir, ignore=shutil.ignore_patterns(".vault"))
    samples = []
    first = None
    for _ in range(runs + 1):
        start = time.perf_counter()
        with Vault(vault_dir) as vault:
            report = vault.dream(dry_run=True, now=NOW)
        elapsed = time.perf_counter() - start
        if first is None:
            first = elapsed
        else:
            samples.append(elapsed)
    what = "bundled model + token overlap" if model else "token overlap only"
    return (
        f"dry-run dream of sample_vault ({what}): first {first:.2f} s, then median "
        f"{statistics.median(samples):.2f} s; {report.new_entries} new entries, "
        f"{len(report.added)} added, {len(report.merged)} merged"
    )


def bench_consolidate(runs: int) -> str:
    from vault_memory.dream.decide import Policy, consolidate, extract_items
    from vault_memory.dream.similarity import TokenSimilarity
    from vault_memory.files.memoryfile import parse_memory
    from vault_memory.files.notes import parse_note

    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(800)]

    def sentence() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(6, 14))).capitalize() + "."

    memory = parse_memory(
        "# MEMORY\n\n"
        + "".join(
            f"## Topic {t}\n" + "".join(f"- {sentence()}\n" for _ in range(20)) + "\n"
            for t in range(10)
        )
    )
    items = []
    for day in range(14):
        date = dt.date(2026, 11, 8) + dt.timedelta(days=day)
        body = "".join(
            f"- {sentence()}{' #decision' if rng.random() < 0.1 else ''}\n" for _ in range(50)
        )
        items += extract_items(parse_note(f"memory/{date}.md", f"# {date}\n\n{body}"))
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        plan = consolidate(
            memory,
            items,
            Policy(max_memory_chars=40_000),
            TokenSimilarity(),
            evidence=items,
            today=NOW.date(),
        )
        samples.append(time.perf_counter() - start)
    return (
        f"consolidate, {len(items)} new items vs {len(memory.entries)} entries (token "
        f"overlap): median {statistics.median(samples):.2f} s; {len(plan.added)} added, "
        f"{len(plan.merged)} merged, {len(plan.archived)} archived"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(bench_hitlog(Path(tmp), args.runs))
        print(bench_sample(Path(tmp), args.runs, model=False))
        print(bench_sample(Path(tmp), args.runs, model=True))
        print(bench_consolidate(args.runs))


if __name__ == "__main__":
    main()
