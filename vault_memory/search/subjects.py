"""Subject keys: who or what a sentence is about, which of its attributes it states, and the
value it gives, read offline (no model) from the words: "Zoë Okafor: product manager for
invoicing" is `zoë okafor / role = product manager invoicing`; "the billing database runs on
PostgreSQL 16" is `billing / database = postgresql 16`; "standup moved to 10:00" is
`standup / time = 10:00`.

A newer value supersedes an older one only when the keys match and the values differ; the same
value again is a duplicate. So the reading is strict where it matters:

- subjects match when their words are the same, after articles, possessive determiners and a
  few generic nouns ("service", "team", "app") are left out: "the EU billing database" is not
  "the US billing database", and neither is "the billing database" (siblings never collide);
  a person named by first name alone is the same person as the full name that begins with it
  ("Zoë" and "Zoë Okafor");
- attributes come from the relation (a verb or a noun): "runs on / is hosted on" (platform),
  "lives in / is based in / moved to" (a person's place), "works at / joined / left A for B"
  (employer), "is a / works as / was promoted to / took over as" + a role noun (role), "reports
  to" / "X is S's manager" (manager), "owns / is owned by / is run by" (owner), "S's <noun> is
  V" and "the <noun> of S is V" (that noun), "S: V" labels (the noun ending the label, or the
  kind of value: a role, a phone number, an e-mail address), and for meetings and deadlines the
  kind of value a verb gives ("is at 09:30" time, "is on Tuesdays" day, "was pushed to 12
  March" date);
- a change ("moved / migrated / switched / changed (from A) to B", "is now", "no longer") may
  fit several attributes; it meets an older statement on one of them, and "from A" must name
  the older value;
- additive relations ("uses", "speaks", "likes", "has") state no key: several values hold.

`read_facts(text)` gives every fact of a text (several sentences); `relation(new, old)` says
whether a newer fact restates an older one ("same") or replaces it ("differs"). Pure: text in,
facts out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# -- attributes ----------------------------------------------------------------------------------

ROLE = "role"
EMPLOYER = "employer"
PLACE = "place"
PLATFORM = "platform"
IS = "is"  # a thing identified by a name: "the queue is RabbitMQ"
TIME = "time"
DAY = "day"
DATE = "date"
PRICE = "price"
OWNER = "owner"
MANAGER = "manager"
PHONE = "phone"
EMAIL = "email"
NAME = "name"
TEAM = "team"

#: What a change of a thing ("moved to", "migrated to", "is now") may change.
THING_MOVE = frozenset({PLATFORM, IS, PLACE})

#: Nouns that name an attribute, and the attribute they name (several words first).
ATTRIBUTE_WORDS: dict[str, str] = {
    "job title": ROLE,
    "title": ROLE,
    "role": ROLE,
    "job": ROLE,
    "position": ROLE,
    "employer": EMPLOYER,
    "company": EMPLOYER,
    "workplace": EMPLOYER,
    "phone number": PHONE,
    "mobile number": PHONE,
    "cell number": PHONE,
    "telephone number": PHONE,
    "phone": PHONE,
    "mobile": PHONE,
    "number": PHONE,
    "telephone": PHONE,
    "e-mail address": EMAIL,
    "email address": EMAIL,
    "e-mail": EMAIL,
    "email": EMAIL,
    "mail": EMAIL,
    "line manager": MANAGER,
    "manager": MANAGER,
    "boss": MANAGER,
    "supervisor": MANAGER,
    "owner": OWNER,
    "maintainer": OWNER,
    "start time": TIME,
    "time": TIME,
    "day": DAY,
    "weekday": DAY,
    "launch date": DATE,
    "release date": DATE,
    "date": DATE,
    "due date": "deadline",
    "price": PRICE,
    "cost": PRICE,
    "fee": PRICE,
    "rate": PRICE,
    "name": NAME,
    "database": "database",
    "db": "database",
    "hosting": PLATFORM,
    "host": PLATFORM,
    "platform": PLATFORM,
    "home town": PLACE,
    "hometown": PLACE,
    "city": PLACE,
    "address": "address",
    "home address": "address",
    "team": TEAM,
    "birthday": "birthday",
    "date of birth": "birthday",
    "favourite": "favourite",
}
#: Nouns that end a thing's name and say which of its attributes a sentence gives ("our cloud
#: provider is AWS": cloud / provider); with a system noun, "runs on" states that attribute.
ATTRIBUTE_NOUNS = _set(
    """
    provider database db deadline manager lead owner address phone email version host
    hosting region timezone language framework vendor supplier bank price plan tier
    budget date dentist doctor contact editor registry broker queue cdn dns cache
    runtime os orm time day venue location room
    """
)
#: Of those, the nouns of systems: "the billing database runs on X" gives billing / database.
SYSTEM_NOUNS = _set(
    """
    database db queue broker cache cdn dns host registry runtime framework orm os
    provider
    """
)
#: People someone has: "Henrik is Maya's manager" gives maya / manager = henrik.
PERSON_RELATIONS = _set(
    """
    manager boss lead mentor dentist doctor gp therapist accountant lawyer landlord
    partner contact buddy owner maintainer
    """
)
#: Nouns that make a noun phrase a role ("head of product", "a staff engineer").
ROLE_NOUNS = _set(
    """
    accountant admin administrator advisor analyst architect assistant associate author
    cto ceo cfo coo cio ciso cpo vp svp evp chair chairman chairwoman chief coach
    consultant contractor coordinator counsel designer developer dev devops director
    doctor editor engineer executive founder cofounder co-founder head intern lead
    lawyer lecturer manager marketer mentor nurse officer operator owner partner
    physician pm po president principal producer professor programmer recruiter
    representative researcher scientist secretary specialist sre steward strategist
    student supervisor teacher tester trainee treasurer tutor writer maintainer reviewer
    scrum senior junior freelancer apprentice technician pharmacist paralegal chef
    barista translator
    """
)
_GENERIC = _set(
    """
    service services system app application server servers cluster stack site project
    instance team meeting call sync
    """
)
_ARTICLES = _set(
    """
    the a an our my their its his her your this that these those whole entire current
    new old daily weekly monthly
    """
)
_PRONOUNS = _set(
    """
    he she it they we you this that there which who everything everyone nothing someone
    something anyone one both all here what each none
    """
)
_STOP_VALUE = _set(
    """
    the a an to on in at of for our their its his her my now version v new same
    currently
    """
)
#: Spellings of one value ("Postgres" is PostgreSQL): a restatement is not a new value.
VALUE_ALIASES = {
    "postgres": "postgresql",
    "pg": "postgresql",
    "psql": "postgresql",
    "k8s": "kubernetes",
    "gcp": "google",
    "js": "javascript",
    "ts": "typescript",
    "py": "python",
    "mongo": "mongodb",
    "es": "elasticsearch",
    "gh": "github",
    "aws": "aws",
}

# -- values and their kinds ------------------------------------------------------------------------

_WEEKDAY = (
    r"(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?s?\.?"
    r"|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
)
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_TIME_RE = re.compile(
    r"^(?:(?:at|from|by|around|about)\s+)?(?P<h>[01]?\d|2[0-3])(?:[:.h](?P<m>[0-5]\d))?\s*"
    r"(?P<ampm>a\.?m\.?|p\.?m\.?)?(?:\s*(?:cet|cest|utc|gmt|[a-z]{2,4}t))?$",
    re.I,
)
_DAY_RE = re.compile(
    rf"^(?:(?:on|every|each)\s+)?(?P<d>{_WEEKDAY})(?:\s+and\s+({_WEEKDAY}))?$", re.I
)
_DATE_RE = re.compile(
    rf"^(?:(?:on|by|for|until|till)\s+)?(?:(?:{_WEEKDAY})\s*,?\s+)?(?:"
    rf"(?P<iso>\d{{4}}-\d\d-\d\d)|(?P<d1>[0-3]?\d)(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<m1>{_MONTH})"
    rf"(?:,?\s+(?P<y1>\d{{4}}))?|(?P<m2>{_MONTH})\s+(?P<d2>[0-3]?\d)(?:st|nd|rd|th)?"
    rf"(?:,?\s+(?P<y2>\d{{4}}))?)$",
    re.I,
)
_MONEY_RE = re.compile(r"[€$£¥]\s?\d|\d\s?(?:€|\$|£|eur|usd|gbp|sek|nok|dkk|kr)\b", re.I)
_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE_RE = re.compile(r"^\+?\d[\d \-().]{6,}\d$")

_WORD = re.compile(r"[^\W_]+(?:[.+#@/-][^\W_]+)*\+*(?:['’]s\b)?")


def _words(text: str) -> list[str]:
    """Lower-cased words; a possessive stays one word ("maya's sister" is not "maya")."""
    return _WORD.findall(text.lower().replace("’", "'"))


def value_kind(text: str) -> str | None:
    """The kind of a value when its words say it: time, day, date, price, email, phone."""
    flat = " ".join(text.strip().strip(".,;:!?()").split())
    if not flat:
        return None
    if _EMAIL_RE.fullmatch(flat):
        return EMAIL
    if _PHONE_RE.match(flat) and sum(c.isdigit() for c in flat) >= 7:
        return PHONE
    if _MONEY_RE.search(flat) and len(flat.split()) <= 6:
        return PRICE
    if _DATE_RE.match(flat):
        return DATE
    if _DAY_RE.match(flat):
        return DAY
    match = _TIME_RE.match(flat)
    if match and (match["m"] or match["ampm"] or flat.lower().startswith(("at ", "from "))):
        return TIME
    return None


def leading_value(text: str) -> tuple[str | None, str]:
    """The kind of the value `text` begins with, and those words ("9:30 on weekdays": time,
    "9:30"); (None, text) when it begins with no value of a known kind."""
    words = text.strip().split()
    for n in range(min(len(words), 6), 0, -1):
        head = " ".join(words[:n])
        kind = value_kind(head)
        if kind is not None:
            return kind, head
    return None, text


def _normal_time(text: str) -> tuple[str, ...] | None:
    match = _TIME_RE.match(" ".join(text.strip().strip(".,;:!?()").split()))
    if not match:
        return None
    hour, minute = int(match["h"]), int(match["m"] or 0)
    ampm = (match["ampm"] or "").replace(".", "").lower()
    if ampm == "pm" and hour < 12:
        hour += 12
    if ampm == "am" and hour == 12:
        hour = 0
    return (f"{hour:02d}:{minute:02d}",)


def _normal_day(text: str) -> tuple[str, ...] | None:
    match = _DAY_RE.match(" ".join(text.strip().strip(".,;:!?()").split()))
    if not match:
        return None
    return tuple(sorted({d.lower()[:3] for d in match.groups() if d}))


# -- facts -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """One value a sentence gives one attribute of one subject."""

    subject: tuple[str, ...]  # its words, lower-cased, articles and generic nouns left out
    attributes: frozenset[str]  # one for a relation; several for a change ("moved to")
    value: tuple[str, ...]  # the value's significant words (a time as "10:00", a day as "tue")
    change: bool = False  # said as a change ("moved to", "now", "no longer")
    negated: bool = False  # says the value no longer holds
    old: tuple[str, ...] = ()  # the earlier value a change names ("from A to B")
    person: bool = False  # the subject is a person's name (a first name matches the full name)
    text: str = ""  # the sentence it was read from

    @property
    def attribute(self) -> str:
        return "|".join(sorted(self.attributes))

    @property
    def key(self) -> str:
        """The subject key as people read it: "zoë okafor / role"."""
        return f"{' '.join(self.subject)} / {self.attribute}"


def same_subject(a: Fact, b: Fact) -> bool:
    """The same who or what: the same words, or a person's first name and a full name that
    begins with it. Never a subset of words ("billing" is not "eu billing")."""
    if a.subject == b.subject:
        return bool(a.subject)
    if a.person and b.person:
        short, long = sorted((a.subject, b.subject), key=len)
        return len(short) == 1 and long[: len(short)] == short
    return False


def _aliased(value: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(VALUE_ALIASES.get(w, w) for w in value)


def same_value(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Values match when one's words begin the other's ("postgresql 16" is "postgresql";
    "postgresql 14" is not "postgresql 16") or hold all of the other's."""
    a, b = _aliased(a), _aliased(b)
    n = min(len(a), len(b))
    if n == 0:
        return False
    if a[:n] == b[:n]:
        return True
    short, long = sorted((a, b), key=len)
    return set(short) <= set(long) and not any(w[0].isdigit() for w in set(long) - set(short))


