"""Deep Dream, the decisions: daily-log items + MEMORY.md -> a plan, checked, rendered.

Everything here is a pure function over plain data, tested without files:
`extract_items(note)` (the candidates of a daily log), `consolidate(memory, items, policy,
similarity, …) -> DreamPlan` (the offline consolidation), `render(memory, plan)` (the new
MEMORY.md text, every untouched line byte-identical) and `validate(...)` (the guardrails every
plan passes before anything touches disk, offline or proposed by a model). Reading the vault,
locking, writing, the diary and git live in `dreamer.py`.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import clock
from ..capture import unpin_dates
from ..files import (
    INBOX,
    LIST_ITEM,
    MemoryDoc,
    MemoryEntry,
    Note,
    entry_lines,
    heading_key,
    iter_tags,
    parse_memory,
    plain_text,
    render_memory,
)
from ..search import SUPERSEDED_BY, line_hash, supersedes
from .junk import junk_reason
from .similarity import Similarity, tokens
from .wording import as_memory, speaker_label

#: Tags that make an entry worth keeping, with their weight in the score.
SALIENT_TAGS = {
    "pin": 3.0,
    "important": 2.0,
    "decision": 1.5,
    "remember": 1.5,
    "preference": 1.0,
    "fact": 1.0,
}
#: Tags of things that pass (a to-do is done next week; memory is for what lasts).
TRANSIENT_TAGS = {"todo": 1.5, "tmp": 1.5, "draft": 1.0}
#: Score per other day on which a candidate's fact comes up again (at most four days count):
#: mentioned on three days, or on two and returned by a search, is promoted.
RECURRENCE_WEIGHT = 0.6
#: Tag -> words a section heading may use for it.
_TAG_SECTIONS = {
    "decision": ("decision", "decisions"),
    "preference": ("preference", "preferences"),
    "pref": ("preference", "preferences"),
    "person": ("people", "person", "persons"),
    "people": ("people", "person"),
    "project": ("project", "projects"),
    "infra": ("infrastructure", "infra"),
    "infrastructure": ("infrastructure", "infra"),
}


# -- candidates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One list item (or paragraph) of a daily log: a candidate for MEMORY.md."""

    path: str  # vault-relative, e.g. memory/2026-11-22.md
    date: dt.date
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str  # the item's lines, stripped, first bullet removed, joined with "\n"
    lines: tuple[str, ...] = ()  # its lines exactly as in the file
    heading: str = ""  # the daily-log entry heading, e.g. "14:03 · flush · session 7f3a"

    @property
    def source(self) -> str:
        span = f"L{self.start_line}"
        if self.end_line != self.start_line:
            span += f"-L{self.end_line}"
        return f"{self.path}#{span}"

    @property
    def key(self) -> str:
        """Content hash (file + normalised text): what a dream records as consumed. Line
        shifts do not change it; editing the text does (the edit is new input)."""
        normal = " ".join(self.text.split())
        return hashlib.sha256(f"{self.path}\n{normal}".encode()).hexdigest()[:16]

    @property
    def tags(self) -> frozenset[str]:
        return frozenset(iter_tags(self.text))

    @property
    def body(self) -> str:
        return plain_text(self.text)

    @property
    def flushed(self) -> bool:
        """The item is an entry `vault flush` wrote (under `## HH:MM · flush · session …`)."""
        return bool(_FLUSH_HEADING.search(self.heading))

    @property
    def said(self) -> str:
        """The item's text without the speaker label flush put before it."""
        found = speaker_label(self.text) if self.flushed else None
        return found[1] if found else self.text

    def statement(self, text: str | None = None) -> str:
        """The item (or `text`, a rewording of what its speaker said) as MEMORY.md states it:
        a flushed entry loses its speaker label (`wording.as_memory`)."""
        if text is None:
            return as_memory(self.text) if self.flushed else self.text
        found = speaker_label(self.text) if self.flushed else None
        return as_memory(f"{found[0]}: {text}") if found else text

    def restate(self, text: str) -> str:
        """`text` (a model's wording of this item) without the item's speaker label, if the
        model copied it."""
        own = speaker_label(self.text) if self.flushed else None
        found = speaker_label(text) if own else None
        return self.statement(found[1]) if own and found and found[0] == own[0] else text


