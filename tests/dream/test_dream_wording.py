"""What a dream writes into MEMORY.md from flushed entries: statements without the speaker's
label, each entry once, each with its provenance; one entry per topic that only recurs."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.dream.decide import (
    Added,
    DreamPlan,
    Item,
    Policy,
    consolidate,
    drop_duplicates,
    extract_items,
)
from vault_memory.dream.similarity import TokenSimilarity
from vault_memory.dream.wording import as_memory, speaker_label
from vault_memory.files.memoryfile import parse_memory
from vault_memory.files.notes import parse_note

TOKENS = TokenSimilarity()
TEMPLATE = "# MEMORY\n\n## People\n\n## Preferences\n\n## Decisions\n"


@pytest.mark.parametrize(
    ("flushed", "stated"),
    [
        # the user's own words: MEMORY.md is theirs, its "I" is them
        (
            "User: We decided to use uv instead of pip. #decision",
            "We decided to use uv instead of pip. #decision",
        ),
        (
            "User: I prefer hand-written SQL migrations. #preference",
            "I prefer hand-written SQL migrations. #preference",
        ),
        # someone else, opening in the first person and nothing more: the third person
        (
            "Ines: I moved to Porto last month (2026-04).",
            "Ines moved to Porto last month (2026-04).",
        ),
        (
            "Ines: I'm a nurse at the children's hospital.",
            "Ines is a nurse at the children's hospital.",
        ),
        ("Ines: I've adopted a greyhound.", "Ines has adopted a greyhound."),
        ("Ines: My sister runs a bakery in Leeds.", "Ines's sister runs a bakery in Leeds."),
        (
            "Jonas Berg: I'll be on leave from January. #todo",
            "Jonas Berg will be on leave from January. #todo",
        ),
        (
            "Assistant: I'll open the pull request by Friday. #todo",
            "The assistant will open the pull request by Friday. #todo",
        ),
        # anything else: a quote, attributed after it (no label before a colon)
        (
            "Ines: I love sailing. It calms me down. #preference",
            "“I love sailing. It calms me down.” — Ines #preference",
        ),
        ("Tomas: The hull is cedar and it floats.", "“The hull is cedar and it floats.” — Tomas"),
        # not a speaker's label: left as written
        (
            "Decision: invoices are immutable once sent.",
            "Decision: invoices are immutable once sent.",
        ),
        ("Next steps: call the bank.", "Next steps: call the bank."),
        ("Ines moved to Porto.", "Ines moved to Porto."),
    ],
)
def test_a_flushed_entry_as_memory_states_it(flushed: str, stated: str) -> None:
    assert as_memory(flushed) == stated


def test_speaker_labels_are_told_from_note_labels() -> None:
    assert speaker_label("User: hi there") == ("User", "hi there")
    assert speaker_label("Jonas Berg: owns billing") == ("Jonas Berg", "owns billing")
    assert speaker_label("maya: prefers tea") == ("maya", "prefers tea")
    for text in (
        "Decision: go",
        "Root cause: the key",
        "Next steps: x",
        "no label here",
        "Ticket BIL-1423: reopened",
    ):
        assert speaker_label(text) is None


def flushed_log(day: str, block: str) -> list[Item]:
    text = f"# {day}\n\n## 14:03 · flush · session s1\n{block}"
    return extract_items(parse_note(f"memory/{day}.md", text))


def test_a_dream_promotes_flushed_entries_without_their_labels() -> None:
    items = flushed_log(
        "2026-11-20",
        (
            "- User: We decided to use uv instead of pip. #decision\n"
            "- User: I prefer short answers with code first. #preference\n"
            "- Assistant: I'll keep answers short from now on. #todo\n"
        ),
    )
    plan = consolidate(parse_memory(TEMPLATE), items, Policy(), TOKENS, today=dt.date(2026, 11, 21))
    assert [(a.section, a.text) for a in plan.added] == [
        ("Decisions", "We decided to use uv instead of pip. #decision"),
        ("Preferences", "I prefer short answers with code first. #preference"),
    ]
    assert all(a.sources == (a.item.source,) for a in plan.added if a.item)


def test_the_same_entry_is_never_added_twice() -> None:
    memory = parse_memory(
        TEMPLATE.replace(
            "## Decisions\n",
            "## Decisions\n- We decided to use uv instead of pip. #decision "
            "<!-- src: memory/2026-11-01.md#L4 -->\n",
        )
    )
    plan = DreamPlan(
        added=[
            Added(
                "Decisions",
                "We decided to use UV instead of pip!",
                ("memory/2026-11-20.md#L4",),
                "r",
            ),
            Added("Preferences", "Tea, not coffee.", ("memory/2026-11-20.md#L5",), "r"),
            Added("Inbox", "tea, NOT coffee", ("memory/2026-11-21.md#L4",), "r"),
        ]
    )
    drop_duplicates(memory, plan)
    assert [a.text for a in plan.added] == ["Tea, not coffee."]
    assert [(m.source, m.into) for m in plan.merged] == [
        ("memory/2026-11-20.md#L4", "MEMORY.md m1"),
        ("memory/2026-11-21.md#L4", "memory/2026-11-20.md#L5"),
    ]


def test_a_topic_that_only_recurs_is_one_entry() -> None:
    # the same plan comes up on three days, in different words: it recurs, so it matters, but
    # MEMORY.md needs it once
    items = [
        *flushed_log("2026-11-18", "- Ines: I want to study marine biology in Porto next year.\n"),
        *flushed_log(
            "2026-11-19", "- Ines: Marine biology applications for Porto close in March.\n"
        ),
        *flushed_log("2026-11-20", "- Ines: My Porto interview for marine biology went well.\n"),
    ]
    plan = consolidate(
        parse_memory(TEMPLATE), items, Policy(), TOKENS, evidence=items, today=dt.date(2026, 11, 21)
    )
    assert len(plan.added) == 1
    assert "marine biology" in plan.added[0].text
    assert any("stands for its topic" in s.reason for s in plan.skipped)
    # and when MEMORY.md already holds the topic, recurrence alone adds nothing
    memory = parse_memory(
        TEMPLATE.replace(
            "## People\n", "## People\n- Ines plans to study marine biology at Porto.\n"
        )
    )
    plan = consolidate(memory, items, Policy(), TOKENS, evidence=items, today=dt.date(2026, 11, 21))
    assert plan.added == []


def test_flush_then_dream_end_to_end(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")
    monkeypatch.setenv("VAULT_NOW", "2026-11-20T14:00")
    with Vault(vault_dir) as vault:
        vault.flush(
            [
                {"role": "user", "content": "We decided to use uv instead of pip."},
                {"role": "user", "content": "I prefer tabs over spaces in Go files."},
            ],
            session="tooling",
        )
        monkeypatch.setenv("VAULT_NOW", "2026-11-21T03:30")
        vault.dream()
        text = (vault_dir / "MEMORY.md").read_text()
        assert (
            "- We decided to use uv instead of pip. #decision <!-- src: memory/2026-11-20.md#L"
            in text
        )
        assert "- I prefer tabs over spaces in Go files. #preference <!-- src:" in text
        # no entry of a dream without provenance, none with a speaker's label, none twice
        entries = parse_memory(text).entries
        assert entries and all(e.sources for e in entries)
        assert not any(re.match(r"(?:User|Assistant):", e.body) for e in entries)
        assert len({e.body for e in entries}) == len(entries)
        # the same decision flushed again two weeks later (past flush's dedupe window), and a
        # second dream: no copy
        monkeypatch.setenv("VAULT_NOW", "2026-12-04T10:00")
        report = vault.flush(
            [{"role": "user", "content": "We decided to use uv instead of pip!"}],
            session="tooling-2",
        )
        assert report.entries
        monkeypatch.setenv("VAULT_NOW", "2026-12-05T03:30")
        vault.dream()
        again = parse_memory((vault_dir / "MEMORY.md").read_text()).entries
        assert len(again) == len(entries)


def test_a_models_copy_of_an_existing_entry_is_merged_not_added() -> None:
    from vault_memory.dream.llm_plan import plan_from_reply

    memory = parse_memory(
        TEMPLATE.replace("## Decisions\n", "## Decisions\n- We use uv instead of pip. #decision\n")
    )
    items = flushed_log(
        "2026-11-20", "- User: We use uv instead of pip now.\n- Ines: I moved to Porto.\n"
    )
    reply = {
        "sections": [
            {
                "heading": "Decisions",
                "entries": [
                    {"id": "m1"},
                    {
                        "text": "We use UV instead of pip.",
                        "sources": [items[0].source],
                        "reason": "r",
                    },
                ],
            },
            {
                "heading": "People",
                "entries": [
                    {"text": "Ines: I moved to Porto.", "sources": [items[1].source], "reason": "r"}
                ],
            },
        ]
    }
    plan = plan_from_reply(reply, memory, items)
    # the copy is merged into m1; the model's copy of a flushed label is stated without it
    assert [a.text for a in plan.added] == ["Ines moved to Porto."]
    assert [(m.source, m.into) for m in plan.merged] == [(items[0].source, "MEMORY.md m1")]