def meets(new: Fact, old: Fact) -> bool:
    """Whether two facts are about the same subject and attribute (one key)."""
    if not same_subject(new, old):
        return False
    if new.attributes & old.attributes:
        return True
    # "the queue is RabbitMQ" and "the queue runs on Kafka": a thing's name is its platform
    return bool({IS, PLATFORM} >= (new.attributes | old.attributes) - {PLACE})


def relation(new: Fact, old: Fact) -> str | None:
    """ "same" when `new` restates `old`'s value, "differs" when it gives that key another value
    (or says the old one no longer holds), None when they are about different keys."""
    if not meets(new, old):
        return None
    if new.negated:
        return "differs" if same_value(new.value, old.value) else None
    if old.negated:
        return None
    if same_value(new.value, old.value):
        if new.change and _aliased(new.value) != _aliased(old.value) and not new.old:
            return "differs"  # "moved to Kotlin Multiplatform" after "built with Kotlin"
        return "same"
    if new.old and not same_value(new.old, old.value):
        return None  # "moved from A to B" does not replace "runs on C"
    return "differs"


# -- reading ---------------------------------------------------------------------------------------

_TAGS = re.compile(r"(?<![\w/&#])#[A-Za-z][\w\-/]*|<!--.*?-->|\s\^[A-Za-z0-9-]+\s*$|\*\*|__|`")
_ABBREVIATIONS = re.compile(
    r"\b(?:dr|mr|mrs|ms|prof|st|vs|etc|e\.g|i\.e|approx|no|inc|ltd)\.$", re.I
)
_LEAD_IN = re.compile(
    r"^(?:(?:correction|corrected|update|updated|fyi|note|heads[- ]up|reminder|news|good news|"
    r"psa|btw|by the way|oh and|also|so|ok so|okay so|quick update|actually|in fact|"
    r"just so you know|as of (?:today|now|this week|monday|[\w ]{1,20})|from now on|"
    r"starting (?:today|tomorrow|next \w+|this \w+|on \w+|[\w ]{1,20})|since \w+(?: \w+)?|"
    r"today|yesterday|tomorrow|tonight|this (?:morning|week|month)|last (?:week|night|month)|"
    r"on \w+day|from (?:today|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"next \w+|now on|this \w+)|recently|lately|finally|officially|"
    r"effective (?:today|immediately|now)|decision|decided|changed plan|new plan|plan|i think|"
    r"i heard(?: that)?|apparently|it turns out(?: that)?|"
    r"[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)? (?-i:told me|said|mentioned|says|confirmed)(?: that)?)"
    r"\s*[,:;\u2013\u2014-]?\s+)+",
    re.I,
)
_HEDGE = re.compile(r"\b(?:now|currently|still|also|already|finally|officially|actually)\s+", re.I)
_NO_LONGER = re.compile(
    r"\b(?:no longer|not any ?more|doesn'?t|does not|don'?t|isn'?t|is not|aren'?t|are not|"
    r"won'?t|will not)\s+",
    re.I,
)
_NEGATION_TAIL = re.compile(r"\b(?:any ?more|any longer)\b", re.I)
_NOW = re.compile(
    r"\b(?:now|from (?:today|now on|next \w+|monday|tuesday|wednesday|thursday|friday)|since|"
    r"instead|anymore|any more|these days|as of|from now|going forward|starting)\b",
    re.I,
)
_NOT_VALUE = re.compile(r",?\s+(?:not|instead of|rather than)\s+(?P<old>[^.;,!?]+)", re.I)
_VALUE_END = re.compile(
    r"\s+(?:and|but|because|since|after|before|when|while|so|which|who|whose|where|as|with|"
    r"from|until|till|though|although|if|unless|thanks|due|per|starting|effective|instead|"
    r"in (?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|\d{4})|last|this|next|today|yesterday|tonight|tomorrow|now|anymore|"
    r"any more|again|again|for (?:now|the|a|good|\d)|over the|during)\b.*$",
    re.I,
)