_FLUSH_HEADING = re.compile(r"(?:^|\s)·\s*flush\b")


def extract_items(note: Note) -> list[Item]:
    """The items of a daily log: top-level list items with their continuation lines, and
    paragraphs. Headings and fenced code are never items."""
    if note.date is None:
        return []
    lines = note.lines
    heading_lines = {h.line for h in note.headings}
    items: list[Item] = []
    number = note.frontmatter_end + 1
    total = len(lines)
    while number <= total:
        line = lines[number - 1]
        if number in heading_lines or number in note.code_lines or not line.strip():
            number += 1
            continue
        is_item = bool(LIST_ITEM.match(line))
        end = number
        while end + 1 <= total:
            nxt = lines[end]
            if (end + 1) in heading_lines or (end + 1) in note.code_lines or not nxt.strip():
                break
            if is_item and LIST_ITEM.match(nxt) and not nxt.startswith(("  ", "\t")):
                break
            if not is_item and LIST_ITEM.match(nxt):
                break
            end += 1
        span = lines[number - 1 : end]
        first = LIST_ITEM.sub("", span[0], count=1).strip()
        text = "\n".join([first, *(s.strip() for s in span[1:])])
        entry_heading = ""
        for h in note.heading_path(number):
            if h.level == 2:
                entry_heading = h.title
        items.append(Item(note.relpath, note.date, number, end, text, tuple(span), entry_heading))
        number = end + 1
    return items


# -- the plan --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """The knobs of a dream (vault.toml [dream] plus constants measured on sample_vault/)."""

    max_memory_chars: int = 12_000
    max_drop_ratio: float = 0.25
    promote_at: float = 1.0  # a candidate's score must reach this to be promoted
    recency_half_life_days: float = 14.0
    max_entry_chars: int = 600  # longer items are not promoted (they are notes, not memory)


@dataclass
class Added:
    section: str
    text: str
    sources: tuple[str, ...]
    reason: str
    score: float = 0.0
    item: Item | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "text": self.text,
            "sources": list(self.sources),
            "reason": self.reason,
            "score": round(self.score, 3),
        }


@dataclass
class Merged:
    source: str
    text: str
    into: str  # "MEMORY.md m3" (an existing entry) or the source of an entry added now
    into_text: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "text": self.text,
            "into": self.into,
            "into_text": self.into_text,
            "reason": self.reason,
        }


@dataclass
class Archived:
    entry: MemoryEntry
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.entry.section,
            "text": self.entry.text,
            "sources": list(self.entry.sources),
            "reason": self.reason,
        }


@dataclass
class Edited:
    entry: MemoryEntry
    text: str
    sources: tuple[str, ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.entry.section,
            "before": self.entry.text,
            "text": self.text,
            "sources": list(self.sources),
            "reason": self.reason,
        }


@dataclass
class Superseded:
    """An entry a newer item states another value for: annotated in place, its text kept."""

    entry: MemoryEntry
    by: str  # the newer item's source, "memory/2026-11-01.md#L4"
    by_text: str
    reason: str  # the subject, attribute and both values

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.entry.section,
            "text": self.entry.text,
            "by": self.by,
            "by_text": self.by_text,
            "reason": self.reason,
        }

    def lines(self) -> list[str]:
        lines = self.entry.text.split("\n")
        lines[-1] += f" <!-- superseded-by: {self.by} -->"
        return lines


@dataclass
class Skipped:
    source: str
    text: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "text": self.text, "reason": self.reason}


@dataclass
class DreamPlan:
    added: list[Added] = field(default_factory=list)
    merged: list[Merged] = field(default_factory=list)
    archived: list[Archived] = field(default_factory=list)
    edited: list[Edited] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    consumed: list[Item] = field(default_factory=list)  # every candidate this dream settles
    superseded: list[Superseded] = field(default_factory=list)

    @property
    def changes_memory(self) -> bool:
        return bool(self.added or self.archived or self.edited or self.superseded)


