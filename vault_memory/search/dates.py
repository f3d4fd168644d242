"""Relative dates in a line, resolved against the line's own date: "yesterday" in the log of
2023-05-08 is 2023-05-07, "last Fri" the Friday before, "two weeks ago" the week that ended
fourteen days before; what a line says lies ahead too ("this weekend", "in two weeks",
"tmr"), and chats' forms ("2moro", "last nite", "a couple days ago"). Pure: a text and a day
in, ranges of days out. The unit table keeps the ranges of each unit (`UnitTable.told`), so
`--since/--until` find the line written the day after what it tells ("went to the support
group yesterday").

The other way round, the days a question asks about ("on 25 May, 2022", "in June 2022", or
"last week" seen from today: `asked_days`) raise the lines of those days (`on_days`, the
searcher's `date_boost`).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from .spelling import GROUPS

if TYPE_CHECKING:
    import numpy as np

_WEEKDAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
_NUMBERS = {
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
    "couple of": 2,
    "couple": 2,
    "few": 3,
}
_COUNT = (
    r"(\d{1,3}|(?:an?\s+)?(?:couple(?:\s+of)?|few)|an?|one|two|three|four|five|six|seven"
    r"|eight|nine|ten)"
)
# How people type "tomorrow" and "yesterday" in chats ("c u tmr", "2moro", "ystrdy"): the
# short forms keyword search matches too.
_TYPED = {group[0]: group for group in GROUPS if group[0] in ("tomorrow", "yesterday")}
_TOMORROW, _YESTERDAY = (
    "|".join(sorted(_TYPED[word], key=len, reverse=True)) for word in ("tomorrow", "yesterday")
)
# A weekday's name or its short forms, not any word they begin ("this wedding", "last friend").
_DAY_NAME = (
    r"(?:mon(?:day)?|tue(?:s|sday)?|wed(?:s|nesday)?|thu(?:rs?|rsday)?|fri(?:day)?"
    r"|sat(?:urday)?|sun(?:day)?)\.?"
)

_RULES = re.compile(
    r"\b(?:"
    r"(?P<before_yesterday>(?:the\s+)?day\s+before\s+(?:" + _YESTERDAY + r"))"
    r"|(?P<after_tomorrow>(?:the\s+)?day\s+after\s+(?:" + _TOMORROW + r"))"
    r"|(?P<yesterday>" + _YESTERDAY + r"|last\s+ni(?:ght|te))"
    r"|(?P<tomorrow>" + _TOMORROW + r")"
    r"|(?P<ago_n>" + _COUNT + r")\s+(?P<ago_unit>day|week|month|year)s?\s+ago"
    r"|(?:(?<!once )(?<!twice )(?<!times )in\s+(?P<in_n>" + _COUNT + r")"
    r"\s+(?P<in_unit>day|week|month)s?"
    r"|(?P<from_n>" + _COUNT + r")\s+(?P<from_unit>day|week|month)s?\s+from\s+(?:now|today))"
    r"(?!\s+(?:ago|later|before|after|earlier|of|in\s+a\s+row)\b)"
    r"|(?P<dir>last|next|this past|this coming|past|this)\s+(?P<what>week(?:end)?|month|year|"
    + _DAY_NAME
    + r")"
    r"|for\s+(?P<past>the\s+(?:past|last)\s+)?(?:(?:about|almost|nearly|over|around|like"
    r"|just\s+(?:over|under))\s+)?(?P<for_n>" + _COUNT + r")\s+(?P<for_unit>day|week|month|year)s?"
    r"(?P<now>\s+now)?"
    r")\b"
)  # matched against the lowered text: IGNORECASE makes the search twice as slow
#: One of these is in every text `_RULES` matches: the cheap test that spares most lines the
#: search (a unit table reads every dated unit; at 100k units the search alone took seconds).
_NEEDED = (
    "day",
    "week",
    "month",
    "year",
    "last",
    "next",
    "this",
    "past",
    *_TYPED["tomorrow"],
    *_TYPED["yesterday"],
)


def _month_start(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    return dt.date(index // 12, index % 12 + 1, 1)


def _number(word: str) -> int:
    parts = word.lower().split()
    if len(parts) > 1 and parts[0] in ("a", "an"):  # "a few days ago" is "few days ago"
        parts = parts[1:]
    word = " ".join(parts)
    return int(word) if word.isdigit() else _NUMBERS[word]


def _period(day: dt.date, unit: str, steps: int) -> tuple[dt.date, dt.date]:
    """The day, week (Monday to Sunday), weekend, month or year `steps` of them from the one
    `day` falls in (0: its own; -2: "two weeks ago"; 1: "next month")."""
    if unit == "day":
        one = day + dt.timedelta(days=steps)
        return one, one
    if unit in ("week", "weekend"):
        monday = day + dt.timedelta(days=7 * steps - day.weekday())
        if unit == "weekend":
            return monday + dt.timedelta(days=5), monday + dt.timedelta(days=6)
        return monday, monday + dt.timedelta(days=6)
    if unit == "month":
        start = _month_start(day, steps)
        return start, _month_start(start, 1) - dt.timedelta(days=1)
    return dt.date(day.year + steps, 1, 1), dt.date(day.year + steps, 12, 31)


def mentioned_days(text: str, day: dt.date) -> tuple[dt.date, dt.date] | None:
    """The first range of days a relative expression of `text` names, seen from `day` (the
    date of the log it is written in), or None. Weeks run Monday to Sunday."""
    found = told_ranges(text, day, most=1)
    return found[0] if found else None


#: How many of a line's relative dates the unit table keeps ("dentist tmr, and my sister
#: visits in two weeks" tells two days): `UnitTable.told` holds this many ranges a unit.
MOST_TOLD = 3


def told_ranges(text: str, day: dt.date, most: int = MOST_TOLD) -> list[tuple[dt.date, dt.date]]:
    """The ranges of days the relative expressions of `text` name, seen from `day`, in the
    order the text says them, each once, at most `most` of them. A date past the calendar
    ("tomorrow" in 9999-12-31.md) names none."""
    text = text.lower()
    if not any(needed in text for needed in _NEEDED):
        return []
    found: list[tuple[dt.date, dt.date]] = []
    match = _RULES.search(text)
    while match is not None:
        end = match.end()
        try:
            days = _resolve(match, day)
        except (OverflowError, ValueError):
            days = None
        if days is not None and days not in found:
            found.append(days)
            if len(found) == most:
                break
        rest = text[end:]
        match = _RULES.search(text, end) if any(w in rest for w in _NEEDED) else None
    return found


# A clause that says what has lasted up to now ("I've had them", "she has been", "we've
# lived"): a span after it ("for 3 years") began that long before the line's day.
_PERFECT = re.compile(
    r"(?:'|’)ve\b|\bhave\b|\bhas\b|\bhaven't\b|\bhasn't\b"
    r"|(?:'|’)s\s+been\b"
)
_CLAUSE_END = re.compile(r"[.!?;]")


def _resolve(match: re.Match[str], day: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days one match of `_RULES` names, seen from `day` (None: none)."""
    for name, days in (
        ("before_yesterday", -2),
        ("after_tomorrow", 2),
        ("yesterday", -1),
        ("tomorrow", 1),
    ):
        if match[name]:
            return _period(day, "day", days)
    if match["in_n"] or match["from_n"]:  # "in two weeks", "3 days from now": ahead
        return _period(
            day, match["in_unit"] or match["from_unit"], _number(match["in_n"] or match["from_n"])
        )
    if match["ago_n"]:
        return _period(day, match["ago_unit"], -_number(match["ago_n"]))
    if match["for_n"]:  # "I've had them for 3 years now": since the year three years ago
        return _period(day, match["for_unit"], -_number(match["for_n"])) if _lasted(match) else None
    direction, what = match["dir"], match["what"]
    if what in ("week", "weekend", "month", "year"):  # "this week": the line's own
        return _period(day, what, {"this": 0, "next": 1, "this coming": 1}.get(direction, -1))
    weekday = _WEEKDAYS[what[:3]]
    if direction == "this":  # "this Friday": the coming one, or the day itself
        return _period(day, "day", (weekday - day.weekday()) % 7)
    if direction in ("next", "this coming"):
        return _period(day, "day", (weekday - day.weekday() - 1) % 7 + 1)
    return _period(day, "day", -((day.weekday() - weekday - 1) % 7 + 1))


