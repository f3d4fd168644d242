"""Names as people write them in a chat, read from the messages themselves: the name a speaker
gives themself ("I'm Kate", "my name is Kate", "call me Kate") and the name a message calls
the person it speaks to ("Hey Kate!", "Thanks, Kate!", "Wow Kate, that looks amazing").

A chat's speaker labels are often not the names people use: a display name (`Emi`), a
lower-case handle (`elise`), a name typed two ways. The unit table keeps, for every unit, the
names its speaker gives themself and the names it calls the other by (two postings fields,
`me` and `to`, derived from the unit's own text when it is built); a query word that is such
a name is resolved to a speaker by those units' votes (`named_speakers`). Pure functions:
`Searcher` gathers their inputs.
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..index import terms_of

log = logging.getLogger("vault_memory")

_NAME = r"([A-Z][a-z][\w'’-]*|[A-Z]{2,}\b)"
# "call me Bob", "my name is Bob", "my name's Bob": a speaker gives the name others use.
_CALLED = re.compile(r"\b(?i:call me|my name is|my name's|name's)\s+" + _NAME)
# "I'm Kate", "I am Kate", "im Kate": a name the sentence ends on ("I'm Kate, what's yours?",
# "I'm Kate btw"); "I'm Kate's sister" or "I'm Going" are not.
_I_AM = re.compile(
    r"(?<![\w'’])(?i:i'm|i’m|i am|im)\s+"
    + _NAME
    + r"(?=\s*(?:[.,!?;:)]|$|(?i:and|but|btw|by the way|here)\b))"
)
# A greeting or thanks before a name: "Hey Kate", "thanks Kate", "Good morning, Kate".
_GREETED = re.compile(
    r"\b(?i:hi|hey|heya|hiya|hello|yo|dear|thanks|thank you|thx|ty|congrats|congratulations"
    r"|bye|goodnight|good night|good morning|morning|love you|miss you|welcome back)"
    r"\s*,?\s+" + _NAME + r"(?![\w'’])(?!\s*[A-Z])"
)
# An exclamation before a name and a comma or mark after it: "Wow Kate, that looks amazing",
# "Oh Kate!", "Aw Kate."
_EXCLAIMED = re.compile(
    r"(?:^|[.!?]\s+)(?i:oh|ooh|wow|aw+|omg|haha|lol|yes|yeah|no|ok|okay|well|so|ah)\s*,?\s+"
    + _NAME
    + r"\s*[,!.?]"
)
# A name set off by a comma at the end of a sentence: "That's great, Kate!", "Thanks so much,
# Mel." (a name that opens the message before a comma, "Kate, look at this", too).
_TRAILING = re.compile(r",\s+" + _NAME + r"\s*(?:[!.?]+|$)")
_OPENING = re.compile(r"^" + _NAME + r"\s*,\s+\S")
#: Words that are never names, however they are capitalised ("I'm OK", "Thanks, God" aside).
NOT_NAMES = frozenset({"i", "ok", "okay", "lol", "omg", "god", "sir", "mom", "dad", "guys", "all"})

# What each pattern cannot match without, checked before it runs: these patterns read every
# unit when the unit table is built and every new candidate of a search on an index server,
# and most texts hold none of their words (measured on 505,514 texts of the development
# splits and a synthetic vault: 2.2 s with every pattern run, 1.3 s with the checks). Every
# name is a capital A-Z, so a text with no capital letter holds none; the case-blind words
# of each pattern, as lower-case substrings of the lower-cased text (each word's shortest
# form: "thank" for "thanks" and "thank you"). Python's case-blind matching also takes four
# letters beyond ASCII for i, s and k: a text holding one of them skips no pattern.
_FOLDED_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")
_CALLED_NEEDS = re.compile("call me|name")
_I_AM_NEEDS = re.compile("i'm|i’m|i am|im")
_GREETED_NEEDS = re.compile(
    "hi|hey|hello|yo|dear|thank|thx|ty|congrat|bye|night|morning|love you|miss you|welcome back"
)
_EXCLAIMED_NEEDS = re.compile("oh|wow|aw|omg|haha|lol|yes|yeah|no|ok|well|so|ah")


def _lowered(text: str) -> tuple[str, bool] | None:
    """The lower-cased text and whether substring checks of it stand for the patterns'
    case-blind words; None when the text holds no capital letter (so no name)."""
    low = text.lower()
    if low == text:
        return None
    return low, text.isascii() or _FOLDED_TO_ASCII.search(text) is None


def _may(low: tuple[str, bool], needs: re.Pattern[str]) -> bool:
    return not low[1] or needs.search(low[0]) is not None


def _names(found: Iterable[str]) -> list[str]:
    return [n.rstrip("'’-") for n in found if n.rstrip("'’-").lower() not in NOT_NAMES]


def self_names(text: str) -> list[tuple[str, int]]:
    """The names a message's speaker gives themself, each with its weight: 2 where they ask
    to be called so ("call me Bob", "my name is Bob"), 1 where they say who they are ("I'm
    Kate."; "I'm Italian." reads the same, so it weighs less)."""
    low = _lowered(text) if text else None
    if low is None:
        return []
    called = _CALLED.findall(text) if _may(low, _CALLED_NEEDS) else []
    said = _I_AM.findall(text) if _may(low, _I_AM_NEEDS) else []
    return [(n, 2) for n in _names(called)] + [(n, 1) for n in _names(said)]


def addressed_names(text: str) -> list[str]:
    """The names a message calls the person it speaks to ("Hey Kate", "Thanks, Kate!", "Wow
    Kate, that looks amazing", "Kate, look"): in a chat of two, the other speaker's."""
    low = _lowered(text) if text else None
    if low is None:
        return []
    found = _GREETED.findall(text) if _may(low, _GREETED_NEEDS) else []
    if _may(low, _EXCLAIMED_NEEDS):
        found += _EXCLAIMED.findall(text)
    if "," in text:
        found += _TRAILING.findall(text) + _OPENING.findall(text)
    return _names(found)


def named_speakers(self_votes: Mapping[str, int], addressed_votes: Mapping[str, int]) -> list[str]:
    """The speaker a name stands for, from the messages that use it: `self_votes` (a speaker
    label -> the weight of the messages in which it gave itself the name) and
    `addressed_votes` (a label -> the messages that called it so: the other speaker of a chat
    of two). A speaker whose votes are at least 2 and two thirds of all is named; one
    "I'm Italian" names nobody, a name called out to two people names neither."""
    votes = Counter(self_votes) + Counter(addressed_votes)
    total = sum(votes.values())
    if not total:
        return []
    label, count = votes.most_common(1)[0]
    return [label] if count >= 2 and 3 * count >= 2 * total else []


def edits_apart(a: str, b: str, most: int) -> bool:
    """Whether `b` is `a` with at most `most` letters inserted, deleted, changed, or
    neighbours swapped (the optimal string alignment distance, stopped past `most`)."""
    if abs(len(a) - len(b)) > most:
        return False
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > most:
            return False
        previous2, previous = previous, current
    return previous[-1] <= most


def misspelt_name(word: str, names: Sequence[str]) -> list[str]:
    """The names (analyzed terms) `word` may misspell: one edit from a name of five letters or
    more, two from one of seven or more (names only: a common word is never read so); a
    name of four letters only with two neighbours swapped ("Kaet", "Jhon": one edit more
    turns Kate into Nate, Kale or Kat)."""
    size = len(word)
    if size == 4 and word not in names:
        return [name for name in names if _swapped(word, name)]
    if size < 5:
        return [word] if word in names else []
    by_length = _by_length(tuple(names))
    found = []
    for length in range(size - 2, size + 3):  # most names: no edit distance worked out
        for name in by_length.get(length, ()):
            if name == word:
                return [name]
            most = 2 if min(size, length) >= 7 else 1
            if abs(length - size) <= most and edits_apart(word, name, most):
                found.append(name)
    return found


def names_meant(word: str, names: Sequence[str], nicknames: bool = True) -> list[str]:
    """The names (analyzed terms) among `names` that the analyzed word `word` may stand for
    without spelling them: names it begins (`mel` -> `melani`), names it misspells
    (`misspelt_name`), failing those, with `nicknames`, names it is a nickname or the full
    name of (`nickname_names`). More than one: the caller names none."""
    misspelt = set(misspelt_name(word, names))
    meant = [name for name in names if name.startswith(word) or name in misspelt]
    if not meant and nicknames:
        meant = nickname_names(word, names)
    return meant


def _swapped(a: str, b: str) -> bool:
    """Whether `b` is `a` with two neighbouring letters swapped."""
    if len(a) != len(b) or a == b:
        return False
    differ = [i for i in range(len(a)) if a[i] != b[i]]
    return (
        len(differ) == 2
        and differ[1] == differ[0] + 1
        and a[differ[0]] == b[differ[1]]
        and a[differ[1]] == b[differ[0]]
    )


@functools.lru_cache(maxsize=8)
def _by_length(names: tuple[str, ...]) -> dict[int, list[str]]:
    """The names of five letters or more by their length (a vault's labels, asked again and
    again by its queries)."""
    found: dict[int, list[str]] = {}
    for name in names:
        if len(name) >= 5:
            found.setdefault(len(name), []).append(name)
    return found


@functools.cache
def _nickname_relations() -> dict[str, frozenset[str]]:
    """Each English given name (lower case) -> the names it is a nickname of and the
    nicknames it has ("kate" -> "katherine", "kathryn" …; "katherine" -> "kate", "kathy" …),
    from the `nicknames` package's hand-curated list (Apache-2.0). Its CSV is read as a file
    (importing the package would parse it into objects: 0.35 s). Empty when it is missing."""
    spec = importlib.util.find_spec("nicknames")
    folders = list(spec.submodule_search_locations or []) if spec else []
    related: dict[str, set[str]] = {}
    try:
        with (Path(folders[0]) / "names.csv").open(encoding="utf-8", newline="") as rows:
            for row in csv.reader(rows):
                if len(row) == 3 and row[1] == "has_nickname":
                    related.setdefault(row[0], set()).add(row[2])
                    related.setdefault(row[2], set()).add(row[0])
    except (IndexError, OSError) as exc:
        log.warning("nicknames are not matched: their list cannot be read (%s)", exc)
    return {name: frozenset(others) for name, others in related.items()}


@functools.cache
def _names_by_start() -> dict[str, tuple[str, ...]]:
    """The list's names by their first three letters, which the analyzer keeps (it only
    trims a word's end): the names that may be an analyzed term's spelling."""
    found: dict[str, list[str]] = {}
    for name in _nickname_relations():
        found.setdefault(name[:3], []).append(name)
    return {start: tuple(names) for start, names in found.items()}


@functools.lru_cache(maxsize=8192)
def _analyzed(name: str) -> tuple[str, ...]:
    return tuple(terms_of(name))


def nickname_names(word: str, names: Sequence[str]) -> list[str]:
    """The names (analyzed terms) among `names` that the name `word` (an analyzed term) is a
    nickname or the full name of ("kate" for "katherin", "liz" for "elizabeth", "mike" for
    "michael"); failing that, those sharing a full name with it ("katie" and "kate", both
    Katherine). [] when the word is no name of the list."""
    if not names:  # (a vault of notes: no list read)
        return []
    spelt = [n for n in _names_by_start().get(word[:3], ()) if _analyzed(n) == (word,)]
    if not spelt:
        return []
    relations = _nickname_relations()
    direct = {other for name in spelt for other in relations[name]}
    siblings = {s for other in direct for s in relations.get(other, ()) if s not in spelt}
    for ring in (direct, siblings):
        analyzed = {term for other in ring for term in _analyzed(other)}
        found = [name for name in names if name in analyzed]
        if found:
            return found
    return []