@dataclass(frozen=True)
class Problem:
    """A reason to refuse a plan. `forceable` problems (size, drop ratio) yield to --force;
    the others (pinned entries, invented sources, junk) never do."""

    message: str
    forceable: bool = False


# -- scoring ----------------------------------------------------------------------------------


HitCounts = Mapping[tuple[str, str], int]  # (path, line_hash) -> times returned by a search


def hit_count(path: str, lines: Iterable[str], hits: HitCounts) -> int:
    return max((hits.get((path, line_hash(line)), 0) for line in lines if line.strip()), default=0)


def score_item(
    item: Item, recurrence: Sequence[dt.date], hits: int, today: dt.date, policy: Policy
) -> tuple[float, list[str]]:
    """How much a candidate deserves long-term memory, with the reasons in words."""
    score = 0.0
    reasons: list[str] = []
    tags = item.tags
    for tag, weight in SALIENT_TAGS.items():
        if tag in tags:
            score += weight
            reasons.append(f"#{tag}")
    for tag, weight in TRANSIENT_TAGS.items():
        if tag in tags:
            score -= weight
            reasons.append(f"#{tag} (transient)")
    others = sorted({d for d in recurrence if d != item.date})
    if others:
        score += RECURRENCE_WEIGHT * min(len(others), 4)
        days = ", ".join(d.isoformat() for d in others[:4])
        reasons.append(f"recurs on {len(others)} other day{'s' * (len(others) > 1)} ({days})")
    if hits:
        score += 0.5 * min(hits, 4)
        reasons.append(f"returned by {hits} search{'es' * (hits > 1)}")
    age = max((today - item.date).days, 0)
    score += 0.25 * math.pow(0.5, age / policy.recency_half_life_days)
    return score, reasons


def entry_value(entry: MemoryEntry, hits: int, today: dt.date, policy: Policy) -> float:
    """How much an existing MEMORY.md entry is worth keeping when the budget is tight.
    A hand-written entry (no provenance) is worth more than a dream's; a recent source,
    salient tags and search hits raise the value."""
    value = 1.0 if entry.sources else 2.0
    tags = set(iter_tags(entry.text))
    value += sum(w for t, w in SALIENT_TAGS.items() if t in tags)
    value += 0.5 * min(hits, 4)
    dates = [d for d in (_source_date(s) for s in entry.sources) if d]
    if dates:
        age = max((today - max(dates)).days, 0)
        value += 0.25 * math.pow(0.5, age / policy.recency_half_life_days)
    return value


def _source_date(source: str) -> dt.date | None:
    name = source.split("#", 1)[0].rsplit("/", 1)[-1].removesuffix(".md")
    try:
        return dt.date.fromisoformat(name)
    except ValueError:
        return None


# -- placement --------------------------------------------------------------------------------


def place(
    item_tags: Iterable[str],
    memory: MemoryDoc,
    similar: tuple[MemoryEntry, float] | None,
    threshold: float,
) -> tuple[str, str]:
    """The section a new entry goes to, and why: a section named after one of its tags, else
    the section of the most similar existing entry, else `## Inbox`. Pinned sections and the
    text before the first `##` heading never receive entries."""
    open_sections = [s for s in memory.sections if s.level == 2 and not s.pinned]
    for tag in sorted(item_tags):
        words = _TAG_SECTIONS.get(tag, (tag, tag + "s"))
        for section in open_sections:
            if heading_key(section.title) in words:
                return section.title, f"tagged #{tag}"
    if similar and similar[1] >= threshold:
        entry, score = similar
        near = memory.section(entry.section)
        if near is not None and near.level == 2 and not near.pinned:
            return near.title, f"next to a similar entry ({score:.2f})"
    inbox = memory.section(INBOX)
    if inbox is not None and inbox.pinned:  # someone pinned their Inbox: leave it alone
        return f"{INBOX} (dream)", "no matching section; ## Inbox is pinned"
    return INBOX, "no matching section"


