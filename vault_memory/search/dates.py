"""Relative dates in a line, resolved against the line's own date: "yesterday" in the log of
2023-05-08 is 2023-05-07, "last Fri" the Friday before, "two weeks ago" the week that ended
fourteen days before. Pure: a text and a day in, a range of days out. The unit table keeps
the range of each unit (`UnitTable.mentioned`), so `--since/--until` find the line written
the day after what it tells ("went to the support group yesterday").
"""

from __future__ import annotations

import datetime as dt
import re

_WEEKDAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}
_COUNT = r"(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)"
_DAY_NAME = r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?"

_RULES = re.compile(
    r"\b(?:"
    r"(?P<yesterday>yesterday|yday|last night)"
    r"|(?P<tomorrow>tomorrow|tmrw)"
    r"|(?P<ago_n>" + _COUNT + r")\s+(?P<ago_unit>day|week|month|year)s?\s+ago"
    r"|(?P<dir>last|next|this past|this coming|past)\s+(?P<what>week(?:end)?|month|year|"
    + _DAY_NAME + r")"
    r")\b",
    re.IGNORECASE,
)


def _month_start(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    return dt.date(index // 12, index % 12 + 1, 1)


def _number(word: str) -> int:
    word = word.lower()
    return int(word) if word.isdigit() else _NUMBERS[word]


def mentioned_days(text: str, day: dt.date) -> tuple[dt.date, dt.date] | None:
    """The first range of days a relative expression of `text` names, seen from `day` (the
    date of the log it is written in), or None. Weeks run Monday to Sunday."""
    match = _RULES.search(text)
    if match is None:
        return None
    if match["yesterday"]:
        one = day - dt.timedelta(days=1)
        return one, one
    if match["tomorrow"]:
        one = day + dt.timedelta(days=1)
        return one, one
    if match["ago_n"]:
        n, unit = _number(match["ago_n"]), match["ago_unit"].lower()
        if unit == "day":
            one = day - dt.timedelta(days=n)
            return one, one
        if unit == "week":
            start = day - dt.timedelta(days=7 * n + day.weekday())
            return start, start + dt.timedelta(days=6)
        if unit == "month":
            start = _month_start(day, -n)
            return start, _month_start(start, 1) - dt.timedelta(days=1)
        return dt.date(day.year - n, 1, 1), dt.date(day.year - n, 12, 31)
    ahead = match["dir"].lower() in ("next", "this coming")
    what = match["what"].lower()
    step = 1 if ahead else -1
    if what in ("week", "weekend"):
        monday = day - dt.timedelta(days=day.weekday()) + dt.timedelta(days=7 * step)
        if what == "weekend":
            return monday + dt.timedelta(days=5), monday + dt.timedelta(days=6)
        return monday, monday + dt.timedelta(days=6)
    if what == "month":
        start = _month_start(day, step)
        return start, _month_start(start, 1) - dt.timedelta(days=1)
    if what == "year":
        return dt.date(day.year + step, 1, 1), dt.date(day.year + step, 12, 31)
    weekday = _WEEKDAYS[what[:3]]
    if ahead:
        one = day + dt.timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)
    else:
        one = day - dt.timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)
    return one, one
