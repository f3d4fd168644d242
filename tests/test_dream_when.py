"""Relative time in what a dream promotes (dream/when.py): resolved against the day of the log,
the words kept and the date beside them, in English and the other languages of the table; what
stays relative is said."""

from __future__ import annotations

import datetime as dt

import pytest

from vault_memory.dream.when import pin, resolve_relative, still_relative

FRIDAY = dt.date(2026, 11, 20)


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("Zoë's birthday is today.", "Zoë's birthday is today (2026-11-20)."),
        ("The auditors come tomorrow.", "The auditors come tomorrow (2026-11-21)."),
        ("Board meeting next Thursday.", "Board meeting next Thursday (2026-11-26)."),
        ("Party this weekend.", "Party this weekend (weekend of 2026-11-21)."),
        ("see you tmr", "see you tmr (2026-11-21)"),
        ("Die Abgabe ist morgen.", "Die Abgabe ist morgen (2026-11-21)."),
        ("Guten Morgen, heute ist Teamtag.", "Guten Morgen, heute (2026-11-20) ist Teamtag."),
        ("La démo est vendredi prochain.", "La démo est vendredi prochain (2026-11-27)."),
        ("La reunión es el próximo lunes.", "La reunión es el próximo lunes (2026-11-23)."),
        ("Esta mañana llovió.", "Esta mañana (2026-11-20) llovió."),
        ("Flytten är nästa fredag.", "Flytten är nästa fredag (2026-11-27)."),
        ("Il colloquio è domani.", "Il colloquio è domani (2026-11-21)."),
        ("Het contract is gisteren getekend.", "Het contract is gisteren (2026-11-19) getekend."),
        ("Standup is at 09:30 on weekdays.", "Standup is at 09:30 on weekdays."),
        ("tomorrow (2026-11-21) we fly", "tomorrow (2026-11-21) we fly"),  # dated already
    ],
)
def test_relative_time_is_written_absolutely(said: str, written: str) -> None:
    text, left = resolve_relative(said, FRIDAY)
    assert (text, left) == (written, [])
    assert still_relative(text, FRIDAY) == []


def test_what_stays_relative_is_said() -> None:
    assert still_relative("The auditors come tomorrow.", FRIDAY) == ["tomorrow"]
    assert still_relative("Die Abgabe ist morgen.", FRIDAY) == ["morgen"]


def test_how_a_range_is_written() -> None:
    assert pin(dt.date(2026, 11, 23), dt.date(2026, 11, 29)) == "week of 2026-11-23"
    assert pin(dt.date(2026, 12, 1), dt.date(2026, 12, 31)) == "2026-12"
    assert pin(dt.date(2027, 1, 1), dt.date(2027, 12, 31)) == "2027"
    assert pin(dt.date(2026, 11, 21), dt.date(2026, 11, 22)) == "weekend of 2026-11-21"
