"""When a newer note states a different value for the same thing: superseded facts.

"Billing runs on MySQL" (March) and "billing moved to PostgreSQL" (November) are two values of
one attribute of one subject; the newer one is what is true now. This module reads, offline and
without I/O, the *statements* of a sentence as (subject, attribute, value) and says when a newer
text supersedes an older one:

- relations with an attribute: "runs on / is hosted on / is deployed on" (platform), "lives in /
  is based in / is located in" (place), "works at / for" (employer), "chose X for S" (platform),
  "S's <noun> is V" and "the <noun> of/for S is V" (that noun), "S <noun> is V" for a few
  nouns that name an attribute (provider, database, deadline, manager, …);
- changes: "moved / migrated / switched / relocated (from A) to B", "joined B", "is now B",
  "no longer …" (which supersedes the same value, not a different one);
- subjects match when their words do (articles, "the team", "service" and the like left out;
  "billing" matches "billing-core"); pronouns ("she", "it") are no subject;
- values differ when their first significant words differ ("PostgreSQL 16" is "PostgreSQL").

Look-alikes are left alone: another subject (two people, two services), another attribute
("works at" vs "works on"), an additive relation ("uses", "speaks": several values hold at
once, unless the newer text says it changed), the same value again. `current_of` applies the
rule to many dated texts: an older text is superseded by the newest text about the same
subject and attribute when their values differ (A -> B -> C: A and B by C; A -> B -> A: only B).
The labelled pairs are tests/supersede_corpus.py.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

# attribute classes
PLATFORM = "platform"
PLACE = "place"
EMPLOYER = "employer"
MOVE = (PLATFORM, PLACE)  # "moved to" fits a thing's platform or a person's place

_ARTICLES = {
    "the",
    "a",
    "an",
    "our",
    "my",
    "their",
    "its",
    "his",
    "her",
    "your",
    "this",
    "that",
    "these",
    "those",
    "we",
    "i",
    "they",
    "team",
    "now",
    "currently",
    "still",
    "also",
    "new",
    "old",
    "whole",
    "entire",
}
_GENERIC = {
    "service",
    "services",
    "system",
    "app",
    "application",
    "server",
    "servers",
    "cluster",
    "stack",
    "backend",
    "frontend",
    "site",
    "project",
    "platform",
    "instance",
}
_PRONOUNS = {
    "he",
    "she",
    "it",
    "they",
    "we",
    "i",
    "you",
    "this",
    "that",
    "there",
    "which",
    "who",
    "everything",
    "everyone",
    "nothing",
    "someone",
}
_STOP_VALUE = {
    "the",
    "a",
    "an",
    "to",
    "on",
    "in",
    "at",
    "for",
    "our",
    "their",
    "its",
    "now",
    "version",
    "v",
}
#: Nouns that name an attribute when they end a subject ("our cloud provider is AWS").
ATTRIBUTE_NOUNS = {
    "provider",
    "database",
    "db",
    "deadline",
    "manager",
    "lead",
    "owner",
    "address",
    "phone",
    "number",
    "email",
    "version",
    "host",
    "hosting",
    "region",
    "timezone",
    "office",
    "language",
    "framework",
    "vendor",
    "supplier",
    "bank",
    "price",
    "plan",
    "tier",
    "budget",
    "date",
    "dentist",
    "doctor",
    "contact",
    "editor",
    "registry",
    "broker",
    "queue",
    "cdn",
    "dns",
}

_END = r"(?P<v>[^.;!?]+)"  # a value runs to the end of its sentence (cut further by _value)
_S = r"(?P<s>[\w][\w '’&/-]{0,60}?)"
_RELATIONS: list[tuple[tuple[str, ...], bool, re.Pattern[str]]] = [
    # (attributes, a change, pattern over one lower-cased sentence)
    (
        (PLATFORM,),
        False,
        re.compile(
            rf"^{_S}\s+(?:runs|is running|is run|ran|is hosted|is deployed|lives|is built|sits)\s+"
            rf"(?:on|in)\s+{_END}"
        ),
    ),
    (
        (PLACE,),
        False,
        re.compile(rf"^{_S}\s+(?:lives|is living|is based|is located|resides)\s+in\s+{_END}"),
    ),
    ((EMPLOYER,), False, re.compile(rf"^{_S}\s+(?:works|is working)\s+(?:at|for)\s+{_END}")),
    ((EMPLOYER,), True, re.compile(rf"^{_S}\s+(?:has\s+)?joined\s+{_END}")),
    (
        MOVE + (EMPLOYER,),
        True,
        re.compile(
            rf"^{_S}\s+(?:has\s+|have\s+|was\s+|were\s+|is\s+|are\s+)?(?:moved|moving|moves|"
            rf"migrated|migrating|migrates|switched|switches|switching|relocated|relocates|"
            rf"changed|transferred)\s+(?:over\s+|back\s+)?(?:from\s+(?P<old>[^.;]+?)\s+)?"
            rf"(?:back\s+)?to\s+{_END}"
        ),
    ),
    (
        MOVE,
        True,
        re.compile(
            rf"^(?:we|i|they|the team|ops|it)\s+(?:have\s+)?(?:moved|migrated|switched|"
            rf"transferred|relocated)\s+{_S}\s+(?:from\s+(?P<old>[^.;]+?)\s+)?"
            rf"(?:over\s+|back\s+)?to\s+"
            rf"{_END}"
        ),
    ),
    (
        (PLATFORM,),
        False,
        re.compile(
            rf"^(?:we\s+|i\s+)?(?:chose|picked|selected|decided on|went with|settled on|"
            rf"standardi[sz]ed on)\s+(?P<v>[^.;]+?)\s+for\s+{_S}\s*$"
        ),
    ),
]
_POSSESSIVE = re.compile(
    rf"^{_S}(?:'s|’s)\s+(?P<a>[a-z][\w -]{{0,30}}?)\s+(?:is|are|was|has become|became|"
    rf"changed to|moved to)\s+{_END}"
)
_OF = re.compile(
    rf"^(?:the\s+)?(?P<a>[a-z][\w -]{{0,30}}?)\s+(?:of|for)\s+{_S}\s+(?:is|are|was|"
    rf"has become|became|changed to|moved to)\s+{_END}"
)
_NOUN_IS = re.compile(rf"^{_S}\s+(?:is|are|has become|became|changed to|moved to)\s+{_END}")
_NOW = re.compile(
    r"\b(?:now|from (?:today|now on|monday|tuesday|wednesday|thursday|friday)|"
    r"since|instead|anymore|any more|these days|as of)\b"
)
_NO_LONGER = re.compile(
    r"\b(?:no longer|not any more|not anymore|doesn'?t|does not|isn'?t|"
    r"is not)\s+"
)
_LEAD_IN = re.compile(
    r"^(?:(?:today|yesterday|this week|last week|last night|on \w+day|"
    r"since \w+|as of [\w ]+|in \w+|finally|update|fyi|note)\s*[,:]?\s+)+"
)
_VALUE_END = re.compile(
    r"\s+(?:and|but|because|since|after|before|when|while|so|which|who|"
    r"as|for|from|with|until|in (?:january|february|march|april|may|june|"
    r"july|august|september|october|november|december|\d)|last|this|"
    r"next|on (?:mon|tue|wed|thu|fri|sat|sun)\w*|today|yesterday|"
    r"tonight|now)\b.*$"
)
_TAGS = re.compile(r"(?<![\w/&#])#[A-Za-z][\w\-/]*|<!--.*?-->")


@dataclass(frozen=True)
class Statement:
    """One (subject, attribute, value) a sentence states; `change`: it says the value changed
    ("moved to", "now"); `negated`: it says the value no longer holds."""

    subject: frozenset[str]
    attributes: tuple[str, ...]
    value: tuple[str, ...]  # the value's significant words
    change: bool
    negated: bool = False
    old: tuple[str, ...] = ()  # the value a change names as the one before ("from A to B")
    text: str = ""

    @property
    def single(self) -> bool:
        """Whether the attribute holds one value at a time (so a new value replaces the old)."""
        return True


def _words(text: str) -> list[str]:
    """Lower-cased words; a possessive stays one word ("maya's sister" is not "maya")."""
    return re.findall(r"[^\W_]+(?:[.+#][^\W_]+)*\+*(?:['’]s\b)?", text.lower().replace("’", "'"))


def _subject(text: str) -> frozenset[str] | None:
    words = [w for w in _words(text) if w not in _ARTICLES]
    if not words or (len(words) == 1 and words[0] in _PRONOUNS):
        return None
    if any(w in _PRONOUNS for w in words[:1]) and len(words) == 1:
        return None
    kept = [w for w in words if w not in _GENERIC] or words
    return frozenset(kept)


def _value(text: str) -> tuple[str, ...]:
    text = _VALUE_END.sub("", " " + text.strip()).strip()
    text = re.split(r"[,;:()—–]| - ", text)[0]
    words = [w for w in _words(text) if w not in _STOP_VALUE]
    return tuple(words[:3])


def _sentences(text: str) -> list[str]:
    flat = " ".join(_TAGS.sub(" ", text).split())
    flat = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", flat)
    return [s.strip() for s in re.split(r"(?<=[.!?;])\s+", flat) if s.strip()]


@functools.lru_cache(maxsize=4096)
def statements(text: str) -> tuple[Statement, ...]:
    """The statements of `text` (a note, an entry: several sentences)."""
    found: list[Statement] = []
    for sentence in _sentences(text):
        lowered = sentence.lower().rstrip(".!?; ")
        lowered = _LEAD_IN.sub("", lowered)
        now = bool(_NOW.search(lowered))
        negated = bool(_NO_LONGER.search(lowered))
        plain = _NO_LONGER.sub("", lowered)
        plain = re.sub(r"\b(?:now|currently|still|also|already|finally)\s+", "", plain)
        found.extend(_read(plain, now, negated, sentence))
    return tuple(found)


def _read(sentence: str, now: bool, negated: bool, original: str) -> list[Statement]:
    out: list[Statement] = []
    for pattern in (_POSSESSIVE, _OF):
        m = pattern.search(sentence)
        if m is None:
            continue
        attribute = " ".join(w for w in _words(m["a"]) if w not in _ARTICLES)
        subject, value = _subject(m["s"]), _value(m["v"])
        if subject and value and attribute:
            out.append(
                Statement(
                    subject,
                    (attribute,),
                    value,
                    now or "changed" in sentence,
                    negated,
                    (),
                    original,
                )
            )
            return out
    for attributes, change, pattern in _RELATIONS:
        m = pattern.search(sentence)
        if m is None:
            continue
        subject, value = _subject(m["s"]), _value(m["v"])
        if subject and value:
            old = _value(m["old"]) if "old" in m.groupdict() and m["old"] else ()
            out.append(Statement(subject, attributes, value, change or now, negated, old, original))
        return out
    m = _NOUN_IS.search(sentence)
    if m is not None:
        words = [w for w in _words(m["s"]) if w not in _ARTICLES]
        if len(words) >= 2 and words[-1] in ATTRIBUTE_NOUNS:
            subject, value = frozenset(words[:-1]), _value(m["v"])
            if value:
                out.append(Statement(subject, (words[-1],), value, now, negated, (), original))
    return out


def same_subject(a: frozenset[str], b: frozenset[str]) -> bool:
    """Subjects match when one's words hold the other's ("billing" and "billing core")."""
    return bool(a) and bool(b) and (a <= b or b <= a)


def same_value(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Values match when one's words begin the other's ("postgresql 16" is "postgresql";
    "postgresql 14" is not "postgresql 16")."""
    n = min(len(a), len(b))
    return n > 0 and a[:n] == b[:n]


