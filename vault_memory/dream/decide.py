"""Deep Dream, the decisions: daily-log items + MEMORY.md -> a plan.

Everything here is a pure function over plain data, tested without files. `consolidate`
(the offline dream) runs in named stages:

1. `screen`: junk, instructions, shell commands, credentials and over-long items are never
   promoted; relative time is resolved against each item's day ("tomorrow (2026-11-23)"), and
   an item whose time stays relative is not promoted;
2. `settle_by_subject`: an item that gives a MEMORY.md entry's subject key another value
   supersedes it (the entry moves to the history, the item takes its place), one that gives
   the same value is merged; among the items, the newer value of a key wins;
3. `settle_restatements`: an item that says what an entry says (every fact of the item in the
   entry) is merged; one that says all the entry says and more replaces it (its facts kept);
4. `promote`: the rest is scored (salient tags, recurrence, search hits, recency), grouped
   with the items that say the same (values agreeing), and placed;
5. `drop_duplicates` and `fit_budget`: no entry twice, and within the size budget (history
   lines archived first, then the least valuable entries).

Similarity alone never supersedes, merges or drops anything: a merge needs the values to
agree, a supersession the same subject key. The plan's dataclasses are in `plan.py`; the
history form and rendering in `history.py`; the rules every plan passes in `checks.py`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import clock
from ..capture import unpin_dates
from ..files import INBOX, MemoryDoc, MemoryEntry, heading_key, iter_tags, plain_text
from ..search import line_hash, read_facts, relation
from ..text import one_line
from .checks import Problem as Problem, lost_facts, replacement, text_problem, validate as validate
from .forget import settle_forgets
from .history import HISTORY, is_history, render as render, unified_diff as unified_diff
from .junk import junk_reason
from .plan import (
    Added as Added,
    Archived as Archived,
    DreamPlan as DreamPlan,
    Edited as Edited,
    Item as Item,
    Merged as Merged,
    Policy as Policy,
    Refused as Refused,
    Skipped as Skipped,
    Superseded as Superseded,
    extract_items as extract_items,
    source_date,
)
from .similarity import Similarity, tokens
from .when import resolve_relative

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
    dates = [d for d in (source_date(s) for s in entry.sources) if d]
    if dates:
        age = max((today - max(dates)).days, 0)
        value += 0.25 * math.pow(0.5, age / policy.recency_half_life_days)
    return value


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
    open_sections = [
        s
        for s in memory.sections
        if s.level == 2 and not s.pinned and heading_key(s.title) != HISTORY.lower()
    ]
    for tag in sorted(item_tags):
        words = _TAG_SECTIONS.get(tag, (tag, tag + "s"))
        for section in open_sections:
            if heading_key(section.title) in words:
                return section.title, f"tagged #{tag}"
    if similar and similar[1] >= threshold:
        entry, score = similar
        near = memory.section(entry.section)
        if near is not None and near in open_sections:
            return near.title, f"next to a similar entry ({score:.2f})"
    inbox = memory.section(INBOX)
    if inbox is not None and inbox.pinned:  # someone pinned their Inbox: leave it alone
        return f"{INBOX} (dream)", "no matching section; ## Inbox is pinned"
    return INBOX, "no matching section"


# -- consolidation ----------------------------------------------------------------------------

_CORRECTION_LABEL = re.compile(
    r"^\s*(?:correction|corrected|update|updated|actually|changed(?: plan)?)"
    r"\s*[:,\u2013\u2014-]\s*",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|no|never|no longer|n't|neither|nor)\b", re.IGNORECASE)


@dataclass
class Board:
    """What the stages of an offline dream share: the candidates and what each says (its
    statement, relative time resolved), the current entries of MEMORY.md (history lines left
    out) and how alike they all are."""

    memory: MemoryDoc
    live: list[Item]
    said: list[str]
    entries: list[MemoryEntry]
    to_memory: list[list[float]]
    among: list[list[float]]
    fate: dict[int, str] = field(default_factory=dict)  # item -> "merged" | "skipped" | …
    notes: dict[int, str] = field(default_factory=dict)  # item -> why it must be promoted
    replaces: dict[int, MemoryEntry] = field(default_factory=dict)  # item -> entry it replaces


def screen(
    candidates: Sequence[Item], policy: Policy, plan: DreamPlan
) -> tuple[list[Item], list[str]]:
    """The candidates worth considering and their statements (flushed entries without the
    speaker's label, relative time resolved); the rest is skipped, with why."""
    live: list[Item] = []
    said: list[str] = []
    for item in candidates:
        statement = item.statement()
        reason = junk_reason(item.text) or text_problem(statement, policy)
        if reason is None and len(item.body) > policy.max_entry_chars:
            reason = f"too long for memory ({len(item.body)} characters)"
        if reason:
            plan.skipped.append(Skipped(item.source, item.text, f"junk: {reason}"))
            continue
        resolved, relative = resolve_relative(statement, item.date)
        if relative:
            shown = ", ".join(repr(r) for r in relative[:3])
            plan.skipped.append(
                Skipped(
                    item.source, item.text, f"not promoted: its time is still relative ({shown})"
                )
            )
            continue
        live.append(item)
        said.append(resolved)
    return live, said


def read_board(
    memory: MemoryDoc,
    live: list[Item],
    said: list[str],
    similarity: Similarity,
    gone: frozenset[str] | set[str] = frozenset(),
) -> Board:
    entries = [e for e in memory.entries if not is_history(e.text) and e.key not in gone]
    bodies = [plain_text(unpin_dates(s)) for s in said]  # alike in words, not in added dates
    to_memory = similarity.matrix(bodies, [e.body for e in entries]) if entries else []
    among = similarity.matrix(bodies, bodies)
    return Board(memory, live, said, entries, to_memory, among)


def _order(board: Board) -> list[int]:
    """Items newest first (a later day, then a later line)."""
    return sorted(
        range(len(board.live)),
        key=lambda i: (board.live[i].date, board.live[i].path, board.live[i].start_line),
        reverse=True,
    )


def settle_by_subject(board: Board, plan: DreamPlan) -> None:
    """Subject keys decide: among the items, a newer value of a key outdates an older one;
    an item that gives an entry's key another value (and is newer than the entry's sources)
    supersedes it; one that gives the same value is merged into it, or replaces it when it
    says all the entry says and more."""
    newest: list[int] = []
    for i in _order(board):
        item, said = board.live[i], board.said[i]
        newer = next((j for j in newest if replacement(said, board.said[j])), None)
        if newer is not None:
            board.fate[i] = "skipped"
            why = replacement(said, board.said[newer])
            plan.skipped.append(
                Skipped(
                    item.source,
                    item.text,
                    f"not promoted: {board.live[newer].source} is newer ({why})",
                )
            )
            continue
        newest.append(i)
        _against_memory(board, plan, i)


def _against_memory(board: Board, plan: DreamPlan, i: int) -> None:
    item, said = board.live[i], board.said[i]
    taken = {e.key for e in board.replaces.values()}
    for entry in board.entries:
        if entry.key in taken:
            continue
        days = [d for d in map(source_date, entry.sources) if d is not None]
        if days and max(days) > item.date:
            continue  # the entry speaks for a later day than the item
        why = replacement(entry.text, said, entry.section)
        if why is not None:
            if entry.pinned:
                board.notes[i] = (
                    f"states another value than the pinned entry {_quote(entry.text)} "
                    f"({why}; pinned: left as it is)"
                )
                continue
            board.fate[i] = "supersedes"
            board.replaces[i] = entry
            board.notes[i] = f"supersedes {_quote(entry.text)} ({why})"
            plan.superseded.append(Superseded(entry, item.source, item.text, why, date=item.date))
            return
        if _same_value(entry, said) and not lost_facts(said, [entry.text]):
            board.fate[i] = "merged"
            plan.merged.append(
                Merged(
                    item.source,
                    item.text,
                    f"MEMORY.md {entry.key}",
                    entry.text,
                    "already in MEMORY.md (the same value for the same subject)",
                )
            )
            return


def _same_value(entry: MemoryEntry, said: str) -> bool:
    return any(
        relation(new, old) == "same" for new in read_facts(said) for old in read_facts(entry.body)
    )


def settle_restatements(board: Board, plan: DreamPlan, similarity: Similarity) -> None:
    """Items no subject key settled: one that says what an entry says (alike, and every
    number, identifier, date and name of it in the entry) is merged; one that says all an entry
    says and more (every word of the entry in it, no negation added) replaces it in place."""
    edited: set[str] = set()
    for i in range(len(board.live)):
        if i in board.fate or not board.entries:
            continue
        item, said = board.live[i], board.said[i]
        row = board.to_memory[i]
        best = max(range(len(row)), key=lambda j: row[j])
        entry, score = board.entries[best], row[best]
        extra = tokens(plain_text(said)) - tokens(entry.body)
        if score >= similarity.duplicate and len(extra) <= 1 and not lost_facts(said, [entry.text]):
            board.fate[i] = "merged"
            plan.merged.append(
                Merged(
                    item.source,
                    item.text,
                    f"MEMORY.md {entry.key}",
                    entry.text,
                    f"already in MEMORY.md ({score:.2f} similar, every fact of it there)",
                )
            )
            continue
        if (
            score >= similarity.related
            and not entry.pinned
            and entry.key not in edited
            and _adds_to(entry, said)
        ):
            board.fate[i] = "refines"
            edited.add(entry.key)
            text = _CORRECTION_LABEL.sub("", said, count=1).strip()
            text = text[:1].upper() + text[1:]
            plan.edited.append(
                Edited(entry, text, (item.source,), "says all the entry says, and more")
            )


def _adds_to(entry: MemoryEntry, said: str) -> bool:
    """Whether `said` says all `entry` says and more: every content word and fact of the
    entry in it, something besides, and no negation the entry does not have."""
    words, new = tokens(entry.body), tokens(plain_text(said))
    if len(words) < 3 or not words <= new or len(new) <= len(words):
        return False
    if lost_facts(entry.text, [said]):
        return False
    return len(_NEGATION.findall(said)) <= len(_NEGATION.findall(entry.body))


def promote(
    board: Board,
    plan: DreamPlan,
    policy: Policy,
    similarity: Similarity,
    scored: Mapping[int, tuple[float, list[str], float]],
) -> list[tuple[float, Added]]:
    """The items left: near-duplicates whose values agree stand as one (the best of them); a
    lead is promoted when it scores enough, or always when it gives a newer value; a topic
    that only recurs is promoted once, and not when MEMORY.md has an entry about it."""
    fresh = [i for i in range(len(board.live)) if board.fate.get(i) in (None, "supersedes")]
    groups = _groups(fresh, board, similarity.duplicate)
    rank = {i: (scored[i][0], board.live[i].date, len(board.live[i].body)) for i in fresh}
    leads = sorted(
        ((max(g, key=rank.__getitem__), g) for g in groups),
        key=lambda pair: rank[pair[0]],
        reverse=True,
    )
    topics: list[int] = []  # leads promoted on recurrence alone
    additions: list[tuple[float, Added]] = []
    for lead, group in leads:
        promoted, reasons = _promoted(board, lead, scored[lead], topics, policy, similarity)
        _settle_group(board, plan, lead, group, promoted)
        for member in group:
            board.fate.setdefault(member, "promoted" if promoted else "passed")
        if not promoted:
            score = scored[lead][0]
            why = ", ".join(reasons) if reasons else "mentioned once, no salient tag"
            verdict = (
                f"score {score:.2f} < {policy.promote_at:g}"
                if score < policy.promote_at
                else f"score {score:.2f}, but"
            )
            item = board.live[lead]
            plan.skipped.append(Skipped(item.source, item.text, f"not promoted: {verdict} ({why})"))
            continue
        additions.append(
            (scored[lead][0], _addition(board, lead, reasons, scored[lead][0], similarity))
        )
    return additions


def _promoted(
    board: Board,
    lead: int,
    scored: tuple[float, list[str], float],
    topics: list[int],
    policy: Policy,
    similarity: Similarity,
) -> tuple[bool, list[str]]:
    score, reasons, recurrence = scored
    if lead in board.notes:
        return True, [*reasons, board.notes[lead]]
    promoted = score >= policy.promote_at
    if not promoted or score - recurrence >= policy.promote_at:
        return promoted, reasons
    covered = _best(board.to_memory[lead]) if board.entries else None
    earlier = next((t for t in topics if board.among[lead][t] >= similarity.related), None)
    if covered is not None and covered[1] >= similarity.related:
        entry = board.entries[covered[0]]
        return False, [
            *reasons,
            f'its topic is in MEMORY.md already ("{_quote(entry.text, 40)[1:-1]}", '
            f"{covered[1]:.2f} similar)",
        ]
    if earlier is not None:
        return False, [
            *reasons,
            f"{board.live[earlier].source} stands for its topic "
            f"({board.among[lead][earlier]:.2f} similar)",
        ]
    topics.append(lead)
    return True, reasons


def _settle_group(
    board: Board, plan: DreamPlan, lead: int, group: list[int], promoted: bool
) -> None:
    item = board.live[lead]
    for other in group:
        if other == lead:
            continue
        said = f"says what {item.source} says ({board.among[other][lead]:.2f} similar)"
        if promoted:
            plan.merged.append(
                Merged(
                    board.live[other].source,
                    board.live[other].text,
                    item.source,
                    board.said[lead],
                    said,
                )
            )
        else:
            plan.skipped.append(
                Skipped(board.live[other].source, board.live[other].text, f"not promoted: {said}")
            )


def _addition(
    board: Board, lead: int, reasons: list[str], score: float, similarity: Similarity
) -> Added:
    item = board.live[lead]
    replaced = board.replaces.get(lead)
    if replaced is not None:
        section, where = replaced.section or INBOX, "in the place of the entry it supersedes"
    else:
        similar = _best(board.to_memory[lead]) if board.entries else None
        near = (board.entries[similar[0]], similar[1]) if similar else None
        section, where = place(item.tags, board.memory, near, similarity.place_at)
    reason = ", ".join(r for r in reasons if r) + f"; score {score:.2f}; placed: {where}"
    text = board.said[lead]
    label = _CORRECTION_LABEL.match(text) if replaced is not None else None
    if label:  # what holds now, without its "Correction:" label
        text = text[label.end() :].strip()
        text = text[:1].upper() + text[1:]
    return Added(
        section,
        text,
        (item.source,),
        reason.lstrip(", "),
        score,
        item,
        replaces=replaced.key if replaced is not None else None,
    )


def _groups(indices: Sequence[int], board: Board, threshold: float) -> list[list[int]]:
    """Items alike (at least `threshold`) whose values agree (every fact of one in the
    other), joined."""
    parent = {i: i for i in indices}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a in indices:
        for b in indices:
            if a >= b or board.among[a][b] < threshold:
                continue
            if a in board.replaces or b in board.replaces:
                continue  # a newer value stands on its own
            if lost_facts(board.said[a], [board.said[b]]) and lost_facts(
                board.said[b], [board.said[a]]
            ):
                continue
            parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for i in indices:
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


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
    """The offline dream: which candidates join MEMORY.md (added, or in the place of an entry
    whose value they supersede), which say what is there already (merged), which refine an
    entry (reworded, its facts kept), which are junk or not worth it (skipped), and which
    existing entries make room (archived). See the stages above.

    `evidence` is every item of the window, consumed or not: a candidate that says again what
    an older item said recurs. `hits` counts how often search returned each line."""
    hits = hits or {}
    today = today or max((c.date for c in candidates), default=clock.today())
    plan = DreamPlan(consumed=list(candidates))
    # A line asking to forget something is a request, not a fact: it archives the entry it
    # names before anything else reads the entries.
    left = settle_forgets(memory, candidates, plan)
    live, said = screen(left, policy, plan)
    if not live:
        return plan
    board = read_board(memory, live, said, similarity, {a.entry.key for a in plan.archived})
    settle_by_subject(board, plan)
    settle_restatements(board, plan, similarity)
    fresh = [i for i in range(len(live)) if board.fate.get(i) in (None, "supersedes")]
    assessed = assess(
        [live[i] for i in fresh], policy, similarity, evidence=evidence, hits=hits, today=today
    )
    scored = {i: assessed[live[i].key] for i in fresh}
    additions = promote(board, plan, policy, similarity, scored)
    plan.added = [a for _, a in sorted(additions, key=lambda p: (-p[0], p[1].sources))]
    drop_duplicates(memory, plan)
    fit_budget(memory, plan, hits, today, policy)
    return plan


def same_text_key(text: str) -> str:
    """What two entries that say the same thing in the same words share: no bullet, comment,
    tag, pinned date, case, punctuation or spacing."""
    words = re.findall(r"[^\W_]+", unpin_dates(plain_text(text)).casefold())
    return " ".join(words)


def drop_duplicates(memory: MemoryDoc, plan: DreamPlan) -> None:
    """Additions that repeat, word for word, an entry of MEMORY.md (or an earlier addition)
    become merges: MEMORY.md never holds the same entry twice."""
    current = [e for e in memory.entries if not is_history(e.text)]
    seen = {same_text_key(e.text): f"MEMORY.md {e.key}" for e in current}
    texts = {f"MEMORY.md {e.key}": e.text for e in current}
    kept = []
    for added in plan.added:
        key = same_text_key(added.text)
        if key in seen and not added.replaces:
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


def fit_budget(
    memory: MemoryDoc, plan: DreamPlan, hits: HitCounts, today: dt.date, policy: Policy
) -> None:
    """Over the budget: history lines go first, then the least valuable unpinned entries, old
    ones to the archive (whole) and new ones back to the logs (not promoted), until the text
    fits."""
    budget = policy.max_memory_chars
    if len(render(memory, plan)) <= budget:
        return
    touched = {s.entry.key for s in plan.superseded} | {e.entry.key for e in plan.edited}
    touched |= {a.entry.key for a in plan.archived}
    pool: list[tuple[float, int, Any]] = []
    for order, entry in enumerate(memory.entries):
        if entry.pinned or entry.key in touched:
            continue
        count = hit_count("MEMORY.md", entry.text.split("\n"), hits)
        value = -1.0 if is_history(entry.text) else entry_value(entry, count, today, policy)
        pool.append((value, order, entry))
    for order, added in enumerate(plan.added):
        if not added.replaces:
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
            plan.archived.append(Archived(victim, why, budget=True))


def _quote(text: str, width: int = 60) -> str:
    return f'"{one_line(text, width)}"'


def add_supersessions(memory: MemoryDoc, items: Sequence[Item], plan: DreamPlan) -> None:
    """To a plan a model made: the supersessions the offline rule finds among the entries the
    plan keeps as they are (the model's own come first). The line that states the new value
    takes the old entry's place: the model's entry citing it, or the line itself; a merge of
    that line into the old entry is taken back."""
    # What the model claims for an entry counts only when it can stand: an archive citing a
    # line, a supersession whose line states a new value (checks.enforce refuses the rest).
    by_source = {i.source: i for i in items}
    touched = (
        {a.entry.key for a in plan.archived if a.sources}
        | {e.entry.key for e in plan.edited}
        | {
            s.entry.key
            for s in plan.superseded
            if s.by in by_source and replacement(s.entry.text, by_source[s.by].statement())
        }
    )
    kept = [
        e
        for e in memory.entries
        if e.key not in touched and not e.pinned and not is_history(e.text)
    ]
    for item in sorted(items, key=lambda i: (i.date, i.start_line), reverse=True):
        if junk_reason(item.text):
            continue
        statement = item.statement()
        for entry in kept:
            days = [d for d in map(source_date, entry.sources) if d is not None]
            if entry.key in touched or (days and max(days) > item.date):
                continue
            why = replacement(entry.text, statement, entry.section)
            if why is None:
                continue
            touched.add(entry.key)
            plan.superseded.append(Superseded(entry, item.source, item.text, why, date=item.date))
            plan.merged = [m for m in plan.merged if m.source != item.source]
            current = next(
                (a for a in plan.added if item.source in a.sources and not a.replaces), None
            )
            if current is None:
                text, _ = resolve_relative(statement, item.date)
                section = entry.section or INBOX
                current = Added(section, text, (item.source,), why, item=item, implied=True)
                plan.added.append(current)
            current.replaces, current.section = entry.key, entry.section or INBOX