def _lasted(match: re.Match[str]) -> bool:
    """Whether the span `match` ("for 3 years") lasts up to the line's day: "for the past 3
    years", "for 3 years now", or said in a clause of the present perfect ("I've had them
    for 3 years", "she has been ill for two days"); not "we stayed for two weeks", "I'll be
    away for a week", "I had lived there for ten years"."""
    if match["past"] or match["now"]:
        return True
    before = match.string[max(0, match.start() - 80) : match.start()]
    clause = _CLAUSE_END.split(before)[-1]
    return _PERFECT.search(clause) is not None


#: A day a question asks about: (year, month, day); year None is any year, month 0 the whole
#: year, day None the whole month.
Day = tuple[int | None, int, int | None]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        ),
        1,
    )
    for name in names.split()
}
_MONTH = r"(?P<{0}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = r"(?P<{0}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{0}>(?:19|20)\d\d)"
_NAMED = re.compile(
    r"\b(?:"
    + _DATE.format("d1")
    + r"(?:\s+of)?\s+"
    + _MONTH.format("m1")
    + r"(?:,?\s*"
    + _YEAR.format("y1")
    + r")?"
    + r"|"
    + _MONTH.format("m2")
    + r"\s+"
    + _DATE.format("d2")
    + r"\b"
    + r"(?:,?\s*"
    + _YEAR.format("y2")
    + r")?"
    + r"|"
    + _MONTH.format("m3")
    + r",?\s+"
    + _YEAR.format("y3")
    + r"|(?<=\bin )"
    + _YEAR.format("y4")
    + r"|(?<=\bin )"
    + _MONTH.format("m5")
    + r")\b",
    re.IGNORECASE,
)


