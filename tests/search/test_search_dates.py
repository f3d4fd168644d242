"""Relative dates resolved against the line's own date: `--since/--until` find the line written
the day after what it tells ("went to the support group yesterday"), with the real index and
model, and the JSON `scores` say which hits came in that way (`told_date`). The pure rule
(`mentioned_days`) is tested without files. A question naming a day ("on 13 October, 2023",
"yesterday") prefers that day's lines (`date` in the scores)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from vault_memory import Vault
from vault_memory.search.dates import (
    MOST_TOLD,
    asked_days,
    mentioned_days,
    named_days,
    on_days,
    told_ranges,
)
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
    elsewhere = vault.search(
        "museum", since="2023-05-05", until="2023-05-05", within="memory/2023-05-07.md", fresh=False
    )
    assert ("memory/2023-05-08.md", 6) not in lines(elsewhere)


CHAT = """\
# 2023-05-08

## 21:40 — chat

- **Jo**: hiking at the lake this weekend, u coming?
- **Sam**: cant, dentist tmr
- **Jo**: this wedding was the best hiking break tho
- **Sam**: my sister visits in two weeks
"""


def test_days_a_chat_tells_ahead_are_found_by_since_until(vault_dir: Path) -> None:
    (vault_dir / "memory" / "2023-05-08.md").write_text(CHAT, encoding="utf-8")
    opened = Vault(vault_dir)
    opened.index()
    weekend = opened.search("hiking", since="2023-05-13", until="2023-05-14", fresh=False)
    assert lines(weekend) == {("memory/2023-05-08.md", 5)}  # not the "wedding" line
    assert weekend[0].scores["told_date"] == 1.0
    assert lines(opened.search("dentist", since="2023-05-09", until="2023-05-09", fresh=False)) == {
        ("memory/2023-05-08.md", 6)
    }
    assert lines(opened.search("sister", since="2023-05-22", until="2023-05-28", fresh=False)) == {
        ("memory/2023-05-08.md", 8)
    }
    assert opened.search("sister", since="2023-05-15", until="2023-05-21", fresh=False) == []


TWO_DAYS = """\
# 2023-05-08

## 21:40 — chat

