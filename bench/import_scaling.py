"""Import scaling: many conversations on one day cost in proportion to their number.

Usage: python bench/import_scaling.py [--sizes 500,2000] [--runs 1] [--profile]

Each size is a synthetic ChatGPT export whose conversations all fall on one day (4-12
messages each, a regenerated reply in every third), imported into an empty vault through the
library, as `vault import` does. The sizes are run side by side (small, large, small, large,
...) and compared by the ratio of their medians: 4x the conversations should cost about 4x
(at most 5x), where a flush that reads and parses the day's whole log again for each
conversation costs 16x. Wall and CPU seconds are both given (wall includes the fsyncs of
each append). Writes bench/results/import_scaling.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout

from transfer import WORDS, gpt_message as message  # noqa: E402  (bench/transfer.py)

from vault_memory import Vault  # noqa: E402

DAY_START = 1757066400.0  # 2025-09-05 10:00 UTC
RESULT = ROOT / "bench" / "results" / "import_scaling.json"


def conversation(rng: random.Random, number: int) -> dict[str, Any]:
    """One conversation on the day, `number` seconds-ish after the one before it."""
    stamp = DAY_START + number * 20
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "children": []}}
    parent = "root"
    for i in range(rng.randrange(4, 13)):
        role = "user" if i % 2 == 0 else "assistant"
        words = " ".join(rng.choice(WORDS) for _ in range(12 if role == "user" else 30))
        text = (
            f"I prefer {rng.choice(WORDS)} over {rng.choice(WORDS)} for {words} ({number}.{i})."
            if role == "user"
            else f"{words.capitalize()} ({number}.{i})."
        )
        node = f"n{i}"
        mapping[node] = {
            "id": node,
            "message": message(role, text, stamp + i),
            "parent": parent,
            "children": [],
        }
        mapping[parent]["children"].append(node)
        if number % 3 == 0 and i == 1:  # a regenerated reply, left out of the import
            mapping["alt"] = {
                "id": "alt",
                "parent": parent,
                "children": [],
                "message": message("assistant", "An earlier answer.", stamp),
            }
            mapping[parent]["children"].append("alt")
        parent = node
    return {
        "title": f"Conversation {number}",
        "create_time": stamp,
        "mapping": mapping,
        "current_node": parent,
        "id": f"{number:08x}-aaaa-bbbb-cccc",
    }


def write_export(path: Path, conversations: int) -> None:
    rng = random.Random(conversations)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for n in range(conversations):
            fh.write(("," if n else "") + json.dumps(conversation(rng, n)))
        fh.write("]")


def import_once(folder: Path, export: Path) -> dict[str, float]:
    vault = Vault(Vault.init(folder).root)
    wall, cpu = time.perf_counter(), time.process_time()
    report = vault.import_history(export)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    vault.close()
    if len(report.logs) != 1 or report.imported != report.conversations:
        raise SystemExit(f"unexpected import: {report.to_dict()}")
    return {"wall": wall, "cpu": cpu, "entries": report.entries}


def measure(sizes: list[int], runs: int, profile: bool) -> dict[int, list[dict[str, float]]]:
    results: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        exports = {}
        for n in sizes:
            exports[n] = Path(tmp) / f"conversations-{n}.json"
            write_export(exports[n], n)
        for run in range(runs):
            for n in sizes:  # side by side: each run imports every size once
                folder = Path(tmp) / f"vault-{n}-{run}"
                if profile and n == max(sizes) and run == 0:
                    import cProfile
                    import pstats

                    profiler = cProfile.Profile()
                    profiler.enable()
                    figures = import_once(folder, exports[n])
                    profiler.disable()
                    pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
                else:
                    figures = import_once(folder, exports[n])
                results[n].append(figures)
                print(
                    f"{n:>6} conversations on one day: {figures['wall']:7.2f} s wall, "
                    f"{figures['cpu']:7.2f} s CPU, {figures['entries']:.0f} entries",
                    flush=True,
                )
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="500,2000")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="profile the largest, once")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    results = measure(sizes, args.runs, args.profile)
    small, large = sizes[0], sizes[-1]
    figures: dict[str, Any] = {}
    for n in sizes:
        figures[f"wall_s_{n}"] = round(statistics.median(r["wall"] for r in results[n]), 3)
        figures[f"cpu_s_{n}"] = round(statistics.median(r["cpu"] for r in results[n]), 3)
    for kind in ("wall", "cpu"):
        ratio = figures[f"{kind}_s_{large}"] / max(figures[f"{kind}_s_{small}"], 1e-9)
        figures[f"{kind}_ratio"] = round(ratio, 2)
    figures["input_ratio"] = large / small
    print(
        f"t({large})/t({small}) = {figures['wall_ratio']:.2f} wall, {figures['cpu_ratio']:.2f} "
        f"CPU, for {large / small:g}x the conversations (target: at most 5)"
    )
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(
        json.dumps(
            {
                "name": "import_scaling",
                "date": time.strftime("%Y-%m-%d"),
                "machine": {"platform": platform.platform(), "python": platform.python_version()},
                "versions": {"vault-memory": _version()},
                "figures": figures,
                "runs": args.runs,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )


def _version() -> str:
    from importlib.metadata import version

    return version("vault-memory")


if __name__ == "__main__":
    main()
