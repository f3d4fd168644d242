"""Retrieval quality on both development splits, LoCoMo's and the real chats', in one table.

The splits live outside the repository (shared/eval: LoCoMo's five conversations, written by
a model; REALTALK's chats 1-3, real people's); the benchmark's own scorer asks every question
and reports, per split, r@Nch overall and per category, recall@10, mrr and p50/p95 latency.
In-process (fast, for tuning) or through the real CLI (`--cli`: one `vault search --json`
process per question). A run of both splits as they are, with the defaults, writes the
figures to bench/results/search.json (the docs' evaluation page shows them).

    python bench/eval_search.py --locomo COPY --realtalk COPY   # both, in-process
    python bench/eval_search.py ... --cli          # the scorer drives `vault search --json`
    python bench/eval_search.py ... --only realtalk-dev --set window_weight=0   # tuning
    python bench/eval_search.py --typos 0.1        # the same questions over turns with typos
    python bench/eval_search.py --stretch 0.1      # ...over turns with words stretched
    python bench/eval_search.py --split            # ...over turns sent sentence by sentence
    python bench/eval_search.py --deep             # deep search (the `deep` extra's model)

`--typos P`: a copy of the vaults in which each word of five letters or more of a turn (its
speaker's label and capitalised words left alone) has one typing slip with probability P: a
neighbouring key struck instead or as well, a letter dropped, two letters swapped. People
type so in chats; LoCoMo's turns were written by a model and have none. The lines keep their
numbers, so the questions' evidence holds.

`--stretch P`: a copy in which each lower-case word of three letters or more of a turn is
stretched for emphasis with probability P, as people type in chats ("loveee", "sooo",
"goooood"): its last vowel or its last letter typed three to five times in all. The slips of
`--typos` come first when both are given.

`--pinned`: a copy in which each turn's relative dates are pinned to its log's day, as `vault
flush`, `add` and `import` write them ("went to the support group yesterday (2023-05-07)"):
what capture-time dates do to search. The lines keep their numbers.

`--split`: a copy in which each turn is sent as several messages, one a sentence (a photo's
caption with the sentence before it), each its own line under the speaker's label, and half of
them (by `--seed`) without their closing full stop, as people write in chat apps. A turn of a
question's evidence is its longest message now (the one that says most; a turn's "Thanks!"
would be no evidence of anything), so finding a turn's other lines scores nothing of itself.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVAL = HERE.parent.parent / "shared" / "eval" / "locomo"


class InProcess:
    """score.run() searcher: our library, one Vault per conversation."""

    def __init__(
        self,
        limit: int,
        overrides: dict | None = None,
        settings: dict | None = None,
        deep: bool = False,
    ) -> None:
        self.limit = limit
        self.deep = deep
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
        hits = self.vaults[vault].search(query, limit=k, fresh=False, deep=self.deep)
        return [h.to_dict() for h in hits]


_TURN = re.compile(r"^(- \*\*[^*]+\*\*: )(.*)$")
_WORD = re.compile(r"[a-z]{5,}")


def _neighbour(key: str, rnd: random.Random) -> str:
    """A key next to `key` on the keyboard the search's slip rule knows, in keyboard order."""
    from vault_memory.search.spelling import KEY_ROWS, NEAR_KEYS

    return rnd.choice([k for k in "".join(KEY_ROWS) if k in NEAR_KEYS[key]])


def slip(word: str, rnd: random.Random) -> str:
    """`word` with one typing slip past its first letter."""
    i = rnd.randrange(1, len(word))
    kind = rnd.random()
    if kind < 0.3:  # a neighbouring key instead
        return word[:i] + _neighbour(word[i], rnd) + word[i + 1 :]
    if kind < 0.55:  # a letter dropped
        return word[:i] + word[i + 1 :]
    if kind < 0.8 and i < len(word) - 1:  # two letters swapped
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word[:i] + _neighbour(word[i], rnd) + word[i:]  # a neighbouring key as well


def stretch(word: str, rnd: random.Random) -> str:
    """`word` stretched: its last vowel (or, half the time, its last letter) typed three to
    five times."""
    vowels = [i for i, c in enumerate(word) if c in "aeiouy"]
    i = len(word) - 1 if rnd.random() < 0.5 or not vowels else vowels[-1]
    return word[:i] + word[i] * rnd.randint(3, 5) + word[i + 1 :]


_LOWER = re.compile(r"(?<![A-Za-z])[a-z]{3,}(?![A-Za-z])")


def copy_once(root: Path, name: str, fill: Callable[[Path], None]) -> Path:
    """The copy of the benchmark's vaults named `name` beside `root`, made once: the vaults
    (their caches left out) copied and changed by `fill(copy)`."""
    out = root.with_name(f"{root.name}-{name}")
    if (out / "manifest.json").exists():
        return out
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(root, tmp, ignore=shutil.ignore_patterns(".vault"))
    fill(tmp)
    tmp.rename(out)
    return out


