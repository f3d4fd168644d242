"""Dates in search. Relative dates in a line, resolved against the line's own date
("yesterday" in the log of 2023-05-08 is 2023-05-07: `told_ranges`, `mentioned_days`), come
from the package's one parser (`relative_dates`). The unit table keeps the ranges of each unit
(`UnitTable.told`), so `--since/--until` find the line written the day after what it tells
("went to the support group yesterday").

The other way round, the days a question asks about ("on 25 May, 2022", "in June 2022", or
"last week" seen from today: `asked_days`) raise the lines of those days (`on_days`, the
searcher's `date_boost`).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from ..relative_dates import MOST_TOLD, mentioned_days, month_start, told_ranges

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "MOST_TOLD",
    "Day",
    "asked_days",
    "mentioned_days",
    "named_days",
    "on_days",
    "told_ranges",
]


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
                last = month_start(first, 1) - dt.timedelta(days=1)
            else:
                try:
                    first = last = dt.date(y, month, day)
                except ValueError:  # the 31st of a shorter month, the 29th of February
                    continue
            found |= (day_numbers >= first.toordinal()) & (day_numbers <= last.toordinal())
    return found
