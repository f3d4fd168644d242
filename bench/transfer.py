"""Import/export benchmark: `vault export` of 100k units, `vault import` of a ChatGPT data
export (first import, re-import, and the memory a large file takes while streamed).

Usage: python bench/transfer.py [--units 100000] [--runs 5] [--conversations 500]
       [--big-mb 200]

1. Export: a vault of --units units (daily logs of 50 bullets under flush headings, notes with
   frontmatter, a MEMORY.md), exported in process to a file; median wall and CPU seconds of
   --runs. Target: 100k units in under 5 s.
2. Import: a synthetic ChatGPT conversations.json of --conversations conversations (4-12
   messages, over a year, a branch in every third) into an empty vault, then the same file
   again (nothing new). Wall and CPU seconds, conversations per second.
3. Streaming: peak RSS of a fresh process that reads (first pass: parse and count) a
   conversations.json of --big-mb MB against one of a tenth of that size. Constant memory
   means the two peaks are about the same.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _harness import ROOT  # noqa: E402 - this checkout's vault_memory first

from vault_memory import Vault  # noqa: E402
from vault_memory.files import parse_note  # noqa: E402
from vault_memory.index.units import make_units  # noqa: E402

WORDS = [
    "billing",
    "invoice",
    "ledger",
    "postgres",
    "renderer",
    "backup",
    "deploy",
    "review",
    "Jonas",
    "Priya",
    "Maya",
    "cutover",
    "Friday",
    "migration",
    "schema",
    "staging",
    "alert",
    "on-call",
    "latency",
    "budget",
]
T0 = 1757000000.0


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def build_vault(root: Path, units: int) -> int:
    rng = random.Random(3)
    Vault.init(root)
    per_log = 50
    logs = units // per_log
    start = 20000  # days since 1970 → 2024-10-04
    for i in range(logs):
        day = time.strftime("%Y-%m-%d", time.gmtime((start + i) * 86400))
        lines = [f"# {day}", ""]
        for block in range(5):
            lines.append(f"## {9 + block}:{rng.randrange(60):02d} · flush · session s{i}-{block}")
            lines.extend(f"- {sentence(rng)} #tag{rng.randrange(9)}" for _ in range(per_log // 5))
            lines.append("")
        (root / "memory" / f"{day}.md").write_text("\n".join(lines), encoding="utf-8")
    counted = 0
    for path in (root / "memory").glob("*.md"):
        counted += len(make_units(parse_note(f"memory/{path.name}", path.read_text())))
    return counted


def bench_export(units: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        counted = build_vault(root, units)
        vault = Vault(root)
        walls, cpus = [], []
        for _ in range(runs):
            out = Path(tmp) / "export.jsonl"
            wall, cpu = time.perf_counter(), time.process_time()
            with out.open("w", encoding="utf-8", newline="") as fh:
                report = vault.export(fh)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        size = out.stat().st_size
        print(
            f"export: {counted:,} units in {report.files:,} files, {report.sections:,} "
            f"sections, {size / 1e6:.1f} MB of JSONL: median {statistics.median(walls):.2f} s "
            f"wall ({min(walls):.2f}-{max(walls):.2f}), {statistics.median(cpus):.2f} s CPU; "
            f"target < 5 s"
        )


def gpt_message(role: str, text: str, stamp: float) -> dict[str, Any]:
    return {
        "id": f"{stamp}-{role}",
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": stamp,
        "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": {},
        "recipient": "all",
    }


def conversation(rng: random.Random, number: int) -> dict[str, Any]:
    stamp = T0 + rng.randrange(365) * 86400 + rng.randrange(86400)
    mapping: dict[str, Any] = {
        "root": {"id": "root", "message": None, "parent": None, "children": []}
    }
    parent = "root"
    for i in range(rng.randrange(4, 13)):
        node = f"n{i}"
        role = "user" if i % 2 == 0 else "assistant"
        text = (
            f"I prefer {rng.choice(WORDS)} over {rng.choice(WORDS)} for the "
            f"{rng.choice(WORDS)} work ({number}.{i})."
            if role == "user"
            else sentence(rng, 30)
        )
        mapping[node] = {
            "id": node,
            "message": gpt_message(role, text, stamp + 60 * i),
            "parent": parent,
            "children": [],
        }
        mapping[parent]["children"].append(node)
        if number % 3 == 0 and i == 1:  # a regenerated reply
            mapping["alt"] = {
                "id": "alt",
                "parent": parent,
                "children": [],
                "message": gpt_message("assistant", sentence(rng), stamp),
            }
            mapping[parent]["children"].append("alt")
        parent = node
    return {
        "title": f"Conversation {number}",
        "create_time": stamp,
        "update_time": stamp,
        "mapping": mapping,
        "current_node": parent,
        "id": f"{number:08x}-aaaa-bbbb",
        "conversation_id": f"{number:08x}-aaaa-bbbb",
    }


def write_export(path: Path, conversations: int, seed: int = 5) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for n in range(conversations):
            fh.write(("," if n else "") + json.dumps(conversation(rng, n)))
        fh.write("]")


def bench_import(conversations: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "conversations.json"
        write_export(export, conversations)
        vault = Vault(Vault.init(Path(tmp) / "vault").root)
        for label in ("first import", "again (nothing new)"):
            wall, cpu = time.perf_counter(), time.process_time()
            report = vault.import_history(export)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"import, {label}: {conversations} conversations "
                f"({export.stat().st_size / 1e6:.1f} MB), {report.entries} new entries in "
                f"{len(report.logs)} logs: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                f"{conversations / wall:.0f} conversations/s"
            )


PEAK = """
import resource, sys
sys.path.insert(0, {root!r})
from vault_memory.transfer.formats import Source, iter_items
from pathlib import Path
n = sum(1 for _ in iter_items(Source(Path({path!r}))))
print(n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def bench_streaming(big_mb: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sizes = {}
        for mb in (big_mb // 10, big_mb):
            path = Path(tmp) / f"c{mb}.json"
            count = 0
            rng = random.Random(9)
            with path.open("w", encoding="utf-8") as fh:
                fh.write("[")
                while fh.tell() < mb * 1_000_000:
                    fh.write(("," if count else "") + json.dumps(conversation(rng, count)))
                    count += 1
                fh.write("]")
            wall = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", PEAK.format(root=str(ROOT), path=str(path))],
                capture_output=True,
                text=True,
                check=True,
            )
            wall = time.perf_counter() - wall
            n, peak = out.stdout.split()
            sizes[mb] = int(peak)
            print(
                f"streaming: {mb} MB, {int(n):,} conversations read in {wall:.1f} s, "
                f"peak RSS {int(peak) / 1024:.0f} MB"
            )
            os.unlink(path)
        small, big = sizes[big_mb // 10], sizes[big_mb]
        print(f"streaming: peak RSS ratio {big_mb} MB / {big_mb // 10} MB file = {big / small:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--big-mb", type=int, default=200)
    args = parser.parse_args()
    bench_export(args.units, args.runs)
    bench_import(args.conversations)
    bench_streaming(args.big_mb)


if __name__ == "__main__":
    main()
