"""Relative dates pinned to the day they were said (capture/dates.py, the package's one parser in
relative_dates.py), and what that does to idempotence: the pins are not part of an entry's
identity. Flush, add and import pin them; the dream asks `has_unresolved_relative_time`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.capture.dates import has_unresolved_relative_time, pin_dates, unpin_dates
from vault_memory.capture.extract import entry_key
from vault_memory.relative_dates import render, unresolved_relative_time

MONDAY = dt.date(2026, 11, 16)
SATURDAY = dt.date(2026, 11, 21)
SUNDAY = dt.date(2026, 12, 6)


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
        # the day itself and parts of days
        ("Mia's birthday is today!", SUNDAY, "Mia's birthday is today (2026-12-06)!"),
        ("Dinner tonight at eight.", SUNDAY, "tonight (2026-12-06)"),
        ("I ran this morning.", SUNDAY, "this morning (2026-12-06)"),
        ("We fly tomorrow night.", SUNDAY, "tomorrow night (2026-12-07)"),
        ("We argued last night.", SUNDAY, "last night (2026-12-05)"),
        ("I started 3 days ago.", SUNDAY, "3 days ago (2026-12-03)"),
        # "next Friday": the first Friday after the day (said on a Monday: that week's)
        ("Let's meet next Friday.", MONDAY, "next Friday (2026-11-20)"),
        ("Let's meet next Friday.", SUNDAY, "next Friday (2026-12-11)"),
        ("See you this Friday.", MONDAY, "this Friday (2026-11-20)"),
        ("We retire in two years.", SUNDAY, "in two years (2028)"),
        ("I've had them for 3 years now.", SUNDAY, "for 3 years now (since 2023)"),
        ("Yesterday's standup ran long.", MONDAY, "Yesterday's (2026-11-15) standup"),
        ("Next year's budget is tight.", MONDAY, "Next year's (2027) budget"),
        # Spanish, French, German
        ("Mañana vamos al cine.", SUNDAY, "Mañana (2026-12-07) vamos"),
        ("Esta mañana fui al médico.", SUNDAY, "Esta mañana (2026-12-06)"),
        ("Hace tres días llegó Ana.", SUNDAY, "Hace tres días (2026-12-03)"),
        ("Nos vemos la semana que viene.", SUNDAY, "la semana que viene (week of 2026-12-07)"),
        ("El próximo viernes es su cumpleaños.", SUNDAY, "El próximo viernes (2026-12-11)"),
        ("Ayer llovió mucho.", SUNDAY, "Ayer (2026-12-05)"),
        ("Je suis allé au cinéma hier soir.", SUNDAY, "hier soir (2026-12-05)"),
        ("Demain je pars à Lyon.", SUNDAY, "Demain (2026-12-07)"),
        ("Il y a deux semaines, nous avons déménagé.", SUNDAY, "(week of 2026-11-16)"),
        ("Vendredi prochain c'est son anniversaire.", SUNDAY, "Vendredi prochain (2026-12-11)"),
        ("Ich bin gestern angekommen.", SUNDAY, "gestern (2026-12-05)"),
        ("Morgen gehe ich schwimmen.", SUNDAY, "Morgen (2026-12-07)"),
        ("Wir treffen uns nächsten Freitag.", SUNDAY, "nächsten Freitag (2026-12-11)"),
        ("Vor drei Tagen war ich in Berlin.", SUNDAY, "Vor drei Tagen (2026-12-03)"),
        ("Heute Abend essen wir Pizza.", SUNDAY, "Heute Abend (2026-12-06)"),
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
        "The last week was exhausting.",  # the past seven days, not a calendar week
        "I'll see you in a week or two.",
        "I started a few days ago.",  # how many?
        "We stayed for two weeks.",  # a length of time, not a time
        "I last sat here in May.",  # "sat" is a word before it is Saturday
        "Ich bin hier.",  # German "here", not French "yesterday"
        "Guten Morgen, wie geht's?",  # the morning, not tomorrow
        "Der Morgen war kalt.",
        "It was yesterday (2026-11-15), after lunch.",  # pinned already
        "Mia's birthday is today (2026-12-06)!",
    ],
)
def test_what_cannot_be_pinned_safely_is_left_alone(text: str) -> None:
    assert pin_dates(text, MONDAY) == text


@pytest.mark.parametrize(
    "text",
    [
        "Mia's birthday is today and we meet next Friday; Ana arrived 3 days ago.",
        "Yesterday's standup ran long, tomorrow night we rest, vor drei Tagen war ich dort.",
    ],
)
def test_pinning_is_idempotent_and_undone_by_unpin(text: str) -> None:
    once = pin_dates(text, SUNDAY)
    assert once != text
    assert pin_dates(once, SUNDAY) == once
    assert pin_dates(once, MONDAY) == once  # pinned: another day changes nothing
    assert unpin_dates(once) == text


@pytest.mark.parametrize(
    ("text", "unresolved"),
    [
        ("Mia's birthday is today.", ["today"]),
        ("Let's meet next Friday.", ["next Friday"]),
        ("Hace tres días llegó Ana.", ["Hace tres días"]),
        ("The call is on Friday.", ["on Friday"]),  # a weekday without its week
        ("Send it by Tuesday.", ["by Tuesday"]),
        ("I started a few days ago.", ["a few days ago"]),  # vague, still relative
        ("Mia's birthday is today (2026-12-06).", []),
        ("Let's meet next Friday (2026-12-11).", []),
        ("Gym on Mondays.", []),  # a habit, not a day
        ("We stayed for two weeks.", []),
        ("Billing runs on PostgreSQL 16.", []),
    ],
)
def test_what_the_dream_must_not_promote_as_it_is(text: str, unresolved: list[str]) -> None:
    assert unresolved_relative_time(text) == unresolved
    assert has_unresolved_relative_time(text) is bool(unresolved)
    if unresolved and "few" not in text and "on Friday" not in text and "by " not in text:
        assert not has_unresolved_relative_time(pin_dates(text, SUNDAY))


def test_a_range_is_written_as_people_read_it() -> None:
    assert render(SUNDAY, SUNDAY) == "2026-12-06"
    assert render(dt.date(2026, 11, 30), SUNDAY) == "week of 2026-11-30"
    assert render(dt.date(2026, 12, 5), SUNDAY) == "weekend of 2026-12-05"
    assert render(dt.date(2026, 12, 1), dt.date(2026, 12, 31)) == "2026-12"
    assert render(dt.date(2026, 1, 1), dt.date(2026, 12, 31)) == "2026"


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


# -- add, agents' create, and the time zone -------------------------------------------------


def test_add_pins_the_days_it_was_written(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-12-06T10:00")
    vault = Vault(vault_dir)
    report = vault.add("Call the dentist tomorrow; Mia's party is next Friday.")
    text = (vault_dir / report.path).read_text()
    assert (
        "- Call the dentist tomorrow (2026-12-07); Mia's party is next Friday (2026-12-11)." in text
    )


def test_an_agents_create_pins_too_and_stays_idempotent(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-12-06T10:00")
    vault = Vault(vault_dir)
    first = vault.manage("Alpha is on call today.", "create")
    assert first.changed and first.text.endswith("Alpha is on call today (2026-12-06).")
    again = vault.manage("Alpha is on call today.", "create")
    assert not again.changed
    memory = vault.manage("Maya started at Ledgerly last week.", "create", "MEMORY.md")
    assert "last week (week of 2026-11-23)" in memory.text


def test_the_configured_time_zone_decides_the_day(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """23:30 in London is 08:30 the next morning in Tokyo: a person in Tokyo says "today" of
    the 7th, and that day's log holds it."""
    with (vault_dir / "vault.toml").open("a") as fh:
        fh.write('\n[flush]\ntimezone = "Asia/Tokyo"\n')
    monkeypatch.setenv("VAULT_NOW", "2026-12-06T23:30:00+00:00")
    vault = Vault(vault_dir)
    chat = [{"role": "user", "content": "I moved the staging database to Frankfurt today."}]
    report = vault.flush(chat, session="tz")
    assert report.path == "memory/2026-12-07.md"
    assert report.entries[0].text.endswith("today (2026-12-07).")
    assert report.heading is not None and report.heading.startswith("08:30 · flush")
    added = vault.add("Dinner with Ana tonight.")
    assert added.path == "memory/2026-12-07.md"
    assert "tonight (2026-12-07)" in (vault_dir / added.path).read_text()


def test_a_time_zone_that_is_none_is_one_clear_error(vault_dir: Path, run_cli) -> None:
    with (vault_dir / "vault.toml").open("a") as fh:
        fh.write('\n[flush]\ntimezone = "Mars/Olympus"\n')
    result = run_cli(
        "--vault", str(vault_dir), "flush", "-", input='[{"role": "user", "content": "I like tea"}]'
    )
    assert result.exit_code == 1
    assert result.stderr.count("Error:") == 1 and "Traceback" not in result.stderr
    assert "flush.timezone 'Mars/Olympus' is not a time zone" in result.stderr
    assert not list((vault_dir / "memory").glob("*.md"))