- **Sam**: my sister visits in two weeks, and the dentist is tmr, busy busy
- **Jo**: my sister is coming over next month
"""


def test_every_relative_date_of_a_line_is_found(vault_dir: Path) -> None:
    """A line telling two days is found by either: before, only its first was read."""
    (vault_dir / "memory" / "2023-05-08.md").write_text(TWO_DAYS, encoding="utf-8")
    opened = Vault(vault_dir)
    opened.index()
    for since, until in (("2023-05-09", "2023-05-09"), ("2023-05-22", "2023-05-28")):
        hits = opened.search("sister", since=since, until=until, fresh=False)
        assert lines(hits) == {("memory/2023-05-08.md", 5)}, (since, until)
        assert hits[0].scores["told_date"] == 1.0
    june = opened.search("sister", since="2023-06-01", until="2023-06-30", fresh=False)
    assert lines(june) == {("memory/2023-05-08.md", 6)}
    # A question naming the one day of its second raises the line (the date boost reads all).
    asked = opened.search("who sees the dentist on 9 May 2023?", limit=1, fresh=False)
    assert (asked[0].start_line, asked[0].scores["date"]) == (5, 1.5)


def test_told_ranges() -> None:
    assert told_ranges("dentist tmr and my sister visits in two weeks", MONDAY) == [
        (dt.date(2023, 5, 9), dt.date(2023, 5, 9)),
        (dt.date(2023, 5, 22), dt.date(2023, 5, 28)),
    ]
    # Each range once, in the order said, at most MOST_TOLD of them.
    assert told_ranges("yesterday, yesterday!", MONDAY) == [(dt.date(2023, 5, 7),) * 2]
    many = "yesterday, tomorrow, last week, next month, last year"
    assert len(told_ranges(many, MONDAY)) == MOST_TOLD
    # One past the calendar names none; the others still count.
    assert told_ranges("yesterday and tomorrow", dt.date(9999, 12, 31)) == [
        (dt.date(9999, 12, 30),) * 2
    ]
    assert (
        mentioned_days("tomorrow or yesterday", dt.date(9999, 12, 31))
        == (dt.date(9999, 12, 30),) * 2
    )
    assert told_ranges("no dates here", MONDAY) == []


def test_json_scores_name_the_told_date(run_cli, vault: Vault) -> None:
    result = run_cli(
        "--vault",
        str(vault.root),
        "search",
        "support group",
        "--since",
        "2023-05-07",
        "--until",
        "2023-05-07",
        "--json",
    )
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
        # As people type them in chats, and the forms ahead of the line's day.
        ("c u tmr", "2023-05-09", "2023-05-09"),
        ("2moro at 8?", "2023-05-09", "2023-05-09"),
        ("last nite was wild", "2023-05-07", "2023-05-07"),
        ("the day before yesterday", "2023-05-06", "2023-05-06"),
        ("day after tomorrow", "2023-05-10", "2023-05-10"),
        ("a couple days ago", "2023-05-06", "2023-05-06"),
        ("a few weeks ago", "2023-04-17", "2023-04-23"),
        ("in two weeks", "2023-05-22", "2023-05-28"),
        ("back in a few days", "2023-05-11", "2023-05-11"),
        ("3 days from now", "2023-05-11", "2023-05-11"),
        ("see you in a month", "2023-06-01", "2023-06-30"),
        ("this weekend", "2023-05-13", "2023-05-14"),
        ("this Fri", "2023-05-12", "2023-05-12"),
        ("this monday", "2023-05-08", "2023-05-08"),
        ("this week", "2023-05-08", "2023-05-14"),
        ("this month", "2023-05-01", "2023-05-31"),
        ("this year", "2023-01-01", "2023-12-31"),
        ("next tues", "2023-05-09", "2023-05-09"),
        ("an few days ago", "2023-05-05", "2023-05-05"),  # a slip of the article: no error
        ("in an couple of  weeks", "2023-05-22", "2023-05-28"),
        # A span that lasts up to the line's day: when it began.
        ("I've had them for 3 years now", "2020-01-01", "2020-12-31"),
        ("she has been ill for two days", "2023-05-06", "2023-05-06"),
        ("we’ve lived here for about four months", "2023-01-01", "2023-01-31"),
        ("been dating for like 2 years now lol", "2021-01-01", "2021-12-31"),
        ("for the past few weeks I ran", "2023-04-17", "2023-04-23"),
        ("She's been playing for just under a year", "2022-01-01", "2022-12-31"),
    ],
)
def test_mentioned_days(text: str, first: str, last: str) -> None:
    assert mentioned_days(text, MONDAY) == (
        dt.date.fromisoformat(first),
        dt.date.fromisoformat(last),
    )


@pytest.mark.parametrize(
    "text",
    [
        "the last thing",
        "a weekday",
        "next steps",
        "fried rice",
        # A word a weekday's name begins is no weekday; a span of time is no day ahead.
        "at the last wedding",
        "this friend of mine",
        "this sunset!",
        "next saturation test",
        "finished it in two days of work",
        "once in a week",
        "twice in a month",
        "in two weeks later",
        "an hour ago",
        # A span that does not last up to the line's day tells no day.
        "we stayed for two weeks",
        "I'll be away for a week",
        "I had lived there for ten years",
        "I have news. We met for 3 days",
        "for 3 years he ran the shop",
    ],
)
def test_no_relative_date(text: str) -> None:
    assert mentioned_days(text, MONDAY) is None


def test_a_day_past_the_calendar_is_no_day() -> None:
    assert mentioned_days("see you tomorrow", dt.date(9999, 12, 31)) is None
    assert mentioned_days("three years ago", dt.date(2, 6, 1)) is None
    assert mentioned_days("in 999 months", dt.date(9990, 1, 1)) is None


def test_across_a_month_and_a_year() -> None:
    assert mentioned_days("last month", dt.date(2024, 1, 15)) == (
        dt.date(2023, 12, 1),
        dt.date(2023, 12, 31),
    )
    assert mentioned_days("yesterday", dt.date(2024, 3, 1)) == (
        dt.date(2024, 2, 29),
        dt.date(2024, 2, 29),
    )


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
    searcher = opened.searcher
    searcher.settings = dataclasses.replace(searcher.settings, coalesce_depth=0)
    query = "When did Caroline go to the support group?"
    hits = opened.search(query, limit=3, fresh=False)
    assert (hits[0].start_line, hits[0].scores["when"]) == (7, 1.1)
    searcher.settings = dataclasses.replace(searcher.settings, when_boost=0.0)
    assert opened.search(query, limit=3, fresh=False)[0].start_line == 5  # without it
    searcher.settings = dataclasses.replace(searcher.settings, when_boost=0.1)
    assert (
        opened.search("What did Caroline say about the support group?", limit=3, fresh=False)[
            0
        ].scores["when"]
        == 1.0
    )  # not asking when


LASTED = """\
# 2022-01-23

## 19:00 — chat

