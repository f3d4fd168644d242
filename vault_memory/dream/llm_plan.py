"""Deep Dream with a model: the model proposes the new MEMORY.md as JSON; nothing it says is
trusted until checked.

The model sees MEMORY.md as sections of entries with ids, and the new daily-log items with
their sources. It answers with the full list of sections; each existing entry is kept (by id),
reworded or archived with a reason, and each new entry cites its sources; an entry a newer item
states another value for is kept and listed as superseded by that item (the offline rule adds
what the model missed). `plan_from_reply`
turns that into the same `DreamPlan` the offline dream makes, refusing (with every reason) a
reply that is not that structure, loses an entry without archiving it, touches a pinned entry
or section, or cites a source that was not given. `dream.validate` then applies the guardrails
shared with the offline dream (budget, drop ratio, junk) to the rendered text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..files import INBOX, MemoryDoc, plain_text
from ..text import strip_protected, unsafe_character, visible
from .decide import (
    Added,
    Archived,
    DreamPlan,
    Edited,
    Item,
    Merged,
    Policy,
    Skipped,
    Superseded,
    add_offline_supersessions,
    drop_duplicates,
)

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
    {"id": "m4", "text": "reworded entry", "reason": "why"},
    {"text": "a new fact", "sources": ["memory/2026-11-20.md#L4"], "reason": "why"}]}],
 "archived": [{"id": "m7", "reason": "why it no longer belongs in memory"}],
 "merged": [{"source": "memory/2026-11-21.md#L9", "into": "m2", "reason": "says the same"}],
 "superseded": [{"id": "m5", "by": "memory/2026-11-22.md#L3",
                 "reason": "billing: database MySQL -> PostgreSQL"}]}

Rules:
- Every existing entry appears exactly once: kept ({"id"}), reworded ({"id", "text",
  "reason"}) or in "archived" with a reason. Archive only what is outdated or superseded.
- Entries marked pinned, and every entry of a pinned section, are kept unchanged: {"id"} only.
  Never add entries to a pinned section.
- Add only lasting facts, decisions, preferences and people stated in the new items, one fact
  per entry, in one sentence, citing the exact source strings you were given.
- Never add shell commands, code, metadata, URLs on their own, to-dos or fragments.
- Use an existing heading where one fits; otherwise "Inbox".
- When a new item states a different value for the same subject and attribute as an existing
  entry ("billing moved to PostgreSQL" after "Billing runs on MySQL"), keep the old entry
  ({"id"}), list it in "superseded" with the item's source as "by", and add the new fact.
  Two people, two services or a fact that adds to another are no contradiction. Never for
  pinned entries.
- The whole file must stay under {budget} characters.
"""