_S = r"(?P<s>[^\W_][\w .'’&/+@-]{0,60}?)"
_V = r"(?P<v>(?:[^.;!?]|\.(?=\w))+)"  # to the end of the sentence; "9.30", "5.7" stay whole


_ABBREVIATION_DOT = re.compile(r"\b(dr|mr|mrs|ms|prof|st|vs|approx|inc|ltd|jr|sr)\.(?=\s)", re.I)


def _sentences(text: str) -> list[str]:
    flat = " ".join(_TAGS.sub(" ", text).split())
    flat = _ABBREVIATION_DOT.sub(r"\1", flat)
    flat = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", flat)
    out: list[str] = []
    start = 0
    for match in re.finditer(r"[.!?;]\s+", flat):
        end = match.start() + 1
        piece = flat[start:end]
        if (
            _ABBREVIATIONS.search(piece)
            or re.search(r"\d\.$", piece)
            and flat[match.end() :][:1].isdigit()
        ):
            continue
        out.append(piece.strip())
        start = match.end()
    out.append(flat[start:].strip())
    return [s for s in out if s]


#: Words that never stand inside a subject's name: verbs, conjunctions, pronouns of the
#: speaker ("I set up a charity run", "losing my job", "what got you").
_NOT_IN_SUBJECT = _set(
    """
    and but or so that which who whom what how why where when because if while since
    than is are was were be been being am has have had do does did got get gets set went
    go goes made make think know feel felt just really i me my we us our you your it's
    i'm i've we're we've they're there's let's can could would should will shall may
    might must not no very much many lot lots some any every kind sort thing things way
    """
)


_AFTER_GERUND = _set(
    "for of my a an the to with in on up out our your his her their me us them it this that"
)


def _noun_phrase(words: list[str], raw: str) -> bool:
    """Whether the words can name who or what a fact is about: up to five words, none a verb,
    a conjunction or a speaker's pronoun, not opening with a gerund ("taking care of…")."""
    if not words or len(words) > 5:
        return False
    if len(words) > 1 and any(w in _NOT_IN_SUBJECT for w in words):
        return False
    said = raw.lower().split()
    return not (
        len(said) > 1 and said[0].endswith("ing") and said[1] in _AFTER_GERUND
    )  # "losing my job", "searching for a studio"; not "billing database"


