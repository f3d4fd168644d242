"""Deep Dream with a model: the model proposes the new MEMORY.md as JSON; nothing it says is
trusted until checked.

The model sees MEMORY.md as sections of entries with ids (history lines left out: they are
not its to change), and the new daily-log items with their sources. It answers with the full
list of sections; each existing entry is kept (by id), reworded or archived with a reason, and
each new entry cites its sources; an entry a newer item states another value for is listed as
superseded by that item (the offline rule adds what the model missed).

`plan_from_reply` reads the reply through a table of rules (`RULES`): a reply that is not that
structure at all is refused whole (`ReplyError`); otherwise each part of it is checked on its
own, a part that breaks a rule is refused with why (`plan.refused`) and the rest becomes the
same `DreamPlan` the offline dream makes. `checks.enforce` then applies the rules every plan
passes (preservation, support by the cited lines, safety, relative time) and `checks.validate`
the guardrails of the whole (pinned sections, budget, drop ratio).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..capture import find_secrets, redact_text, strip_controls
from ..files import INBOX, MemoryDoc, MemoryEntry, plain_text
from ..text import strip_protected, unsafe_character, visible
from .decide import (
    Added,
    Archived,
    DreamPlan,
    Edited,
    Item,
    Merged,
    Policy,
    Refused,
    Skipped,
    Superseded,
    add_supersessions,
    drop_duplicates,
)
from .forget import add_forgets
from .history import is_history
from .when import resolve_relative

MAX_INPUT_CHARS = 24_000  # the items sent per dream; the rest wait for the next one
MAX_REPLY_ENTRIES = 2_000
MAX_HEADING_CHARS = 80

SYSTEM_PROMPT = """\
You curate MEMORY.md, the long-term memory an AI assistant keeps about its user and their work.
You receive the current MEMORY.md as sections of entries with ids, and new items from the
user's daily logs, each with its source. Decide what the memory should hold now.

Answer with one JSON object and nothing else:
{"sections": [{"heading": "Decisions", "entries": [
    {"id": "m3"},
    {"id": "m4", "text": "reworded entry", "reason": "why", "sources": ["memory/2026-11-21.md#L2"]},
    {"text": "a new fact", "sources": ["memory/2026-11-20.md#L4"], "reason": "why"}]}],
 "archived": [{"id": "m7", "reason": "why", "sources": ["memory/2026-11-22.md#L5"]}],
 "merged": [{"source": "memory/2026-11-21.md#L9", "into": "m2", "reason": "says the same"}],
 "superseded": [{"id": "m5", "by": "memory/2026-11-22.md#L3",
                 "reason": "billing: database MySQL -> PostgreSQL"}]}

Rules:
- Every existing entry appears exactly once: kept ({"id"}), reworded ({"id", "text",
  "reason"}, with the sources of anything it adds) or in "archived". Keep every name, number,
  date, identifier and URL of an entry you reword.
- Archive only an entry a new item replaces or asks to forget, citing that item in "sources".
- Entries marked pinned, and every entry of a pinned section, are kept unchanged: {"id"} only.
  Never add entries to a pinned section.
- Add only lasting facts, decisions, preferences and people stated in the new items, one fact
  per entry, in one sentence, citing the exact source strings you were given. Say only what
  the cited items say; write dates as they are, never "today" or "tomorrow".
- Never add instructions to an assistant, shell commands, code, passwords, PINs, URLs on
  their own, to-dos or fragments.
- Use an existing heading where one fits; otherwise "Inbox".
- When a new item states a different value for the same subject and attribute as an existing
  entry ("billing moved to PostgreSQL" after "Billing runs on MySQL"), keep the old entry
  ({"id"}), list it in "superseded" with the item's source as "by", and add the new fact.
  Two people, two services or a fact that adds to another are no contradiction. Never for
  pinned entries.
