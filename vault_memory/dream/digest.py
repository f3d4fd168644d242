"""Consolidation that answers more than the scattered lines: one entry per subject and topic.

A person (or a thing) comes back to the same topic on several days: a painting on one day,
another one a month later, a third in the autumn. Each line alone answers "what did she paint
in May"; none answers "what does she paint", "how often", "since when". The dream gathers the
lines one subject says about one topic on at least `MIN_DAYS` days into one entry, each part
with the day it was said, oldest first:

    Melanie on painting — 2023-05-08: “I painted that lake sunrise last year (2022)!”;
    2023-08-14: “I've done an abstract painting too”; 2023-09-13: “…a sunflower…”
    <!-- src: memory/2023-05-08.md#L16, memory/2023-08-14.md#L12, memory/2023-09-13.md#L9 -->

Offline and without a model: the subject is the speaker of a flushed line (or the subject a
line's fact names, `search/subjects.py`); a topic is a content word (stemmed) that subject uses
on `MIN_DAYS` or more days, not a word of conversation itself ("really", "great", "feel"); each
part is the sentence of the line that holds the topic, its relative time resolved. A line goes
to one entry at most; the parts never say more than their lines (the support check holds
them to it). Only lines that are not promoted on their own are gathered. Pure.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..files import MemoryDoc
from ..search import read_facts
from .plan import Added, Item
from .similarity import tokens
from .wording import speaker_label


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: A topic one subject comes back to on this many days gets an entry of its own.
MIN_DAYS = 3
MAX_PARTS = 6
MAX_PART_CHARS = 140
MAX_CHARS = 560
MAX_PER_SUBJECT = 6
#: Words of conversation, not topics: they come up every day about anything.
CHAT_WORDS = _set(
    """
    really think thought know knew want wanted going gonna great good love loved like
    liked awesome amazing cool nice wow yeah yes hope thanks thank glad happy sound
    sounds feel felt feeling time times make made lot lots much way thing things day
    days today people always never keep kept getting get got see saw look looks looking
    new one year years week weeks super pretty totally definitely especially maybe
    something anything everything right well still even share sharing talk talking chat
    hear heard tell told said say saying stuff kind sure fun appreciate means mean meant
    help helped helps support absolutely true wonderful fantastic incredible beautiful
    lovely excited exciting take taking took give gave doing done try trying tried start
    started work working life last next first little big better best recently lately
    such soon again makes making come came coming find found need needed able wish proud
    hard tough important special yours mine sorry okay ok hey hi hello bye
    """
)
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


@dataclass(frozen=True)
class _Line:
    index: int  # in the candidates the stage was given
    subject: str
    said: str  # what was said (resolved), without the speaker's label
    stems: frozenset[str]


def _subject(item: Item, said: str) -> tuple[str, str] | None:
    """(who or what a line is about, what it says without a speaker's label)."""
    found = speaker_label(item.text) if item.flushed else None
    if found is not None:
        label, rest = found
        body = speaker_label(said)
        return label, body[1] if body else rest
    facts = read_facts(said)
    if facts and facts[0].person:
        return " ".join(w.capitalize() for w in facts[0].subject), said
    return None


def gather(
    memory: MemoryDoc, items: Sequence[Item], said: Sequence[str], free: Sequence[int]
) -> list[tuple[Added, list[int]]]:
    """The entries that gather a subject's topic (each with the candidates it cites), from
    the candidates `free` (not promoted on their own)."""
    lines = []
    for index in free:
        found = _subject(items[index], said[index])
        if found is None:
            continue
        subject, text = found
        stems = frozenset(w for w in tokens(text) if len(w) >= 4 and w not in CHAT_WORDS)
        stems -= tokens(subject)
        lines.append(_Line(index, subject, text, stems))
    by_topic: dict[tuple[str, str], list[_Line]] = defaultdict(list)
    for line in lines:
        for stem in line.stems:
            by_topic[(line.subject, stem)].append(line)
    ranked = sorted(
        (
            (len({items[line.index].date for line in found}), len(found), key)
            for key, found in by_topic.items()
        ),
        reverse=True,
    )
    known = [tokens(e.body) for e in memory.entries]  # what MEMORY.md is about already
    used: set[int] = set()
    per_subject: Counter[str] = Counter()
    out: list[tuple[Added, list[int]]] = []
    for days, _, (subject, stem) in ranked:
        if days < MIN_DAYS or per_subject[subject] >= MAX_PER_SUBJECT:
            continue
        if any(stem in words and tokens(subject) <= words for words in known):
            continue  # MEMORY.md has an entry on this subject and topic
        free_lines = [line for line in by_topic[(subject, stem)] if line.index not in used]
        chosen = _one_a_day(free_lines, items)
        if len({items[line.index].date for line in chosen}) < MIN_DAYS:
            continue
        entry = _entry(memory, subject, stem, chosen, items)
        if entry is None:
            continue
        cited = [line.index for line in chosen if items[line.index].source in entry.sources]
        used.update(cited)
        per_subject[subject] += 1
        out.append((entry, cited))
    return out


def _one_a_day(found: list[_Line], items: Sequence[Item]) -> list[_Line]:
    """The line of each day that says most (oldest day first), at most `MAX_PARTS`."""
    best: dict[object, _Line] = {}
    for line in found:
        day = items[line.index].date
        if day not in best or len(line.stems) > len(best[day].stems):
            best[day] = line
    ordered = [best[d] for d in sorted(best)]  # type: ignore[type-var]
    return ordered[-MAX_PARTS:]


def _entry(
    memory: MemoryDoc, subject: str, stem: str, chosen: list[_Line], items: Sequence[Item]
) -> Added | None:
    word = _surface(stem, [line.said for line in chosen])
    parts = []
    for line in chosen:
        sentence = _sentence_with(line.said, stem)
        if len(sentence) > MAX_PART_CHARS:
            sentence = sentence[: MAX_PART_CHARS - 1].rsplit(" ", 1)[0] + "…"
        parts.append((line, f"{items[line.index].date.isoformat()}: “{sentence}”"))

    def text() -> str:
        return f"{subject} on {word} — " + "; ".join(part for _, part in parts)

    while len(text()) > MAX_CHARS and len(parts) > MIN_DAYS:
        parts.pop(0)  # the oldest parts give way first
    if len(text()) > MAX_CHARS:
        return None
    cited = [items[line.index] for line, _ in parts]
    section = "People" if memory.section("People") is not None else "Inbox"
    reason = f"{subject} comes back to {word} on {len(parts)} days: gathered, each with its day"
    return Added(
        section, text(), tuple(i.source for i in cited), reason, 1.0 + 0.2 * len(parts), cited[-1]
    )


def _sentence_with(text: str, stem: str) -> str:
    for sentence in _SENTENCE.findall(text):
        if stem in tokens(sentence):
            return " ".join(sentence.split())
    return " ".join(text.split())


def _surface(stem: str, texts: list[str]) -> str:
    """The form of the topic's word people wrote most ("painting" for the stem "paint")."""
    forms: Counter[str] = Counter()
    for text in texts:
        for word in re.findall(r"[^\W_]+(?:[-'.][^\W_]+)*", text.lower()):
            if tokens(word) == {stem}:
                forms[word] += 1
    return forms.most_common(1)[0][0] if forms else stem
