"""Where the evidence is lost within the character budget (LoCoMo development split).

For the questions of one category (multi-hop by default): what the budget is spent on, and
where the evidence lines it misses rank and what they share with the question. In-process,
on the dev vaults `bench/eval_search.py` builds; the walk over the results is the scorer's
(`score.budget_recall`: a result costs its lines not already taken, the walk stops at the
first result that does not fit).

    python bench/eval_misses.py                     # multi-hop, 2,000 characters
    python bench/eval_misses.py --category 4 --budget 1000
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEEP = 3000  # results asked for: every unit of a dev vault, so each line has a rank


class Conversation:
    """One dev vault: its files' lines and the session (the `## ` heading) of each line."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.lines: dict[str, list[str]] = {}

    def text(self, path: str) -> list[str]:
        if path not in self.lines:
            self.lines[path] = (self.vault / path).read_text(encoding="utf-8").split("\n")
        return self.lines[path]

    def cost(self, path: str, line: int) -> int:
        return len(self.text(path)[line - 1]) + 1  # the scorer's: its length and a newline

    def session(self, path: str, line: int) -> tuple[str, int]:
        lines = self.text(path)
        for at in range(line - 1, -1, -1):
            if lines[at].startswith("## "):
                return path, at + 1
        return path, 0


def words(text: str) -> set[str]:
    from vault_memory.index import terms_of

    return set(terms_of(text, query=True))


def speaker(line: str) -> set[str]:
    """The words of a line's lead-in label (its speaker in a chat log)."""
    from vault_memory.index import lead_label

    return words(lead_label(line) or "")


def analyse(root: Path, category: int, budget: int) -> dict[str, Any]:
    from vault_memory import Vault

    sys.path.insert(0, str(HERE))
    from eval_search import eval_dir  # where the scorer sits, found as the search eval finds it

    sys.path.insert(0, str(eval_dir(None)))
    import score  # the benchmark's own loader

    spent: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    ranks: list[int] = []
    costs: list[int] = []
    sizes: list[int] = []
    found = total = questions = 0
    for folder in sorted(root.glob("conv-*"), key=lambda p: int(p.name.split("-")[1])):
        vault = Vault(folder / "vault")
        vault.index()
        conv = Conversation(folder / "vault")
        for q in score.load_questions(folder / "questions.jsonl"):
            if q["category"] != category:
                continue
            questions += 1
            evidence = {(e["path"], int(e["line"])) for e in q["evidence"]}
            sessions = {conv.session(*e) for e in evidence}
            hits = vault.search(q["question"], limit=DEEP, fresh=False)
            asked = words(q["question"])
            taken: set[tuple[str, int]] = set()
            used = 0
            taken_sessions: set[tuple[str, int]] = set()
            session_order: dict[tuple[str, int], int] = {}
            best_of_session: dict[tuple[str, int], int] = {}
            for at, hit in enumerate(hits):  # each session's rank, and its best line's
                where = conv.session(hit.path, hit.start_line)
                session_order.setdefault(where, len(session_order))
                best_of_session.setdefault(where, at)
            for at, hit in enumerate(hits):
                new = [
                    n for n in range(hit.start_line, hit.end_line + 1) if (hit.path, n) not in taken
                ]
                cost = sum(conv.cost(hit.path, n) for n in new)
                if used + cost > budget and at:
                    break
                taken.update((hit.path, n) for n in new)
                used += cost
                costs.append(cost)
                sizes.append(len(new))
                lines = {(hit.path, n) for n in new}
                where = conv.session(hit.path, hit.start_line)
                taken_sessions.add(where)
                label = speaker(conv.text(hit.path)[hit.start_line - 1])
                if lines & evidence:
                    kind = "evidence"
                    spent["gap lines of evidence spans"] += sum(
                        conv.cost(p, n) for p, n in lines - evidence
                    )
                elif any(p == e[0] and abs(n - e[1]) <= 3 for p, n in lines for e in evidence):
                    kind = "within 3 lines of evidence"
                elif where in sessions:
                    kind = "other lines of evidence sessions"
                else:
                    kind = "sessions without evidence"
                spent[kind] += cost
                if label & asked:
                    spent["lines of a speaker the question names"] += cost
                if len(new) > 1:
                    spent["multi-line hits"] += cost
            for path, line in evidence:
                total += 1
                if (path, line) in taken:
                    found += 1
                    continue
                at = next(
                    (
                        i
                        for i, h in enumerate(hits)
                        if h.path == path and h.start_line <= line <= h.end_line
                    ),
                    DEEP,
                )
                ranks.append(at)
                where = conv.session(path, line)
                text = conv.text(path)[line - 1]
                if not (words(text) - speaker(text)) & asked:
                    missed["share no word with the question"] += 1
                if at < DEEP and best_of_session.get(where) == at:
                    missed["are the best line of their session"] += 1
                if session_order.get(where, DEEP) >= 10:
                    missed["are in a session ranked 10th or later"] += 1
                if where in taken_sessions:
                    missed["are in a session the budget holds"] += 1
    return {
        "questions": questions,
        "evidence": total,
        "found": found,
        "spent": spent,
        "missed": missed,
        "ranks": ranks,
        "costs": costs,
        "sizes": sizes,
    }


def report(got: dict[str, Any], budget: int) -> None:
    spent, costs = got["spent"], got["costs"]
    paid = sum(costs)
    print(
        f"{got['questions']} questions, {got['evidence']} evidence lines, {got['found']} "
        f"within {budget} characters; {len(costs)} hits taken, "
        f"{len(costs) / max(got['questions'], 1):.1f} a question"
    )
    print(
        f"a hit costs {statistics.mean(costs):.0f} characters (median "
        f"{statistics.median(costs):.0f}), {statistics.mean(got['sizes']):.2f} lines"
    )
    print("the budget goes to:")
    for kind in (
        "evidence",
        "within 3 lines of evidence",
        "other lines of evidence sessions",
        "sessions without evidence",
        "lines of a speaker the question names",
        "multi-line hits",
        "gap lines of evidence spans",
    ):
        print(f"  {kind:38s} {spent[kind] / paid:6.1%}")
    ranks = got["ranks"]
    buckets = Counter(
        "1-10"
        if r < 10
        else "11-20"
        if r < 20
        else "21-50"
        if r < 50
        else "51-200"
        if r < 200
        else "later"
        for r in ranks
    )
    print(
        f"the {len(ranks)} missed lines rank: "
        + ", ".join(f"{b}: {buckets[b]}" for b in ("1-10", "11-20", "21-50", "51-200", "later"))
    )
    for what, count in got["missed"].most_common():
        print(f"  {count:4d} {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/locomo-dev"))
    parser.add_argument(
        "--category",
        type=int,
        default=1,
        help="1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop",
    )
    parser.add_argument("--budget", type=int, default=2000)
    args = parser.parse_args()
    if not (args.root / "manifest.json").exists():
        raise SystemExit(f"no dev vaults at {args.root}: run bench/eval_search.py first")
    report(analyse(args.root, args.category, args.budget), args.budget)


if __name__ == "__main__":
    main()
