"""Relative time in a text, resolved against the day it was said: the package's one parser.

"yesterday" in the log of 2023-05-08 is 2023-05-07, "last Fri" the Friday before, "two weeks
ago" the week that ended fourteen days before; what a line says lies ahead too ("this
weekend", "in two weeks", "tmr", "next Friday": the first Friday after the day), and chats'
forms ("2moro", "last nite", "a couple days ago"). Pure: a text and a day in, ranges of days
out; no clock, no I/O.

Two readers share the rules and their resolution (`_period`):

- Search (`told_ranges`, `mentioned_days`) reads the English forms it has always read, the
  `_CORE` rules, matched against the lower-cased text. What a line says happened on another
  day raises it for that day; these ranges are part of ranking, measured on the development
  splits, and so are not widened here.
- Capture (`pin_dates`, `unpin_dates`, `has_unresolved_relative_time`) reads the core forms
  and more: the day itself ("today", "tonight", "this morning"), parts of a day ("tomorrow
  night", "yesterday evening"), years ahead ("in two years"), and the common forms of Spanish,
  French and German ("mañana", "hace tres días", "la semana que viene", "demain", "il y a deux
  semaines", "vendredi prochain", "gestern", "vor drei Tagen", "nächsten Freitag"). It writes
  the date after the person's words, "Mia's birthday is today (2026-12-06)", so that a line
  read months later, or in MEMORY.md, still says when.

A pin is one of ` (2026-12-06)` (a day), ` (week of 2026-11-30)` (Monday to Sunday),
` (weekend of 2026-12-05)`, ` (2026-12)` (a month), ` (2025)` (a year), and ` (since 2020)`
for a span that lasts up to the day ("I've had them for 3 years"). An expression followed by
a pin already is never pinned again, and `unpin_dates` takes them all out (an entry's
identity does not depend on the day it was flushed). What cannot be resolved safely is left
alone: "on Friday" (last or next?), "in a week or two", "a few days ago" (how many?), "the
last week" (the past seven days, not a calendar week); `has_unresolved_relative_time` says
whether a line still holds such a time.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

#: How people type "tomorrow", "yesterday" and "tonight" in chats (the short forms keyword
#: search matches too: search/spelling.py's groups).
TYPED_FORMS: dict[str, tuple[str, ...]] = {
    "tomorrow": ("tomorrow", "tmrw", "tmr", "tmrow", "tomoz", "2moro", "2morrow", "2mrw"),
    "yesterday": ("yesterday", "yday", "ystrdy"),
    "tonight": ("tonight", "tonite"),
}

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
_TOMORROW, _YESTERDAY = (
    "|".join(sorted(TYPED_FORMS[word], key=len, reverse=True)) for word in ("tomorrow", "yesterday")
)
# A weekday's name or its short forms, not any word they begin ("this wedding", "last friend").
_DAY_NAME = (
    r"(?:mon(?:day)?|tue(?:s|sday)?|wed(?:s|nesday)?|thu(?:rs?|rsday)?|fri(?:day)?"
    r"|sat(?:urday)?|sun(?:day)?)\.?"
)

# -- the English core: what search reads -------------------------------------------------------

_CORE_BODY = (
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
)
_RULES = re.compile(r"\b(?:" + _CORE_BODY + r")\b")
# matched against the lowered text: IGNORECASE makes the search twice as slow
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
    *TYPED_FORMS["tomorrow"],
    *TYPED_FORMS["yesterday"],
)


def month_start(day: dt.date, months: int) -> dt.date:
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
        start = month_start(day, steps)
        return start, month_start(start, 1) - dt.timedelta(days=1)
    return dt.date(day.year + steps, 1, 1), dt.date(day.year + steps, 12, 31)


def _weekday_steps(day: dt.date, weekday: int, direction: str) -> int:
    """Days from `day` to the weekday meant: "this" Friday (the coming one, or the day
    itself), "next" (the first after the day), "last" (the last before it)."""
    if direction == "this":
        return (weekday - day.weekday()) % 7
    if direction == "next":
        return (weekday - day.weekday() - 1) % 7 + 1
    return -((day.weekday() - weekday - 1) % 7 + 1)


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
    r"|(?:'|’)s\s+been\b",
    re.I,
)
_CLAUSE_END = re.compile(r"[.!?;]")


def _resolve(match: re.Match[str], day: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days one match of the core rules names, seen from `day` (None: none)."""
    for name, days in (
        ("before_yesterday", -2),
        ("after_tomorrow", 2),
        ("yesterday", -1),
        ("tomorrow", 1),
    ):
        if match[name]:
            return _period(day, "day", days)
    # Capture reads the text as written, search lower-cased: units and names compared lower.
    if match["in_n"] or match["from_n"]:  # "in two weeks", "3 days from now": ahead
        unit = (match["in_unit"] or match["from_unit"]).lower()
        return _period(day, unit, _number(match["in_n"] or match["from_n"]))
    if match["ago_n"]:
        return _period(day, match["ago_unit"].lower(), -_number(match["ago_n"]))
    if match["for_n"]:  # "I've had them for 3 years now": since the year three years ago
        if not _lasted(match):
            return None
        return _period(day, match["for_unit"].lower(), -_number(match["for_n"]))
    direction, what = " ".join(match["dir"].lower().split()), match["what"].lower()
    if what in ("week", "weekend", "month", "year"):  # "this week": the line's own
        return _period(day, what, {"this": 0, "next": 1, "this coming": 1}.get(direction, -1))
    way = {"this": "this", "next": "next", "this coming": "next"}.get(direction, "last")
    return _period(day, "day", _weekday_steps(day, _WEEKDAYS[what[:3]], way))


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


