"""Time said relative to the day it was said: "birthday today" read from MEMORY.md a month
later names the wrong day. A dream promotes a line only with every relative expression
resolved against the date of its daily log, the words kept and the date written beside them
("tomorrow (2026-11-23)", "morgen (2026-11-23)", "next Friday (2026-11-27)"); a line that still
says something relative it cannot resolve is not promoted.

English is read by the package's relative-date parsers (`capture.pin_dates`, which writes the
dates it resolves, and `search.dates.told_ranges`, which tells the ranges a line names: a span
it tells and no date stands beside is pinned here, found by the shortest run of words that
tells it). For the other languages of the dream's users — German, French, Spanish, Swedish,
Italian, Portuguese, Dutch — a small table reads the day words ("heute", "demain", "ayer",
"igår"), the next and last weekday ("nächsten Freitag", "vendredi prochain", "el próximo
viernes", "nästa fredag") and the next and last week. Pure: text and a day in.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

from ..capture import pin_dates
from ..search import told_ranges

#: The longest run of words an English relative expression spans ("the day after tomorrow").
MAX_SPAN_WORDS = 6

_PIN = re.compile(r"\s*\((?:week of |weekend of )?\d{4}(?:-\d{2}){0,2}(?:\s*[–-]\s*[\d-]+)?\)")

# Words for one day, by language: offset in days from the log's day. Accents optional where
# people type without them; each is a whole word.
_DAY_WORDS: dict[str, int] = {
    # English the parsers leave out
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    # German
    "heute": 0,
    "heute abend": 0,
    "heute morgen": 0,
    "morgen": 1,
    "übermorgen": 2,
    "uebermorgen": 2,
    "gestern": -1,
    "vorgestern": -2,
    # French
    "aujourd'hui": 0,
    "aujourd’hui": 0,
    "ce soir": 0,
    "demain": 1,
    "après-demain": 2,
    "apres-demain": 2,
    "hier": -1,
    "avant-hier": -2,
    # Spanish
    "hoy": 0,
    "esta noche": 0,
    "esta mañana": 0,
    "esta manana": 0,
    "mañana": 1,
    "manana": 1,
    "pasado mañana": 2,
    "ayer": -1,
    "anteayer": -2,
    "antier": -2,
    # Swedish
    "idag": 0,
    "i dag": 0,
    "ikväll": 0,
    "i kväll": 0,
    "imorgon": 1,
    "imorn": 1,
    "i morgon": 1,
    "i övermorgon": 2,
    "igår": -1,
    "i går": -1,
    "i förrgår": -2,
    # Italian
    "oggi": 0,
    "stasera": 0,
    "domani": 1,
    "dopodomani": 2,
    "ieri": -1,
    "l'altro ieri": -2,
    "altroieri": -2,
    # Portuguese
    "hoje": 0,
    "amanhã": 1,
    "depois de amanhã": 2,
    "ontem": -1,
    "anteontem": -2,
    # Dutch
    "vandaag": 0,
    "vanavond": 0,
    "overmorgen": 2,
    "gisteren": -1,
    "eergisteren": -2,
}
# Words that end a day word's meaning as a day ("mañana" is also "morning": "esta mañana",
# "por la mañana"; "Morgen" is also "morning": "heute Morgen", "guten Morgen").
_NOT_A_DAY_BEFORE = {
    "mañana": ("la", "una", "cada", "toda", "de", "buena", "buenas"),
    "manana": ("la", "una", "cada", "toda", "de", "buena", "buenas"),
    "morgen": ("heute", "guten", "am", "jeden", "diesen", "einen", "den", "goede"),
}

_WEEKDAY_NAMES: dict[str, int] = {}
for _index, _names in enumerate(
    (
        "monday montag lundi lunes måndag mandag lunedì lunedi segunda-feira segunda maandag",
        "tuesday dienstag mardi martes tisdag tirsdag martedì martedi terça-feira terça terca "
        "dinsdag",
        "wednesday mittwoch mercredi miércoles miercoles onsdag mercoledì mercoledi quarta-feira "
        "quarta woensdag",
        "thursday donnerstag jeudi jueves torsdag giovedì giovedi quinta-feira quinta donderdag",
        "friday freitag vendredi viernes fredag venerdì venerdi sexta-feira sexta vrijdag",
        "saturday samstag sonnabend samedi sábado sabado lördag lordag sabato zaterdag",
        "sunday sonntag dimanche domingo söndag sondag domenica zondag",
    )
):
    for _name in _names.split():
        _WEEKDAY_NAMES[_name] = _index
_WEEKDAY = "|".join(sorted(_WEEKDAY_NAMES, key=len, reverse=True))

# next (+1) / last (-1) weekday, and next / last week, in each language
_NEXT = (
    r"nächsten|nächste|naechsten|kommenden|kommende|el próximo|el proximo|la próxima|"
    r"la proxima|próximo|proximo|próxima|proxima|nästa|nasta|na próxima|no próximo|"
    r"volgende|komende|aanstaande"
)
_LAST = (
    r"letzten|letzte|vergangenen|vergangene|förra|forra|vorige|afgelopen|el pasado|"
    r"la pasada|no último|na última|passado|passada"
)
_NEXT_AFTER = r"prochain|prochaine|que viene|prossimo|prossima|que vem"
_LAST_AFTER = r"dernier|dernière|derniere|pasado|pasada|scorso|scorsa|passado|passada"
_WEEK = r"woche|semaine|semana|vecka|veckan|settimana|week"

_FOREIGN = re.compile(
    r"(?<![\w'’-])(?:"
    rf"(?P<day>{'|'.join(sorted((re.escape(w) for w in _DAY_WORDS), key=len, reverse=True))})"
    rf"|(?:{_NEXT})\s+(?P<next_day>{_WEEKDAY})"
    rf"|(?:{_LAST})\s+(?P<last_day>{_WEEKDAY})"
    rf"|(?:le\s+|el\s+|il\s+)?(?P<day_next>{_WEEKDAY})\s+(?:{_NEXT_AFTER})"
    rf"|(?:le\s+|el\s+|il\s+)?(?P<day_last>{_WEEKDAY})\s+(?:{_LAST_AFTER})"
    rf"|(?:{_NEXT})\s+(?P<next_week>{_WEEK})"
    rf"|(?:{_LAST})\s+(?P<last_week>{_WEEK})"
    rf"|(?:la\s+)?(?P<week_next>{_WEEK})\s+(?:{_NEXT_AFTER})"
    rf"|(?:la\s+)?(?P<week_last>{_WEEK})\s+(?:{_LAST_AFTER})"
    r")(?![\w'’-])",
    re.IGNORECASE,
)


def pin(first: dt.date, last: dt.date) -> str:
    """How a resolved range is written beside the words: a day, a week (Monday to Sunday), a
    weekend, a month, a year, or the two ends."""
    if first == last:
        return first.isoformat()
    if first.weekday() == 0 and (last - first).days == 6:
        return f"week of {first.isoformat()}"
    if first.weekday() == 5 and (last - first).days == 1:
        return f"weekend of {first.isoformat()}"
    if first.day == 1 and (last + dt.timedelta(days=1)).day == 1 and first.month == last.month:
        return f"{first.year:04d}-{first.month:02d}"
    if (first.month, first.day, last.month, last.day) == (1, 1, 12, 31):
        return f"{first.year:04d}"
    return f"{first.isoformat()}–{last.isoformat()}"


NOT_A_DATE = (dt.date.min, dt.date.min)  # a day word used as another word ("guten Morgen")


def _foreign_range(match: re.Match[str], day: dt.date) -> tuple[dt.date, dt.date] | None:
    groups = {k: v for k, v in match.groupdict().items() if v}
    if "day" in groups:
        word = groups["day"].lower()
        before = match.string[: match.start()].split()
        if before and before[-1].lower().strip(",") in _NOT_A_DAY_BEFORE.get(word, ()):
            return NOT_A_DATE
        if word == "morgen" and groups["day"][0].isupper() and match.start() > 0:
            return NOT_A_DATE  # "Morgen" mid-sentence is the noun (morning)
        one = day + dt.timedelta(days=_DAY_WORDS[word])
        return one, one
    for name, sign in (("next_day", 1), ("day_next", 1), ("last_day", -1), ("day_last", -1)):
        if name in groups:
            wanted = _WEEKDAY_NAMES[groups[name].lower()]
            if sign > 0:
                step = (wanted - day.weekday() - 1) % 7 + 1
            else:
                step = -((day.weekday() - wanted - 1) % 7 + 1)
            one = day + dt.timedelta(days=step)
            return one, one
    for name, sign in (("next_week", 1), ("week_next", 1), ("last_week", -1), ("week_last", -1)):
        if name in groups:
            monday = day - dt.timedelta(days=day.weekday()) + dt.timedelta(weeks=sign)
            return monday, monday + dt.timedelta(days=6)
    return None


def _spans(text: str, day: dt.date) -> Iterator[tuple[int, int, tuple[dt.date, dt.date] | None]]:
    """(start, end, range or None when it cannot be resolved) of each relative expression of
    `text`: the foreign table's, then the shortest runs of words the English parser tells."""
    taken: list[tuple[int, int]] = []
    for match in _FOREIGN.finditer(text):
        taken.append(match.span())
        told = _foreign_range(match, day)
        if told != NOT_A_DATE:
            yield match.start(), match.end(), told
    words = list(re.finditer(r"\S+", text))
    index = 0
    while index < len(words):
        start = words[index].start()
        if any(a <= start < b for a, b in taken):
            index += 1
            continue
        found = None
        for length in range(1, MAX_SPAN_WORDS + 1):
            if index + length > len(words):
                break
            end = words[index + length - 1].end()
            piece = text[start:end].rstrip(".,;:!?)\"'”’")
            ranges = _told(piece, day)
            if ranges:
                found = (start, start + len(piece), ranges[0], length)
                break
        while found is not None and found[3] > 1:  # the shortest run that still tells it
            first = words[index + 1].start()
            shorter = _told(text[first : found[1]], day)
            if not shorter:
                break
            index += 1
            found = (first, found[1], shorter[0], found[3] - 1)
        if found is None:
            index += 1
            continue
        yield found[0], found[1], found[2]
        index += found[3]