@dataclass(frozen=True)
class Supersession:
    """Why a newer text supersedes an older one."""

    older: Statement
    newer: Statement

    @property
    def reason(self) -> str:
        subject = " ".join(sorted(self.newer.subject))
        attribute = next(a for a in self.newer.attributes if a in self.older.attributes)
        if self.newer.negated:
            return f"{subject}: {attribute} no longer {' '.join(self.older.value)}"
        return (
            f"{subject}: {attribute} {' '.join(self.older.value)} -> {' '.join(self.newer.value)}"
        )


def supersedes(newer: str, older: str) -> Supersession | None:
    """Whether `newer` (the later text) states a different value for a subject and attribute
    `older` states (or says that value no longer holds), and by which statements; None for
    look-alikes."""
    for new in statements(newer):
        for old in statements(older):
            if not same_subject(new.subject, old.subject):
                continue
            if not set(new.attributes) & set(old.attributes):
                continue
            if new.negated:
                if same_value(new.value, old.value):
                    return Supersession(old, new)
                continue
            if old.negated or same_value(new.value, old.value):
                continue
            if new.old and not same_value(new.old, old.value):
                continue  # "moved from A to B" does not supersede "runs on C"
            return Supersession(old, new)
    return None


@dataclass(frozen=True)
class Dated:
    """A text with its date and an id (a search hit, a MEMORY.md entry, a daily-log item)."""

    id: str
    date: dt.date
    text: str


