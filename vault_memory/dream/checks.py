"""The rules every dream plan passes before anything is written, offline or proposed by a model.

Two kinds:

- **Item by item** (`enforce`): each part of a plan (an entry added, reworded, superseded,
  archived, merged) is checked on its own; a part that breaks a rule is taken out and listed
  in `plan.refused` with why, and the valid rest applies. The rules:
  - *preservation*: no identifier, number, date, URL or name of an existing entry disappears.
    A rewording that drops one is refused, unless a line it cites states the replacement for
    that same subject (`search/subjects.py`): then it is a supersession, and the old entry
    moves, word for word, to the history. An archive needs the same (a cited line with the
    replacement) or a line from the person asking to forget it; only the size budget moves
    entries out whole, to `dreams/archive.md`;
  - *support*: what an entry says must be in the lines it cites (`capture.trust.support`:
    every number, identifier, date, URL and name, and enough of its content words); a
    supersession's line must state a new value for the entry's subject; a merge must not
    lose a value the merged line gives;
  - *safety*: never an instruction to an assistant, a shell command, a credential or a PIN
    (`capture.trust.unsafe_kind`), junk, a heading or an HTML comment; never a fact whose time
    is still relative (`dream/when.py`); never a change to a pinned entry or section.
- **The whole plan** (`validate`), on the rendered text itself: pinned entries and sections
  byte-identical, every untouched entry still there verbatim, no fact of an existing entry
  lost, the share of entries dropped and the size budget. A failure here refuses the dream.

Pure: plain data in, problems out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..capture import support, unsafe_kind
from ..files import MemoryDoc, MemoryEntry, parse_memory, plain_text
from ..search import read_facts, relation
from ..text import one_line
from .history import HISTORY, is_history, link_history
from .junk import junk_reason
from .plan import (
    Added,
    Archived,
    DreamPlan,
    Edited,
    Item,
    Merged,
    Policy,
    Refused,
    Superseded,
)
from .similarity import Similarity, tokens
from .when import resolve_relative, still_relative

#: A line from the person asking to forget something ("forget my old address", "please
#: delete the note about the dentist", "vergiss …").
FORGET = re.compile(
    r"\b(?:forget|delete|remove|erase|purge|drop)\b[^.!?]{0,80}|\bno longer (?:relevant|needed|"
    r"true)\b|\b(?:vergiss|vergessen|oublie|oublier|olvida|olvidar|glöm|dimentica|esquece)\b",
    re.IGNORECASE,
)
_ASSISTANT = re.compile(r"^\s*(?:assistant|ai|bot|model)\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class Problem:
    """A reason to refuse a whole plan. `forceable` problems (size, drop ratio) yield to
    --force; the others (pinned entries, invented sources, lost facts) never do."""

    message: str
    forceable: bool = False


# -- facts of entries ------------------------------------------------------------------------


def lost_facts(before: str, after: Sequence[str]) -> list[str]:
    """The numbers, identifiers, dates, URLs and names of `before` (an entry) that none of
    `after` holds."""
    found = support(plain_text(before), list(after))
    return [text for _, text in found.missing]


# A sentence that corrects an earlier value: "…, not Friday 13 Nov at 22:00", "instead of
# MySQL", "no longer on box-3".
_NEGATED = re.compile(
    r"\b(?:not|instead of|rather than|no longer)\s+(?P<what>[^.;!?()]{3,120})", re.IGNORECASE
)


def replacement(entry_text: str, line: str, section: str = "") -> str | None:
    """Why `line` (newer) states a new value for the subject of `entry_text`: the same subject
    key with another value (`search/subjects.py`), or a correction that names the entry's value
    as not the one ("…, not Friday 13 Nov at 22:00": every number, date and name of those words
    in the entry, and a word of the entry or its `section` title besides); None otherwise."""
    body = plain_text(entry_text)
    for new in read_facts(line):
        for old in read_facts(body):
            if relation(new, old) == "differs":
                subject = " ".join(new.subject)
                attribute = next(iter(sorted(new.attributes & old.attributes)), new.attribute)
                if new.negated:
                    return f"{subject}: {attribute} no longer {' '.join(old.value)}"
                return f"{subject}: {attribute} {' '.join(old.value)} -> {' '.join(new.value)}"
    negated = _NEGATED.search(line)
    if negated is None:
        return None
    what = negated["what"]
    exact = lost_facts(what, [""])  # the numbers, dates and names the negated words give
    if not exact or lost_facts(what, [body]):
        return None
    if not tokens(line.replace(what, " ")) & tokens(f"{section} {body}"):
        return None  # "the retro is not on Friday 13 Nov" names no word of the entry's subject
    return f'corrects it: says "not {what.strip()}"'


def forgets(line: Item, entry: MemoryEntry) -> bool:
    """Whether `line` is the person asking to forget `entry`: a "forget …" line, not the
    assistant's, about the entry."""
    text = line.said if line.flushed else line.text
    if _ASSISTANT.match(line.text) or not FORGET.search(text):
        return False
    return bool(tokens(entry.body) & tokens(text))