# -- capture: more forms, more languages --------------------------------------------------------


@dataclass(frozen=True)
class _Form:
    """A form capture reads beyond the core: `pattern` (lower case) names a `unit` `steps`
    away, or, when `steps` is None, a count (group `n`) of units (group `u`) ahead
    (`sign` 1) or back (-1), or a weekday (group `w`) this/next/last (`way`)."""

    pattern: str
    unit: str = "day"
    steps: int | None = 0
    sign: int = 1
    way: str = ""
    needs: str = ""  # a language whose words the text must also hold (see `_CUES`)


_ES_COUNT = r"(?P<n>\d{1,3}|un|una|uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez)"
_FR_COUNT = r"(?P<n>\d{1,3}|un|une|deux|trois|quatre|cinq|six|sept|huit|neuf|dix)"
_DE_COUNT = (
    r"(?P<n>\d{1,3}|ein|eine|einem|einer|einen|zwei|drei|vier|f(?:ü|ue)nf|sechs|sieben|acht"
    r"|neun|zehn)"
)
_EN_COUNT = _COUNT.replace("(", "(?P<n>", 1)
_ES_UNIT = r"(?P<u>d[ií]as?|semanas?|mes(?:es)?|a[ñn]os?)"
_FR_UNIT = r"(?P<u>jours?|semaines?|mois|ann[ée]es?|ans?)"
_DE_UNIT = r"(?P<u>tag(?:e|en)?|wochen?|monat(?:e|en)?|jahr(?:e|en)?)"
_ES_DAYS = r"(?P<w>lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo)"
_FR_DAYS = r"(?P<w>lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)"
_DE_DAYS = r"(?P<w>montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag)"
_PARTS = r"(?:morning|afternoon|evening|night)"
_MANANA = r"ma(?:ñ|n)ana"
_APOS = r"['’]"