_SUBJECT_END = re.compile(
    r"\s+(?:after|because|since|following|when|while|as of|from|starting|until|due to|"
    r"thanks to|last|this|next|today|yesterday|now)\b.*$",
    re.I,
)


def _clean_subject(text: str, tail: int = 0) -> tuple[tuple[str, ...], bool] | None:
    """The subject's words (articles and generic nouns left out) and whether it names a
    person (up to three capitalised words, as a name is written, none a noun that names a
    thing or an attribute); None for a pronoun or nothing."""
    raw = _SUBJECT_END.sub("", text).strip(" ,:;-—–\"'“”‘’")
    words = [w for w in _words(raw) if w not in _ARTICLES]
    if tail:  # the attribute noun that ends it ("the release deadline"): not the subject
        words = words[:-tail]
        raw = " ".join(raw.split()[:-tail])
    if not _noun_phrase(words, raw):
        return None
    words = [w[:-2] if w.endswith("'s") else w for w in words]
    if not words or all(w in _PRONOUNS or w == "i" for w in words):
        if words == ["i"]:
            return ("i",), True  # the one who wrote it: matches only "I" again
        return None
    if len(words) > 6:
        return None
    originals = [w for w in re.findall(r"[^\W\d_][\w'’-]*", raw) if w.lower() not in _ARTICLES]
    person = (
        0 < len(originals) <= 3
        and len(originals) == len(words)
        and all(
            w[:1].isupper()
            and not w.isupper()
            and w.lower() not in _GENERIC | SYSTEM_NOUNS | ATTRIBUTE_NOUNS | set(ATTRIBUTE_WORDS)
            for w in originals
        )
    )
    kept = [w for w in words if w not in _GENERIC] or words
    return tuple(kept), person


def _clause(text: str) -> str:
    """A value's words up to the end of its clause ("PostgreSQL 16 since the migration")."""
    cut = _VALUE_END.sub("", text.strip()).strip()  # never from the first word on
    return re.split(r"[;()—–]|:\s| - |,\s+(?!\d{4}\b)", cut)[0].strip()


def _value(text: str, kind: str | None = None) -> tuple[str, ...]:
    """A value's significant words (cut at the end of its clause), or its normal form for a
    time or a day."""
    cut = _clause(text)
    found, head = leading_value(cut)
    kind = kind or found
    if kind == TIME and (normal := _normal_time(head)):
        return normal
    if kind == DAY and (normal := _normal_day(head)):
        return normal
    if kind in (EMAIL, PHONE):
        return (re.sub(r"[\s().-]", "", head.lower()),)
    words = [VALUE_ALIASES.get(w, w) for w in _words(cut) if w not in _STOP_VALUE]
    return tuple(words[:4])


def split_noun(words: list[str]) -> tuple[list[str], str | None]:
    """A thing's name and the attribute noun ending it ("release deadline": release /
    deadline; "Tomás phone number": tomás / phone), or (words, None)."""
    if len(words) >= 3 and " ".join(words[-2:]) in ATTRIBUTE_WORDS:
        return words[:-2], ATTRIBUTE_WORDS[" ".join(words[-2:])]
    if len(words) >= 2 and (words[-1] in ATTRIBUTE_WORDS or words[-1] in ATTRIBUTE_NOUNS):
        return words[:-1], ATTRIBUTE_WORDS.get(words[-1], words[-1])
    return words, None


def _attribute_of(words: Iterable[str]) -> str | None:
    phrase = " ".join(words)
    if phrase in ATTRIBUTE_WORDS:
        return ATTRIBUTE_WORDS[phrase]
    tail = phrase.split()[-1:] if phrase else []
    if tail and tail[0] in ATTRIBUTE_WORDS:
        return ATTRIBUTE_WORDS[tail[0]]
    return phrase or None


def _is_role(value: str) -> bool:
    return any(w.strip("'") in ROLE_NOUNS for w in _words(value)[:6])


def _split_attribute(
    subject: tuple[str, ...], attributes: frozenset[str]
) -> tuple[tuple[str, ...], frozenset[str]]:
    """ "the billing database runs on X": billing / database. A subject ending with a system
    noun names that attribute of what comes before it."""
    if len(subject) > 1 and subject[-1] in SYSTEM_NOUNS and attributes & {PLATFORM, IS, PLACE}:
        noun = ATTRIBUTE_WORDS.get(subject[-1], subject[-1])
        return subject[:-1], frozenset({noun})
    return subject, attributes


@dataclass(frozen=True)
class _Rule:
    """One sentence form: its pattern, the attributes it gives (None: from the value's kind or
    the noun it names), whether it says a change, and whether its subject is a person."""

    pattern: re.Pattern[str]
    attributes: frozenset[str] | None
    change: bool = False
    person: bool | None = None  # True: a person's relation (moved to = place)


def _rule(pattern: str, attributes: Iterable[str] | None, change: bool = False) -> _Rule:
    return _Rule(
        re.compile(pattern, re.I), frozenset(attributes) if attributes is not None else None, change
    )


_BE = r"(?:is|am|are|was|were|'s|will be|has been|have been|became|has become|becomes|gets|got)"
_CHANGE_VERB = (
    r"(?:moved|moving|moves|migrated|migrating|migrates|switched|switching|switches|"
    r"changed|changes|relocated|relocates|relocating|transferred|shifted|"
    r"got moved|was moved|has moved|have moved|was switched|was migrated|has been moved|"
    r"has been migrated|has switched|has migrated|is moving|are moving)"
)
_RESCHEDULE = (
    r"(?:moved|pushed(?: back)?|postponed|rescheduled|shifted|brought forward|"
    r"pulled (?:in|forward)|"
    r"delayed|changed|bumped|slipped|slips|moves|pushed out|was moved|has moved|got moved|"
    r"got pushed|was pushed|has been pushed|has been moved|has been postponed|was postponed|"
    r"was rescheduled|has been rescheduled|is moving|will move)"
)
_WHEN_VERB = (
    r"(?:is|are|was|starts|start|started|begins|begin|happens|happen|takes place|take place|"
    r"runs|run|meets|meet|is held|are held|is scheduled|are scheduled|is planned|is booked|"
    r"is set|is due|are due|ends|closes|opens|kicks off|goes live|launches|ships|lands|"
    r"will be|will start|will happen|is now|are now)"
)