# -- new text --------------------------------------------------------------------------------


def text_problem(text: str, policy: Policy) -> str | None:
    """Why a text may not be an entry of MEMORY.md (an instruction, a shell command, a
    credential, junk, a heading, an HTML comment, too long), or None."""
    kind = unsafe_kind(text)
    if kind is None and "[REDACTED:" in text:
        # A secret the redactor took out (from a log, or from a model's text before this
        # check) leaves a marker: MEMORY.md holds no credential, not even a redacted one.
        kind = "credential"
    if kind is not None:
        what = {"instruction": "an instruction to an assistant", "shell-command": "a shell command"}
        return f"it is {what.get(kind, 'a credential or a PIN')}"
    if "<!--" in text or "-->" in text:
        return "it contains an HTML comment"
    if any(
        line.lstrip().startswith("#")
        and not line.lstrip().startswith("#[")
        and line.lstrip()[1:2].isspace()
        for line in text.split("\n")
    ):
        return "it contains a heading"
    junk = junk_reason(text)
    if junk:
        return f"it is junk ({junk})"
    if len(plain_text(text)) > policy.max_entry_chars:
        return f"it is longer than {policy.max_entry_chars} characters"
    return None


def unsupported(text: str, cited: Sequence[Item], also: Sequence[str] = ()) -> str | None:
    """Why the lines `cited` (and the texts `also`, e.g. the entry a rewording replaces) do not
    support `text`, or None."""
    sources: list[str | tuple[str, object]] = [(i.text, i.date) for i in cited]
    # with the dates the dream writes beside relative words ("this week (week of …)")
    sources += [resolve_relative(i.text, i.date)[0] for i in cited]
    sources += [i.date.isoformat() for i in cited]  # the day each line was said
    sources += list(also)
    found = support(plain_text(text), sources)  # type: ignore[arg-type]
    return None if found.supported else found.reason()


# -- item by item ----------------------------------------------------------------------------


def enforce(memory: MemoryDoc, plan: DreamPlan, inputs: Mapping[str, Item], policy: Policy) -> None:
    """Take out of `plan`, one by one, the parts that break a rule (listed in `plan.refused`
    with why), turn a rewording or an archive whose cited line states a replacement into a
    supersession, and leave unconsumed the lines only refused parts cited (a later dream tries
    them again). The rest of the plan stands."""
    _check_edits(memory, plan, inputs, policy)
    _check_archives(plan, inputs)
    _check_supersessions(memory, plan, inputs, policy)
    _check_additions(memory, plan, inputs, policy)
    _check_merges(memory, plan, inputs)
    _release_refused(plan)
    link_history(memory, plan)


