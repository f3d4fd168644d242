"""Sessions benchmark: transcripts and `continue` on a 50,000-message conversation (the
target: each under 2 s).

Usage: python bench/sessions.py [--messages 50000] [--runs 5]

In process, wall and CPU seconds (median of --runs, each on a fresh copy of the vault):
1. first write: the whole conversation into an empty transcript (`Vault.record_transcript`:
   parse + redact + render + one atomic create).
2. append: a longer version (the same 50,000 messages and 2 new ones) into the full
   transcript: read it, find the 2 new messages, append them under the lock.
3. again: the same conversation once more (nothing to append; the lock-free first look).
4. continue: `Vault.continue_session("last", 8000)` on the 50,000-message transcript.
5. the same through a `vault flush` (daily log + transcript) of a longer version, for scale
   (the flush's own extraction reads every message).
The CLI (`vault sessions continue last`) is timed as a whole process (`/usr/bin/time -v`): see the
README's "Sessions" section for the command and its figures.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _harness import time_call  # this checkout's vault_memory first

from vault_memory import Vault  # noqa: E402

WORDS = [
    "billing",
    "ledger",
    "invoice",
    "renderer",
    "backup",
    "staging",
    "deploy",
    "review",
    "PostgreSQL",
    "pytest",
    "migration",
    "schema",
    "replica",
    "Thursday",
    "Jonas",
    "Priya",
    "approve",
    "queue",
    "worker",
    "cache",
]


def conversation(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful assistant."}]
    for i in range(n - 1):
        if i % 10 == 7:
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {
                                "name": "search_memory",
                                "arguments": json.dumps({"query": " ".join(rng.sample(WORDS, 3))}),
                            },
                        }
                    ],
                }
            )
        elif i % 10 == 8:
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": f"call_{i - 1}",
                    "content": " ".join(rng.choices(WORDS, k=20)),
                }
            )
        else:
            role = "user" if i % 2 == 0 else "assistant"
            words = " ".join(rng.choices(WORDS, k=rng.randint(5, 30)))
            out.append({"role": role, "content": f"{words.capitalize()} ({i})."})
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    timing = time_call(fn)
    return timing.wall, timing.cpu, timing.result


def report(name: str, runs: list[tuple[float, float]], extra: str = "") -> None:
    walls = sorted(w for w, _ in runs)
    cpus = sorted(c for _, c in runs)
    print(
        f"{name:<44} wall median {statistics.median(walls):6.3f} s "
        f"(min {walls[0]:.3f}, max {walls[-1]:.3f}), cpu median "
        f"{statistics.median(cpus):6.3f} s{extra}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    chat = conversation(args.messages)
    longer = [
        *chat,
        {"role": "user", "content": "One more question about the ledger."},
        {"role": "assistant", "content": "The ledger export runs nightly."},
    ]
    size = len(json.dumps(chat).encode())
    print(f"{args.messages:,} messages, {size / 1e6:.1f} MB of JSON, {args.runs} runs each")
    with tempfile.TemporaryDirectory() as tmp:
        base = Vault.init(Path(tmp) / "base").root
        first: list[tuple[float, float]] = []
        for run in range(args.runs):
            root = Path(tmp) / f"first{run}"
            shutil.copytree(base, root)
            wall, cpu, done = timed(lambda r=root: Vault(r).record_transcript(chat, "big"))
            assert done.appended == len(chat), done
            first.append((wall, cpu))
        transcript = next((Path(tmp) / "first0" / "sessions").glob("*.md"))
        report(
            "1. first write of the transcript",
            first,
            f"; file {transcript.stat().st_size / 1e6:.1f} MB",
        )
        full = Path(tmp) / "first0"
        appends, agains, continues = [], [], []
        for run in range(args.runs):
            root = Path(tmp) / f"append{run}"
            shutil.copytree(full, root)
            vault = Vault(root)
            wall, cpu, done = timed(lambda v=vault: v.record_transcript(longer, "big"))
            assert done.appended == 2 and done.held == len(chat), done
            appends.append((wall, cpu))
            wall, cpu, done = timed(lambda v=vault: v.record_transcript(longer, "big"))
            assert done.appended == 0
            agains.append((wall, cpu))
            wall, cpu, found = timed(lambda v=vault: v.continue_session("last", 8000))
            assert found.tokens <= 8000 and found.summarised > 40_000, found.to_dict().keys()
            continues.append((wall, cpu))
        report("2. append 2 new messages to it", appends)
        report("3. the same conversation again (nothing new)", agains)
        report(
            "4. continue last --budget 8000",
            continues,
            f"; {len(found.recent)} recent, {found.summarised:,} summarised",
        )
        flushes = []
        for run in range(min(args.runs, 3)):
            root = Path(tmp) / f"flush{run}"
            shutil.copytree(full, root)
            vault = Vault(root, {"flush.max_input_bytes": 50_000_000})
            wall, cpu, done = timed(lambda v=vault: v.flush(longer, session="big"))
            assert done.transcript.appended == 2
            flushes.append((wall, cpu))
        report("5. vault flush of the longer version (all)", flushes)


if __name__ == "__main__":
    main()