_RULES: list[_Rule] = [
    # "S reports to V": S's manager
    _rule(
        rf"^{_S}\s+(?:reports|report|now reports|will report|has reported|reported)\s+"
        rf"(?:directly\s+)?to\s+{_V}",
        {MANAGER},
    ),
    # "S works as V", promotions: a role
    _rule(
        rf"^{_S}\s+(?:works|work|is working|am working|has worked|worked)\s+as\s+"
        rf"(?:an?\s+|the\s+)?{_V}",
        {ROLE},
    ),
    _rule(
        rf"^{_S}\s+(?:was|has been|got|is being|will be)\s+(?:promoted|appointed|named|made|hired"
        rf"|elected|moved up)\s+(?:to\s+|as\s+)?(?:an?\s+|the\s+)?{_V}",
        {ROLE},
        change=True,
    ),
    _rule(
        rf"^{_S}\s+(?:took over|takes over|has taken over|stepped (?:up|in)|steps (?:up|in)|"
        rf"started|starts|is starting|began|will start)\s+as\s+(?:an?\s+|the\s+)?{_V}",
        {ROLE},
        change=True,
    ),
    # employer
    _rule(
        rf"^{_S}\s+(?:works|work|is working|am working|has worked|is employed|am employed|"
        rf"has been working|have been working)\s+"
        rf"(?:at|for)\s+{_V}",
        {EMPLOYER},
    ),
    _rule(rf"^{_S}\s+is employed by\s+{_V}", {EMPLOYER}),
    _rule(
        rf"^{_S}\s+(?:left|quit|has left)\s+(?P<old>[^.;,]+?)\s+"
        rf"(?:to join|for|and joined|to go to)\s+{_V}",
        {EMPLOYER},
        change=True,
    ),
    _rule(
        rf"^{_S}\s+(?:has\s+|have\s+|just\s+)?(?:joined|started at|started a new job at|"
        rf"starts at|is starting at|will start at|will join|is joining|signed with|"
        rf"accepted an offer from|took a job at|got a job at|moved jobs to|switched jobs to)\s+"
        rf"(?P<v>(?-i:[A-Z])[^.;!?]*)",
        {EMPLOYER},
        change=True,
    ),
    _rule(
        rf"^{_S}\s+(?:has\s+)?(?:joined|moved to|switched to|transferred to)\s+the\s+"
        rf"(?P<v>[\w -]+?)\s+(?:team|squad|group)\b",
        {TEAM},
        change=True,
    ),
    _rule(
        rf"^{_S}\s+(?:is|are)\s+(?:on|in)\s+the\s+(?P<v>[\w -]+?)\s+(?:team|squad|group)\b", {TEAM}
    ),
    # where a person lives
    _rule(
        rf"^{_S}\s+(?:lives|live|is living|am living|has lived|have lived|lived|is based|"
        rf"am based|are based|is located|resides|is settled|"
        rf"has settled|settled|is staying|stays|is now living)\s+in\s+{_V}",
        {PLACE},
    ),
    _rule(
        rf"^{_S}\s+(?:has\s+|have\s+|just\s+)?(?:relocated|moved house|moved home|moved back|"
        rf"is relocating|will relocate|is moving house)\s+(?:back\s+)?"
        rf"(?:from\s+(?P<old>[^.;]+?)\s+)?"
        rf"(?:to|into)\s+{_V}",
        {PLACE},
        change=True,
    ),
    # a thing's platform
    _rule(
        rf"^{_S}\s+(?:runs|is running|is run|ran|is hosted|are hosted|is deployed|are deployed|"
        rf"gets deployed|is built|are built|sits|lives|is served|is stored|are stored|"
        rf"is written|was written|is implemented|run|are running)\s+(?:on|in|at|with|by|to)\s+{_V}",
        {PLATFORM},
    ),
    _rule(rf"^{_S}\s+(?:is|are)\s+(?:powered|backed)\s+by\s+{_V}", {PLATFORM}),
    # owners
    _rule(
        rf"^{_S}\s+(?:is|are|was)\s+(?:owned|run|led|maintained|managed|looked after)\s+by\s+{_V}",
        {OWNER},
    ),
    # times, days and dates: the kind of the value decides
    _rule(
        rf"^{_S}\s+(?:has\s+been\s+|have\s+been\s+|was\s+|were\s+|is\s+being\s+|got\s+)?{_RESCHEDULE}\s+"
        rf"(?:back\s+|out\s+|forward\s+)?(?:from\s+(?P<old>[^.;]+?)\s+)?(?:to|until|till|for|into)\s+{_V}",
        None,
        change=True,
    ),
    _rule(
        rf"^{_S}\s+{_WHEN_VERB}\s+(?P<v>(?:at|on|every|each|by|for|from)\s+(?:[^.;!?]|\.(?=\w))+)",
        None,
    ),
    # prices
    _rule(rf"^{_S}\s+(?:costs|cost|is priced at|goes for|sells for|charges)\s+{_V}", {PRICE}),
    # names
    _rule(rf"^{_S}\s+(?:is|are|was)\s+(?:called|named|renamed(?: to)?)\s+{_V}", {NAME}),
    # changes of a thing: "S moved / migrated / switched (from A) to B"
    _rule(
        rf"^{_S}\s+(?:has\s+|have\s+|was\s+|were\s+|is\s+|are\s+|got\s+)?{_CHANGE_VERB}\s+"
        rf"(?:over\s+|back\s+|across\s+)?(?:from\s+(?P<old>[^.;]+?)\s+)?(?:back\s+|over\s+)?(?:to|onto|into)\s+{_V}",
        THING_MOVE,
        change=True,
    ),
    _rule(
        rf"^(?:we|i|they|the team|ops|it|he|she|[A-Z][\w'’-]+)\s+"
        rf"(?:have\s+|has\s+|just\s+|finally\s+)?"
        rf"(?:moved|migrated|switched|transferred|relocated|ported|converted|changed|upgraded|"
        rf"downgraded|rewrote|rebuilt|put)\s+{_S}\s+(?:over\s+)?(?:from\s+(?P<old>[^.;]+?)\s+)?"
        rf"(?:over\s+|back\s+)?(?:to|onto|into)\s+{_V}",
        THING_MOVE,
        change=True,
    ),
    _rule(
        rf"^(?:we|i|they|the team|ops)\s+(?:have\s+|has\s+|just\s+)?(?:replaced|swapped)\s+"
        rf"(?P<old>[^.;]+?)\s+(?:with|for)\s+(?P<v>[^.;]+?)\s+(?:for|in|on)\s+{_S}\s*$",
        THING_MOVE,
        change=True,
    ),
    # decisions: "chose V for S"
    _rule(
        rf"^(?:we\s+|i\s+|they\s+)?(?:have\s+)?(?:chose|picked|selected|decided on|went with|"
        rf"settled on|standardi[sz]ed on|opted for|are going with|will go with|"
        rf"decided to (?:use|go with))\s+(?P<v>[^.;]+?)\s+(?:for|as)\s+{_S}\s*$",
        {PLATFORM},
    ),
    # "S changed from A to B", "S went from A to B"
    _rule(
        rf"^{_S}\s+(?:changed|went|switched)\s+from\s+(?P<old>[^.;]+?)\s+to\s+{_V}",
        THING_MOVE,
        change=True,
    ),
]