# -- consolidation ------------------------------------------------------------------------------


# A sentence that corrects an earlier fact: a label ("Correction: …", "Update: …",
# "Actually, …") or a negated alternative ("…, not Friday 13 Nov", "instead of MySQL").
_CORRECTION_LABEL = re.compile(
    r"^\s*(?:correction|corrected|update|updated|actually|changed(?: plan)?)"
    r"\s*[:,\u2013\u2014-]\s*",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:not|instead of|rather than|no longer)\s+(?P<what>[^.;!?()]{3,120})", re.IGNORECASE
)


def correction_target(
    item: Item, entries: Sequence[MemoryEntry], scores: Sequence[float], related: float
) -> tuple[MemoryEntry, str] | None:
    """The MEMORY.md entry a correcting item supersedes, with why; None when the item corrects
    nothing there. A negated phrase ("…, not Friday 13 Nov at 22:00") must be mostly found in
    the entry; a label alone ("Correction: …") needs a related entry."""
    body = plain_text(item.said)
    label = _CORRECTION_LABEL.match(body)
    negated = _NEGATED.search(body)
    if not entries or not (label or negated):
        return None
    if negated:
        said = tokens(negated["what"])
        if said:
            covered = [
                (len(said & tokens(e.body)) / len(said), scores[i], i)
                for i, e in enumerate(entries)
            ]
            share, score, index = max(covered)
            if share >= 0.5 and score >= related / 2:
                return entries[index], (
                    f'corrects it: says "not {negated["what"].strip()}" ({score:.2f} similar)'
                )
    if label:
        best = _best(scores)
        if best is not None and best[1] >= related:
            return entries[best[0]], f"corrects it ({best[1]:.2f} similar)"
    return None


def superseded_entries(item: Item, entries: Sequence[MemoryEntry]) -> list[tuple[MemoryEntry, str]]:
    """The MEMORY.md entries `item` states a different value for (same subject and attribute:
    search/supersede.py), with why; pinned ones too (the caller leaves them as they are).
    An entry already marked superseded, or sourced from a later day than the item, is not."""
    found = []
    for entry in entries:
        if SUPERSEDED_BY.search(entry.text):
            continue
        days = [d for d in map(_source_date, entry.sources) if d is not None]
        if days and max(days) > item.date:
            continue
        why = supersedes(plain_text(item.said), entry.body)
        if why is not None:
            found.append((entry, why.reason))
    return found


def add_offline_supersessions(memory: MemoryDoc, items: Sequence[Item], plan: DreamPlan) -> None:
    """To a plan a model made: the supersessions the offline rule finds among the entries the
    plan keeps as they are (a model's own proposals come first)."""
    touched = (
        {a.entry.key for a in plan.archived}
        | {e.entry.key for e in plan.edited}
        | {s.entry.key for s in plan.superseded}
    )
    kept = [e for e in memory.entries if e.key not in touched and not e.pinned]
    for item in sorted(items, key=lambda i: (i.date, i.start_line), reverse=True):
        if junk_reason(item.text):
            continue
        for entry, why in superseded_entries(item, [e for e in kept if e.key not in touched]):
            touched.add(entry.key)
            plan.superseded.append(Superseded(entry, item.source, item.text, why))


def corrected_text(item: Item) -> str:
    """The item as MEMORY.md states it, without a leading "Correction:" label."""
    text = _CORRECTION_LABEL.sub("", item.said, count=1).strip()
    return item.statement(text[:1].upper() + text[1:] if text else item.said)


