"""Trust in a claim: whether a text may become a memory, and whether its sources say it.

What a model writes (a flush's entries, a dream's plan) is untrusted input. Three pure
checks, shared by `flush` and the dream:

- `strip_controls(text)`: the characters that change how a text reads without being seen
  (bidi embeddings, overrides and isolates, zero-width characters, a stray byte-order mark,
  tag characters) removed. A zero-width joiner inside an emoji sequence (👩‍💻) or between the
  letters of a script that joins them (Persian, the Indic scripts) stays, as does a flag's
  tag sequence.
- `unsafe_kind(text)`: "instruction" (text that steers an assistant: the injection cues of
  `files.injection`, or a request to send credentials to an address), "shell-command" (a
  command line, a download piped to a shell, a destructive command) or "credential" (what the
  redactor finds, or a PIN or passcode), else None. Never something to keep as a memory.
- `support(claim, sources)`: which numbers, identifiers, dates, URLs and names of the claim
  occur nowhere in its sources, and how many of its content words do. A relative date in a
  source counts as the day it names when the source's own day is given ("today", said on
  2026-12-06, supports a claim dated 2026-12-06).

No I/O, no clock, no model: the same text gives the same answer.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..files import judge_instruction
from .dates import pin_dates
from .redact import redact

__all__ = [
    "MIN_OVERLAP",
    "Support",
    "looks_like_command",
    "strip_controls",
    "support",
    "unsafe_kind",
]

# -- characters that hide or reorder text -------------------------------------------------------

#: Bidi embeddings, overrides (U+202A-U+202E) and isolates (U+2066-U+2069): they reorder what
#: a reader sees. The implicit marks (U+200E, U+200F) only nudge neutral characters and are
#: kept: right-to-left text needs them.
_BIDI = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
#: Zero-width and invisible characters: U+200B space, U+2060 word joiner, U+2061-U+2064
#: invisible operators, U+180E Mongolian vowel separator, U+00AD soft hyphen, U+FEFF.
_INVISIBLE = frozenset("\u200b\u2060\u2061\u2062\u2063\u2064\u180e\u00ad\ufeff")
_JOINERS = frozenset("\u200c\u200d")  # ZWNJ, ZWJ: kept where a script or an emoji needs them
_TAGS = range(0xE0000, 0xE0080)
_BLACK_FLAG = "\U0001f3f4"  # 🏴: tag characters after it spell a subdivision's flag


def _pictographic(ch: str) -> bool:
    code = ord(ch)
    return (
        code >= 0x1F000
        or 0x2190 <= code <= 0x2BFF  # arrows, technical, dingbats, miscellaneous symbols
        or code in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D)
        or code == 0xFE0F  # the emoji presentation selector
    )


def _joins(before: str, after: str) -> bool:
    """A joiner between these two characters does a job: inside an emoji sequence, or between
    letters of a script other than Latin (Persian, Devanagari, …)."""
    if _pictographic(before) and _pictographic(after):
        return True
    if before.isascii() or after.isascii():
        return False
    return unicodedata.category(before)[0] in "LM" and unicodedata.category(after)[0] in "LM"


def strip_controls(text: str) -> str:
    """`text` without bidi embeddings, overrides and isolates, zero-width characters, a
    byte-order mark and tag characters; joiners inside emoji sequences and joining scripts,
    and a flag's tag sequence, stay. Unchanged (the same object) when there is nothing to
    strip."""
    if text.isascii():
        return text
    kept: list[str] = []
    changed = False
    for i, ch in enumerate(text):
        code = ord(ch)
        if ch in _BIDI or ch in _INVISIBLE:
            changed = True
            continue
        if ch in _JOINERS:
            before = text[i - 1] if i else " "
            after = text[i + 1] if i + 1 < len(text) else " "
            if not _joins(before, after):
                changed = True
                continue
        elif code in _TAGS and not (kept and (kept[-1] == _BLACK_FLAG or ord(kept[-1]) in _TAGS)):
            changed = True
            continue
        kept.append(ch)
    return "".join(kept) if changed else text


# -- what is never a memory -------------------------------------------------------------------

_PROMPT = re.compile(r"^\s*(?:\$|%|>>>|\.\.\.|❯|➜|PS [A-Z]:\\[^>]*>|[\w.-]+@[\w.-]+:[^$#]*[$#])\s")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Tools whose name is no English word: a line starting with one is a command…
_TOOLS = _words(
    "git pip pip3 pipx python python3 npm npx yarn pnpm deno cargo rustc cmake docker "
    "docker-compose podman kubectl helm terraform ansible cd ls ll rm mv cp mkdir rmdir chmod "
    "chown sudo apt apt-get dnf yum brew curl wget ssh scp rsync uv poetry pytest tox ruff mypy "
    "grep rg sed awk xargs uniq vim vi nano systemctl journalctl psql mysql sqlite3 redis-cli "
    "gzip pkill htop df du whoami gh gcloud javac mvn gradle gcc g++ clang conda pyenv nvm "
    "dotnet composer"
)
# …and tools named like words ("make sure …", "go with …"): only with command syntax.
_WORD_TOOLS = _words(
    "go make find sort free set unset source code more less top head tail kill touch cat "
    "export env service echo printf node bun py java ruby gem bundle rails php vault az aws ps "
    "tar zip unzip black mongo su ln"
)
_COMMAND = re.compile(
    r"^\s*(?:sudo\s+)?(?P<tool>"
    + "|".join(map(re.escape, sorted(_TOOLS | _WORD_TOOLS)))
    + r")(?:\s|$)"
)
_COMMAND_SYNTAX = re.compile(r"\s--?\w|[|&<>$=]|(?:^|\s)\.{0,2}/\w|~/")
_PROSE_VERB = re.compile(
    r"\s(?:is|are|was|were|must|should|never|always|do|don't|does|doesn't|can|cannot|can't|"
    r"will|won't|need|needs|has|have|had)\s"
)


def looks_like_command(line: str) -> bool:
    """One line that is a shell command (a prompt, or a tool with its arguments), not a
    sentence about one: "git push --force to main is forbidden." is prose."""
    if _PROMPT.match(line):
        return True
    stripped = line.strip()
    command = _COMMAND.match(stripped)
    if not command or not (command["tool"] in _TOOLS or _COMMAND_SYNTAX.search(stripped)):
        return False
    return not (stripped.endswith((".", "!")) and _PROSE_VERB.search(stripped))


# A download run by a shell or an interpreter, anywhere in a text: `curl … | sh`,
# `bash <(curl …)`, `sh -c "$(wget …)"`, `iwr … | iex`.
_PIPE_TO_SHELL = re.compile(
    r"\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]*\|\s*"
    r"(?:sudo\s+(?:-\w+\s+)*)?(?:(?:ba|z|k|da|fi)?sh|python3?|perl|ruby|node|iex|"
    r"invoke-expression)\b"
    r"|\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*(?:curl|wget)\b",
    re.I,
)
# Commands that destroy: whatever their context, a memory never holds them as a rule.
_DESTRUCTIVE = re.compile(
    r"\brm\s+-(?:[a-z]*r[a-z]*f|[a-z]*f[a-z]*r)[a-z]*\s+(?:/|~|\$HOME|\*|\.\s|\.$)"
    r"|\bmkfs(?:\.\w+)?\s+/dev/|\bdd\s+[^\n]*\bof=/dev/(?:sd|nvme|disk|hd)"
    r"|\bchmod\s+(?:-R\s+)?0?777\s+/|:\(\)\s*\{\s*:\|:&\s*\};:"
    r"|>\s*/dev/sd[a-z]\b",
    re.I,
)
_NEGATED = re.compile(r"\b(?:never|don'?t|do not|avoid|must not|mustn'?t|no one should)\b", re.I)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")

_CREDENTIAL_WORD = (
    r"(?:api[ _-]?keys?|(?:aws|ssh|private|access|secret)[ _-]?keys?|credentials?|passwords?|"
    r"passphrases?|secrets?|tokens?|logins?|pins?|pin codes?|2fa codes?|backup codes?|"
    r"seed phrases?|recovery (?:codes?|phrases?))"
)
# A request to send credentials to an address: an instruction whoever reads it must not follow.
_SEND_CREDENTIALS = re.compile(
    r"\b(?:send|e-?mail|mail|forward|post|upload|paste|share|leak|give|text|dm)\b[^.\n]{0,60}?"
    r"\b" + _CREDENTIAL_WORD + r"\b(?!\s+(?:reset|manager|policy|policies|hint|rotation))"
    r"[^.\n]{0,80}?(?:\bto\s+[\w.+-]+@[\w-]+\.[\w.-]+|\bto\s+https?://|\bby\s+e-?mail\b|"
    r"\bvia\s+e-?mail\b|\bin\s+(?:an?\s+)?e-?mail\b)",
    re.I,
)
# A PIN or passcode written out: the redactor looks for keys and passwords.
_PIN = re.compile(
    r"\b(?:pin(?:\s+(?:code|number))?|passcode|pass code|cvv|cvc|security code|door code|"
    r"alarm code|gate code|access code|unlock code|entry code|garage code|safe code|"
    r"code (?:pin|secret)|geheimzahl|c[oó]digo pin)\b"
    r"[^\d\n]{0,24}?(?<![\d.,])\d{3,8}(?![\d.,]\d)",
    re.I,
)


def _shell_command(text: str) -> bool:
    if _PIPE_TO_SHELL.search(text):
        return True
    for line in text.splitlines():
        if _DESTRUCTIVE.search(line) and not _NEGATED.search(line):
            return True
        if looks_like_command(line.lstrip("-*+ ").strip("`")):
            return True
    return any(
        _DESTRUCTIVE.search(span) and not _NEGATED.search(text) for span in _CODE_SPAN.findall(text)
    )


def unsafe_kind(text: str) -> str | None:
    """Why `text` must never become a memory, or None: "instruction" (it steers an
    assistant, or asks that credentials be sent to an address), "shell-command" (a command
    line, a download piped to a shell, a destructive command) or "credential" (a secret the
    redactor finds, a PIN or a passcode). `[REDACTED:…]` markers are no credential."""
    if not text.strip():
        return None
    clean = strip_controls(text)
    if judge_instruction(text).flagged or _SEND_CREDENTIALS.search(clean):
        return "instruction"
    if _shell_command(clean):
        return "shell-command"
    if redact(clean).total or _PIN.search(clean):
        return "credential"
    return None


# -- does a claim follow from its sources? ---------------------------------------------------

#: The share of a claim's content words its sources must hold, with nothing else missing.
MIN_OVERLAP = 0.5

_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]{}\"'`]+", re.I)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "jan january enero janvier januar",
            "feb february febrero février fevrier februar",
            "mar march marzo mars märz maerz",
            "apr april abril avril",
            "may mayo mai",
            "jun june junio juin juni",
            "jul july julio juillet juli",
            "aug august agosto août aout",
            "sep sept september septiembre septembre",
            "oct october octubre octobre oktober",
            "nov november noviembre novembre",
            "dec december diciembre décembre decembre dezember",
        ),
        1,
    )
    for name in names.split()
}
_MONTH_NAME = "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True))
_WEEK_OF = re.compile(r"\b(week|weekend) of (\d{4})-(\d{2})-(\d{2})\b", re.I)
_ISO = re.compile(r"(?<![\w-])(\d{4})-(\d{2})(?:-(\d{2}))?(?![\w-]|:\d)")
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th|\.)?(?:\s+(?:of|de))?\s+({_MONTH_NAME})\.?"
    rf"(?:,?\s+(?:de\s+)?(\d{{4}}))?\b",
    re.I,
)
_MONTH_DAY = re.compile(
    rf"\b({_MONTH_NAME})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_NAME})\.?,?\s+(\d{{4}})\b", re.I)
# Ids: letters and digits joined by - _ . / : # (INC-2291, v2.3.1, billing_db, config.yaml),
# or letters and digits run together (A100, 3b1f9e); a plain word or number is not one.
_IDENTIFIER = re.compile(
    r"(?<![\w#])#?[A-Za-z0-9]+(?:[-_./:#][A-Za-z0-9]+)+(?![\w])"
    r"|(?<![\w#])#\d+\b"
    r"|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{2,}\b"
)
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?:\.\d+)?(?![\w])")
_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")
_SMALL_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_NUMBER_WORDS = {word: str(number) for number, word in enumerate(_SMALL_NUMBERS.split())}
_NUMBER_WORDS.update(thirty="30", forty="40", fifty="50", hundred="100", dozen="12")
_TAG = re.compile(r"(?<![\w/&#])#[A-Za-z][\w/-]*")
_REDACTED = re.compile(r"\[REDACTED:[\w-]+\]")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SENTENCE_END = re.compile(r"[.!?:;\n]")  # between two words: the second opens a sentence

_STOPWORDS = _words(
    "a an the and or but if then so as at by for from in into of on onto to with without "
    "about over under after before since until while because than that this these those it "
    "its it's is are was were be been being am do does did done doing have has had having "
    "will would shall should can could may might must not no nor yes i i'm i've i'll i'd me "
    "my mine we we're we've we'll we'd us our ours you you're your yours he he's him his she "
    "she's her hers they they're them their theirs there here what which who whom whose when "
    "where why how all any both each few more most other some such only own same too very "
    "just also still even again once ever never always now today tomorrow yesterday up down "
    "out off very really quite much many lot lots thing things get got gets one ones can't "
    "don't doesn't didn't won't isn't aren't wasn't weren't haven't hasn't hadn't wouldn't "
    "shouldn't couldn't user users assistant said says say told tells like via per "
    "el la los las un una y o de del que en por para con es son fue le les et ou du des une "
    "est sont der die das ein eine und oder ist sind mit für von zu im"
)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("’", "'")


def _stem(word: str) -> str:
    """A word's crude stem, the same for "prefers", "preferred", "preferring" and "prefer"
    (close enough on both sides of a comparison)."""
    word = _fold(word)
    if word.endswith("'s"):
        word = word[:-2]
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("ly", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + keep
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # "preferr" of "preferred"
    return word


Day = tuple[int | None, int, int | None]  # (year or None, month, day or None)


@dataclass
class _Facts:
    """What a text states that must be matched exactly."""

    urls: list[str]
    dates: list[tuple[str, Day]]  # (as written, the day)
    ranges: list[tuple[dt.date, dt.date]]  # "week of 2026-11-16": those days
    identifiers: list[str]
    numbers: list[str]
    names: list[str]
    words: list[str]  # every other word, as written


def _month(name: str) -> int:
    return _MONTHS[_fold(name).rstrip(".")]


def _take_dates(text: str, facts: _Facts) -> str:
    def week(match: re.Match[str]) -> str:
        try:
            first = dt.date(int(match[2]), int(match[3]), int(match[4]))
        except ValueError:
            return match[0]
        length = 7 if match[1].lower() == "week" else 2
        facts.ranges.append((first, first + dt.timedelta(days=length - 1)))
        facts.dates.append((match[0], (first.year, first.month, first.day)))
        return " "

    def iso(match: re.Match[str]) -> str:
        month = int(match[2])
        if not 1 <= month <= 12:
            return match[0]
        day = int(match[3]) if match[3] else None
        facts.dates.append((match[0], (int(match[1]), month, day)))
        return " "

    def day_month(match: re.Match[str]) -> str:
        year = int(match[3]) if match[3] else None
        facts.dates.append((match[0], (year, _month(match[2]), int(match[1]))))
        return " "

    def month_day(match: re.Match[str]) -> str:
        year = int(match[3]) if match[3] else None
        facts.dates.append((match[0], (year, _month(match[1]), int(match[2]))))
        return " "

    def month_year(match: re.Match[str]) -> str:
        facts.dates.append((match[0], (int(match[2]), _month(match[1]), None)))
        return " "

    text = _WEEK_OF.sub(week, text)
    text = _ISO.sub(iso, text)
    text = _DAY_MONTH.sub(day_month, text)
    text = _MONTH_DAY.sub(month_day, text)
    return _MONTH_YEAR.sub(month_year, text)


def _facts(text: str) -> _Facts:
    facts = _Facts([], [], [], [], [], [], [])
    text = _REDACTED.sub(" ", strip_controls(text))
    text = _TAG.sub(" ", text).replace("**", " ").replace("__", " ")

    def taking(into: list[str], clean: str = "") -> Callable[[re.Match[str]], str]:
        def take(match: re.Match[str]) -> str:
            into.append(match[0].rstrip(clean) if clean else match[0])
            return " "

        return take

    text = _URL.sub(taking(facts.urls, ".,;:!?'\"/"), text)
    text = _EMAIL.sub(taking(facts.identifiers), text)
    text = _take_dates(text, facts)
    text = _TIME.sub(taking(facts.numbers), text)
    text = _IDENTIFIER.sub(taking(facts.identifiers, ".:/"), text)
    text = _NUMBER.sub(taking(facts.numbers), text)
    previous = 0
    for match in _WORD.finditer(text):
        word, gap = match[0], text[previous : match.start()]
        at_start = previous == 0 or _SENTENCE_END.search(gap) is not None
        previous = match.end()
        if (word[0].isupper() and not at_start and len(word) > 1) or (
            len(word) > 1 and word.isupper()
        ):
            facts.names.append(word)
        else:
            facts.words.append(word)
    return facts


def _number(text: str) -> str:
    """A number as compared: thousands separators gone ("1,500" is 1500), a decimal comma
    read as a point ("2,5" is 2.5), trailing zeros of a fraction dropped."""
    digits = text
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", digits):
        digits = digits.replace(",", "")
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?", digits):
        digits = digits.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d+,\d+", digits):
        digits = digits.replace(",", ".")
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return digits.lstrip("0") or "0"


@dataclass(frozen=True)
class _Evidence:
    """The sources, ready to be matched: every form a claim may be compared in."""

    text: str  # folded
    urls: frozenset[str]
    identifiers: frozenset[str]
    numbers: frozenset[str]
    dates: tuple[Day, ...]
    ranges: tuple[tuple[dt.date, dt.date], ...]
    stems: frozenset[str]


Source = str | tuple[str, "dt.date | None"]


@functools.lru_cache(maxsize=16)
def _evidence(sources: tuple[Source, ...]) -> _Evidence:
    urls: set[str] = set()
    identifiers: set[str] = set()
    numbers: set[str] = set()
    dates: list[Day] = []
    ranges: list[tuple[dt.date, dt.date]] = []
    stems: set[str] = set()
    texts = []
    for source in sources:
        text, day = (source, None) if isinstance(source, str) else source
        if day is not None:
            with contextlib.suppress(OverflowError, ValueError):
                text = pin_dates(text, day)  # "today" said that day: the date it names
        texts.append(text)
        facts = _facts(text)
        urls.update(_fold(u) for u in facts.urls)
        identifiers.update(_fold(i) for i in facts.identifiers)
        numbers.update(_number(n) for n in facts.numbers)
        for _, (year, month, date) in facts.dates:
            dates.append((year, month, date))
            if year is not None:
                numbers.add(str(year))
            if date is not None:
                numbers.add(str(date))
        ranges.extend(facts.ranges)
        for word in [*facts.words, *facts.names]:
            folded = _fold(word)
            stems.add(_stem(folded))
            if folded in _NUMBER_WORDS:
                numbers.add(_NUMBER_WORDS[folded])
    return _Evidence(
        _fold("\n".join(texts)),
        frozenset(urls),
        frozenset(identifiers),
        frozenset(numbers),
        tuple(dates),
        tuple(ranges),
        frozenset(stems),
    )


def _said(token: str, text: str) -> bool:
    """`token` in `text`, not inside a longer token."""
    return re.search(rf"(?<![\w.-]){re.escape(token)}(?![\w]|[.-]\w)", text) is not None


def _date_found(day: Day, evidence: _Evidence) -> bool:
    year, month, date = day
    for y, m, d in evidence.dates:
        if m != month or (year is not None and y is not None and y != year):
            continue
        if date is None or d == date:
            return True
    if year is not None and date is not None:
        try:
            wanted = dt.date(year, month, date)
        except ValueError:
            return False
        return any(first <= wanted <= last for first, last in evidence.ranges)
    return False


@dataclass(frozen=True)
class Support:
    """How far a claim's sources say it.

    `missing`: (kind, text) of each number, identifier, date, URL and name of the claim that
    the sources do not hold, kind one of "number", "identifier", "date", "url", "name".
    `overlap`: the share of the claim's content words (stop words aside, compared by a crude
    stem; its numbers, identifiers, dates and URLs count as words too) that the sources hold,
    of `words` in all (1.0 when it has none)."""

    missing: tuple[tuple[str, str], ...]
    overlap: float
    words: int

    @property
    def supported(self) -> bool:
        """Nothing missing, and at least `MIN_OVERLAP` of its content words in the sources."""
        return not self.missing and self.overlap >= MIN_OVERLAP

    def reason(self) -> str:
        """One line saying why the claim is not supported ("" when it is)."""
        if self.supported:
            return ""
        parts = []
        if self.missing:
            shown = ", ".join(f"{text} ({kind})" for kind, text in self.missing[:4])
            more = len(self.missing) - 4
            parts.append(f"{shown}{f' and {more} more' if more > 0 else ''} not in its sources")
        if self.overlap < MIN_OVERLAP:
            held = round(self.overlap * self.words)
            parts.append(f"{held} of its {self.words} content words in its sources")
        return "; ".join(parts)


def support(claim: str, sources: str | Sequence[Source]) -> Support:
    """Which numbers, identifiers, dates, URLs and names of `claim` the `sources` do not hold,
    and the share of its content words they do. A source is a text, or (text, the day it was
    said): its relative dates then count as the days they name. Case, accents' composition,
    thousands separators, number words ("two" for 2) and date formats ("6 Dec 2026",
    "2026-12-06") do not matter; `#tags` and `[REDACTED:…]` markers are not claims."""
    given: tuple[Source, ...] = (sources,) if isinstance(sources, str) else tuple(sources)
    evidence = _evidence(given)
    facts = _facts(claim)
    missing: list[tuple[str, str]] = []
    missing += [("url", u) for u in facts.urls if _fold(u) not in evidence.urls]
    missing += [("date", text) for text, day in facts.dates if not _date_found(day, evidence)]
    missing += [
        ("identifier", i)
        for i in facts.identifiers
        if _fold(i) not in evidence.identifiers and not _said(_fold(i), evidence.text)
    ]
    missing += [("number", n) for n in facts.numbers if _number(n) not in evidence.numbers]
    missing += [("name", name) for name in facts.names if _stem(name) not in evidence.stems]
    exact = len(facts.urls) + len(facts.dates) + len(facts.identifiers) + len(facts.numbers)
    found = exact - sum(kind != "name" for kind, _ in missing)
    content = []
    for word in [*facts.words, *facts.names]:
        folded = _fold(word)
        if folded in _STOPWORDS or len(folded) < 2:
            continue
        if folded in _NUMBER_WORDS and folded != "one":
            if _NUMBER_WORDS[folded] not in evidence.numbers:
                missing.append(("number", word))
            continue
        content.append(_stem(folded))
    # The exact facts count as content words too: "INC-2291 at 10:30" says little else.
    unique = sorted(set(content))
    held = sum(stem in evidence.stems for stem in unique) + found
    total = len(unique) + exact
    overlap = held / total if total else 1.0
    return Support(tuple(dict.fromkeys(missing)), overlap, total)