_POSSESSIVE = re.compile(
    rf"^{_S}(?:'s|’s|s'|s’)\s+(?P<new>new\s+)?(?P<a>[^\W\d_][\w -]{{0,30}}?)\s*(?:\s(?:is|are|was|"
    rf"has become|became|changed to|moved to|will be|went up to|went down to|rose to|"
    r"dropped to|increased to|decreased to|is set to|has changed to|got changed to|"
    rf"got moved to|got pushed to|was pushed to|was moved to|has moved to|is moving to)|\s*[:=]|"
    rf"\s*(?:->|→))\s+{_V}",
    re.I,
)
_OF = re.compile(
    rf"^(?:the\s+)?(?P<new>new\s+)?(?P<a>[^\W\d_][\w -]{{0,30}}?)\s+(?:of|for|at)\s+{_S}\s+"
    rf"(?:is|are|was|has become|became|changed to|moved to|will be|went up to|is now)\s+{_V}",
    re.I,
)
_WHOSE = re.compile(  # "Henrik is Maya's manager": maya / manager = henrik
    rf"^(?P<v>[^\W\d_][\w .'’-]{{0,40}}?)\s+{_BE}\s+(?:now\s+)?(?P<s>[^\W\d_][\w .'’-]{{0,40}}?)"
    rf"(?:'s|’s)\s+(?:new\s+)?(?P<a>[\w -]{{1,30}})$",
    re.I,
)
_OWNS = re.compile(
    rf"^(?P<v>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?)\s+(?:now\s+)?(?:owns|has taken over|took over|"
    rf"takes over|is responsible for|is in charge of|leads|runs|maintains|is the owner of|"
    rf"is the new owner of|is now the owner of|has ownership of)\s+"
    rf"(?!(?:on|in|at|with|by|to|from|into|onto|for|out|late|early|fast|slow)\b){_S}$",
)
_LABEL = re.compile(rf"^{_S}\s*(?::|\s[\u2013\u2014-]\s)\s*{_V}")
_COPULA = re.compile(rf"^{_S}\s+{_BE}\s+(?:now\s+)?{_V}", re.I)
_ARROW = re.compile(rf"^{_S}\s*:?\s*(?P<old>[^.;:]+?)\s*(?:->|→|=>)\s*{_V}")


_QUOTED = re.compile(
    r"^\s*[“\"](?P<said>.+)[”\"]\s+[—–-]\s+(?P<who>[^\W\d_][\w .'’-]{0,40})\s*$", re.S
)


@functools.lru_cache(maxsize=8192)
def read_facts(text: str) -> tuple[Fact, ...]:
    """Every fact the sentences of `text` state (an entry, a log line, a search hit). In a
    quote attributed to someone (`“I moved to Braga.” — Rita`), "I" is that person."""
    quoted = _QUOTED.match(_TAGS.sub(" ", text).strip())
    speaker: tuple[str, ...] | None = None
    if quoted:
        text = quoted["said"]
        speaker = tuple(w for w in _words(quoted["who"]) if w not in _ARTICLES) or None
    found: list[Fact] = []
    for sentence in _sentences(text):
        for fact in _sentence_facts(sentence):
            if fact.subject == ("i",):
                if speaker is None and quoted:
                    continue  # someone's "I", and whose it is cannot be read
                if speaker is not None:
                    fact = Fact(speaker, *_rest(fact))
            found.append(fact)
    return tuple(dict.fromkeys(found))


def _rest(fact: Fact) -> tuple[Any, ...]:
    """A fact's fields after its subject (its subject a person: the quote's speaker)."""
    return (fact.attributes, fact.value, fact.change, fact.negated, fact.old, True, fact.text)


def _prepare(sentence: str) -> tuple[str, bool, bool, tuple[str, ...]]:
    """The sentence without lead-ins, hedges and negation; whether it says a change, whether
    it is negated, and the value it says is not the one ("…, not 09:30")."""
    body = sentence.strip().rstrip(".!?; ")
    body = _LEAD_IN.sub("", body)
    body = re.sub(r"\b([Ii])['’]m\b", r"\1 am", body)
    body = re.sub(r"\b([Ii]|[Ww]e|[Tt]hey)['’]ve\b", r"\1 have", body)
    old: tuple[str, ...] = ()
    not_value = _NOT_VALUE.search(body)
    if not_value and not_value.start() > 0:
        old = _value(not_value["old"])
        body = body[: not_value.start()]
    change = bool(_NOW.search(body)) or bool(old)
    negated = bool(_NO_LONGER.search(body)) or bool(_NEGATION_TAIL.search(body))
    if negated:
        body = _NO_LONGER.sub("", body)
        body = _NEGATION_TAIL.sub("", body)
        body = re.sub(r"\b(?:work|live|run|report)\b", lambda m: m[0] + "s", body, count=1)
    body = _HEDGE.sub("", body)
    return " ".join(body.split()), change, negated, old