def consolidate(
    memory: MemoryDoc,
    candidates: Sequence[Item],
    policy: Policy,
    similarity: Similarity,
    *,
    evidence: Sequence[Item] = (),
    hits: HitCounts | None = None,
    today: dt.date | None = None,
) -> DreamPlan:
    """The offline dream: which candidates join MEMORY.md, which are already there (merged),
    which are junk or not worth it (skipped), and which existing entries make room (archived).

    `evidence` is every item of the window, consumed or not: a candidate that says again what
    an older item said recurs. `hits` counts how often search returned each line.
    """
    hits = hits or {}
    today = today or max((c.date for c in candidates), default=clock.today())
    plan = DreamPlan(consumed=list(candidates))
    live: list[Item] = []
    for item in candidates:
        reason = junk_reason(item.text)
        if reason is None and len(item.body) > policy.max_entry_chars:
            reason = f"too long for memory ({len(item.body)} characters)"
        if reason:
            plan.skipped.append(Skipped(item.source, item.text, f"junk: {reason}"))
        else:
            live.append(item)
    if not live:
        return plan
    entries = memory.entries
    bodies = [plain_text(i.said) for i in live]  # what was said, not who said it
    to_memory = similarity.matrix(bodies, [e.body for e in entries]) if entries else []
    among = similarity.matrix(bodies, bodies)

    # 1. Corrections of MEMORY.md entries replace them (a stale fact must not stand beside
    #    its correction); pinned entries are never changed, so their corrections are added.
    #    Then what is already in MEMORY.md is merged, nothing added.
    fresh: list[int] = []
    edited: set[str] = set()
    corrections: dict[int, str] = {}  # corrections that cannot edit their entry: always added
    for i, item in enumerate(live):
        target = (
            correction_target(item, entries, to_memory[i], similarity.related)
            if (entries)
            else None
        )
        if target is not None:
            entry, why = target
            if not entry.pinned and entry.key not in edited:
                edited.add(entry.key)
                plan.edited.append(Edited(entry, corrected_text(item), (item.source,), why))
            else:
                corrections[i] = (
                    "corrects the pinned entry " if entry.pinned else "corrects the entry "
                ) + _quote(entry.text)
                fresh.append(i)
            continue
        stale = superseded_entries(item, entries) if entries else []
        if stale:  # a newer value: the old entry is marked, the item added as what holds now
            notes = []
            for entry, why in stale:
                if entry.pinned:
                    notes.append(
                        f"states another value than the pinned entry "
                        f"{_quote(entry.text)} ({why}; pinned: left as it is)"
                    )
                elif entry.key not in edited:
                    edited.add(entry.key)
                    plan.superseded.append(Superseded(entry, item.source, item.text, why))
                    notes.append(f"supersedes {_quote(entry.text)} ({why})")
            if notes:
                corrections[i] = "; ".join(notes)
            fresh.append(i)
            continue
        best = _best(to_memory[i] if entries else [])
        if best is not None and best[1] >= similarity.duplicate:
            entry = entries[best[0]]
            plan.merged.append(
                Merged(
                    item.source,
                    item.text,
                    f"MEMORY.md {entry.key}",
                    entry.text,
                    f"already in MEMORY.md ({best[1]:.2f} similar)",
                )
            )
        else:
            fresh.append(i)

    # 2. Score what is new.
    assessed = assess(
        [live[i] for i in fresh], policy, similarity, evidence=evidence, hits=hits, today=today
    )
    scored = {i: assessed[live[i].key] for i in fresh}

    # 3. Near-duplicates among the new items: the best one stands for the group. A topic that
    #    only recurs (no tag, no search hit would promote it alone) is one entry: the best of
    #    the new items about it, and none when MEMORY.md already has an entry about it.
    groups = _groups(fresh, among, similarity.duplicate)
    rank = {i: (scored[i][0], live[i].date, len(live[i].body)) for i in fresh}
    leads = sorted(
        ((max(g, key=rank.__getitem__), g) for g in groups),
        key=lambda pair: rank[pair[0]],
        reverse=True,
    )
    topics: list[int] = []  # leads promoted on recurrence alone
    additions: list[tuple[float, Added]] = []
    for lead, group in leads:
        score, reasons, recurrence = scored[lead]
        item = live[lead]
        promoted = score >= policy.promote_at or lead in corrections
        if promoted and lead not in corrections and score - recurrence < policy.promote_at:
            covered = _best(to_memory[lead] if entries else [])
            earlier = next((t for t in topics if among[lead][t] >= similarity.related), None)
            if covered is not None and covered[1] >= similarity.related:
                promoted = False
                reasons = [
                    *reasons,
                    'its topic is in MEMORY.md already ("'
                    f'{_quote(entries[covered[0]].text, 40)[1:-1]}", '
                    f"{covered[1]:.2f} similar)",
                ]
            elif earlier is not None:
                promoted = False
                reasons = [
                    *reasons,
                    f"{live[earlier].source} stands for its topic "
                    f"({among[lead][earlier]:.2f} similar)",
                ]
            else:
                topics.append(lead)
        if lead in corrections:
            reasons = [*reasons, corrections[lead]]
        for other in group:
            if other == lead:
                continue
            said = f"says what {item.source} says ({among[other][lead]:.2f} similar)"
            if promoted:
                plan.merged.append(
                    Merged(
                        live[other].source, live[other].text, item.source, item.statement(), said
                    )
                )
            else:
                plan.skipped.append(
                    Skipped(live[other].source, live[other].text, f"not promoted: {said}")
                )
        if not promoted:
            why = ", ".join(reasons) if reasons else "mentioned once, no salient tag"
            verdict = (
                f"score {score:.2f} < {policy.promote_at:g}"
                if score < policy.promote_at
                else f"score {score:.2f}, but"
            )
            plan.skipped.append(Skipped(item.source, item.text, f"not promoted: {verdict} ({why})"))
            continue
        similar = _best(to_memory[lead] if entries else [])
        near = (entries[similar[0]], similar[1]) if similar else None
        section, where = place(item.tags, memory, near, similarity.place_at)
        reason = ", ".join(reasons) + f"; score {score:.2f}; placed: {where}"
        additions.append(
            (score, Added(section, item.statement(), (item.source,), reason, score, item))
        )

    plan.added = [a for _, a in sorted(additions, key=lambda p: (-p[0], p[1].sources))]
    drop_duplicates(memory, plan)
    _fit_budget(memory, plan, hits, today, policy)
    return plan