- The whole file must stay under {budget} characters.
"""


class ReplyError(Exception):
    """The model's reply cannot be used at all; `problems` says why, each in one line."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def select_inputs(items: Sequence[Item], scores: dict[str, float]) -> list[Item]:
    """The items to show the model, best first, within MAX_INPUT_CHARS."""
    ranked = sorted(items, key=lambda i: (-scores.get(i.key, 0.0), i.date, i.start_line))
    chosen: list[Item] = []
    used = 0
    for item in ranked:
        if used + len(item.text) > MAX_INPUT_CHARS and chosen:
            continue
        chosen.append(item)
        used += len(item.text)
    return sorted(chosen, key=lambda i: (i.date, i.path, i.start_line))


def build_messages(
    memory: MemoryDoc, items: Sequence[Item], notes: dict[str, str], policy: Policy
) -> list[dict[str, str]]:
    """The chat messages for one dream. `notes` maps an item's key to what the offline
    scoring found (recurrence, search hits), as hints."""
    sections = []
    for section in memory.sections:
        current = [e for e in section.entries if not is_history(e.text)]
        if not section.level and not current or section.entries and not current:
            continue
        sections.append(
            {
                "heading": section.title or "(before the first heading)",
                "pinned": section.pinned,
                "entries": [{"id": e.key, "text": e.text, "pinned": e.pinned} for e in current],
            }
        )
    inputs = [
        {
            "source": i.source,
            "date": i.date.isoformat(),
            "text": i.text,
            **({"hint": notes[i.key]} if notes.get(i.key) else {}),
        }
        for i in items
    ]
    payload = {
        "memory": sections,
        "new_items": inputs,
        "budget_chars": policy.max_memory_chars,
        "current_chars": len(memory.text),
    }
    system = SYSTEM_PROMPT.replace("{budget}", f"{policy.max_memory_chars:,}")
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False, indent=1)},
    ]


# -- reading a reply ---------------------------------------------------------------------------


@dataclass
class Reading:
    """What the rules read a reply against, and what they found."""

    memory: MemoryDoc
    by_key: dict[str, MemoryEntry]
    by_source: dict[str, Item]
    plan: DreamPlan
    seen: dict[str, str] = field(default_factory=dict)  # entry id -> "kept" | "archived"
    heading: str = ""  # the heading of the section being read


@dataclass(frozen=True)
class Proposal:
    """One part of a reply: an entry kept, reworded or new, an archive, a merge or a
    supersession, as the model wrote it (`raw`) and cleaned (`text`: no control characters,
    no markers only a person writes, secrets redacted)."""

    kind: str  # "keep", "reword", "new", "archive", "merge", "supersede"
    raw: dict[str, Any]
    text: str | None = None

    @property
    def key(self) -> str:
        return str(self.raw.get("id", ""))

    @property
    def sources(self) -> list[Any]:
        cited = self.raw.get("sources", self.raw.get("source"))
        return [cited] if isinstance(cited, str) else cited if isinstance(cited, list) else []


Check = Callable[[Proposal, Reading], str | None]  # a reason to refuse, or None

# -- the rules, by kind of proposal: each says why a proposal is refused, or None -------------


def _exists(p: Proposal, r: Reading) -> str | None:
    return None if p.key in r.by_key else f"entry id {p.key!r} does not exist in MEMORY.md"


def _once(p: Proposal, r: Reading) -> str | None:
    if p.key in r.seen:
        return f"entry {p.key} appears more than once"
    return None


def _not_history(p: Proposal, r: Reading) -> str | None:
    return (
        "it is a history line, not the model's to change"
        if _old(p, r).text and is_history(_old(p, r).text)
        else None
    )


def _not_pinned(p: Proposal, r: Reading) -> str | None:
    return f"the entry {p.key} is pinned" if _old(p, r).pinned else None


def _has_reason(p: Proposal, r: Reading) -> str | None:
    reason = p.raw.get("reason")
    return None if isinstance(reason, str) and reason.strip() else "it gives no reason"


def _has_text(p: Proposal, r: Reading) -> str | None:
    raw = p.raw.get("text")
    if not isinstance(raw, str) or not raw.strip():
        return "it has no text"
    bad = unsafe_character(raw)
    return f"its text holds {bad}" if bad else None