def _sentence_facts(sentence: str) -> list[Fact]:
    if sentence.rstrip().endswith("?"):
        return []  # a question states nothing
    body, change, negated, old = _prepare(sentence)
    if not body:
        return []
    for reader in _READERS:
        facts = reader(body, sentence)
        if facts:
            return [
                Fact(
                    f.subject,
                    f.attributes,
                    f.value,
                    f.change or change,
                    negated,
                    f.old or old,
                    f.person,
                    sentence,
                )
                for f in facts
                if f.value
            ]
    return []


_TYPED = frozenset({TIME, DAY, DATE, PRICE, PHONE, EMAIL, "birthday"})


def _fact(
    subject: str,
    attributes: frozenset[str],
    value: str,
    *,
    change: bool = False,
    old: str = "",
    kind: str | None = None,
    split: bool = True,
    tail: int = 0,
) -> Fact | None:
    """The fact of one match. `split`: a subject ending with an attribute noun names that
    attribute ("the release deadline is…", "billing DB: …"), and one ending with a system noun
    turns "runs on" into that noun ("the billing database runs on…": billing / database)."""
    cleaned = _clean_subject(subject, tail)
    if cleaned is None:
        return None
    typed = _TYPED & attributes
    if typed and attributes <= _TYPED | {"deadline"}:
        found = kind or leading_value(_clause(value))[0]
        if found not in typed and not (found == DATE and "deadline" in attributes):
            return None  # "family time is great": a time says when
    words, person = cleaned
    if split and not tail:
        if attributes & {PLATFORM, IS, PLACE} and len(words) > 1 and words[-1] in SYSTEM_NOUNS:
            words, attributes = words[:-1], frozenset({ATTRIBUTE_WORDS.get(words[-1], words[-1])})
        elif not attributes - {IS, PLATFORM} or kind is not None:
            rest, noun = split_noun(list(words))
            if noun is not None and rest:
                words, attributes, person = tuple(rest), frozenset({noun}), False
    if tail:
        person = False
    if not words:
        return None
    return Fact(
        tuple(words),
        attributes,
        _value(value, kind),
        change,
        False,
        _value(old) if old else (),
        person,
    )


def _read_possessive(body: str, sentence: str) -> list[Fact]:
    match = _POSSESSIVE.match(body)
    if match is None:
        return []
    attribute = _attribute_of(w for w in _words(match["a"]) if w not in _ARTICLES)
    if attribute is None or attribute in _PRONOUNS or not _plausible(match["a"], match["v"]):
        return []
    fact = _fact(
        match["s"], frozenset({attribute}), match["v"], change=bool(match["new"]), split=False
    )
    return [fact] if fact else []


def _plausible(noun: str, value: str) -> bool:
    """Whether "<noun> is <value>" reads as an attribute and its value: a noun known to name
    an attribute (any value but an adjective of state), or any other noun with a value
    written as a name, a number or a kind of value ("her name is Shadow", not "young people's
    resilience is amazing")."""
    if _NOT_A_NAME.match(value.strip()):
        return False
    words = _words(noun)
    known = bool(words) and (
        words[-1] in ATTRIBUTE_WORDS
        or words[-1] in ATTRIBUTE_NOUNS
        or words[-1] in PERSON_RELATIONS
        or words[0] in ("favourite", "favorite")
    )
    return known or _named(_clause(value))


def _named(value: str) -> bool:
    """A value written as a name, a number or an identifier, or of a known kind."""
    first = value.split()[0] if value.split() else ""
    if re.search(r"(?:ed|ing)$", first.lower()) and not first[1:2].isupper():
        return False  # "was OOM-killed", "is Running late": a verb, not a name
    return (
        first[:1].isupper()
        or any(c.isdigit() for c in first)
        or leading_value(value)[0] is not None
        or bool(_EMAIL_RE.search(first))
    )


def _read_of(body: str, sentence: str) -> list[Fact]:
    match = _OF.match(body)
    if match is None:
        return []
    attribute = _attribute_of(w for w in _words(match["a"]) if w not in _ARTICLES)
    if attribute is None or not _plausible(match["a"], match["v"]):
        return []
    fact = _fact(
        match["s"], frozenset({attribute}), match["v"], change=bool(match["new"]), split=False
    )
    return [fact] if fact else []


def _read_whose(body: str, sentence: str) -> list[Fact]:
    match = _WHOSE.match(body)
    if match is None:
        return []
    noun = _words(match["a"])
    if not noun or noun[-1] not in PERSON_RELATIONS or len(noun) > 2:
        return []
    attribute = ATTRIBUTE_WORDS.get(noun[-1], noun[-1])
    fact = _fact(match["s"], frozenset({attribute}), match["v"], split=False)
    return [fact] if fact else []


def _read_owns(body: str, sentence: str) -> list[Fact]:
    match = _OWNS.match(body)
    if match is None or match["v"].split()[0].lower() in _PRONOUNS | {"we", "i"}:
        return []
    fact = _fact(match["s"], frozenset({OWNER}), match["v"], split=False)
    return [fact] if fact else []


_WHEN = frozenset({TIME, DAY, DATE})


def _when_attributes(kind: str) -> frozenset[str]:
    return frozenset({DATE, "deadline"}) if kind == DATE else frozenset({kind})


def _read_rules(body: str, sentence: str) -> list[Fact]:
    for rule in _RULES:
        match = rule.pattern.search(body)
        if match is None:
            continue
        value = match["v"]
        kind, _ = leading_value(_clause(value))
        attributes = rule.attributes
        if kind in _WHEN and (attributes is None or attributes <= THING_MOVE | {EMPLOYER}):
            attributes = _when_attributes(kind)  # "billing runs on Tuesdays", "starts at 9:45"
        elif attributes is None:
            if not rule.change:
                continue  # "S is at the office": no time, no fact
            attributes = THING_MOVE
        if attributes == {ROLE} and not _is_role(value):
            continue
        groups = match.groupdict()
        fact = _fact(
            match["s"],
            attributes,
            value,
            change=rule.change,
            old=groups.get("old") or "",
            kind=kind,
            split=attributes <= THING_MOVE,
        )
        return [fact] if fact is not None else []
    return []


