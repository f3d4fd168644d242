"""When a newer note states a different value for the same thing: superseded facts.

"Billing runs on MySQL" (March) and "billing moved to PostgreSQL" (November) are two values of
one attribute of one subject; the newer one is what is true now. The statements of a sentence
are read by `subjects.py` as subject keys (who or what, which attribute) and values; a newer
text supersedes an older one when a key matches and the values differ (a sibling subject, another
attribute, an additive relation or the same value again are left alone). `current_of` applies
the rule to many dated texts: an older text is superseded by the newest text about the same
subject and attribute when their values differ (A -> B -> C: A and B by C; A -> B -> A: only
B). The labelled pairs are tests/supersede_corpus.py and tests/subject_corpus.py.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from .subjects import Fact, read_facts, relation

#: The facts a text states (the name the search bench knows).
statements = read_facts


@dataclass(frozen=True)
class Supersession:
    """Why a newer text supersedes an older one."""

    older: Fact
    newer: Fact

    @property
    def reason(self) -> str:
        subject = " ".join(self.newer.subject)
        shared = sorted(self.newer.attributes & self.older.attributes)
        attribute = shared[0] if shared else self.older.attribute
        if self.newer.negated:
            return f"{subject}: {attribute} no longer {' '.join(self.older.value)}"
        return (
            f"{subject}: {attribute} {' '.join(self.older.value)} -> {' '.join(self.newer.value)}"
        )


def supersedes(newer: str, older: str) -> Supersession | None:
    """Whether `newer` (the later text) states a different value for a subject and attribute
    `older` states (or says that value no longer holds), and by which facts; None for
    look-alikes."""
    for new in read_facts(newer):
        for old in read_facts(older):
            if relation(new, old) == "differs":
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
    return any(
        relation(new, old) == "same" for new in read_facts(newer) for old in read_facts(older)
    )


# -- search hits --------------------------------------------------------------------------------

SUPERSEDED_BY = re.compile(r"<!--\s*superseded-by:\s*(\S+?)\s*-->")
_SOURCE_DATE = re.compile(r"<!--\s*src:[^>]*?(\d{4}-\d\d-\d\d)")


class _HitLike(Protocol):
    path: str
    start_line: int
    end_line: int
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


_SOURCES = re.compile(r"<!--\s*src:\s*(.*?)\s*-->")


def _holding(hits: Sequence[_HitLike], source: str) -> int | None:
    """The hit that holds now in place of a history line superseded by `source`: the daily-log
    line itself, or the MEMORY.md entry that cites it (not another history line)."""
    path, _, line = source.partition("#L")
    for index, hit in enumerate(hits):
        if SUPERSEDED_BY.search(hit.text):
            continue
        first = line.split("-")[0]
        if hit.path == path and first.isdigit() and hit.start_line <= int(first) <= hit.end_line:
            return index
        cited = [c.strip() for m in _SOURCES.findall(hit.text) for c in m.split(",")]
        if source in cited:
            return index
    return None


def order_superseded(hits: list[H]) -> list[H]:
    """`hits` (best first) with what is true now first: a hit that another, newer hit
    supersedes gets `superseded_by` ("path#Lline" of the newer one) and the newer one moves up
    to just before it; a MEMORY.md entry a dream marked superseded carries its mark. Nothing
    else moves. A post-step on the ranked hits (the ranking itself is untouched)."""
    moves: list[tuple[int, int]] = []  # (superseded hit, the hit that holds now)
    for index, hit in enumerate(hits):
        marked = SUPERSEDED_BY.search(hit.text)
        if marked:
            hit.superseded_by = marked[1]
            current = _holding(hits, marked[1])
            if current is not None:
                moves.append((index, current))
    dated = [
        Dated(str(i), day, SUPERSEDED_BY.sub(" ", h.text))
        for i, h in enumerate(hits)
        if (day := text_date(h.text, h.date)) is not None
    ]
    found = current_of(dated) if len(dated) >= 2 else {}
    if not found and not moves:
        return hits
    for old, (new, _) in found.items():
        old_i, new_i = int(old), int(new)
        hits[old_i].superseded_by = f"{hits[new_i].path}#L{hits[new_i].start_line}"
        moves.append((old_i, new_i))
    order = list(range(len(hits)))
    for old_i, new_i in sorted(moves):
        if order.index(new_i) > order.index(old_i):
            order.remove(new_i)
            order.insert(order.index(old_i), new_i)
    return [hits[i] for i in order]