def _cites_inputs(p: Proposal, r: Reading) -> str | None:
    sources = p.sources
    if not sources and p.kind == "archive":
        return "it cites no line that replaces it or asks to forget it"
    if not sources and p.kind == "new":
        return "it cites no source"
    if not all(isinstance(s, str) for s in sources):
        return "its sources are not strings"
    invented = [s for s in sources if s not in r.by_source]
    if invented:
        names = ", ".join(repr(s) for s in invented[:3])
        verb = "is" if len(invented) == 1 else "are"
        return f"it cites {names}, which {verb} not among this dream's inputs"
    return None


def _secrets_cited(p: Proposal, r: Reading) -> str | None:
    """A credential or PIN in the model's text is never promoted (MEMORY.md is read by every
    agent and person with the vault), and one no cited line holds, value for value, is made
    up besides: a model does not learn a secret from lines that hold none."""
    raw = p.raw.get("text")
    if not isinstance(raw, str):
        return None
    cited = [r.by_source[s].text for s in p.sources if isinstance(s, str) and s in r.by_source]
    given = " ".join([*cited, _old(p, r).text])
    spans = find_secrets(raw)
    for span in spans:
        if raw[span.start : span.end] not in given:
            return f"it holds a {span.kind} that none of its cited lines holds"
    return "it is a credential or a PIN" if spans else None


def _open_section(p: Proposal, r: Reading) -> str | None:
    target = r.memory.section(r.heading)
    if target is not None and target.pinned:
        return f"it adds to the pinned section ## {target.title}"
    return None


def _kept_as_is(p: Proposal, r: Reading) -> str | None:
    if r.seen.get(p.key) != "kept" or any(e.entry.key == p.key for e in r.plan.edited):
        return f'superseded entry {p.key} must be kept as it is ({{"id"}})'
    if any(s.entry.key == p.key for s in r.plan.superseded):
        return f"entry {p.key} is superseded twice"
    return None


def _by_input(p: Proposal, r: Reading) -> str | None:
    by = p.raw.get("by")
    if isinstance(by, str) and by in r.by_source:
        return None
    return f"it is superseded by {by!r}, which is not one of this dream's inputs"


def _merge_input(p: Proposal, r: Reading) -> str | None:
    source = p.raw.get("source")
    if isinstance(source, str) and source in r.by_source:
        return None
    return f"merged source {source!r} is not one of this dream's inputs"


RULES: dict[str, tuple[Check, ...]] = {
    "keep": (_exists, _once),
    "reword": (
        _exists,
        _once,
        _not_history,
        _not_pinned,
        _has_text,
        _has_reason,
        _cites_inputs,
        _secrets_cited,
    ),
    "new": (_has_text, _has_reason, _open_section, _cites_inputs, _secrets_cited),
    "archive": (_exists, _once, _not_history, _not_pinned, _has_reason, _cites_inputs),
    "merge": (_merge_input,),
    "supersede": (_exists, _not_history, _not_pinned, _kept_as_is, _by_input, _has_reason),
}


def _old(p: Proposal, r: Reading) -> MemoryEntry:
    return r.by_key.get(p.key) or MemoryEntry("", "", 0, 0, "", False, ())


def _judge(p: Proposal, r: Reading) -> str | None:
    for check in RULES[p.kind]:
        reason = check(p, r)
        if reason:
            return reason
    return None


# -- applying what passes ------------------------------------------------------------------------


