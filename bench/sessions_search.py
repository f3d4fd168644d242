"""Should default search include transcripts? Measured on the LoCoMo development split.

Usage: python bench/sessions_search.py [--root /tmp/locomo-sessions] [--conversations 0-4]

Each LoCoMo conversation becomes a vault (shared/eval/locomo/make_vault.py): its daily logs
hold the dialogue, one line per turn, and the questions' evidence is cited as daily-log lines.
Here each of its sessions is also recorded as a transcript (`Vault.record_transcript`,
sessions/DATE-conv-N-sM.md: the first speaker as the user, the other as the assistant), as a
flush would leave it. The same questions are then asked twice, in process:

- default: what `vault search` does (transcripts left out unless asked for);
- with transcripts: kinds memory, daily, note and session searched together.

The scorer counts evidence found in the daily logs, where what a flush keeps lives: hits on a
transcript repeat what the logs hold and spend the budget (`r@2000ch`) without adding to it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

from _harness import ROOT  # noqa: E402 - this checkout's vault_memory first

EVAL = ROOT.parent / "shared" / "eval" / "locomo"

from vault_memory import Vault  # noqa: E402

_SESSION = re.compile(r"^## (\d{1,2}:\d{2}) \S (session \d+)")
_TURN = re.compile(r"^- \*\*(?P<who>[^*]+)\*\*: (?P<text>.*)$")


def record_transcripts(vault_root: Path) -> int:
    """One transcript per LoCoMo session, from the turns of the daily logs."""
    vault = Vault(vault_root)
    made = 0
    for log in sorted((vault_root / "memory").glob("*.md")):
        day = dt.date.fromisoformat(log.stem)
        sessions: list[tuple[str, str, list[tuple[str, str]]]] = []
        for line in log.read_text(encoding="utf-8").splitlines():
            heading = _SESSION.match(line)
            if heading:
                sessions.append((heading[1], heading[2].replace(" ", "-"), []))
                continue
            turn = _TURN.match(line)
            if turn and sessions:
                sessions[-1][2].append((turn["who"].strip(), turn["text"]))
        for time, name, turns in sessions:
            if not turns:
                continue
            first = turns[0][0]
            messages = [
                {"role": "user" if who == first else "assistant", "name": who, "content": text}
                for who, text in turns
            ]
            hour, minute = (int(x) for x in time.split(":"))
            when = dt.datetime.combine(day, dt.time(hour, minute))
            vault.record_transcript(messages, session=f"{vault_root.parent.name}-{name}", when=when)
            made += 1
    vault.close()
    return made


class Searcher:
    """score.run() searcher: our library, one Vault per conversation, the kinds given."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds
        self.vaults: dict[Path, Vault] = {}

    def prepare(self, vault: Path) -> None:
        self.vaults[vault] = Vault(vault)
        self.vaults[vault].index()

    def search(self, vault: Path, query: str, k: int) -> list[dict]:
        hits = self.vaults[vault].search(query, limit=k, fresh=False, kinds=self.kinds)
        return [h.to_dict() for h in hits]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/locomo-sessions"))
    parser.add_argument("--eval-dir", type=Path, default=EVAL)
    parser.add_argument("--conversations", default="0-4")
    parser.add_argument("--fetch-k", type=int, default=50)
    parser.add_argument("--budgets", default="1000,2000,4000")
    args = parser.parse_args()
    if not (args.root / "manifest.json").exists():
        subprocess.run(
            [
                sys.executable,
                str(args.eval_dir / "make_vault.py"),
                "--conversations",
                args.conversations,
                "--out",
                str(args.root),
            ],
            check=True,
        )
        made = sum(record_transcripts(v) for v in sorted(args.root.glob("conv-*/vault")))
        print(f"recorded {made} transcripts")
    sys.path.insert(0, str(args.eval_dir))
    import score  # the benchmark's own scorer

    budgets = [int(b) for b in args.budgets.split(",")]
    ks = [1, 5, 10]
    convs = [
        (d.name, d / "vault", d / "questions.jsonl")
        for d in sorted(args.root.glob("conv-*"), key=lambda p: int(p.name.split("-")[1]))
    ]
    for label, kinds in (
        ("default (transcripts left out)", ()),
        ("with transcripts", ("memory", "daily", "note", "session")),
    ):
        result = score.run(Searcher(kinds), convs, ks, budgets, args.fetch_k, quiet=True)
        summary = score.summarize(result["rows"], result["latencies"], ks, budgets)
        score.report(label, summary, result["failures"], ks, budgets)


if __name__ == "__main__":
    main()
