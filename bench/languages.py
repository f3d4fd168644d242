"""Keyword search in every script: recall of exact phrases (and of the same phrases typed
without accents or in other widths) on the multilingual vault of
tests/support/multilingual_corpus.py.

    python bench/languages.py [--limit 5] [--mode hybrid]

Prints recall@limit by script, for the phrases as written and for the typed variants, and the
analyzer's cost on the sample vault's lines and on the multilingual notes. Runs on any version
of vault-memory (for a before/after: run it from two checkouts)."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _harness import ROOT  # this checkout's vault_memory and tests first on sys.path

from tests.support.multilingual_corpus import NOTES, QUERIES


def build(root: Path) -> None:
    (root / "notes").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    for note in NOTES:
        (root / "notes" / f"{note.name}.md").write_text(
            f"# {note.name}\n\n{note.text}\n", encoding="utf-8"
        )


def recall(limit: int, mode: str) -> dict[tuple[str, bool], list[bool]]:
    from vault_memory import Vault

    scripts = {n.name: n.script for n in NOTES}
    found: dict[tuple[str, bool], list[bool]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        build(root)
        vault = Vault(root)
        vault.index()
        for q in QUERIES:
            hits = vault.search(q.text, mode=mode, limit=limit)
            paths = [h.path if hasattr(h, "path") else h["path"] for h in hits]
            found[(scripts[q.note], q.variant)].append(f"notes/{q.note}.md" in paths)
    return found


def analyzer_cost() -> tuple[float, float]:
    from vault_memory.index import terms_of

    sample = [
        line
        for p in sorted((ROOT / "sample_vault").rglob("*.md"))
        if ".vault" not in p.parts
        for line in p.read_text("utf-8").splitlines()
    ]
    notes = [n.text for n in NOTES]
    out = []
    for texts in (sample, notes):
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            for text in texts:
                terms_of(text)
            runs.append((time.perf_counter() - start) / len(texts) * 1e6)
        out.append(statistics.median(runs))
    return out[0], out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--mode", choices=("keyword", "hybrid"), default="keyword")
    args = parser.parse_args()
    if args.mode == "keyword":
        os.environ.setdefault("VAULT_MODEL_DISABLED", "1")  # keyword search needs no model
    found = recall(args.limit, args.mode)
    print(f"{args.mode} recall@{args.limit} (notes {len(NOTES)}, queries {len(QUERIES)})")
    print(f"{'script':<10} {'as written':>14} {'typed otherwise':>16}")
    totals: dict[bool, list[bool]] = defaultdict(list)
    for script in dict.fromkeys(n.script for n in NOTES):
        cells = []
        for variant in (False, True):
            got = found.get((script, variant), [])
            totals[variant] += got
            cells.append(f"{sum(got)}/{len(got)} {sum(got) / len(got):.2f}" if got else "-")
        print(f"{script:<10} {cells[0]:>14} {cells[1]:>16}")
    cells = [f"{sum(t)}/{len(t)} {sum(t) / len(t):.2f}" for t in (totals[False], totals[True])]
    print(f"{'all':<10} {cells[0]:>14} {cells[1]:>16}")
    sample_us, notes_us = analyzer_cost()
    print(
        f"analyzer: {sample_us:.1f} us/line on sample_vault (ASCII path), "
        f"{notes_us:.1f} us/text on the multilingual notes"
    )


if __name__ == "__main__":
    main()