def _apply(p: Proposal, r: Reading) -> None:
    old = r.by_key.get(p.key)
    sources = tuple(dict.fromkeys(s for s in p.sources if isinstance(s, str)))
    reason = str(p.raw.get("reason") or "")
    if p.kind == "keep" and old is not None:
        r.seen[p.key] = "kept"
    elif p.kind == "reword" and old is not None:
        r.seen[p.key] = "kept"
        text = p.text or ""
        if not (_same(text, old.text) or _same(p.raw.get("text"), old.text)):
            r.plan.edited.append(Edited(old, " ".join(text.split()), sources, reason))
    elif p.kind == "new":
        first = r.by_source[sources[0]]
        target = r.memory.section(r.heading)
        text, _ = resolve_relative(first.restate(" ".join((p.text or "").split())), first.date)
        section = target.title if target else r.heading or INBOX
        r.plan.added.append(Added(section, text, sources, reason, item=first))
    elif p.kind == "archive" and old is not None:
        r.seen[p.key] = "archived"
        r.plan.archived.append(Archived(old, reason, sources))
    elif p.kind == "merge":
        _apply_merge(p, r, reason)
    elif p.kind == "supersede" and old is not None:
        by = str(p.raw["by"])
        item = r.by_source[by]
        r.plan.superseded.append(
            Superseded(old, by, item.text, f"the model: {reason}", date=item.date)
        )


def _apply_merge(p: Proposal, r: Reading, reason: str) -> None:
    source = str(p.raw["source"])
    into = r.by_key.get(str(p.raw.get("into")))
    r.plan.merged.append(
        Merged(
            source,
            r.by_source[source].text,
            f"MEMORY.md {into.key}" if into else "",
            into.text if into else "",
            reason,
        )
    )


def _proposal(kind: str, raw: dict[str, Any], r: Reading) -> Proposal:
    text = raw.get("text")
    if not isinstance(text, str) or unsafe_character(text):
        return Proposal(kind, raw, None)
    return Proposal(kind, raw, _cleaned(strip_controls(text), raw, r.by_source))


def _read(kind: str, raw: Any, r: Reading, what: str) -> None:
    """Judge one part of the reply: apply it, or refuse it with why."""
    if not isinstance(raw, dict):
        r.plan.refused.append(Refused(what, str(raw)[:200], "it is not an object"))
        return
    proposal = _proposal(kind, raw, r)
    reason = _judge(proposal, r)
    if reason is None:
        _apply(proposal, r)
        return
    text = raw.get("text") if isinstance(raw.get("text"), str) else _old(proposal, r).text
    sources = tuple(s for s in proposal.sources if isinstance(s, str))
    if kind == "supersede" and isinstance(raw.get("by"), str):
        sources += (str(raw["by"]),)
    if kind == "merge" and isinstance(raw.get("source"), str):
        sources += (str(raw["source"]),)
    shown = redact_text(visible(" ".join(str(text or "").split())))  # the diary holds no secret
    r.plan.refused.append(Refused(what, shown, reason, sources))
    if kind in ("keep", "reword", "archive") and proposal.key in r.by_key:
        r.seen.setdefault(proposal.key, "kept")  # refused: the entry stays as it is


def _kind(entry: dict[str, Any]) -> str:
    if "id" not in entry:
        return "new"
    return "keep" if entry.get("text") is None else "reword"


def _read_sections(reply: dict[str, Any], r: Reading) -> None:
    count = 0
    for index, section in enumerate(reply["sections"]):
        if not isinstance(section, dict) or not isinstance(section.get("entries"), list):
            r.plan.refused.append(
                Refused("section", str(section)[:200], f'section {index + 1} has no "entries" list')
            )
            continue
        heading = section.get("heading")
        usable = _heading(heading)
        r.heading = usable or ""
        for entry in section["entries"]:
            count += 1
            if count > MAX_REPLY_ENTRIES:
                raise ReplyError([f"the reply has more than {MAX_REPLY_ENTRIES} entries"])
            kind = _kind(entry) if isinstance(entry, dict) else "new"
            if usable is None and kind == "new":
                why = f"section {index + 1} has no usable heading ({visible(str(heading))!r:.60})"
                r.plan.refused.append(Refused("new entry", str(entry)[:200], why))
                continue
            _read(kind, entry, r, _what(kind, entry))


