"""Superseded facts (issue 25, part 2): precision and recall of search/supersede.py on the
labelled pairs of tests/supersede_corpus.py (the rules were written against PAIRS; HELD_OUT was
written after them and never used to change one), and the cost of the search post-step.

Usage: python bench/supersede.py [--runs 5] [--show]
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.supersede_corpus import HELD_OUT, PAIRS  # noqa: E402
from vault_memory.search.supersede import (  # noqa: E402
    Dated,
    current_of,
    statements,
    supersedes,
)


def report(name: str, pairs: list[tuple[str, str, bool]], show: bool) -> None:
    said = [(supersedes(newer, older) is not None, label, older, newer)
            for older, newer, label in pairs]
    caught = sum(p and t for p, t, _, _ in said)
    false = sum(p and not t for p, t, _, _ in said)
    positives = sum(t for _, t, _, _ in said)
    precision = caught / (caught + false) if caught + false else 1.0
    print(f"{name}: {positives} superseding pairs, {len(pairs) - positives} look-alikes")
    print(f"  precision {precision:.3f}  recall {caught / positives:.3f}  "
          f"false positives {false}/{len(pairs) - positives}")
    for p, t, older, newer in said if show else []:
        if p != t:
            print(f"  {'missed' if t else 'wrong'}: {older!r} -> {newer!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--show", action="store_true", help="list misses and false positives")
    args = parser.parse_args()
    report("pairs", PAIRS, args.show)
    report("held out", HELD_OUT, args.show)
    texts = [t for older, newer, _ in PAIRS + HELD_OUT for t in (older, newer)][:20]
    walls, cpus = [], []
    for _ in range(args.runs):
        statements.cache_clear()  # a cold post-step: every hit's text read anew
        dated = [Dated(str(i), dt.date(2026, 1, 1) + dt.timedelta(days=i), t)
                 for i, t in enumerate(texts)]
        wall, cpu = time.perf_counter(), time.process_time()
        current_of(dated)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    print(f"post-step on {len(texts)} hits: {statistics.median(walls) * 1000:.2f} ms wall, "
          f"{statistics.median(cpus) * 1000:.2f} ms CPU (median of {args.runs}, cold cache)")


if __name__ == "__main__":
    main()