def _refuse(plan: DreamPlan, what: str, text: str, reason: str, sources: Iterable[str]) -> None:
    plan.refused.append(Refused(what, " ".join(text.split()), reason, tuple(sources)))


def _cited(sources: Iterable[str], inputs: Mapping[str, Item]) -> list[Item]:
    return [inputs[s] for s in sources if s in inputs]


def _check_edits(
    memory: MemoryDoc, plan: DreamPlan, inputs: Mapping[str, Item], policy: Policy
) -> None:
    kept: list[Edited] = []
    for edit in plan.edited:
        old, what = edit.entry, f"rewording of {edit.entry.key}"
        cited = _cited(edit.sources, inputs)
        invented = [s for s in edit.sources if s not in inputs]
        if old.pinned:
            reason = "the entry is pinned"
        elif invented:
            reason = f"it cites {invented[0]!r}, which is not one of this dream's inputs"
        elif is_history(old.text):
            reason = "the entry is a history line"
        else:
            reason = text_problem(edit.text, policy) or ""
        if not reason:
            reason = unsupported(edit.text, cited, [old.body]) or ""
            if reason:
                reason = f"what it adds is not in the entry or its cited lines: {reason}"
        if reason:
            _refuse(plan, what, edit.text, reason, edit.sources)
            continue
        lost = lost_facts(old.text, [edit.text])
        if not lost:
            kept.append(edit)
            continue
        replacing = next(
            ((i, why) for i in cited if (why := replacement(old.text, i.statement(), old.section))),
            None,
        )
        if replacing is None:
            shown = ", ".join(f"'{t}'" for t in lost[:4])
            _refuse(
                plan,
                what,
                edit.text,
                f"it drops {shown} of the entry and no line it cites states a replacement "
                "for that subject",
                edit.sources,
            )
            continue
        item, why = replacing
        _supersede(plan, old, item, edit.text, edit.sources, f"{edit.reason}; {why}")
    plan.edited = kept


def _supersede(
    plan: DreamPlan,
    old: MemoryEntry,
    item: Item,
    text: str,
    sources: Sequence[str],
    reason: str,
) -> None:
    """`old` gives way to `text` (citing `item`): the new text takes its place, the old one
    moves to the history."""
    section = old.section or "Inbox"
    plan.added.append(Added(section, text, tuple(sources), reason, item=item, replaces=old.key))
    plan.superseded.append(Superseded(old, item.source, item.text, reason, date=item.date))


def _check_archives(plan: DreamPlan, inputs: Mapping[str, Item]) -> None:
    kept: list[Archived] = []
    for archived in plan.archived:
        old, what = archived.entry, f"archive of {archived.entry.key}"
        if archived.budget:
            kept.append(archived)  # moved whole to dreams/archive.md: nothing is lost
            continue
        if old.pinned:
            _refuse(plan, what, old.text, "the entry is pinned", archived.sources)
            continue
        cited = _cited(archived.sources, inputs)
        if archived.asked and any(forgets(i, old) for i in cited):
            kept.append(archived)  # the person's own request, read before any replacement
            continue
        replacing = next(
            ((i, why) for i in cited if (why := replacement(old.text, i.statement(), old.section))),
            None,
        )
        if replacing is not None:
            item, why = replacing
            _supersede(plan, old, item, item.statement(), (item.source,), why)
            continue
        if any(forgets(i, old) for i in cited):
            kept.append(archived)
            continue
        _refuse(
            plan,
            what,
            old.text,
            "nothing replaces it: it cites no line that states a new value for its subject "
            "and no line from the person asking to forget it",
            archived.sources,
        )
    plan.archived = kept


