"""Relative dates resolved against the line's own date: `--since/--until` find the line written
the day after what it tells ("went to the support group yesterday"), with the real index and
model, and the JSON `scores` say which hits came in that way (`told_date`). The pure rule
(`mentioned_days`) is tested without files."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.search.dates import mentioned_days
from vault_memory.search.ranking import asks_when

LOG = """\
# 2023-05-08

## 00:20 — chat

- **Caroline**: went to the lgbtq support group yesterday, so powerful
- **Melanie**: my kids loved the museum last Fri!!
- **Caroline**: support group again next week i think
"""

OTHER = """\
# 2023-05-07

## 10:00 — chat

- **Melanie**: pottery class this morning, made a bowl
"""


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    (vault_dir / "memory" / "2023-05-08.md").write_text(LOG, encoding="utf-8")
    (vault_dir / "memory" / "2023-05-07.md").write_text(OTHER, encoding="utf-8")
    opened = Vault(vault_dir)
    opened.index()
    return opened


def lines(hits: list) -> set[tuple[str, int]]:
    return {(h.path, n) for h in hits for n in range(h.start_line, h.end_line + 1)}


def test_since_until_find_what_a_line_says_happened_that_day(vault: Vault) -> None:
    hits = vault.search("support group", since="2023-05-07", until="2023-05-07", fresh=False)
    found = lines(hits)
    assert ("memory/2023-05-08.md", 5) in found  # "yesterday", written on the 8th
    assert ("memory/2023-05-08.md", 7) not in found  # "next week": not the 7th
    told = next(h for h in hits if h.start_line <= 5 <= h.end_line)
    assert told.scores["told_date"] == 1.0
    pottery = vault.search("pottery", since="2023-05-07", until="2023-05-07", fresh=False)
    assert pottery[0].path == "memory/2023-05-07.md"
    assert pottery[0].scores["told_date"] == 0.0  # in by its file's date


def test_a_weekday_and_the_next_week(vault: Vault) -> None:
    museum = vault.search("museum", since="2023-05-05", until="2023-05-05", fresh=False)
    assert ("memory/2023-05-08.md", 6) in lines(museum)  # "last Fri" from Monday the 8th
    later = vault.search("support group", since="2023-05-15", until="2023-05-21", fresh=False)
    assert lines(later) == {("memory/2023-05-08.md", 7)}
    # The other filters still hold.
    elsewhere = vault.search("museum", since="2023-05-05", until="2023-05-05",
                             within="memory/2023-05-07.md", fresh=False)
    assert ("memory/2023-05-08.md", 6) not in lines(elsewhere)


def test_json_scores_name_the_told_date(run_cli, vault: Vault) -> None:
    result = run_cli("--vault", str(vault.root), "search", "support group", "--since",
                     "2023-05-07", "--until", "2023-05-07", "--json")
    assert result.exit_code == 0, result.stderr
    assert '"told_date": 1.0' in result.stdout


MONDAY = dt.date(2023, 5, 8)


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("went yesterday", "2023-05-07", "2023-05-07"),
        ("yday was wild", "2023-05-07", "2023-05-07"),
        ("Last Fri I took the kids", "2023-05-05", "2023-05-05"),
        ("this past Monday", "2023-05-01", "2023-05-01"),
        ("see you next friday", "2023-05-12", "2023-05-12"),
        ("3 days ago", "2023-05-05", "2023-05-05"),
        ("two weeks ago", "2023-04-24", "2023-04-30"),
        ("last week", "2023-05-01", "2023-05-07"),
        ("last weekend", "2023-05-06", "2023-05-07"),
        ("next month", "2023-06-01", "2023-06-30"),
        ("last year", "2022-01-01", "2022-12-31"),
        ("tmrw!", "2023-05-09", "2023-05-09"),
    ],
)
def test_mentioned_days(text: str, first: str, last: str) -> None:
    assert mentioned_days(text, MONDAY) == (dt.date.fromisoformat(first),
                                            dt.date.fromisoformat(last))


@pytest.mark.parametrize("text", ["the last thing", "a weekday", "next steps", "fried rice"])
def test_no_relative_date(text: str) -> None:
    assert mentioned_days(text, MONDAY) is None


def test_across_a_month_and_a_year() -> None:
    assert mentioned_days("last month", dt.date(2024, 1, 15)) == (
        dt.date(2023, 12, 1), dt.date(2023, 12, 31))
    assert mentioned_days("yesterday", dt.date(2024, 3, 1)) == (
        dt.date(2024, 2, 29), dt.date(2024, 2, 29))


WHEN = """\
# 2023-05-08

## 00:20 — chat

- **Caroline**: the support group meets at the community centre, I love that group
- **Melanie**: how was it?
- **Caroline**: went to the lgbtq support group yesterday, so powerful
"""


def test_a_when_question_prefers_the_line_that_tells_a_day(vault_dir: Path) -> None:
    (vault_dir / "memory" / "2023-05-08.md").write_text(WHEN, encoding="utf-8")
    opened = Vault(vault_dir)
    opened.index()
    searcher = opened._searcher
    searcher.settings = dataclasses.replace(searcher.settings, coalesce_depth=0)
    query = "When did Caroline go to the support group?"
    hits = opened.search(query, limit=3, fresh=False)
    assert (hits[0].start_line, hits[0].scores["when"]) == (7, 1.1)
    searcher.settings = dataclasses.replace(searcher.settings, when_boost=0.0)
    assert opened.search(query, limit=3, fresh=False)[0].start_line == 5  # without it
    searcher.settings = dataclasses.replace(searcher.settings, when_boost=0.1)
    assert opened.search("What did Caroline say about the support group?", limit=3,
                         fresh=False)[0].scores["when"] == 1.0  # not asking when


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("When did Mel paint a sunrise?", True),
        ("when was the gig", True),
        ("what day did we ship the fix", True),
        ("How long ago did Jon move?", True),
        ("What did Mel paint?", False),
        ("Where is the whenua trust?", False),
    ],
)
def test_asks_when(query: str, asks: bool) -> None:
    assert asks_when(query) is asks