_FORMS: tuple[_Form, ...] = (
    # English: the day itself and parts of days, before the core reads "tomorrow" alone
    _Form(rf"(?:{_TOMORROW})\s+{_PARTS}", steps=1),
    _Form(rf"(?:{_YESTERDAY})\s+(?:morning|afternoon|evening)", steps=-1),
    _Form(r"today|tonight|tonite|later\s+today|this\s+(?:morning|afternoon|evening)"),
    _Form(rf"in\s+{_EN_COUNT}\s+(?P<u>year)s?(?!\s+(?:ago|later|of|or)\b)", steps=None),
    _Form(rf"{_EN_COUNT}\s+(?P<u>year)s?\s+from\s+(?:now|today)", steps=None),
    # Spanish
    _Form(rf"pasado\s+{_MANANA}", steps=2),
    _Form(r"anteayer|antier|antes\s+de\s+ayer", steps=-2),
    _Form(r"ayer|anoche", steps=-1),
    _Form(rf"hoy|esta\s+(?:noche|tarde|{_MANANA})"),
    _Form(
        rf"(?<!la )(?<!esta )(?<!cada )(?<!una )(?<!las )(?<!toda )(?<!por )(?<!de ){_MANANA}",
        steps=1,
    ),
    _Form(rf"hace\s+{_ES_COUNT}\s+{_ES_UNIT}", steps=None, sign=-1),
    _Form(rf"(?:dentro\s+de|en)\s+{_ES_COUNT}\s+{_ES_UNIT}", steps=None),
    _Form(r"(?:la\s+)?semana\s+(?:que\s+viene|pr[óo]xima)|la\s+pr[óo]xima\s+semana", "week", 1),
    _Form(r"(?:la\s+)?semana\s+pasada", "week", -1),
    _Form(r"esta\s+semana", "week"),
    _Form(r"(?:el\s+)?mes\s+(?:que\s+viene|pr[óo]ximo)|el\s+pr[óo]ximo\s+mes", "month", 1),
    _Form(r"(?:el\s+)?mes\s+pasado", "month", -1),
    _Form(r"(?:el\s+)?a[ñn]o\s+(?:que\s+viene|pr[óo]ximo)|el\s+pr[óo]ximo\s+a[ñn]o", "year", 1),
    _Form(r"(?:el\s+)?a[ñn]o\s+pasado", "year", -1),
    _Form(r"este\s+fin\s+de\s+semana", "weekend"),
    _Form(r"el\s+fin\s+de\s+semana\s+pasado", "weekend", -1),
    _Form(rf"(?:el\s+)?pr[óo]ximo\s+{_ES_DAYS}", steps=None, way="next"),
    _Form(rf"(?:el\s+)?{_ES_DAYS}\s+(?:que\s+viene|pr[óo]ximo)", steps=None, way="next"),
    _Form(rf"(?:el\s+)?{_ES_DAYS}\s+pasado", steps=None, way="last"),
    _Form(rf"el\s+pasado\s+{_ES_DAYS}", steps=None, way="last"),
    _Form(rf"este\s+{_ES_DAYS}", steps=None, way="this"),
    # French ("hier" is also German for "here": only in a French text)
    _Form(r"apr[èe]s-demain", steps=2),
    _Form(r"avant-hier", steps=-2),
    _Form(r"hier(?:\s+soir)?", steps=-1, needs="fr"),
    _Form(rf"aujourd{_APOS}hui|ce\s+soir|ce\s+matin|cet\s+apr[èe]s-midi"),
    _Form(r"demain", steps=1),
    _Form(rf"il\s+y\s+a\s+{_FR_COUNT}\s+{_FR_UNIT}", steps=None, sign=-1),
    _Form(rf"dans\s+{_FR_COUNT}\s+{_FR_UNIT}", steps=None),
    _Form(r"(?:la\s+)?semaine\s+prochaine", "week", 1),
    _Form(r"(?:la\s+)?semaine\s+(?:derni[èe]re|pass[ée]e)", "week", -1),
    _Form(r"cette\s+semaine", "week"),
    _Form(r"(?:le\s+)?mois\s+prochain", "month", 1),
    _Form(r"(?:le\s+)?mois\s+(?:dernier|pass[ée])", "month", -1),
    _Form(rf"l{_APOS}(?:ann[ée]e|an)\s+prochaine?", "year", 1),
    _Form(rf"l{_APOS}(?:ann[ée]e|an)\s+(?:derni[èe]re?|pass[ée]e?)", "year", -1),
    _Form(r"cette\s+ann[ée]e", "year"),
    _Form(r"ce\s+week-?end", "weekend"),
    _Form(r"(?:le\s+)?week-?end\s+(?:dernier|pass[ée])", "weekend", -1),
    _Form(r"(?:le\s+)?week-?end\s+prochain", "weekend", 1),
    _Form(rf"{_FR_DAYS}\s+prochain", steps=None, way="next"),
    _Form(rf"{_FR_DAYS}\s+(?:dernier|pass[ée])", steps=None, way="last"),
    _Form(rf"ce\s+{_FR_DAYS}", steps=None, way="this"),
    # German ("Morgen" is also the morning: the adverb only, in a German text)
    _Form(r"(?:ü|ue)bermorgen", steps=2),
    _Form(r"vorgestern", steps=-2),
    _Form(r"gestern(?:\s+(?:abend|morgen|nachmittag|nacht))?", steps=-1),
    _Form(r"heute(?:\s+(?:abend|morgen|nachmittag|nacht|fr(?:ü|ue)h))?"),
    _Form(
        r"(?<!guten )(?<!am )(?<!jeden )(?<!den )(?<!dem )(?<!der )(?<!des )(?<!einen )"
        r"(?<!diesen )(?<!diesem )(?<!bis )(?<!zum )(?<!vom )morgen(?:\s+fr(?:ü|ue)h)?",
        steps=1,
        needs="de",
    ),
    _Form(rf"vor\s+{_DE_COUNT}\s+{_DE_UNIT}", steps=None, sign=-1),
    _Form(rf"in\s+{_DE_COUNT}\s+{_DE_UNIT}", steps=None),
    _Form(r"(?:n(?:ä|ae)chste|kommende)n?r?\s+woche", "week", 1),
    _Form(r"(?:letzte|vergangene)n?r?\s+woche", "week", -1),
    _Form(r"diese\s+woche", "week"),
    _Form(r"(?:n(?:ä|ae)chsten|kommenden)\s+monat", "month", 1),
    _Form(r"(?:letzten|vergangenen)\s+monat", "month", -1),
    _Form(r"(?:n(?:ä|ae)chstes|kommendes)\s+jahr", "year", 1),
    _Form(r"(?:letztes|vergangenes)\s+jahr", "year", -1),
    _Form(r"dieses\s+jahr", "year"),
    _Form(r"dieses\s+wochenende", "weekend"),
    _Form(r"(?:letztes|vergangenes)\s+wochenende", "weekend", -1),
    _Form(r"(?:n(?:ä|ae)chstes|kommendes)\s+wochenende", "weekend", 1),
    _Form(rf"(?:am\s+)?(?:n(?:ä|ae)chsten|kommenden)\s+{_DE_DAYS}", steps=None, way="next"),
    _Form(rf"(?:am\s+)?(?:letzten|vergangenen)\s+{_DE_DAYS}", steps=None, way="last"),
    _Form(rf"diesen\s+{_DE_DAYS}", steps=None, way="this"),
)
# The forms that must win over the core where both begin ("tomorrow night" over "tomorrow").
_FIRST = 2