class ReplyError(Exception):
    """The model's reply cannot be used; `problems` says why, each in one line."""

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
        if not section.level and not section.entries:
            continue
        sections.append(
            {
                "heading": section.title or "(before the first heading)",
                "pinned": section.pinned,
                "entries": [
                    {"id": e.key, "text": e.text, "pinned": e.pinned} for e in section.entries
                ],
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


def plan_from_reply(reply: Any, memory: MemoryDoc, items: Sequence[Item]) -> DreamPlan:
    """The model's answer as a `DreamPlan`, or `ReplyError` listing everything wrong with it."""
    problems: list[str] = []
    if not isinstance(reply, dict) or not isinstance(reply.get("sections"), list):
        raise ReplyError(['the reply is not an object with a "sections" list'])
    by_key = {e.key: e for e in memory.entries}
    by_source = {i.source: i for i in items}
    plan = DreamPlan(consumed=list(items))
    seen: dict[str, str] = {}  # entry id -> how it was used
    count = 0
    for s_index, section in enumerate(reply["sections"]):
        if not isinstance(section, dict) or not isinstance(section.get("entries"), list):
            problems.append(f'section {s_index + 1} is not an object with an "entries" list')
            continue
        heading = section.get("heading")
        if isinstance(heading, str) and (bad := unsafe_character(heading)):
            problems.append(f"section {s_index + 1}'s heading holds {bad}")
            continue
        if (
            not isinstance(heading, str)
            or not heading.strip("# \t")
            or "\n" in heading
            or len(heading) > MAX_HEADING_CHARS
            or any(c in heading for c in "<>`[")
        ):
            problems.append(f"section {s_index + 1} has no usable heading ({heading!r:.60})")
            continue
        heading = heading.strip().lstrip("#").strip()
        target = memory.section(heading)
        for entry in section["entries"]:
            count += 1
            if count > MAX_REPLY_ENTRIES:
                raise ReplyError([f"the reply has more than {MAX_REPLY_ENTRIES} entries"])
            if not isinstance(entry, dict):
                problems.append(f"an entry under {heading!r} is not an object")
                continue
            text, reason = entry.get("text"), entry.get("reason")
            raw_text = text
            if isinstance(text, str):
                if bad := unsafe_character(text):
                    problems.append(f"the entry {_short(visible(text))} holds {bad}")
                    continue
                text = _cleaned(text, entry, by_source)
            if isinstance(reason, str) and unsafe_character(reason):
                reason = " ".join("".join(c for c in reason if not unsafe_character(c)).split())
            if "id" in entry:
                key = str(entry["id"])
                old = by_key.get(key)
                if old is None:
                    problems.append(f"entry id {key!r} does not exist in MEMORY.md")
                    continue
                if key in seen:
                    problems.append(f"entry {key} appears more than once")
                    continue
                seen[key] = "kept"
                if text is None or _same(raw_text, old.text) or _same(text, old.text):
                    continue
                if old.pinned:
                    problems.append(f"it rewords the pinned entry {key} ({_short(old.text)})")
                    continue
                if not isinstance(text, str) or not _has_reason(reason):
                    problems.append(f"the rewording of {key} needs a text and a reason")
                    continue
                sources = _sources(entry, by_source, problems, allow_empty=True)
                plan.edited.append(Edited(old, " ".join(text.split()), sources, str(reason)))
                continue
            if not isinstance(text, str) or not text.strip():
                problems.append(f"a new entry under {heading!r} has no text")
                continue
            if not _has_reason(reason):
                problems.append(f"the new entry {_short(text)} gives no reason")
                continue
            if target is not None and target.pinned:
                problems.append(f"it adds {_short(text)} to the pinned section ## {target.title}")
                continue
            sources = _sources(entry, by_source, problems, allow_empty=False)
            if not sources:
                continue
            first = by_source[sources[0]]
            plan.added.append(
                Added(
                    target.title if target else heading or INBOX,
                    first.restate(" ".join(text.split())),
                    sources,
                    str(reason),
                    item=first,
                )
            )
    archived = reply.get("archived", [])
    if not isinstance(archived, list):
        problems.append('"archived" is not a list')
        archived = []
    for entry in archived:
        key = str(entry.get("id")) if isinstance(entry, dict) else ""
        old = by_key.get(key)
        if old is None or not isinstance(entry, dict):
            problems.append(f"archived entry {key!r} does not exist in MEMORY.md")
            continue
        if key in seen:
            problems.append(f"entry {key} is both kept and archived")
            continue
        seen[old.key] = "archived"
        if old.pinned:
            problems.append(f"it archives the pinned entry {key} ({_short(old.text)})")
            continue
        if not _has_reason(entry.get("reason")):
            problems.append(f"archiving {key} gives no reason")
            continue
        plan.archived.append(Archived(old, str(entry["reason"])))
    lost = [k for k in by_key if k not in seen]
    pinned_lost = [k for k in lost if by_key[k].pinned]
    if pinned_lost:
        problems.append(
            f"it drops pinned entries {', '.join(pinned_lost)} "
            f"({_short(by_key[pinned_lost[0]].text)})"
        )
    if lost:
        problems.append(
            f"it loses {len(lost)} of {len(by_key)} entries without archiving them "
            f"({', '.join(lost[:8])}{'…' if len(lost) > 8 else ''})"
        )
    merged = reply.get("merged", [])
    for entry in merged if isinstance(merged, list) else []:
        if not isinstance(entry, dict):
            continue
        source = entry.get("source")
        if source not in by_source:
            problems.append(f"merged source {source!r} is not one of this dream's inputs")
            continue
        into = by_key.get(str(entry.get("into")))
        plan.merged.append(
            Merged(
                str(source),
                by_source[str(source)].text,
                f"MEMORY.md {into.key}" if into else "",
                into.text if into else "",
                str(entry.get("reason") or ""),
            )
        )
    superseded = reply.get("superseded", [])
    if not isinstance(superseded, list):
        problems.append('"superseded" is not a list')
        superseded = []
    for entry in superseded:
        key = str(entry.get("id")) if isinstance(entry, dict) else ""
        old = by_key.get(key)
        if old is None or not isinstance(entry, dict):
            problems.append(f"superseded entry {key!r} does not exist in MEMORY.md")
            continue
        by, why = entry.get("by"), entry.get("reason")
        if (
            seen.get(key) != "kept"
            or any(e.entry.key == key for e in plan.edited)
            or any(m.entry.key == key for m in plan.superseded)
        ):
            problems.append(f'superseded entry {key} must be kept as it is ({{"id"}}), once')
        elif old.pinned:
            problems.append(f"it marks the pinned entry {key} superseded ({_short(old.text)})")
        elif not isinstance(by, str) or by not in by_source:
            problems.append(
                f"entry {key} is superseded by {by!r}, which is not one of this dream's inputs"
            )
        elif not _has_reason(why):
            problems.append(f"marking {key} superseded gives no reason")
        else:
            plan.superseded.append(Superseded(old, by, by_source[by].text, f"the model: {why}"))
    if problems:
        raise ReplyError(problems)
    add_offline_supersessions(memory, items, plan)
    drop_duplicates(memory, plan)
    used = {s for a in plan.added for s in a.sources} | {m.source for m in plan.merged}
    used |= {s for e in plan.edited for s in e.sources}
    for item in items:
        if item.source not in used:
            plan.skipped.append(
                Skipped(item.source, item.text, "not promoted: the model left it out")
            )
    return plan


def _sources(
    entry: dict[str, Any], by_source: dict[str, Item], problems: list[str], allow_empty: bool
) -> tuple[str, ...]:
    raw = entry.get("sources", entry.get("source"))
    if isinstance(raw, str):
        raw = [raw]
    if raw is None and allow_empty:
        return ()
    if not isinstance(raw, list) or not raw or not all(isinstance(s, str) for s in raw):
        problems.append(f"the entry {_short(str(entry.get('text')))} names no sources")
        return ()
    invented = [s for s in raw if s not in by_source]
    if invented:
        problems.append(
            f"the entry {_short(str(entry.get('text')))} cites "
            f"{', '.join(repr(s) for s in invented[:3])}, which "
            f"{'is' if len(invented) == 1 else 'are'} not among this dream's inputs"
        )
        return ()
    return tuple(dict.fromkeys(raw))


def _cleaned(text: str, entry: dict[str, Any], by_source: dict[str, Item]) -> str:
    """A model's entry text as data: without the markers only a person writes (`#pin`,
    unless a source it cites holds it; HTML comments) and with its secrets redacted."""
    from ..capture import redact_text

    raw = entry.get("sources", entry.get("source"))
    cited = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    given = " ".join(by_source[s].text for s in cited if isinstance(s, str) and s in by_source)
    return redact_text(strip_protected(text, given))


def _same(text: Any, original: str) -> bool:
    return isinstance(text, str) and (
        " ".join(text.split()) == " ".join(original.split())
        or plain_text(text) == plain_text(original)
    )


def _has_reason(reason: Any) -> bool:
    return isinstance(reason, str) and bool(reason.strip())


def _short(text: str, width: int = 50) -> str:
    flat = " ".join(text.split())
    return f'"{flat[: width - 1]}…"' if len(flat) > width else f'"{flat}"'