def _check_supersessions(
    memory: MemoryDoc, plan: DreamPlan, inputs: Mapping[str, Item], policy: Policy
) -> None:
    kept: list[Superseded] = []
    seen: set[str] = set()
    for marked in plan.superseded:
        old, what = marked.entry, f"supersession of {marked.entry.key}"
        item = inputs.get(marked.by)
        if item is None:
            reason = f"{marked.by!r} is not one of this dream's inputs"
        elif old.pinned:
            reason = "the entry is pinned"
        elif old.key in seen or is_history(old.text):
            reason = "the entry is already superseded"
        elif replacement(old.text, item.statement(), old.section) is None:
            reason = f"{marked.by} states no new value for the entry's subject"
        else:
            reason = ""
        if reason:
            _refuse(plan, what, old.text, reason, (marked.by,))
            for added in plan.added:  # what it proposed as the current value: an addition
                if added.replaces == old.key and marked.by in added.sources:
                    added.replaces = None
            plan.added = [a for a in plan.added if not (a.implied and a.replaces is None)]
            continue
        seen.add(old.key)
        kept.append(marked)
    plan.superseded = kept


def _check_additions(
    memory: MemoryDoc, plan: DreamPlan, inputs: Mapping[str, Item], policy: Policy
) -> None:
    kept: list[Added] = []
    superseded = {s.entry.key for s in plan.superseded}
    for added in plan.added:
        reason = _addition_problem(memory, added, inputs, policy)
        if added.replaces and added.replaces not in superseded:
            reason = reason or "the entry it would replace is not superseded"
        if reason:
            _refuse(plan, "new entry", added.text, reason, added.sources)
            if added.replaces:  # no current value: the old entry stays where it is
                plan.superseded = [s for s in plan.superseded if s.entry.key != added.replaces]
            continue
        kept.append(added)
    plan.added = kept


def _addition_problem(
    memory: MemoryDoc, added: Added, inputs: Mapping[str, Item], policy: Policy
) -> str:
    if not added.sources:
        return "it names no source"
    invented = [s for s in added.sources if s not in inputs]
    if invented:
        return f"it cites {invented[0]!r}, which is not one of this dream's inputs"
    target = memory.section(added.section)
    if target is not None and target.pinned and not added.replaces:
        return f"it would go to the pinned section ## {target.title}"
    if added.section.strip().lower() == HISTORY.lower() and not added.replaces:
        return "new entries do not go to the history"
    problem = text_problem(added.text, policy)
    if problem:
        return problem
    cited = _cited(added.sources, inputs)
    relative = still_relative(added.text, cited[0].date)
    if relative:
        return f"its time is still relative ({', '.join(repr(r) for r in relative[:3])})"
    missing = unsupported(added.text, cited)
    return f"its cited lines do not say it: {missing}" if missing else ""


def _check_merges(memory: MemoryDoc, plan: DreamPlan, inputs: Mapping[str, Item]) -> None:
    texts = {f"MEMORY.md {e.key}": e.text for e in memory.entries}
    texts.update({a.sources[0]: a.text for a in plan.added if a.sources})
    kept: list[Merged] = []
    for merged in plan.merged:
        item = inputs.get(merged.source)
        if item is None:
            _refuse(
                plan,
                "merge",
                merged.text,
                f"{merged.source!r} is not one of this dream's inputs",
                (),
            )
            continue
        into = texts.get(merged.into, merged.into_text)
        lost = lost_facts(item.statement(), [into]) if into else []
        if lost:
            shown = ", ".join(f"'{t}'" for t in lost[:4])
            _refuse(
                plan,
                "merge",
                item.text,
                f"the entry it would merge into does not say {shown}",
                (merged.source,),
            )
            continue
        kept.append(merged)
    plan.merged = kept


def _release_refused(plan: DreamPlan) -> None:
    """The lines only refused parts cite stay unconsumed: a later dream tries them again."""
    used = {s for a in plan.added for s in a.sources} | {m.source for m in plan.merged}
    used |= {s for e in plan.edited for s in e.sources} | {s.by for s in plan.superseded}
    refused = {s for r in plan.refused for s in r.sources} - used
    if refused:
        plan.consumed = [i for i in plan.consumed if i.source not in refused]