_FORM_COUNTS = {
    **{word: n for word, n in _NUMBERS.items() if word not in ("few", "couple", "couple of")},
    **dict.fromkeys(("un", "una", "uno", "une", "ein", "eine", "einem", "einer", "einen"), 1),
    **dict.fromkeys(("dos", "deux", "zwei"), 2),
    **dict.fromkeys(("tres", "trois", "drei"), 3),
    **dict.fromkeys(("cuatro", "quatre", "vier"), 4),
    **dict.fromkeys(("cinco", "cinq", "fünf", "fuenf"), 5),
    **dict.fromkeys(("seis", "six", "sechs"), 6),
    **dict.fromkeys(("siete", "sept", "sieben"), 7),
    **dict.fromkeys(("ocho", "huit", "acht"), 8),
    **dict.fromkeys(("nueve", "neuf", "neun"), 9),
    **dict.fromkeys(("diez", "dix", "zehn"), 10),
}
_UNIT_WORDS = {
    "day": "day days día días dia dias jour jours tag tage tagen",
    "week": "week weeks semana semanas semaine semaines woche wochen",
    "month": "month months mes meses mois monat monate monaten",
    "year": "year years año años ano anos an ans année années annee annees jahr jahre jahren",
}
_UNITS = {word: unit for unit, words in _UNIT_WORDS.items() for word in words.split()}
_DAY_NUMBERS = {
    **dict.fromkeys(("lunes", "lundi", "montag"), 0),
    **dict.fromkeys(("martes", "mardi", "dienstag"), 1),
    **dict.fromkeys(("miércoles", "miercoles", "mercredi", "mittwoch"), 2),
    **dict.fromkeys(("jueves", "jeudi", "donnerstag"), 3),
    **dict.fromkeys(("viernes", "vendredi", "freitag"), 4),
    **dict.fromkeys(("sábado", "sabado", "samedi", "samstag", "sonnabend"), 5),
    **dict.fromkeys(("domingo", "dimanche", "sonntag"), 6),
}
#: Words only a text in that language holds, for the forms that are words of another too.
_CUES = {
    "fr": re.compile(
        r"\b(?:je|j['’]|tu|nous|vous|elle|c['’]est|suis|sommes|avons|était|été|avec|pour|chez"
        r"|mon|ma|mes|notre|nos|les|une|qu['’]|n['’]|pas|soir)\b",
        re.I,
    ),
    "de": re.compile(
        r"\b(?:ich|wir|du|er|sie|ist|bin|sind|habe|haben|hat|und|nicht|mit|der|die|das|dem"
        r"|den|ein|eine|auf|zu|uns|mein|meine|unser|unsere|wird|werde|früh|gehe|geht|kommt)\b",
        re.I,
    ),
}


