"""Relative dates pinned to the day they were said: "yesterday" in a daily log read months later,
or in MEMORY.md, no longer says when.

`pin_dates(text, day)` writes the date after each relative expression it can resolve against
`day` (the conversation's day): "yesterday (2026-11-21)", "last Friday (2026-11-20)",
"next week (week of 2026-11-30)", "two months ago (2026-09)", "last year (2025)". The words
stay as they were said; an expression it cannot resolve safely ("on Friday": last or next?
"next Friday": this week's or next week's?) is left alone, and so is one that already carries
a date. `unpin_dates` takes the annotations out again: an entry's identity
(`extract.entry_key`) does not depend on the day it was flushed. Pure: no clock, no I/O.
"""

from __future__ import annotations

import datetime as dt
import re

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNTS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
}
_COUNT = (
    r"(?P<count>\d{1,2}|a couple of|a couple|an|a|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve)"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"

_EXPRESSION = re.compile(
    r"(?<!the )\b(?:"
    r"(?P<before_yesterday>the day before yesterday)"
    r"|(?P<after_tomorrow>the day after tomorrow)"
    r"|(?P<yesterday>yesterday)"
    r"|(?P<tomorrow>tomorrow)"
    r"|(?P<last_day>(?:last|this past) (?P<past_day>" + "|".join(_WEEKDAYS) + r"))"
    r"|(?P<last_weekend>last weekend|this past weekend)"
    r"|(?P<last_span>last (?P<last_unit>week|month|year))"
    r"|(?P<next_span>next (?P<next_unit>week|month|year))"
    r"|(?P<ago>" + _COUNT + r" " + _UNIT + r" ago)"
    r"|(?P<later>in "
    + _COUNT.replace("count", "count2")
    + r" "
    + _UNIT.replace("unit", "unit2")
    + r"(?! (?:of|or)\b))"
    r")\b(?!['’]s\b)(?!\s*\((?:week of |weekend of )?\d{4})",  # "'s", or pinned already
    re.IGNORECASE,
)
# what pin_dates adds: " (2026-11-21)", " (2026-11)", " (2025)", " (week of 2026-11-16)"
_PIN = re.compile(r" \((?:week of |weekend of )?\d{4}(?:-\d{2}){0,2}\)")


def pin_dates(text: str, day: dt.date) -> str:
    """`text` with the date written after each relative expression resolved against `day`."""

    def annotate(match: re.Match[str]) -> str:
        when = resolve(match, day)
        return f"{match[0]} ({when})" if when else match[0]

    return _EXPRESSION.sub(annotate, text)


def unpin_dates(text: str) -> str:
    """`text` without the dates `pin_dates` wrote."""
    return _PIN.sub("", text)


def resolve(match: re.Match[str], day: dt.date) -> str | None:
    """The date (YYYY-MM-DD), week, month (YYYY-MM) or year an expression stands for."""
    groups = match.groupdict()
    if groups["yesterday"]:
        return (day - dt.timedelta(days=1)).isoformat()
    if groups["tomorrow"]:
        return (day + dt.timedelta(days=1)).isoformat()
    if groups["before_yesterday"]:
        return (day - dt.timedelta(days=2)).isoformat()
    if groups["after_tomorrow"]:
        return (day + dt.timedelta(days=2)).isoformat()
    if groups["past_day"]:
        wanted = _WEEKDAYS.index(groups["past_day"].lower())
        back = (day.weekday() - wanted) % 7 or 7
        return (day - dt.timedelta(days=back)).isoformat()
    if groups["last_weekend"]:
        back = (day.weekday() - 5) % 7  # the Saturday of the weekend before the day's
        if day.weekday() >= 5:  # said on a weekend: the weekend before this one
            back += 7
        return f"weekend of {(day - dt.timedelta(days=back)).isoformat()}"
    if groups["last_unit"]:
        return _shift(day, groups["last_unit"].lower(), -1)
    if groups["next_unit"]:
        return _shift(day, groups["next_unit"].lower(), 1)
    if groups["ago"]:
        return _shift(day, groups["unit"].lower(), -_count(groups["count"]))
    if groups["later"]:
        return _shift(day, groups["unit2"].lower(), _count(groups["count2"]))
    return None


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _COUNTS[word]


def _shift(day: dt.date, unit: str, by: int) -> str | None:
    if unit == "day":
        return (day + dt.timedelta(days=by)).isoformat()
    if unit == "week":
        monday = day - dt.timedelta(days=day.weekday()) + dt.timedelta(weeks=by)
        return f"week of {monday.isoformat()}"
    if unit == "month":
        index = day.year * 12 + day.month - 1 + by
        return f"{index // 12:04d}-{index % 12 + 1:02d}"
    if unit == "year":
        return f"{day.year + by:04d}"
    return None
