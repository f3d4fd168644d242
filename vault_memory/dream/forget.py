"""Deep Dream, a person asking to forget: "Forget the gym plan, I'm not doing that anymore",
"please forget my old address", "vergiss den Umzug nach Hamburg", "oublie mon ancienne
adresse", "olvida el viaje a Lisboa".

A daily-log line that asks to forget something names it ("the gym plan"); the one current
entry of MEMORY.md that holds every word of that name is moved out, whole, to the archive
(`dreams/archive.md`: nothing is deleted, and `vault dream --undo` restores MEMORY.md), citing
the line. A line that names no entry, or several, archives nothing, and the diary says why;
the line itself is a request, not a fact, and is never promoted. Older lines of the same
window that the request names are not promoted either.

Only a request said as one is read: the verb opens a sentence ("Forget …", "Please forget …",
"Can you forget …") and what follows names a thing with a determiner ("the", "my", "that"):
"I forgot my keys", "don't forget the tickets" and "forget about work for a day" ask nothing.
Pure: plain data in, a plan's parts out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..files import MemoryDoc, MemoryEntry
from ..text import one_line
from .history import is_history
from .plan import Archived, DreamPlan, Item, Skipped, source_date
from .similarity import tokens

_LEAD = (
    r"(?:^|[.!?;:,]\s+|\n)\s*(?:(?:oh|ok|okay|also|and|so|actually|well|hey|ach|bitte|"
    r"oh et|et|alors|bueno|y|pues|también)\s*,?\s+)*"
)
_ASK = (
    r"(?:(?:please|pls|kindly)\s+|(?:can|could|would) you(?: please)?\s+|you can\s+|"
    r"bitte\s+|s'il te plaît,?\s+|por favor,?\s+)?"
)
#: The verb of a request to forget, by language, and the determiners that open what it names.
_VERBS = (
    r"forget(?: about)?|disregard|scratch|"
    r"(?:delete|remove|erase|drop)\s+(?:the|my|that|this|our)\s+(?:notes?|entry|entries|line|bit)"
    r"\s+(?:about|on|of)|"
    r"vergiss(?: bitte)?|vergessen sie|oublie|oubliez|olvida|olvide|olvidad"
)
_DETERMINERS = (
    r"the|my|our|that|this|those|these|his|her|their|your|what i (?:said|told you|wrote) about"
    r"(?: the| my| our| that)?|"
    r"den|die|das|dem|meine[nmrs]?|mein|unsere[nmrs]?|unser|diese[nmrs]?|"
    r"le|la|les|l'|mon|ma|mes|notre|nos|ce|cette|ces|"
    r"el|los|las|mi|mis|nuestro|nuestra|nuestros|nuestras|ese|esa|eso|lo del|lo de"
)
_REQUEST = re.compile(
    _LEAD + _ASK + rf"(?:{_VERBS})\s+(?:{_DETERMINERS})\s*(?P<what>[^.!?;,\n()—–]+)",
    re.IGNORECASE,
)
#: Words of a request's name that say which one, not what: "my *old* address", "the *whole*
#: gym thing".
_GENERIC_WORDS = (
    "old previous former earlier current whole thing stuff note entry line bit anymore "
    "alte alten alter altes ehemalige ehemaligen ganze ancien ancienne anciens anciennes "
    "antiguo antigua viejo vieja anterior"
)
_GENERIC = tokens(_GENERIC_WORDS)  # as `tokens` writes them ("previous" -> its stem)
_ASSISTANT = re.compile(r"^\s*(?:assistant|ai|bot|model)\s*:", re.IGNORECASE)


def forget_request(text: str) -> str | None:
    """What a line asks to forget ("the gym plan" -> "gym plan"), or None when the line asks
    nothing of the kind (or names nothing: "forget it")."""
    if _ASSISTANT.match(text):
        return None
    found = _REQUEST.search(text)
    if found is None:
        return None
    what = " ".join(found["what"].split())
    return what if name_words(what) else None


def name_words(what: str) -> frozenset[str]:
    """The words of a request's name that an entry must hold."""
    return frozenset(t for t in tokens(what) if t not in _GENERIC)


@dataclass(frozen=True)
class Request:
    item: Item
    what: str
    words: frozenset[str]