def _named(index: int, pattern: str) -> str:
    return re.sub(r"\(\?P<(n|u|w)>", rf"(?P<f{index}_\1>", pattern)


_CAPTURE = re.compile(
    r"(?<!the )(?:"
    + "|".join(
        rf"(?<!\w)(?P<f{i}>{_named(i, f.pattern)})(?!\w)" for i, f in enumerate(_FORMS[:_FIRST])
    )
    + r"|\b(?:"
    + _CORE_BODY
    + r")\b|"
    + "|".join(
        rf"(?<!\w)(?P<f{i}>{_named(i, f.pattern)})(?!\w)"
        for i, f in enumerate(_FORMS)
        if i >= _FIRST
    )
    + r")",
    re.I,
)
#: What `pin_dates` writes after an expression (`unpin_dates` takes it out again).
_PIN = re.compile(r" \((?:since )?(?:week of |weekend of )?\d{4}(?:-\d{2}){0,2}\)")
_PINNED = re.compile(r"\s*\((?:since )?(?:week of |weekend of )?\d{4}")
# Short forms of weekdays that are words too ("I last sat here", "this sun is hot"): a weekday
# only when capitalised.
_WORDLIKE_DAYS = ("sat", "sun", "wed", "mon")
_VAGUE = re.compile(r"\bfew\b", re.I)
_OR_MORE = re.compile(r"\s+or\b", re.I)


def _form_of(match: re.Match[str]) -> tuple[int, _Form] | None:
    name = match.lastgroup
    if name and name[0] == "f" and name[1:].isdigit():
        return int(name[1:]), _FORMS[int(name[1:])]
    return None


def _form_range(
    index: int, form: _Form, match: re.Match[str], day: dt.date
) -> tuple[dt.date, dt.date] | None:
    if form.steps is not None:
        return _period(day, form.unit, form.steps)
    if form.way:
        weekday = _DAY_NUMBERS[match[f"f{index}_w"].lower()]
        return _period(day, "day", _weekday_steps(day, weekday, form.way))
    count = " ".join(match[f"f{index}_n"].lower().split())
    number = int(count) if count.isdigit() else _FORM_COUNTS.get(count)
    unit = _UNITS.get(match[f"f{index}_u"].lower())
    if number is None or unit is None:
        return None
    return _period(day, unit, form.sign * number)


def _reading(match: re.Match[str]) -> str:
    """How capture reads `match`: "time" (a time it may pin), "vague" (a relative time it
    must not pin: a vague count, "a few days ago", or a span that may be longer, "in a week
    or two") or "other" (no time at all: a weekday's short form that is a word written in
    lower case, "last sat here"; a word of two languages in a text of the other one;
    "Morgen", the German noun)."""
    text = match[0]
    found = _form_of(match)
    if found is not None:
        form = found[1]
        if form.needs and not _CUES[form.needs].search(match.string):
            return "other"
        if form.needs == "de" and text[0].isupper() and not _opens_sentence(match):
            return "other"  # "Der Morgen war kalt": the noun
    else:
        what = match["what"]
        if what and what.rstrip(".").lower() in _WORDLIKE_DAYS and not what[0].isupper():
            return "other"
        if _VAGUE.search(text):
            return "vague"
    counted = (found is not None and found[1].steps is None and not found[1].way) or any(
        match[name] for name in ("in_n", "from_n", "ago_n", "for_n")
    )
    return "vague" if counted and _OR_MORE.match(match.string, match.end()) else "time"


