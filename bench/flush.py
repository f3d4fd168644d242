"""Flush benchmark: extraction and redaction speed, the cost of idempotence in a vault with many
daily logs, a cold `vault flush` process, and what the offline extraction keeps of real dialogue.

Usage: python bench/flush.py [--messages 2000] [--logs 1000] [--runs 5] [--no-locomo]

1. A conversation of --messages messages (user, assistant with code, tool calls and results;
   about 1 MB of JSON) flushed into an empty vault, in process: parse + redact + extract +
   write. Median of --runs, each into a fresh vault.
2. Idempotence lookup: the same conversation flushed again (nothing new) into a vault that
   also holds --logs daily logs of realistic size, several with flush blocks of other sessions:
   every daily log is read to find the session's earlier entries. Median of --runs.
3. Redaction of 5 MB: prose with secrets, and a random base64 blob (the slowest case).
4. A cold `python -m vault_memory flush` process on a 40-message conversation: median of --runs.
5. LoCoMo dialogue (../shared/eval, if present): share of turns that yield an entry, and share
   of the questions' evidence turns that do. A characterisation, not a target: LoCoMo is
   chit-chat between two people, not an agent conversation, and no rule is tuned to it.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
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

from _harness import ROOT, time_call  # noqa: E402 - this checkout's vault_memory first

from vault_memory import Vault  # noqa: E402
from vault_memory.capture.conversation import Message  # noqa: E402
from vault_memory.capture.extract import extract_offline  # noqa: E402
from vault_memory.capture.redact import redact  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "eval" / "locomo" / "locomo-dev.json"

USER_LINES = [
    "I prefer {tool} over {other} for {thing}.",
    "We decided to move {thing} to {tool} next quarter.",
    "Actually, the {thing} review is on {day}, not Monday.",
    "Please remember that {person} must approve every change to {thing}.",
    "Can you write a test for the {thing} parser?",
    "Thanks, that works!",
    "My staging password is Tr0ub4dor&{n} and the key is sk-proj-{key}.",
    "{person} owns {thing} now, so tag them on reviews.",
]
TOOLS = ["PostgreSQL", "uv", "pytest", "Neovim", "GitLab CI", "Lua", "Terraform", "Grafana"]
THINGS = ["billing-core", "the invoice renderer", "the ledger export", "the nightly backup"]
PEOPLE = ["Jonas", "Priya", "Zoë", "Jürgen", "Tomás", "Maya"]
DAYS = ["Tuesday", "Wednesday", "Thursday", "Friday"]


def conversation(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(n // 4):
        line = rng.choice(USER_LINES).format(
            tool=rng.choice(TOOLS),
            other=rng.choice(TOOLS),
            thing=rng.choice(THINGS),
            day=rng.choice(DAYS),
            person=rng.choice(PEOPLE),
            n=i,
            key="".join(rng.choice("abcdefghijKLMNOP0123456789") for _ in range(32)),
        )
        messages.append({"role": "user", "content": f"{line} (turn {i})"})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "run", "arguments": json.dumps({"cmd": "pytest -q"})},
                    }
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": "." * 200 + f"\n{i} passed in 0.{i % 10}s\n" * 3,
            }
        )
        messages.append(
            {
                "role": "assistant",
                "content": (
                    f"Here is the change for turn {i}. I think it should work.\n\n```python\n"
                    + "def f(x):\n    return x + 1\n" * 5
                    + "```\nThe root cause was a missing "
                    f"timezone in the fixture of turn {i}."
                ),
            }
        )
    return messages


def make_vault(where: Path, logs: int) -> Path:
    root = Vault.init(where).root
    rng = random.Random(3)
    day = dt.date(2024, 1, 1)
    for i in range(logs):
        lines = [f"# {day.isoformat()}", ""]
        for hour in range(9, 9 + rng.randint(2, 5)):
            source = f"flush · session s{i % 50:03d}" if rng.random() < 0.3 else "note"
            lines += [f"## {hour:02d}:{rng.randint(0, 59):02d} · {source}"]
            for _ in range(rng.randint(1, 5)):
                lines.append(
                    f"- {rng.choice(PEOPLE)} decided to move {rng.choice(THINGS)} to "
                    f"{rng.choice(TOOLS)} before {rng.choice(DAYS)}."
                )
            lines.append("")
        (root / "memory" / f"{day.isoformat()}.md").write_text("\n".join(lines))
        day += dt.timedelta(days=1)
    return root


def bench_flush(args: argparse.Namespace, tmp: Path) -> None:
    chat = conversation(args.messages)
    raw = json.dumps(chat)
    print(f"conversation: {len(chat)} messages, {len(raw) / 1e6:.2f} MB of JSON")
    times, report = [], None
    for run in range(args.runs):
        root = Vault.init(tmp / f"empty{run}").root
        with Vault(root) as vault:
            times.append(time_call(lambda v=vault: results.append(v.flush(raw, session="b"))).wall)
        report = results[-1]
    assert report is not None
    print(
        f"1. flush into an empty vault: median {statistics.median(times):.3f} s "
        f"({len(report.entries)} entries, {sum(report.redactions.values())} secrets "
        "redacted)"
    )

    root = make_vault(tmp / "big", args.logs)
    with Vault(root) as vault:
        first = vault.flush(raw, session="b")
        times = [
            time_call(lambda: results.append(vault.flush(raw, session="b"))).wall
            for _ in range(args.runs)
        ]
        assert results[-1].entries == [] and results[-1].already_flushed == len(first.entries)
    size = sum(p.stat().st_size for p in (root / "memory").glob("*.md"))
    print(
        f"2. the same flush again, {args.logs} daily logs ({size / 1e6:.1f} MB): median "
        f"{statistics.median(times):.3f} s, nothing written"
    )


results: list[Any] = []


def bench_redact() -> None:
    prose = (
        "Chose PostgreSQL 16 for billing; the password is in the vault. "
        "DATABASE_URL=postgres://app:s3cret99@db/billing and ghp_"
        + "a1B2c3D4e5" * 4
        + " were pasted. "
    )
    text = (prose * (5_000_000 // len(prose) + 1))[:5_000_000]
    blob = base64.b64encode(os.urandom(3_750_000)).decode()
    for name, sample in (("prose with secrets", text), ("random base64", blob)):
        times = []
        for _ in range(3):
            start = time.perf_counter()
            result = redact(sample)
            times.append(time.perf_counter() - start)
        print(
            f"3. redact 5 MB of {name}: median {statistics.median(times):.2f} s "
            f"({result.total} secrets)"
        )


def bench_cli(args: argparse.Namespace, tmp: Path) -> None:
    chat_file = tmp / "chat.json"
    chat_file.write_text(json.dumps(conversation(40)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for run in range(args.runs):
        root = Vault.init(tmp / f"cli{run}").root
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "vault_memory", "--vault", str(root), "flush", str(chat_file)],
            env=env,
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - start)
    print(
        f"4. cold `python -m vault_memory flush` (40 messages): median "
        f"{statistics.median(times):.3f} s"
    )


def bench_locomo() -> None:
    if not LOCOMO.exists():
        print(f"5. LoCoMo: {LOCOMO} not found, skipped")
        return
    data = json.loads(LOCOMO.read_text())
    turns = kept = evidence = covered = 0
    for sample in data:
        conv = sample["conversation"]
        keys = [k for k in conv if k.startswith("session_") and not k.endswith("date_time")]
        with_entry = set()
        for key in keys:
            for turn in conv[key]:
                turns += 1
                message = Message("user", turn["text"], turn["speaker"])
                if extract_offline([message], 500):
                    with_entry.add(turn["dia_id"])
        kept += len(with_entry)
        wanted = {e for q in sample["qa"] if q["category"] != 5 for e in q["evidence"]}
        evidence += len(wanted)
        covered += len(wanted & with_entry)
    print(
        f"5. LoCoMo dev ({len(data)} conversations, {turns} turns): {kept / turns:.1%} of "
        f"turns yield an entry; they hold {covered / evidence:.1%} of the {evidence} "
        "evidence turns"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--logs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-locomo", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        bench_flush(args, tmp)
        bench_redact()
        bench_cli(args, tmp)
    if not args.no_locomo:
        bench_locomo()


if __name__ == "__main__":
    main()