def named_days(text: str) -> list[Day]:
    """The days a question names outright: "on 25 May, 2022" (2022, 5, 25), "October 13,
    2023", "8th December, 2023", "in June 2022" (2022, 6, None), "in 2023" (2023, 0, None),
    "on Aug 15th" (None, 8, 15), "in December" (None, 12, None). May counts only with its
    year ("2 may break", "in May" are as often the verb). English month names only."""
    found: list[Day] = []
    for match in _NAMED.finditer(text):
        given = {key[0]: value for key, value in match.groupdict().items() if value}
        year = int(given["y"]) if "y" in given else None
        day = int(given["d"]) if "d" in given else None
        if "m" not in given:
            found.append((year, 0, None))
        elif (year is not None or given["m"].lower() != "may") and (day is None or 1 <= day <= 31):
            found.append((year, _MONTHS[given["m"].lower()], day))
    return found


def asked_days(query: str, today: dt.date) -> list[Day]:
    """The days a question asks about: those it names (`named_days`), else the days a
    relative expression names seen from `today` ("yesterday", "last week": `mentioned_days`)."""
    named = named_days(query)
    if named:
        return named
    told = mentioned_days(query, today)
    if told is None:
        return []
    first, last = told
    if (first.month, first.day, last.month, last.day) == (1, 1, 12, 31):
        return [(first.year, 0, None)]
    if first.day == 1 and (last + dt.timedelta(days=1)).day == 1 and first.month == last.month:
        return [(first.year, first.month, None)]
    return [
        (d.year, d.month, d.day)
        for d in (first + dt.timedelta(days=n) for n in range((last - first).days + 1))
    ]


def on_days(day_numbers: np.ndarray, days: list[Day]) -> np.ndarray:
    """Which date ordinals (0: undated) fall on one of `days`: compared as ranges of
    ordinals (a day of any year: one range for each year the ordinals hold)."""
    import numpy as np

    found = np.zeros(len(day_numbers), dtype=bool)
    dated = day_numbers[day_numbers > 0]
    if not len(dated):
        return found
    years = range(
        dt.date.fromordinal(int(dated.min())).year, dt.date.fromordinal(int(dated.max())).year + 1
    )
    for year, month, day in days:
        for y in years if year is None else (year,):
            if not years.start <= y < years.stop:
                continue
            if not month:
                first, last = dt.date(y, 1, 1), dt.date(y, 12, 31)
            elif day is None:
                first = dt.date(y, month, 1)
                last = _month_start(first, 1) - dt.timedelta(days=1)
            else:
                try:
                    first = last = dt.date(y, month, day)
                except ValueError:  # the 31st of a shorter month, the 29th of February
                    continue
            found |= (day_numbers >= first.toordinal()) & (day_numbers <= last.toordinal())
    return found