def same_text_key(text: str) -> str:
    """What two entries that say the same thing in the same words share: no bullet, comment,
    tag, pinned date, case, punctuation or spacing."""
    words = re.findall(r"[^\W_]+", unpin_dates(plain_text(text)).casefold())
    return " ".join(words)


def drop_duplicates(memory: MemoryDoc, plan: DreamPlan) -> None:
    """Additions that repeat, word for word, an entry of MEMORY.md (or an earlier addition)
    become merges: MEMORY.md never holds the same entry twice."""
    seen = {same_text_key(e.text): f"MEMORY.md {e.key}" for e in memory.entries}
    texts = {f"MEMORY.md {e.key}": e.text for e in memory.entries}
    kept = []
    for added in plan.added:
        key = same_text_key(added.text)
        if key in seen:
            into = seen[key]
            for source in added.sources:
                plan.merged.append(
                    Merged(
                        source,
                        added.item.text if added.item else added.text,
                        into,
                        texts[into],
                        "already in MEMORY.md word for word",
                    )
                )
            continue
        seen[key] = added.sources[0] if added.sources else key
        texts[seen[key]] = added.text
        kept.append(added)
    plan.added = kept


def assess(
    items: Sequence[Item],
    policy: Policy,
    similarity: Similarity,
    *,
    evidence: Sequence[Item] = (),
    hits: HitCounts | None = None,
    today: dt.date | None = None,
) -> dict[str, tuple[float, list[str], float]]:
    """Each item's score, its reasons and the part of the score its recurrence gives (item key
    -> (score, reasons, recurrence)): salient tags, recurrence among `evidence` on other days,
    search hits, recency."""
    if not items:
        return {}
    hits = hits or {}
    today = today or max(i.date for i in items)
    pool = [e for e in evidence if not junk_reason(e.text)] or list(items)
    to_pool = similarity.matrix([i.body for i in items], [e.body for e in pool])
    out = {}
    for i, item in enumerate(items):
        days = [pool[j].date for j, s in enumerate(to_pool[i]) if s >= similarity.related]
        count = hit_count(item.path, item.lines or item.text.split("\n"), hits)
        score, reasons = score_item(item, days, count, today, policy)
        others = len({d for d in days if d != item.date})
        out[item.key] = (score, reasons, RECURRENCE_WEIGHT * min(others, 4))
    return out