def requests_in(candidates: Sequence[Item]) -> list[Request]:
    """The lines among `candidates` that ask to forget something."""
    out = []
    for item in candidates:
        what = forget_request(item.said if item.flushed else item.text)
        if what is not None:
            out.append(Request(item, what, name_words(what)))
    return out


def named_entries(request: Request, entries: Sequence[MemoryEntry]) -> list[MemoryEntry]:
    """The current entries the request names: every word of its name in the entry, and no
    source of the entry newer than the request."""
    out = []
    for entry in entries:
        if is_history(entry.text):
            continue
        days = [d for d in map(source_date, entry.sources) if d is not None]
        if days and max(days) > request.item.date:
            continue
        if request.words <= tokens(entry.body):
            out.append(entry)
    return out


def settle_forgets(memory: MemoryDoc, candidates: Sequence[Item], plan: DreamPlan) -> list[Item]:
    """Archive the one entry each request names (citing the request), skip the request and
    the older lines it names; returns the candidates left for the other stages."""
    requests = requests_in(candidates)
    if not requests:
        return list(candidates)
    taken = {a.entry.key for a in plan.archived}
    settled: set[str] = set()
    for request in sorted(requests, key=lambda r: (r.item.date, r.item.start_line)):
        item = request.item
        settled.add(item.key)
        named = [e for e in named_entries(request, memory.entries) if e.key not in taken]
        plan.skipped.append(Skipped(item.source, item.text, _verdict(request, named)))
        if len(named) == 1 and not named[0].pinned:
            taken.add(named[0].key)
            plan.archived.append(
                Archived(
                    named[0],
                    f'{item.source} asks to forget it ("{_short(item.text)}")',
                    (item.source,),
                    asked=True,
                )
            )
        for older in candidates:
            if older.key in settled or not _before(older, item):
                continue
            if request.words <= tokens(older.body) and forget_request(older.text) is None:
                settled.add(older.key)
                plan.skipped.append(
                    Skipped(
                        older.source,
                        older.text,
                        f"not promoted: {item.source} asks to forget {request.what!r}",
                    )
                )
    return [c for c in candidates if c.key not in settled]


def _verdict(request: Request, named: list[MemoryEntry]) -> str:
    what = repr(request.what)
    if not named:
        return f"a request to forget {what}: no entry of MEMORY.md names it, nothing archived"
    if len(named) > 1:
        shown = "; ".join(f'"{_short(e.text, 40)}"' for e in named[:3])
        return (
            f"a request to forget {what}: {len(named)} entries of MEMORY.md name it ({shown}), "
            "nothing archived (it does not say which)"
        )
    if named[0].pinned:
        return f"a request to forget {what}: the entry it names is pinned, left as it is"
    return f'a request to forget {what}: archived "{_short(named[0].text, 60)}"'


def _before(older: Item, item: Item) -> bool:
    return (older.date, older.path, older.start_line) < (item.date, item.path, item.start_line)


def _short(text: str, width: int = 80) -> str:
    """The line as the diary quotes it, without its provenance comment."""
    return one_line(" ".join(text.split()).split(" <!--")[0], width)


def add_forgets(memory: MemoryDoc, items: Sequence[Item], plan: DreamPlan) -> None:
    """To a plan a model made: the entries the person asked to forget are archived (unless the
    plan already archives them citing a line), and a request the model copied as an entry is
    taken back (a request is not a fact)."""
    requests = requests_in(items)
    if not requests:
        return
    asked = {r.item.source for r in requests}
    plan.added = [a for a in plan.added if not (set(a.sources) & asked and _is_request(a.text))]
    # A request is no new value: a supersession the rules read into it is taken back.
    plan.superseded = [s for s in plan.superseded if s.by not in asked]
    plan.added = [a for a in plan.added if not (a.replaces and set(a.sources) & asked)]
    plan.merged = [m for m in plan.merged if m.source not in asked]
    kept = [a for a in plan.archived if a.sources or a.budget]
    left = [a for a in plan.archived if a not in kept]
    plan.archived = kept
    plan.skipped = [s for s in plan.skipped if s.source not in asked]
    settle_forgets(memory, [r.item for r in requests], plan)
    # What the model archived with nothing cited stays in the plan: the checks refuse it.
    plan.archived += left
    touched = {a.entry.key for a in plan.archived if a.asked}
    plan.edited = [e for e in plan.edited if e.entry.key not in touched]


def _is_request(text: str) -> bool:
    return forget_request(text) is not None
