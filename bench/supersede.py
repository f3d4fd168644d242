"""Superseded facts: precision and recall of search/supersede.py on the
labelled pairs of tests/support/supersede_corpus.py (the rules were written against PAIRS; HELD_OUT
was written after them and never used to change one), and the cost of the search post-step.

Usage: python bench/supersede.py [--runs 5] [--show] [--vault DIR]

--vault DIR also reads every line of DIR/**/memory/*.md as a dated text and counts the lines
that supersede another (e.g. the LoCoMo development vaults of /work/shared/eval, made with
`make_vault.py --out DIR`: dialogue, where a false supersession is easy to see).
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from _harness import time_call, write_results  # this checkout's vault_memory first

from tests.support.supersede_corpus import HELD_OUT, PAIRS  # noqa: E402
from vault_memory.search.supersede import (  # noqa: E402
    Dated,
    current_of,
    statements,
    supersedes,
)


def report(name: str, pairs: list[tuple[str, str, bool]], show: bool) -> dict[str, float]:
    said = [
        (supersedes(newer, older) is not None, label, older, newer) for older, newer, label in pairs
    ]
    caught = sum(p and t for p, t, _, _ in said)
    false = sum(p and not t for p, t, _, _ in said)
    positives = sum(t for _, t, _, _ in said)
    precision = caught / (caught + false) if caught + false else 1.0
    print(f"{name}: {positives} superseding pairs, {len(pairs) - positives} look-alikes")
    print(
        f"  precision {precision:.3f}  recall {caught / positives:.3f}  "
        f"false positives {false}/{len(pairs) - positives}"
    )
    for p, t, older, newer in said if show else []:
        if p != t:
            print(f"  {'missed' if t else 'wrong'}: {older!r} -> {newer!r}")
    return {
        "pairs": len(pairs),
        "precision": round(precision, 4),
        "recall": round(caught / positives, 4),
        "false_positives": false,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--show", action="store_true", help="list misses and false positives")
    parser.add_argument("--vault", type=Path, help="also count supersessions in DIR's logs")
    args = parser.parse_args()
    figures: dict[str, dict[str, float]] = {
        "pairs": report("pairs", PAIRS, args.show),
        "held out": report("held out", HELD_OUT, args.show),
    }
    if args.vault:
        lines = superseded = stated = 0
        for memory in sorted(args.vault.rglob("memory")):
            texts = [
                Dated(f"{log.name}#L{n}", dt.date.fromisoformat(log.stem), line)
                for log in sorted(memory.glob("*.md"))
                for n, line in enumerate(log.read_text(encoding="utf-8").splitlines(), 1)
                if line.strip() and not line.startswith("#")
            ]
            lines += len(texts)
            stated += sum(bool(statements(t.text)) for t in texts)
            found = current_of(texts)
            superseded += len(found)
            by_id = {t.id: t.text for t in texts}
            for old, (new, why) in list(found.items())[:5] if args.show else []:
                print(f"  {why.reason}: {by_id[old][:60]!r} -> {by_id[new][:60]!r}")
        print(
            f"{args.vault}: {superseded} of {lines} lines superseded "
            f"({stated} state something the rules read)"
        )
    texts = [t for older, newer, _ in PAIRS + HELD_OUT for t in (older, newer)][:20]
    dated = [
        Dated(str(i), dt.date(2026, 1, 1) + dt.timedelta(days=i), t) for i, t in enumerate(texts)
    ]

    def cold_post_step() -> None:
        statements.cache_clear()  # a cold post-step: every hit's text read anew
        current_of(dated)

    timing = time_call(cold_post_step, args.runs)
    print(f"post-step on {len(texts)} hits: {timing.ms(2)} (median of {args.runs}, cold cache)")
    figures["post-step, 20 hits"] = timing.figures()
    print(f"wrote {write_results('supersede', figures)}")


if __name__ == "__main__":
    main()
