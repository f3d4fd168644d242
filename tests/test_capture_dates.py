"""Relative dates pinned to the day a conversation was flushed (capture/dates.py), and what that
does to idempotence: the pins are not part of an entry's identity."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.capture.dates import pin_dates, unpin_dates
from vault_memory.capture.extract import entry_key

MONDAY = dt.date(2026, 11, 16)
SATURDAY = dt.date(2026, 11, 21)


@pytest.mark.parametrize(
    ("text", "day", "pinned"),
    [
        ("I went to the dentist yesterday.", MONDAY, "yesterday (2026-11-15)"),
        ("The parcel arrives tomorrow.", MONDAY, "tomorrow (2026-11-17)"),
        ("I ran a 10k last Saturday.", MONDAY, "last Saturday (2026-11-14)"),
        ("We met last Monday.", MONDAY, "last Monday (2026-11-09)"),  # the day itself: a week back
        ("We moved the servers last week.", MONDAY, "last week (week of 2026-11-09)"),
        ("The audit starts next week.", SATURDAY, "next week (week of 2026-11-23)"),
        ("We had a barbecue last weekend.", MONDAY, "last weekend (weekend of 2026-11-14)"),
        ("We had a barbecue last weekend.", SATURDAY, "last weekend (weekend of 2026-11-14)"),
        ("I started the course two days ago.", MONDAY, "two days ago (2026-11-14)"),
        ("She joined a couple of weeks ago.", MONDAY, "a couple of weeks ago (week of 2026-11-02)"),
        ("I painted it a month ago.", MONDAY, "a month ago (2026-10)"),
        ("We married 5 years ago.", MONDAY, "5 years ago (2021)"),
        ("The lease ends next month.", MONDAY, "next month (2026-12)"),
        ("I visited Oslo last year.", MONDAY, "last year (2025)"),
        ("The release ships in two weeks.", MONDAY, "in two weeks (week of 2026-11-30)"),
    ],
)
def test_relative_dates_are_pinned_to_the_day(text: str, day: dt.date, pinned: str) -> None:
    out = pin_dates(text, day)
    assert pinned in out
    assert unpin_dates(out) == text


@pytest.mark.parametrize(
    "text",
    [
        "The call is on Friday.",  # last Friday or next? not said
        "Let's meet next Friday.",  # this week's or next week's: people disagree
        "The last week was exhausting.",  # the past seven days, not a calendar week
        "Yesterday's standup ran long.",  # a possessive: the date would split it
        "Next year's budget is tight.",
        "I'll see you in a week or two.",
        "It was yesterday (2026-11-15), after lunch.",  # pinned already
    ],
)
def test_what_cannot_be_pinned_safely_is_left_alone(text: str) -> None:
    assert pin_dates(text, MONDAY) == text


def test_an_entry_key_does_not_depend_on_the_day_it_was_pinned() -> None:
    line = "User: I sent the contract yesterday."
    assert entry_key(pin_dates(line, MONDAY)) == entry_key(pin_dates(line, SATURDAY))
    assert entry_key(pin_dates(line, MONDAY)) == entry_key(line)
    assert entry_key("User: I sent the contract today.") != entry_key(line)


CHAT = [
    {"role": "user", "content": "I moved the staging database to Frankfurt yesterday."},
    {"role": "assistant", "content": "I'll update the runbook by Friday."},
]


def test_a_flush_pins_its_day_and_stays_idempotent_the_next_day(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-16T10:00")
    with Vault(vault_dir) as vault:
        first = vault.flush(CHAT, session="ops-1")
        assert [e.text for e in first.entries] == [
            "User: I moved the staging database to Frankfurt yesterday (2026-11-15).",
            "Assistant: I'll update the runbook by Friday. #todo",
        ]
        text = (vault_dir / "memory" / "2026-11-16.md").read_text()
        assert "yesterday (2026-11-15)" in text
        # the same conversation again, a day later: "yesterday" would now be the 16th, but
        # nothing is new
        monkeypatch.setenv("VAULT_NOW", "2026-11-17T09:00")
        again = vault.flush(CHAT, session="ops-1")
        assert again.entries == [] and again.already_flushed == 2
        assert not (vault_dir / "memory" / "2026-11-17.md").exists()


def test_flush_date_option_pins_to_that_day(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T09:30")
    with Vault(vault_dir) as vault:
        report = vault.flush(CHAT[:1], session="ops-2", date="2026-03-02")
    assert report.entries[0].text.endswith("yesterday (2026-03-01).")