def _opens_sentence(match: re.Match[str]) -> bool:
    before = match.string[: match.start()].rstrip()
    return not before or before[-1] in ".!?:;\n-*"


def _capture_range(match: re.Match[str], day: dt.date) -> tuple[dt.date, dt.date] | None:
    found = _form_of(match)
    try:
        if found is not None:
            return _form_range(found[0], found[1], match, day)
        return _resolve(match, day)
    except (OverflowError, ValueError):  # a date past the calendar
        return None


def render(first: dt.date, last: dt.date) -> str:
    """A range of days as a pin writes it: `2026-12-06`, `week of 2026-11-30` (Monday to
    Sunday), `weekend of 2026-12-05`, `2026-12` (a month), `2025` (a year)."""
    if first == last:
        return first.isoformat()
    if first.weekday() == 0 and last - first == dt.timedelta(days=6):
        return f"week of {first.isoformat()}"
    if first.weekday() == 5 and last - first == dt.timedelta(days=1):
        return f"weekend of {first.isoformat()}"
    if first.day == 1 and (last + dt.timedelta(days=1)).day == 1:
        if first.month == last.month:
            return f"{first:%Y-%m}"
        if (first.month, last.month) == (1, 12):
            return f"{first.year:04d}"
    return f"{first.isoformat()}..{last.isoformat()}"


def _pins(text: str, day: dt.date) -> list[tuple[re.Match[str], str | None]]:
    """Each relative time of `text` capture reads and no date follows yet, with the pin it
    gets (None: vague, or past the calendar)."""
    found = []
    for match in _CAPTURE.finditer(text):
        if _PINNED.match(text, _end(match)):
            continue
        reading = _reading(match)
        if reading == "other":
            continue
        when = _capture_range(match, day) if reading == "time" else None
        if when is None and match["for_n"] and reading == "time" and not _lasted(match):
            continue  # "we stayed for two weeks": a length of time, not a time
        label = None
        if when is not None:
            label = render(*when)
            if ".." in label:
                label = None
            elif match["for_n"]:
                label = f"since {label}"
        found.append((match, label))
    return found


_POSSESSIVE = re.compile(r"['’]s\b")


def _end(match: re.Match[str]) -> int:
    """Where a pin goes: after the expression, or after its "'s" ("Yesterday's (2026-12-05)
    standup")."""
    possessive = _POSSESSIVE.match(match.string, match.end())
    return possessive.end() if possessive else match.end()


def pin_dates(text: str, day: dt.date) -> str:
    """`text` with the date written after each relative expression resolved against `day`
    (the day it was said): "Mia's birthday is today (2026-12-06)". Idempotent: an expression
    pinned already is left as it is."""
    out, last = [], 0
    for match, label in _pins(text, day):
        if label is None:
            continue
        end = _end(match)
        out.append(text[last:end])
        out.append(f" ({label})")
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def unpin_dates(text: str) -> str:
    """`text` without the dates `pin_dates` wrote."""
    return _PIN.sub("", text)


_ANY_DAY = dt.date(2000, 1, 3)  # a day to resolve against when only whether matters
# "on Friday", "by Tuesday", "until Sunday": a weekday without a week, still relative
_BARE_WEEKDAY = re.compile(
    r"\b(?:on|by|until|till|before|after|from)\s+(?:monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)\b(?!s\b|['’]s\b)",
    re.I,
)


def unresolved_relative_time(line: str) -> list[str]:
    """The relative times of `line` that no date follows: those `pin_dates` pins, those it
    leaves alone because they are vague ("a few days ago", "in a week or two"), and a
    weekday without its week ("on Friday", "by Tuesday")."""
    found = [match[0] for match, _ in _pins(line, _ANY_DAY)]
    found += [m[0] for m in _BARE_WEEKDAY.finditer(line) if not _PINNED.match(line, m.end())]
    return found


def has_unresolved_relative_time(line: str) -> bool:
    """Whether `line` still says a time only relative to the day it was written ("today",
    "next Friday", "on Friday", "vor drei Tagen") with no date beside it: a line the dream
    must not promote as it is."""
    return bool(unresolved_relative_time(line))
