"""Retrieval quality on the LoCoMo development split (shared/eval), scored by its own scorer.

In-process (fast, for tuning) or through the real CLI (`--cli`: one `vault search --json`
process per question, as the issue asks for the final figures).

    python bench/eval_search.py                    # in-process, all five conversations
    python bench/eval_search.py --cli              # the scorer drives `vault search --json`
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVAL = HERE.parent.parent / "shared" / "eval" / "locomo"


class InProcess:
    """score.run() searcher: our library, one Vault per conversation."""

    def __init__(self, limit: int, overrides: dict | None = None,
                 settings: dict | None = None) -> None:
        self.limit = limit
        self.overrides = overrides or {}
        self.settings = settings or {}  # vault settings, e.g. the index backend
        self.vaults: dict[Path, object] = {}

    def prepare(self, vault: Path) -> None:
        import dataclasses

        from vault_memory import Vault

        settings = dict(self.settings)
        if settings.get("index.backend") == "postgres":  # one vault id per conversation
            settings["index.vault_id"] = vault.parent.name
        v = Vault(vault, settings)
        v.index()
        if self.overrides:
            v._searcher.settings = dataclasses.replace(v._searcher.settings, **self.overrides)
        self.vaults[vault] = v

    def search(self, vault: Path, query: str, k: int) -> list[dict]:
        hits = self.vaults[vault].search(query, limit=k, fresh=False)
        return [h.to_dict() for h in hits]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/locomo-dev"))
    parser.add_argument("--eval-dir", type=Path, default=EVAL)
    parser.add_argument("--conversations", default="0-4")
    parser.add_argument("--fetch-k", type=int, default=50)
    parser.add_argument("--budgets", default="1000,2000,4000")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite",
                        help="the index backend (in-process only; postgres needs --dsn)")
    parser.add_argument("--dsn", default="", help="the PostgreSQL index server's DSN")
    parser.add_argument("--phase1", action="store_true",
                        help="postgres: read the whole unit table ([search] on_server = false)")
    parser.add_argument("--cli", action="store_true", help="score `vault search --json` processes")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a RankSettings field (in-process only), e.g. window_weight=0",
    )
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
    if args.cli:
        for vault in sorted(args.root.glob("conv-*/vault")):  # index first, timed apart
            subprocess.run(
                ["vault", "--vault", str(vault), "index", "--json"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        cmd = [
            sys.executable,
            str(args.eval_dir / "score.py"),
            "--root",
            str(args.root),
            "--fetch-k",
            str(args.fetch_k),
            "--budget-chars",
            args.budgets,
            "--cmd",
            "vault --vault {vault} search {query} --json --limit {k}",
        ]
        raise SystemExit(subprocess.run(cmd).returncode)
    sys.path.insert(0, str(args.eval_dir))
    import score  # the benchmark's own scorer

    budgets = [int(b) for b in args.budgets.split(",")]
    ks = [1, 5, 10]
    convs = [
        (d.name, d / "vault", d / "questions.jsonl")
        for d in sorted(args.root.glob("conv-*"), key=lambda p: int(p.name.split("-")[1]))
    ]
    import ast

    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = ast.literal_eval(value)
    settings: dict = {"index.backend": args.backend, "index.dsn": args.dsn} if args.dsn else {}
    if args.phase1:
        settings["search.on_server"] = False
    result = score.run(
        InProcess(args.fetch_k, overrides, settings),
        convs, ks, budgets, args.fetch_k, quiet=True
    )
    summary = score.summarize(result["rows"], result["latencies"], ks, budgets)
    score.report(
        f"vault_memory in-process {args.backend}{' phase 1' if args.phase1 else ''}"
        f" {overrides or ''}", summary,
        result["failures"], ks, budgets
    )


if __name__ == "__main__":
    main()