def _told(piece: str, day: dt.date) -> list[tuple[dt.date, dt.date]]:
    try:
        return told_ranges(piece, day, most=1)
    except (OverflowError, ValueError):
        return []


def resolve_relative(text: str, day: dt.date) -> tuple[str, list[str]]:
    """`text` with a date beside each relative expression resolved against `day` (the words
    kept: "tomorrow (2026-11-23)"), and the expressions still relative (none resolved, and no
    date beside them) in the order they come."""
    pinned = pin_dates(text, day)
    out: list[str] = []
    unresolved: list[str] = []
    last = 0
    for start, end, told in sorted(_spans(pinned, day), key=lambda s: s[0]):
        if start < last:
            continue
        out.append(pinned[last:end])
        last = end
        if _PIN.match(pinned, end):
            continue  # already has its date
        if told is None:
            unresolved.append(pinned[start:end])
            continue
        out.append(f" ({pin(*told)})")
    out.append(pinned[last:])
    return "".join(out), unresolved


def still_relative(text: str, day: dt.date) -> list[str]:
    """The relative expressions of `text` that no date stands beside ([] when every one has
    its date, or it has none)."""
    found = []
    for start, end, _ in _spans(text, day):
        if not _PIN.match(text, end):
            found.append(text[start:end])
    return found