def changed_copy(root: Path, name: str, change: Callable[[str], str]) -> Path:
    """A copy of the benchmark's vaults, named `name`, with each turn's text changed."""

    def fill(copy: Path) -> None:
        for log in sorted(copy.glob("conv-*/vault/memory/*.md")):
            lines = log.read_text(encoding="utf-8").split("\n")
            for n, line in enumerate(lines):
                turn = _TURN.match(line)
                if turn:
                    lines[n] = turn[1] + change(turn[2])
            log.write_text("\n".join(lines), encoding="utf-8")

    return copy_once(root, name, fill)


def stretch_copy(root: Path, share: float, seed: int) -> Path:
    """A copy of the benchmark's vaults with stretched words in the turns (module docstring)."""
    rnd = random.Random(seed)
    return changed_copy(
        root,
        f"stretch{share:g}-seed{seed}",
        lambda said: _LOWER.sub(
            lambda m: stretch(m[0], rnd) if rnd.random() < share else m[0], said
        ),
    )


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")


def split_copy(root: Path, seed: int) -> Path:
    """A copy of the benchmark's vaults whose turns are sent sentence by sentence, each turn
    of the questions' evidence moved to its longest message (module docstring)."""
    import json

    rnd = random.Random(seed)

    def split(log: Path) -> dict[int, list[int]]:
        """Split the turns of `log`: old line -> its new lines, the longest first."""
        lines: list[str] = []
        moved: dict[int, list[int]] = {}
        for number, line in enumerate(log.read_text(encoding="utf-8").split("\n"), 1):
            turn = _TURN.match(line)
            pieces = [line] if not turn else [p for p in _SENTENCE_END.split(turn[2]) if p.strip()]
            merged: list[str] = []
            for piece in pieces:  # a caption stays with what it shows
                if merged and piece.startswith("("):
                    merged[-1] += " " + piece
                else:
                    merged.append(piece)
            start = len(lines) + 1
            for piece in merged or [""]:
                if turn and piece.endswith(".") and rnd.random() < 0.5:
                    piece = piece[:-1]
                lines.append(turn[1] + piece if turn else piece)
            moved[number] = sorted(range(start, len(lines) + 1), key=lambda n: -len(lines[n - 1]))
        log.write_text("\n".join(lines), encoding="utf-8")
        return moved

    def fill(copy: Path) -> None:
        for conv in sorted(copy.glob("conv-*")):
            vault = conv / "vault"
            moved = {
                log.relative_to(vault).as_posix(): split(log)
                for log in sorted(vault.glob("memory/*.md"))
            }
            questions = []
            for row in (conv / "questions.jsonl").read_text(encoding="utf-8").splitlines():
                question = json.loads(row)
                evidence = []
                for item in question["evidence"]:
                    lines = moved[item["path"]]
                    first, last = item["session_lines"]
                    evidence.append(
                        {
                            **item,
                            "line": lines[item["line"]][0],
                            "session_lines": [min(lines[first]), max(lines[last])],
                        }
                    )
                questions.append(json.dumps({**question, "evidence": evidence}))
            (conv / "questions.jsonl").write_text("\n".join(questions) + "\n", encoding="utf-8")

    return copy_once(root, f"split-seed{seed}", fill)


def pinned_copy(root: Path) -> Path:
    """A copy of the benchmark's vaults whose turns have their relative dates pinned to the
    log's day, as capture writes them ("yesterday (2023-05-07)"; module docstring)."""
    sys.path.insert(0, str(HERE.parent))
    from vault_memory.relative_dates import pin_dates

    def fill(copy: Path) -> None:
        for log in sorted(copy.glob("conv-*/vault/memory/*.md")):
            day = dt.date.fromisoformat(log.stem)
            lines = log.read_text(encoding="utf-8").split("\n")
            for n, line in enumerate(lines):
                turn = _TURN.match(line)
                if turn:
                    lines[n] = turn[1] + pin_dates(turn[2], day)
            log.write_text("\n".join(lines), encoding="utf-8")

    return copy_once(root, "pinned", fill)


def typo_copy(root: Path, share: float, seed: int) -> Path:
    """A copy of the benchmark's vaults with typing slips in the turns (module docstring)."""
    rnd = random.Random(seed)
    return changed_copy(
        root,
        f"typos{share:g}-seed{seed}",
        lambda said: _WORD.sub(lambda m: slip(m[0], rnd) if rnd.random() < share else m[0], said),
    )


