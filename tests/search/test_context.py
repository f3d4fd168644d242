"""`Vault.context`: the block for a system prompt stays within its token budget for every
budget and vault, says visibly what it cut, and leaves out hits it already shows."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.errors import VaultError
from vault_memory.files import fsutil
from vault_memory.search.context import OPEN_TAG, build_context
from vault_memory.search.tokens import (
    HEURISTIC_CHARS_PER_TOKEN,
    TOKENIZER_FILE,
    count_tokens,
    load_counter,
    token_counter,
)

DAY = dt.date(
    2026, 11, 21
)  # sample_vault/ and the small vault have logs for this day and the one before
BUDGETS = [
    1,
    5,
    12,
    20,
    30,
    45,
    50,
    64,
    80,
    100,
    128,
    150,
    200,
    256,
    300,
    400,
    500,
    640,
    800,
    1000,
    1300,
    1600,
    2000,
    2500,
    3200,
    4000,
    5000,
    6500,
    8000,
]


@pytest.fixture(autouse=True)
def _keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model is not the point here: searches run on keywords."""
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")


def big_memory(n: int = 400) -> str:
    sections = ["People", "Preferences", "Projects", "Decisions"]
    lines = ["# MEMORY", "", "Core memory, consolidated by dreams.", ""]
    for s, section in enumerate(sections):
        lines.append(f"## {section}")
        lines += [
            f"- Fact {s}.{i}: the invoice service {section.lower()} note number {i} "
            f"mentions `ERR_{s}_{i}` and [[page-{i}]]."
            for i in range(n // len(sections))
        ]
        lines.append("")
    return "\n".join(lines)


def make_vault(root: Path, files: dict[str, str | bytes]) -> Path:
    Vault.init(root)
    for relpath, data in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return root


@pytest.fixture
def vaults(tmp_path: Path, sample_vault: Path, small_vault: Path) -> dict[str, Path]:
    return {
        "sample": sample_vault,
        "small": small_vault,
        "empty": Vault.init(tmp_path / "empty").root,
        "big": make_vault(
            tmp_path / "big",
            {
                "MEMORY.md": big_memory(),
                "memory/2026-11-21.md": "# 2026-11-21\n\n"
                + "".join(
                    f"## {h:02d}:00 · note\n- Hour {h}: looked at invoice ERR_1_{h}.\n\n"
                    for h in range(24)
                ),
                "memory/2026-11-20.md": (
                    "# 2026-11-20\n\n## 09:00 · note\n- Yesterday's only entry.\n"
                ),
            },
        ),
        "odd": make_vault(
            tmp_path / "odd",
            {
                "MEMORY.md": (
                    "\ufeff# MEMORY\r\n\r\n## Menschen\r\n- Zoë 🎉 mag Tee ☕ und 日本語のメモ\r\n"
                    + "- "
                    + "sehr-langes-wort-" * 300
                    + "\r\n"
                ),
                "memory/2026-11-21.md": "# 2026-11-21\n\n## 10:00 · note\n- "
                + "lorem ipsum " * 900
                + "\n",
            },
        ),
    }


# -- the estimator --------------------------------------------------------------------------------


def test_the_bundled_tokenizer_counts_offline() -> None:
    from tokenizers import Tokenizer

    counter = token_counter()
    assert counter.name.startswith("wordpiece")
    reference = Tokenizer.from_file(str(TOKENIZER_FILE))
    reference.no_truncation()
    text = "Billing runs on PostgreSQL 16.\n- ERR_LEDGER_409 comes from retried refunds.\n" * 40
    pieces = len(reference.encode(text, add_special_tokens=False).ids)
    assert pieces > 128  # the file's own truncation (128) is off
    assert counter.count(text) == pieces + text.count("\n")


def test_counts_add_up_over_lines(sample_vault: Path) -> None:
    counter = token_counter()
    lines = fsutil.split_lines((sample_vault / "MEMORY.md").read_text())
    assert counter.count("\n".join(lines)) == sum(counter.count_lines(lines)) + len(lines) - 1


def test_the_heuristic_takes_over_when_the_tokenizer_cannot_load(
    tmp_path: Path, sample_vault: Path
) -> None:
    broken = tmp_path / "tokenizer.json"
    broken.write_text("{not json")
    heuristic = load_counter(broken)
    assert heuristic.name.startswith("heuristic")
    assert heuristic.count("abcde\nfghij") == 2 + 2 + 1
    # It errs towards a smaller block: above the tokenizer's count for every sample file.
    for path in sample_vault.rglob("*.md"):
        text = path.read_text()
        assert heuristic.count(text) >= token_counter().count(text), (
            path,
            HEURISTIC_CHARS_PER_TOKEN,
        )


# -- the budget -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_block_fits_its_budget(vaults: dict[str, Path]) -> None:
    counter = token_counter()
    for name, root in vaults.items():
        vault = Vault(root)
        for query in (None, "invoice ERR_1_3 Jonas billing"):
            for budget in BUDGETS if query is None else BUDGETS[::2]:
                block = vault.context_block(budget, query, today=DAY)
                assert block.tokens == counter.count(block.text)
                assert block.tokens <= budget, (name, query, budget, block.tokens, block.text)
                if budget >= 4000 and name != "empty":
                    assert block.tokens > budget * 0.5 or not block.notices, (name, budget)
        vault.close()


def test_a_large_budget_holds_memory_and_both_logs_exactly(sample_vault: Path) -> None:
    block = Vault(sample_vault).context_block(8000, today=DAY)
    memory = (sample_vault / "MEMORY.md").read_text().strip("\n")
    today = (sample_vault / "memory/2026-11-21.md").read_text().strip("\n")
    yesterday = (sample_vault / "memory/2026-11-20.md").read_text().strip("\n")
    assert block.notices == []
    assert f'<memory path="MEMORY.md" lines="1-40">\n{memory}\n</memory>' in block.text
    assert (
        '<today path="memory/2026-11-21.md" date="2026-11-21" lines="3-8">\n'
        + today.removeprefix("# 2026-11-21\n\n")
        + "\n</today>"
    ) in block.text
    assert '<yesterday path="memory/2026-11-20.md" date="2026-11-20"' in block.text
    assert yesterday.removeprefix("# 2026-11-20\n\n") in block.text
    assert "2026-11-19" not in block.text  # the day before yesterday is not included
    assert [p.kind for p in block.parts] == ["memory", "today", "yesterday"]
    assert block.text.startswith(OPEN_TAG + "\n") and block.text.endswith("</vault_memory>")


def notice_range(text: str) -> tuple[int, int]:
    match = re.search(
        r"\[MEMORY\.md is longer than this block's budget: lines (\d+)-(\d+) "
        r"\(about ([\d,]+) tokens\) are not shown\. Read them with "
        r'get_memory\("MEMORY\.md", \1, \2\) or `vault get MEMORY\.md:\1-\2`\.\]',
        text,
    )
    assert match, text[:400]
    return int(match[1]), int(match[2])


@pytest.mark.parametrize("budget", [300, 1000, 3000])
def test_a_cut_memory_file_is_announced_at_the_top(tmp_path: Path, budget: int) -> None:
    root = make_vault(tmp_path / "v", {"MEMORY.md": big_memory()})
    block = Vault(root).context_block(budget, today=DAY)
    lines = fsutil.split_lines((root / "MEMORY.md").read_text())
    first_cut, last = notice_range(block.text.split("\n")[1])  # the first line inside the block
    assert last == len(lines)
    shown = block.text.split("\n")[3 : 3 + first_cut - 1]
    assert shown == lines[: first_cut - 1]  # the top of the file, exactly
    assert f'<memory path="MEMORY.md" lines="1-{first_cut - 1} of {len(lines)}">' in block.text
    assert f"[… lines {first_cut}-{last} not shown …]" in block.text
    assert block.parts[0].cut and block.notices == [block.text.split("\n")[1]]
    assert block.tokens <= budget


def test_a_memory_file_that_does_not_fit_at_all_still_says_so(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", {"MEMORY.md": big_memory()})
    fence = count_tokens(OPEN_TAG) - count_tokens("<vault_memory>")  # what the fence's note costs
    block = Vault(root).context_block(80 + fence, today=DAY)
    assert "[MEMORY.md does not fit this block's budget: lines 1-" in block.text
    assert block.tokens <= 80 + fence
    n = len(fsutil.split_lines(big_memory()))
    tiny = Vault(root).context_block(45 + fence, today=DAY)
    assert tiny.text == (
        f"{OPEN_TAG}\n[MEMORY.md cut to fit: lines 1-{n} not shown; "
        f"vault get MEMORY.md:1-{n}]\n</vault_memory>"
    )


def test_a_cut_log_keeps_its_latest_entries_from_a_time_heading(vaults: dict[str, Path]) -> None:
    block = Vault(vaults["big"]).context_block(1500, today=DAY)
    today = next(p for p in block.parts if p.kind == "today")
    assert today.cut and today.end_line == today.total_lines - 1
    text = block.text
    body = text[text.index("<today ") : text.index("</today>")].split("\n")
    assert body[1].startswith("[… earlier lines 3-")
    assert re.fullmatch(r"## \d\d:00 · note", body[2])


def test_search_hits_fill_in_what_the_block_does_not_show(tmp_path: Path) -> None:
    memory = big_memory()
    root = make_vault(
        tmp_path / "v",
        {"MEMORY.md": memory, "notes/renderer.md": "# Renderer\n\nUses WeasyPrint 63.1.\n"},
    )
    vault = Vault(root)
    # The hits' quarter of 700 tokens holds both: the ERR_3_99 line's span (its neighbours
    # 409-410 rank third on their window's lift and join it, 117 tokens) and the note's.
    block = vault.context_block(700, "ERR_3_99 WeasyPrint", today=DAY)
    first_cut, _ = notice_range(block.text)
    cited = re.findall(r"^(\S+\.md):(\d+)(?:-(\d+))? ", block.text, flags=re.M)
    assert ("notes/renderer.md", "3", "") in cited
    line = next(i for i, ln in enumerate(memory.split("\n"), 1) if "ERR_3_99`" in ln)
    assert line > first_cut  # a line from the cut part of MEMORY.md...
    assert any(p == "MEMORY.md" and int(a) <= line <= int(b or a) for p, a, b in cited)
    assert [p.kind for p in block.parts][-2:] == ["hit", "hit"]
    assert '<relevant query="ERR_3_99 WeasyPrint">' in block.text


def test_hits_already_in_the_block_are_skipped(small_vault: Path) -> None:
    block = Vault(small_vault).context_block(4000, "ERR_LEDGER_409 PostgreSQL renderer", today=DAY)
    assert block.duplicates_skipped >= 2  # the MEMORY.md and 2026-11-21 lines are already shown
    assert block.text.count("ERR_LEDGER_409 comes from retried refunds") == 1
    assert block.text.count("Billing runs on PostgreSQL 16") == 1
    assert "notes/renderer.md:3 (Renderer)\nThe invoice renderer uses WeasyPrint" in block.text


def test_context_reads_only(sample_vault: Path, tree_state: Callable) -> None:
    before = tree_state(sample_vault)
    Vault(sample_vault).context(500, today=None) if False else Vault(sample_vault).context(500)
    assert tree_state(sample_vault) == before


def test_an_empty_vault_gives_an_empty_block(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    root.mkdir()
    (root / "vault.toml").write_text("")
    assert Vault(root).context(1000) == ""


@pytest.mark.parametrize(
    ("budget", "query", "message"),
    [
        (0, None, "out of range"),
        (2_000_000, None, "out of range"),
        (True, None, "whole number"),
        (10.5, None, "whole number"),
        (100, "q" * 1001, "keep it under 1,000"),
    ],
)
def test_bad_budgets_and_queries(vault_dir: Path, budget, query, message: str) -> None:
    with pytest.raises(VaultError, match=message):
        vault = Vault(vault_dir)
        build_context(vault.layout, vault.search, budget, query)


# -- the command ----------------------------------------------------------------------------------


def test_vault_context_prints_the_block(sample_vault: Path, run_cli) -> None:
    result = run_cli("--vault", str(sample_vault), "context", "--budget", "400")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(OPEN_TAG + "\n[MEMORY.md is longer than")
    assert count_tokens(result.stdout.rstrip("\n")) <= 400


def test_vault_context_json(sample_vault: Path, run_cli) -> None:
    result = run_cli(
        "--vault",
        str(sample_vault),
        "context",
        "--budget",
        "3000",
        "--query",
        "Loom video",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["budget"] == 3000 and data["tokens"] == count_tokens(data["text"]) <= 3000
    assert data["query"] == "Loom video" and data["estimator"].startswith("wordpiece")
    kinds = [p["kind"] for p in data["parts"]]
    assert kinds[0] == "memory" and "hit" in kinds
    assert any("Loom" in line for line in data["text"].split("\n") if "Loom" in line)


@pytest.mark.parametrize("budget", ["0", "abc", "-5"])
def test_vault_context_rejects_a_bad_budget(sample_vault: Path, run_cli, budget: str) -> None:
    result = run_cli("--vault", str(sample_vault), "context", "--budget", budget)
    assert result.exit_code == 2 and "--budget" in result.stderr


def test_weak_hits_are_left_out(tmp_path: Path) -> None:
    filler = " ".join(f"word{i}" for i in range(40))
    root = make_vault(
        tmp_path / "v",
        {
            "notes/strong.md": "# Strong\n\nZebra quagga okapi facts from the savanna.\n",
            "notes/weak.md": f"# Weak\n\n{filler} okapi {filler}\n",
        },
    )
    vault = Vault(root)
    scores = {h.path: h.score for h in vault.search("zebra quagga okapi")}
    assert scores["notes/weak.md"] < 0.5 * scores["notes/strong.md"]
    block = vault.context_block(8000, "zebra quagga okapi", today=DAY)
    assert "notes/strong.md:3" in block.text and "notes/weak.md" not in block.text