def _best(row: Sequence[float]) -> tuple[int, float] | None:
    if not len(row):
        return None
    index = max(range(len(row)), key=lambda j: row[j])
    return index, float(row[index])


def _groups(
    indices: Sequence[int], among: Sequence[Sequence[float]], threshold: float
) -> list[list[int]]:
    parent = {i: i for i in indices}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a in indices:
        for b in indices:
            if a < b and among[a][b] >= threshold:
                parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for i in indices:
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _fit_budget(
    memory: MemoryDoc, plan: DreamPlan, hits: HitCounts, today: dt.date, policy: Policy
) -> None:
    """Over the budget: the least valuable unpinned entries go, old ones to the archive and
    new ones back to the logs (not promoted), until the text fits."""
    budget = policy.max_memory_chars
    if len(render(memory, plan)) <= budget:
        return
    pool: list[tuple[float, int, Any]] = []
    for order, entry in enumerate(memory.entries):
        if entry.pinned:
            continue
        count = hit_count("MEMORY.md", entry.text.split("\n"), hits)
        pool.append((entry_value(entry, count, today, policy), order, entry))
    for order, added in enumerate(plan.added):
        pool.append((added.score, len(memory.entries) + order, added))
    pool.sort(key=lambda p: (p[0], p[1]))
    for value, _, victim in pool:
        if len(render(memory, plan)) <= budget:
            break
        why = f"over the {budget:,}-character budget; lowest value ({value:.2f})"
        if isinstance(victim, Added):
            plan.added.remove(victim)
            plan.skipped.append(Skipped(victim.sources[0], victim.text, f"not promoted: {why}"))
            for merged in [m for m in plan.merged if m.into == victim.sources[0]]:
                plan.merged.remove(merged)
                plan.skipped.append(
                    Skipped(merged.source, merged.text, f"not promoted: {merged.reason}; {why}")
                )
        else:
            plan.archived.append(Archived(victim, why))


# -- rendering and checking ---------------------------------------------------------------------


def render(memory: MemoryDoc, plan: DreamPlan) -> str:
    """The new MEMORY.md text: archived entries removed, edits in place, additions at the end of
    their sections (a missing section, e.g. Inbox, is created at the end of the file)."""
    insert: dict[str, list[list[str]]] = {}
    for added in plan.added:
        section = memory.section(added.section)
        title = section.title if section else added.section
        insert.setdefault(title, []).append(entry_lines(added.text, added.sources))
    replace = {e.entry.key: _edited_lines(e) for e in plan.edited}
    replace |= {s.entry.key: s.lines() for s in plan.superseded}
    return render_memory(
        memory, remove=[a.entry.key for a in plan.archived], replace=replace, insert=insert
    )


def _edited_lines(edit: Edited) -> list[str]:
    sources = tuple(dict.fromkeys([*edit.entry.sources, *edit.sources]))
    return entry_lines(edit.text, sources)