#: The development splits: name -> (what it holds, the category names its questions use).
SPLITS = {
    "locomo-dev": "LoCoMo development split: 5 conversations, 760 questions (categories 1-4)",
    "realtalk-dev": "real human chats, development split: 3 conversations, 214 questions",
}
#: REALTALK's third category asks for commonsense inference from what was said; the scorer
#: names categories by LoCoMo's numbers (its 3 is open-domain).
CATEGORY_NAMES = {"realtalk-dev": {"3 open-domain": "3 commonsense"}}
RESULTS = HERE / "results" / "search.json"


def eval_dir(given: Path | None) -> Path:
    """The LoCoMo scorer's folder: `given`, or `shared/eval/locomo` beside the repository or
    one of the folders above it (a worktree sits deeper than the repository)."""
    if given is not None:
        return given
    for parent in HERE.parents:
        found = parent / "shared" / "eval" / "locomo"
        if (found / "score.py").is_file():
            return found
    return EVAL


def prepared_root(name: str, root: Path, args: argparse.Namespace, scorer: Path) -> Path | None:
    """The split's vaults to score (made when LoCoMo's are missing; the chats' need their
    data: None, and a line that says how), or the chat-like copy the options ask for."""
    if not (root / "manifest.json").exists():
        if name != "locomo-dev":
            print(
                f"{name}: no vaults at {root}; make them with shared/eval/realtalk/"
                "make_vault_realtalk.py (its README says how), or give --realtalk",
                file=sys.stderr,
            )
            return None
        subprocess.run(
            [
                sys.executable,
                str(scorer / "make_vault.py"),
                "--conversations",
                args.conversations,
                "--out",
                str(root),
            ],
            check=True,
        )
    if args.typos:
        root = typo_copy(root, args.typos, args.seed)
        print(f"{name}: typing slips in {args.typos:.0%} of the longer words: {root}")
    if args.split:
        root = split_copy(root, args.seed)
        print(f"{name}: turns sent sentence by sentence: {root}")
    if args.pinned:
        root = pinned_copy(root)
        print(f"{name}: relative dates pinned to each log's day: {root}")
    if args.stretch:
        root = stretch_copy(root, args.stretch, args.seed)
        print(f"{name}: {args.stretch:.0%} of the lower-case words stretched: {root}")
    return root