def _read_arrow(body: str, sentence: str) -> list[Fact]:
    """ "Standup: 09:30 -> 10:00", "billing DB MySQL → PostgreSQL"."""
    match = _ARROW.match(body)
    if match is None:
        return []
    kind, _ = leading_value(_clause(match["v"]))
    attributes = _when_attributes(kind) if kind in _WHEN else THING_MOVE
    fact = _fact(match["s"], attributes, match["v"], change=True, old=match["old"], kind=kind)
    return [fact] if fact else []


_HAS_NEW = re.compile(
    rf"^{_S}\s+(?:has|got|gets|now has)\s+(?:a|an)\s+new\s+(?P<a>[\w -]{{1,30}}?)"
    rf"\s*[:,\u2013\u2014-]\s*{_V}",
    re.I,
)


def _read_has_new(body: str, sentence: str) -> list[Fact]:
    """ "Tomás has a new number: +46 …"."""
    match = _HAS_NEW.match(body)
    if match is None:
        return []
    attribute = _attribute_of(w for w in _words(match["a"]) if w not in _ARTICLES)
    if attribute is None:
        return []
    fact = _fact(match["s"], frozenset({attribute}), match["v"], change=True, split=False)
    return [fact] if fact else []


def _read_label(body: str, sentence: str) -> list[Fact]:
    """ "Zoë Okafor: product manager for invoicing", "Billing DB: MySQL 5.7", "Standup: 09:30
    on weekdays": the label is the subject (its last noun the attribute, when it names one)."""
    match = _LABEL.match(body)
    if match is None or len(_words(match["s"])) > 5:
        return []
    label = match["s"]
    if re.search(r"\b(?:is|are|was|were|has|have|will|did|does|said|says|told)\b", label, re.I):
        return []
    facts: list[Fact] = []
    for part in re.split(r",\s+|;\s+|\s+and\s+(?=[A-Z])", match["v"]):
        fact = _label_part(label, part)
        if fact is not None:
            facts.append(fact)
    return facts


_THEIR = re.compile(rf"^(?:and\s+)?{_S}(?:'s|’s)\s+(?P<a>[\w -]{{1,30}})$")


def _label_part(label: str, part: str) -> Fact | None:
    kind, _ = leading_value(part)
    words = [w for w in _words(label) if w not in _ARTICLES]
    if len(words) == 1 and (words[0] in ATTRIBUTE_WORDS or words[0] in ATTRIBUTE_NOUNS):
        return None  # "Birthday: 14 March": whose, it does not say
    rest, noun = split_noun(words)
    if noun is not None and rest:
        return _fact(label, frozenset({noun}), part, kind=kind, tail=len(words) - len(rest))
    if noun is not None:
        return None  # "Deadline: 12 March" says whose deadline nowhere
    theirs = _THEIR.match(part.strip(" .").strip())
    if theirs:  # "Jonas Berg: …, Maya's manager": maya / manager = jonas berg
        relation_noun = _words(theirs["a"])
        if relation_noun and relation_noun[-1] in PERSON_RELATIONS and len(relation_noun) <= 2:
            attribute = ATTRIBUTE_WORDS.get(relation_noun[-1], relation_noun[-1])
            return _fact(theirs["s"], frozenset({attribute}), label, split=False)
        return None
    if kind in (TIME, DAY, DATE, PRICE, PHONE, EMAIL):
        return _fact(
            label,
            _when_attributes(kind) if kind in _WHEN else frozenset({kind}),
            part,
            kind=kind,
            split=False,
        )
    if _is_role(part):
        return _fact(label, frozenset({ROLE}), part, split=False)
    return None


_NOT_A_NAME = re.compile(
    r"^(?:not|no|in|at|on|out|off|away|back|busy|going|looking|trying|about|also|very|so|too|"
    r"really|quite|pretty|still|just|always|never|usually|often|sometimes|here|there|done|"
    r"ready|open|closed|down|up|over|full|empty|slow|fast|late|early)\b",
    re.I,
)


def _read_copula(body: str, sentence: str) -> list[Fact]:
    """ "S is V": a role ("Zoë is the head of product"), an attribute noun ending the subject
    ("our cloud provider is AWS", "the release deadline is 14 December"), or a thing's name
    ("the queue is RabbitMQ") when the value is written as a name, not an adjective ("the
    queue is full")."""
    match = _COPULA.match(body)
    if match is None:
        return []
    subject, value = match["s"], match["v"]
    if _NOT_A_NAME.match(value):
        return []
    words = [w for w in _words(subject) if w not in _ARTICLES]
    if not words or (len(words) == 1 and split_noun(words + ["x"])[0] != words + ["x"]):
        return []  # "her name is Shadow": whose name, it does not say
    cut = _clause(value)
    kind, _ = leading_value(cut)
    article = re.match(r"^(?:an?|the|our|their|his|her|its)\s+", cut, re.I)
    if _is_role(cut) and kind is None:
        fact = _fact(
            subject, frozenset({ROLE}), re.sub(r"^(?:an?|the)\s+", "", cut, flags=re.I), split=False
        )
        if fact is not None and (fact.person or len(fact.subject) <= 2):
            return [fact]
    rest, noun = split_noun(words)
    if noun is not None and rest:
        first = cut.split()[0].lower() if cut.split() else ""
        if kind is None and re.search(r"(?:ed|ing)$", first):
            return []  # "the ingest queue is backed up": a state, not a value
        fact = _fact(subject, frozenset({noun}), value, kind=kind, tail=len(words) - len(rest))
        return [fact] if fact else []
    if kind is not None:
        return []  # "the deadline is 12 March" has its noun; "Maya is 12 March" says nothing
    if not _named(cut) or article or words[0] == "i":
        return []
    fact = _fact(subject, frozenset({IS}), cut, kind=kind)
    return [fact] if fact and not fact.person else []


_READERS = (
    _read_possessive,
    _read_of,
    _read_whose,
    _read_rules,
    _read_owns,
    _read_has_new,
    _read_arrow,
    _read_label,
    _read_copula,
)