- **Nate**: my turtles love the new tank, they swim around all day
- **Joanna**: so cute! how long have you had them?
- **Nate**: I've had them for 3 years now and they bring me tons of joy.
- **Nate**: we stayed at the lake for two weeks last summer.
"""


def test_a_span_up_to_the_lines_day_tells_when_it_began(vault_dir: Path) -> None:
    """ "I've had them for 3 years now", written on 2022-01-23, tells 2019 (time):
    `--since/--until` over 2019 find it, and a question asking how long (or when) raises it
    as a line that tells a day; "we stayed … for two weeks" lasts to no day of its own."""
    (vault_dir / "memory" / "2022-01-23.md").write_text(LASTED, encoding="utf-8")
    opened = Vault(vault_dir)
    opened.index()
    hits = opened.search("Nate", since="2019-01-01", until="2019-12-31", fresh=False)
    assert lines(hits) == {("memory/2022-01-23.md", 7)} and hits[0].scores["told_date"] == 1.0
    searcher = opened.searcher
    # the answer shares no word with the question: its neighbours' context carries it, as
    # much as they give (`context_cap=0`; the cap of chats sent in runs is measured apart)
    searcher.settings = dataclasses.replace(searcher.settings, coalesce_depth=0, context_cap=0)
    asked = opened.search("How long has Nate had his turtles?", limit=4, fresh=False)
    when = {h.start_line: h.scores["when"] for h in asked}
    assert when[7] == 1.1 and when[5] == 1.0 and when.get(8, 1.0) == 1.0


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("When did Mel paint a sunrise?", True),
        ("when was the gig", True),
        ("what day did we ship the fix", True),
        ("How long ago did Jon move?", True),
        ("How long has Nate had his turtles?", True),
        ("since when do you paint?", True),
        ("What did Mel paint?", False),
        ("Where is the whenua trust?", False),
    ],
)
def test_asks_when(query: str, asks: bool) -> None:
    assert asks_when(query) is asks


PAINTED = {
    "2023-09-01": "- **Caroline**: the bus was late again\n- **Caroline**: fixed the bike chain\n"
    "- **Melanie**: baked bread with the kids",
    "2023-10-13": "- **Melanie**: painted a lake picture at dawn for the kids",
    "2023-11-02": "- **Melanie**: painted the lake at dusk, I love to paint a lake",
}


@pytest.fixture
def painted(vault_dir: Path) -> Vault:
    for day, line in PAINTED.items():
        (vault_dir / "memory" / f"{day}.md").write_text(
            f"# {day}\n\n## 18:00 — chat\n\n{line}\n", encoding="utf-8"
        )
    opened = Vault(vault_dir)
    opened.index()
    return opened


def test_a_question_naming_a_day_prefers_that_days_lines(painted: Vault) -> None:
    searcher = painted.searcher
    query = "What did Melanie paint in October?"
    hits = painted.search(query, limit=2, fresh=False)
    assert (hits[0].path, hits[0].scores["date"]) == ("memory/2023-10-13.md", 1.5)
    assert hits[1].scores["date"] == 1.0
    searcher.settings = dataclasses.replace(searcher.settings, date_boost=0.0)
    assert painted.search(query, limit=2, fresh=False)[0].path == "memory/2023-11-02.md"


def test_a_relative_day_in_the_question_is_seen_from_today(
    painted: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2023-10-14T09:30")
    hits = painted.search("what did Melanie paint yesterday?", limit=2, fresh=False)
    assert (hits[0].path, hits[0].scores["date"]) == ("memory/2023-10-13.md", 1.5)
    monkeypatch.setenv("VAULT_NOW", "2023-11-03T09:30")
    hits = painted.search("what did Melanie paint yesterday?", limit=2, fresh=False)
    assert hits[0].path == "memory/2023-11-02.md"


@pytest.mark.parametrize(
    ("query", "days"),
    [
        ("What did Nate do for Joanna on 25 May, 2022?", [(2022, 5, 25)]),
        ("the painting she showed on October 13, 2023", [(2023, 10, 13)]),
        ("What book did Tim finish on 8th December, 2023?", [(2023, 12, 8)]),
        ("What is Nate organizing in June 2022?", [(2022, 6, None)]),
        ("When did John hurt his ankle in 2023?", [(2023, 0, None)]),
        ("what did they give him on Aug 15th?", [(None, 8, 15)]),
        ("What deal did John get in December?", [(None, 12, None)]),
        ("I may go in May", []),
        ("version 2 may break on May 3", []),
        ("on 3 May 2023", [(2023, 5, 3)]),
        ("a 2023 budget and 12 items", []),
    ],
)
def test_named_days(query: str, days: list) -> None:
    assert named_days(query) == days


def test_asked_days_and_on_days() -> None:
    assert asked_days("what did we do last week?", MONDAY) == [(2023, 5, n) for n in range(1, 8)]
    assert asked_days("and last month", MONDAY) == [(2023, 4, None)]
    assert asked_days("and last year", MONDAY) == [(2022, 0, None)]
    assert asked_days("on 1 May 2023, not yesterday", MONDAY) == [(2023, 5, 1)]  # named first
    days = np.array(
        [
            0,
            dt.date(2023, 10, 13).toordinal(),
            dt.date(2022, 10, 13).toordinal(),
            dt.date(2024, 2, 29).toordinal(),
        ]
    )
    assert on_days(days, [(2023, 10, 13)]).tolist() == [False, True, False, False]
    assert on_days(days, [(None, 10, 13)]).tolist() == [False, True, True, False]
    assert on_days(days, [(2024, 2, None), (2022, 0, None)]).tolist() == [False, False, True, True]


def test_explain_names_the_date(run_cli, painted: Vault) -> None:
    result = run_cli(
        "--vault",
        str(painted.root),
        "search",
        "What did Melanie paint in October?",
        "--explain",
        "--limit",
        "1",
    )
    assert result.exit_code == 0, result.stderr
    assert "2023-10-13.md" in result.stdout and "date=1.500" in result.stdout