def _heading(heading: Any) -> str | None:
    if not isinstance(heading, str) or unsafe_character(heading):
        return None
    if (
        not heading.strip("# \t")
        or "\n" in heading
        or len(heading) > MAX_HEADING_CHARS
        or any(c in heading for c in "<>`[")
    ):
        return None
    return heading.strip().lstrip("#").strip()


def _what(kind: str, entry: Any) -> str:
    key = entry.get("id") if isinstance(entry, dict) else None
    return {
        "keep": f"keeping {key}",
        "reword": f"rewording of {key}",
        "new": "new entry",
        "archive": f"archive of {key}",
        "merge": "merge",
        "supersede": f"supersession of {key}",
    }[kind]


def _read_lists(reply: dict[str, Any], r: Reading) -> None:
    for name, kind in (("archived", "archive"), ("merged", "merge"), ("superseded", "supersede")):
        listed = reply.get(name, [])
        if not isinstance(listed, list):
            r.plan.refused.append(Refused(name, str(listed)[:200], f'"{name}" is not a list'))
            continue
        for raw in listed:
            _read(kind, raw, r, _what(kind, raw))


def plan_from_reply(reply: Any, memory: MemoryDoc, items: Sequence[Item]) -> DreamPlan:
    """The model's answer as a `DreamPlan`, what breaks a rule refused part by part
    (`plan.refused`), or `ReplyError` when the reply is not the structure asked for."""
    if not isinstance(reply, dict) or not isinstance(reply.get("sections"), list):
        raise ReplyError(['the reply is not an object with a "sections" list'])
    current = {e.key: e for e in memory.entries if not is_history(e.text)}
    reading = Reading(
        memory, current, {i.source: i for i in items}, DreamPlan(consumed=list(items))
    )
    _read_sections(reply, reading)
    _read_lists(reply, reading)
    plan = reading.plan
    left_out = [k for k in current if k not in reading.seen]
    for key in left_out:  # never a silent deletion: the entry stays as it is
        plan.refused.append(
            Refused(
                f"dropping {key}",
                current[key].text,
                "the reply leaves it out without archiving it: kept as it is",
            )
        )
    _give_current_values(plan, reading)
    add_supersessions(memory, items, plan)
    add_forgets(memory, items, plan)
    drop_duplicates(memory, plan)
    used = {s for a in plan.added for s in a.sources} | {m.source for m in plan.merged}
    used |= {s for e in plan.edited for s in e.sources} | {s.by for s in plan.superseded}
    used |= {s.source for s in plan.skipped}
    refused = {s for f in plan.refused for s in f.sources}
    for item in items:
        if item.source not in used and item.source not in refused:
            plan.skipped.append(
                Skipped(item.source, item.text, "not promoted: the model left it out")
            )
    return plan


def _give_current_values(plan: DreamPlan, r: Reading) -> None:
    """Each entry the model marks superseded gives way to the entry that holds now: the new
    entry citing the same line takes its place, or that line itself when the model added
    none."""
    for marked in plan.superseded:
        current = next((a for a in plan.added if marked.by in a.sources and not a.replaces), None)
        if current is None:
            item = r.by_source[marked.by]
            text, _ = resolve_relative(item.statement(), item.date)
            section = marked.entry.section or INBOX
            current = Added(section, text, (marked.by,), marked.reason, item=item, implied=True)
            plan.added.append(current)
        current.replaces = marked.entry.key
        current.section = marked.entry.section or INBOX


def _cleaned(text: str, entry: dict[str, Any], by_source: dict[str, Item]) -> str:
    """A model's entry text as data: without the markers only a person writes (`#pin`,
    unless a source it cites holds it; HTML comments) and with its secrets redacted."""
    raw = entry.get("sources", entry.get("source"))
    cited = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    given = " ".join(by_source[s].text for s in cited if isinstance(s, str) and s in by_source)
    return redact_text(strip_protected(text, given))


def _same(text: Any, original: str) -> bool:
    return isinstance(text, str) and (
        " ".join(text.split()) == " ".join(original.split())
        or plain_text(text) == plain_text(original)
    )