def current_of(texts: Sequence[Dated]) -> dict[str, tuple[str, Supersession]]:
    """id of each superseded text -> (id of the text that holds now, why). An older text is
    superseded by the newest text about its subject and attribute when their values differ:
    in A -> B -> C, A and B by C; in A -> B -> A, only B (the first A holds again)."""
    ordered = sorted(texts, key=lambda t: t.date)
    out: dict[str, tuple[str, Supersession]] = {}
    for i, old in enumerate(ordered):
        latest: tuple[Dated, Supersession | None] | None = None
        for new in ordered[i + 1 :]:
            if new.date <= old.date:
                continue
            found = supersedes(new.text, old.text)
            if found is not None:
                latest = (new, found)
            elif _restates(new.text, old.text):
                latest = (new, None)
        if latest is not None and latest[1] is not None:
            out[old.id] = (latest[0].id, latest[1])
    return out


def _restates(newer: str, older: str) -> bool:
    """Whether `newer` states the same value as `older` for one of its subjects and
    attributes (a reversal back to it)."""
    for new in statements(newer):
        for old in statements(older):
            if (
                same_subject(new.subject, old.subject)
                and set(new.attributes) & set(old.attributes)
                and not new.negated
                and same_value(new.value, old.value)
            ):
                return True
    return False