def score_split(
    name: str, root: Path, args: argparse.Namespace, overrides: dict, settings: dict
) -> dict:
    """Every question of the split `root` asked, scored by the benchmark's scorer: its summary
    (overall, by category and conversation, latency), failures, index and wall seconds."""
    import time

    import score  # the benchmark's own scorer (on sys.path: `main`)

    budgets = [int(b) for b in args.budgets.split(",")]
    ks = [1, 5, 10]
    convs = [
        (d.name, d / "vault", d / "questions.jsonl")
        for d in sorted(root.glob("conv-*"), key=lambda p: int(p.name.split("-")[1]))
    ]
    started = time.perf_counter()
    searcher: object
    if args.cli:
        for _, vault, _ in convs:  # indexed first, timed apart
            subprocess.run(
                ["vault", "--vault", str(vault), "index", "--json"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        template = "vault --vault {vault} search {query} --json --limit {k}"
        searcher = score.CommandSearcher(template, 120.0, None)
    else:
        searcher = InProcess(args.fetch_k, overrides, settings, args.deep)
    result = score.run(searcher, convs, ks, budgets, args.fetch_k, quiet=True)
    summary = score.summarize(result["rows"], result["latencies"], ks, budgets)
    renamed = CATEGORY_NAMES.get(name, {})
    summary["by_category"] = {renamed.get(k, k): v for k, v in summary["by_category"].items()}
    if args.verbose:
        score.report(name, summary, result["failures"], ks, budgets)
    return summary | {
        "failed_queries": len(result["failures"]),
        "index_seconds": result["index_s"],
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


def table(figures: dict[str, dict], budgets: list[int]) -> str:
    """Both splits in one table: overall and each category, recall within each budget,
    recall@10 and mrr, then each split's p50/p95 latency a query."""
    heads = [f"r@{b}ch" for b in budgets] + ["recall@10", "mrr", "p50 ms", "p95 ms"]
    lines = [f"{'':<22} {'n':>5} " + " ".join(f"{h:>9}" for h in heads)]
    for name, summary in figures.items():
        latency = summary["latency"]
        rows = {name: summary["overall"]} | {f"  {k}": v for k, v in summary["by_category"].items()}
        for label, agg in rows.items():
            values = [agg.get(f"recall@{b}ch", 0.0) for b in budgets]
            values += [agg.get("recall@10", 0.0), agg.get("mrr", 0.0)]
            cells = [f"{v:>9.3f}" for v in values]
            if label == name:
                cells += [f"{latency['p50_ms']:>9.1f}", f"{latency['p95_ms']:>9.1f}"]
            lines.append(f"{label:<22} {agg.get('n', 0):>5} " + " ".join(cells))
    return "\n".join(lines)


def write_results(path: Path, figures: dict[str, dict], command: str) -> None:
    """The figures as the docs' evaluation page reads them (`bench/results/*.json`)."""
    import datetime as dt
    import json
    import os
    import platform
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in ("vault-memory", "numpy", "fastembed", "onnxruntime", "whoosh-reloaded"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            continue
    commit = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if commit:
        versions["commit"] = commit
    doc = {
        "name": "search",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": command,
        "machine": {
            "platform": f"{platform.system()} {platform.machine()}",
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },
        "versions": versions,
        "figures": figures,
        "datasets": {name: SPLITS[name] for name in figures},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--locomo",
        "--root",
        dest="locomo",
        type=Path,
        default=Path("/tmp/locomo-dev"),
        help="the LoCoMo split's vaults (a copy: an index is written into them)",
    )
    parser.add_argument(
        "--realtalk",
        type=Path,
        default=Path("/tmp/rt-dev"),
        help="the real chats' split's vaults (a copy: an index is written into them)",
    )
    parser.add_argument(
        "--only", choices=sorted(SPLITS), help="score one split (a tuning run; writes nothing)"
    )
    parser.add_argument("--eval-dir", type=Path, default=None, help="the LoCoMo scorer's folder")
    parser.add_argument("--conversations", default="0-4", help="LoCoMo's, when made here")
    parser.add_argument("--fetch-k", type=int, default=50)
    parser.add_argument("--budgets", default="1000,2000,4000")
    parser.add_argument(
        "--backend",
        choices=["sqlite", "postgres"],
        default="sqlite",
        help="the index backend (in-process only; postgres needs --dsn)",
    )
    parser.add_argument("--dsn", default="", help="the PostgreSQL index server's DSN")
    parser.add_argument(
        "--phase1",
        action="store_true",
        help="postgres: read the whole unit table ([search] on_server = false)",
    )
    parser.add_argument("--cli", action="store_true", help="score `vault search --json` processes")
    parser.add_argument(
        "--typos",
        type=float,
        default=0.0,
        metavar="P",
        help="score a copy whose turns have typing slips (module docstring)",
    )
    parser.add_argument(
        "--stretch",
        type=float,
        default=0.0,
        metavar="P",
        help="score a copy whose turns have stretched words (module docstring)",
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="score a copy whose turns are sent sentence by sentence",
    )
    parser.add_argument(
        "--pinned",
        action="store_true",
        help="score a copy whose turns have their relative dates pinned, as capture writes them",
    )
    parser.add_argument("--seed", type=int, default=1, help="--typos, --stretch, --split: seed")
    parser.add_argument("--deep", action="store_true", help="deep search (search/deep.py)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a RankSettings field (in-process only), e.g. window_weight=0",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the figures here (default: bench/results/search.json, for a run of both "
        "splits as they are with the defaults; other runs write only when given this)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="each split's full report too")
    args = parser.parse_args()
    scorer = eval_dir(args.eval_dir)
    sys.path.insert(0, str(scorer))
    import ast

    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = ast.literal_eval(value)
    settings: dict = {"index.backend": args.backend, "index.dsn": args.dsn} if args.dsn else {}
    if args.phase1:
        settings["search.on_server"] = False
    roots = {"locomo-dev": args.locomo, "realtalk-dev": args.realtalk}
    figures: dict[str, dict] = {}
    for name, root in roots.items():
        if args.only and name != args.only:
            continue
        found = prepared_root(name, root, args, scorer)
        if found is not None:
            figures[name] = score_split(name, found, args, overrides, settings)
    if not figures:
        raise SystemExit("Error: no split to score (see above)")
    how = "`vault search --json` processes" if args.cli else f"in-process {args.backend}"
    print(
        f"vault_memory, {how}{' phase 1' if args.phase1 else ''}{' deep' if args.deep else ''}"
        f"{' ' + str(overrides) if overrides else ''}: r@Nch = recall within N characters "
        "of returned context"
    )
    print(table(figures, [int(b) for b in args.budgets.split(",")]))
    plain = not (
        overrides
        or args.typos
        or args.split
        or args.pinned
        or args.stretch
        or args.only
        or args.deep
    )
    out = args.out or (RESULTS if plain and len(figures) == len(SPLITS) else None)
    if out is not None:
        command = (
            "python bench/eval_search.py --locomo <copy of its split> --realtalk <copy of its "
            f"split>{' --cli' if args.cli else ''} (fetch-k {args.fetch_k}, budgets "
            f"{args.budgets})"
        )
        write_results(out, figures, command)
        print(f"figures written to {out}")


if __name__ == "__main__":
    main()