# -- the whole plan --------------------------------------------------------------------------


def validate(
    memory: MemoryDoc,
    plan: DreamPlan,
    new_text: str,
    policy: Policy,
    sources: Iterable[str],
    similarity: Similarity | None = None,
) -> list[Problem]:
    """Every guardrail the whole plan must pass before MEMORY.md is written, checked on the
    rendered text itself (not trusting the plan): pinned entries and sections byte-identical,
    every untouched entry still there verbatim, no fact of an existing entry lost, only real
    sources, the size budget and the share of existing entries dropped."""
    known = set(sources)
    after = parse_memory(new_text)
    problems = _entries_kept(memory, plan, after)
    problems += _pinned_sections_kept(memory, after)
    problems += _facts_kept(memory, plan, new_text)
    for added in plan.added:
        if not added.sources:
            problems.append(Problem(f"the new entry {_quote(added.text)} names no source"))
        for source in added.sources:
            if source not in known:
                problems.append(
                    Problem(
                        f"the new entry {_quote(added.text)} cites {source!r}, "
                        "which is not one of this dream's inputs"
                    )
                )
    problems += _size_problems(memory, plan, new_text, policy, similarity)
    return problems


def _entries_kept(memory: MemoryDoc, plan: DreamPlan, after: MemoryDoc) -> list[Problem]:
    problems: list[Problem] = []
    counts: dict[str, int] = {}
    for entry in after.entries:
        counts[entry.text] = counts.get(entry.text, 0) + 1
    touched = {a.entry.key for a in plan.archived} | {e.entry.key for e in plan.edited}
    touched |= {s.entry.key for s in plan.superseded}
    for entry in memory.entries:
        if entry.pinned and entry.key in touched:
            problems.append(
                Problem(f"it would change or remove the pinned entry {_quote(entry.text)}")
            )
        elif entry.key not in touched:
            if counts.get(entry.text, 0) <= 0:
                problems.append(Problem(f"it would lose the entry {_quote(entry.text)}"))
            else:
                counts[entry.text] -= 1
    return problems


def _pinned_sections_kept(memory: MemoryDoc, after: MemoryDoc) -> list[Problem]:
    problems = []
    for section in memory.sections:
        if not section.pinned:
            continue
        old = "".join(memory.lines[section.start : section.end]).rstrip("\r\n")
        new = after.section(section.title)
        if new is None or "".join(after.lines[new.start : new.end]).rstrip("\r\n") != old:
            problems.append(Problem(f"it would change the pinned section ## {section.title}"))
    return problems


def _facts_kept(memory: MemoryDoc, plan: DreamPlan, new_text: str) -> list[Problem]:
    """The invariant, on the text to be written: every fact of every existing entry is still
    in MEMORY.md (or in the archive, for an entry the budget moved there whole)."""
    archived = [a.entry.text for a in plan.archived]
    where = [plain_text(new_text), *archived]
    problems = []
    for entry in memory.entries:
        lost = lost_facts(entry.text, where)
        if lost:
            shown = ", ".join(f"'{t}'" for t in lost[:4])
            problems.append(Problem(f"it would lose {shown} of the entry {_quote(entry.text)}"))
    return problems


def _size_problems(
    memory: MemoryDoc,
    plan: DreamPlan,
    new_text: str,
    policy: Policy,
    similarity: Similarity | None,
) -> list[Problem]:
    problems = []
    # An entry the person asked to forget is theirs to drop: only the others count.
    dropped = len([a for a in plan.archived if not a.asked])
    if similarity is not None:
        dropped += sum(
            similarity.pair(plain_text(e.text), e.entry.body) < similarity.related
            for e in plan.edited
        )
    existing = len([e for e in memory.entries if not is_history(e.text)])
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


def _quote(text: str, width: int = 60) -> str:
    return f'"{one_line(text, width)}"'