# -- search hits --------------------------------------------------------------------------------

SUPERSEDED_BY = re.compile(r"<!--\s*superseded-by:\s*(\S+?)\s*-->")
_SOURCE_DATE = re.compile(r"<!--\s*src:[^>]*?(\d{4}-\d\d-\d\d)")


class _HitLike(Protocol):
    path: str
    start_line: int
    text: str
    date: str | None
    superseded_by: str | None


H = TypeVar("H", bound=_HitLike)


def text_date(text: str, date: str | None) -> dt.date | None:
    """The date a hit's text speaks for: its own (a daily log's), else the newest source its
    `<!-- src: … -->` comments name (a MEMORY.md entry), else None."""
    found = [date] if date else _SOURCE_DATE.findall(text)
    days = []
    for day in found:
        try:
            days.append(dt.date.fromisoformat(day))
        except ValueError:
            continue
    return max(days, default=None)


def order_superseded(hits: list[H]) -> list[H]:
    """`hits` (best first) with what is true now first: a hit that another, newer hit
    supersedes gets `superseded_by` ("path#Lline" of the newer one) and the newer one moves up
    to just before it; a MEMORY.md entry a dream marked superseded carries its mark. Nothing
    else moves. A post-step on the ranked hits (the ranking itself is untouched)."""
    for hit in hits:
        marked = SUPERSEDED_BY.search(hit.text)
        if marked:
            hit.superseded_by = marked[1]
    dated = [
        Dated(str(i), day, SUPERSEDED_BY.sub(" ", h.text))
        for i, h in enumerate(hits)
        if (day := text_date(h.text, h.date)) is not None
    ]
    if len(dated) < 2:
        return hits
    found = current_of(dated)
    if not found:
        return hits
    order = list(range(len(hits)))
    for old, (new, _) in sorted(found.items(), key=lambda kv: int(kv[0])):
        old_i, new_i = int(old), int(new)
        hits[old_i].superseded_by = f"{hits[new_i].path}#L{hits[new_i].start_line}"
        if order.index(new_i) > order.index(old_i):
            order.remove(new_i)
            order.insert(order.index(old_i), new_i)
    return [hits[i] for i in order]
