"""Poisoned-memory benchmark: the offline detector of files/injection.py on the corpus of
tests/support/injection_corpus.py.

Usage: python bench/injection.py [--runs 5] [--show] [--vault DIR]

--vault DIR also counts the flagged lines (and whole daily logs) of a vault's `memory/*.md`,
e.g. the LoCoMo development vaults of /work/shared/eval (`make_vault.py --out DIR`): real
conversation, where every flag is a false positive.

Precision: of the texts flagged, the share that are injections; recall: of the injections,
the share flagged; false-positive rate: ordinary notes flagged. Reported for the main corpus
(the rules were written against it) and for the held-out lists (written after the rules,
never used to change them), with recall per style. Time: the whole corpus judged once,
median of --runs, wall and CPU.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _harness import time_call, write_results  # this checkout's vault_memory first

from tests.support.injection_corpus import (
    FRESH_INJECTIONS,
    FRESH_ORDINARY,
    HELD_OUT_INJECTIONS,
    HELD_OUT_ORDINARY,
    INJECTIONS,
    ORDINARY,
)
from vault_memory.files.injection import is_instruction, judge_instruction  # noqa: E402


def report(
    name: str, injections: list[tuple[str, str]], ordinary: list[str], show: bool
) -> dict[str, float]:
    caught = [text for _, text in injections if is_instruction(text)]
    false = [text for text in ordinary if is_instruction(text)]
    precision = len(caught) / (len(caught) + len(false)) if caught or false else 1.0
    recall = len(caught) / len(injections)
    print(f"{name}: {len(injections)} injections, {len(ordinary)} ordinary notes")
    print(
        f"  precision {precision:.3f}  recall {recall:.3f}  "
        f"false positives {len(false)}/{len(ordinary)} ({len(false) / len(ordinary):.1%})"
    )
    styles = sorted({style for style, _ in injections})
    per_style = []
    for style in styles:
        texts = [text for s, text in injections if s == style]
        per_style.append(f"{style} {sum(map(is_instruction, texts))}/{len(texts)}")
    print("  recall by style: " + ", ".join(per_style))
    if show:
        for style, text in injections:
            if not is_instruction(text):
                print(f"  missed [{style}] {text[:90]!r}")
        for text in false:
            print(f"  flagged {text[:90]!r} {judge_instruction(text).reasons}")
    return {
        "injections": len(injections),
        "ordinary": len(ordinary),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "false_positives": len(false),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--show", action="store_true", help="list misses and false positives")
    parser.add_argument("--vault", type=Path, help="also count flags in DIR/**/memory/*.md")
    args = parser.parse_args()
    figures: dict[str, dict[str, float]] = {
        "corpus": report("corpus", INJECTIONS, ORDINARY, args.show),
        "held out": report("held out", HELD_OUT_INJECTIONS, HELD_OUT_ORDINARY, args.show),
        "fresh held out": report("fresh held out", FRESH_INJECTIONS, FRESH_ORDINARY, args.show),
    }
    if args.vault:
        logs = sorted(args.vault.rglob("memory/*.md"))
        lines = [
            line
            for log in logs
            for line in log.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")
        ]
        flagged = [line for line in lines if is_instruction(line)]
        whole = sum(is_instruction(log.read_text(encoding="utf-8")) for log in logs)
        print(
            f"{args.vault}: {len(flagged)}/{len(lines)} lines flagged, "
            f"{whole}/{len(logs)} daily logs flagged as a whole"
        )
        for line in flagged[:20] if args.show else []:
            print(f"  flagged {line[:90]!r} {judge_instruction(line).reasons}")
    texts = [t for _, t in INJECTIONS + HELD_OUT_INJECTIONS] + ORDINARY + HELD_OUT_ORDINARY
    timing = time_call(lambda: [judge_instruction(text) for text in texts], args.runs)
    wall_ms, cpu_ms = timing.wall * 1000, timing.cpu * 1000
    print(
        f"time: {len(texts)} texts in {wall_ms:.1f} ms wall, {cpu_ms:.1f} ms CPU "
        f"(median of {args.runs}; {wall_ms * 1000 / len(texts):.0f} µs a text)"
    )
    figures[f"judging {len(texts)} texts"] = timing.figures()
    print(f"wrote {write_results('injection', figures)}")


if __name__ == "__main__":
    main()