def unified_diff(before: str, after: str, path: str = "MEMORY.md") -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{path}",
        f"b/{path}",
        n=2,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def validate(
    memory: MemoryDoc,
    plan: DreamPlan,
    new_text: str,
    policy: Policy,
    sources: Iterable[str],
    similarity: Similarity | None = None,
) -> list[Problem]:
    """Every guardrail a plan must pass before MEMORY.md is written, checked on the rendered
    text itself (not trusting the plan): pinned entries and sections byte-identical, every
    untouched entry still there verbatim, only real sources, no junk, the size budget and the
    share of existing entries dropped."""
    problems: list[Problem] = []
    known = set(sources)
    after = parse_memory(new_text)
    after_texts: dict[str, int] = {}
    for entry in after.entries:
        after_texts[entry.text] = after_texts.get(entry.text, 0) + 1
    touched = {a.entry.key for a in plan.archived} | {e.entry.key for e in plan.edited}
    for marked in plan.superseded:  # kept word for word, its mark added: checked as such
        if marked.by not in known:
            problems.append(
                Problem(
                    f"it marks {_quote(marked.entry.text)} superseded by "
                    f"{marked.by!r}, which is not one of this dream's inputs"
                )
            )
        if marked.entry.pinned:
            problems.append(
                Problem(f"it would mark the pinned entry {_quote(marked.entry.text)} superseded")
            )
        elif after_texts.get("\n".join(marked.lines()), 0) <= 0:
            problems.append(Problem(f"it would lose the entry {_quote(marked.entry.text)}"))
        touched.add(marked.entry.key)
    for entry in memory.entries:
        if entry.pinned and entry.key in touched:
            problems.append(
                Problem(f"it would change or remove the pinned entry {_quote(entry.text)}")
            )
        elif entry.key not in touched:
            if after_texts.get(entry.text, 0) <= 0:
                problems.append(Problem(f"it would lose the entry {_quote(entry.text)}"))
            else:
                after_texts[entry.text] -= 1
    for section in memory.sections:
        if not section.pinned:
            continue
        old = "".join(memory.lines[section.start : section.end]).rstrip("\r\n")
        new = after.section(section.title)
        if new is None or "".join(after.lines[new.start : new.end]).rstrip("\r\n") != old:
            problems.append(Problem(f"it would change the pinned section ## {section.title}"))
    for added in plan.added:
        target = memory.section(added.section)
        if target is not None and target.pinned:
            problems.append(Problem(f"it would add to the pinned section ## {target.title}"))
        problems.extend(_check_new_text(added.text, added.sources, known, policy))
    for edit in plan.edited:
        problems.extend(_check_new_text(edit.text, edit.sources, known, policy, edit=True))
    dropped = len(plan.archived)
    if similarity is not None:
        dropped += sum(
            similarity.pair(plain_text(e.text), e.entry.body) < similarity.related
            for e in plan.edited
        )
    existing = len(memory.entries)
    if existing and dropped / existing > policy.max_drop_ratio:
        problems.append(
            Problem(
                f"it would drop {dropped} of {existing} existing entries "
                f"({dropped / existing:.0%}, more than {policy.max_drop_ratio:.0%})",
                forceable=True,
            )
        )
    budget = policy.max_memory_chars
    size, before = len(new_text), len(memory.text)
    if size > budget and size > before:
        problems.append(
            Problem(
                f"MEMORY.md would be {size:,} characters, over the {budget:,}-character budget",
                forceable=True,
            )
        )
    if size > 4 * max(budget, before):
        problems.append(
            Problem(
                f"the result is {size:,} characters, more than four times "
                "the budget: not a plausible memory"
            )
        )
    return problems


def _check_new_text(
    text: str, sources: Sequence[str], known: set[str], policy: Policy, edit: bool = False
) -> list[Problem]:
    problems = []
    what = "reworded entry" if edit else "new entry"
    if "<!--" in text or "-->" in text:
        problems.append(Problem(f"the {what} {_quote(text)} contains an HTML comment"))
    if any(
        line.lstrip().startswith("#")
        and not line.lstrip().startswith("#[")
        and line.lstrip()[1:2].isspace()
        for line in text.split("\n")
    ):
        problems.append(Problem(f"the {what} {_quote(text)} contains a heading"))
    reason = junk_reason(text)
    if reason:
        problems.append(Problem(f"the {what} {_quote(text)} is junk ({reason})"))
    if len(plain_text(text)) > policy.max_entry_chars:
        problems.append(
            Problem(f"the {what} {_quote(text)} is longer than {policy.max_entry_chars} characters")
        )
    if not sources and not edit:
        problems.append(Problem(f"the {what} {_quote(text)} names no source"))
    for source in sources:
        if source not in known:
            problems.append(
                Problem(
                    f"the {what} {_quote(text)} cites {source!r}, "
                    "which is not one of this dream's inputs"
                )
            )
    return problems


def _quote(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return f'"{flat[: width - 1]}…"' if len(flat) > width else f'"{flat}"'
