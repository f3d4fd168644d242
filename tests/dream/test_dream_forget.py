"""A person asking to forget: the offline dream archives the one entry a "forget …" line
names (citing the line), never the line itself; a request naming no entry, several, or a
pinned one archives nothing and the diary says why; undo restores the entry."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.dream.checks import enforce
from vault_memory.dream.decide import Item, Policy, consolidate, extract_items, render
from vault_memory.dream.forget import forget_request
from vault_memory.dream.similarity import TokenSimilarity
from vault_memory.files.memoryfile import parse_memory
from vault_memory.files.notes import parse_note

NOW = dt.datetime(2026, 11, 22, 3, 30, tzinfo=dt.UTC)
TOKENS = TokenSimilarity()

MEMORY = """\
# MEMORY

## Health
- Resting heart rate 58 bpm at the March check-up. <!-- src: memory/2026-11-13.md#L4 -->
- Gym plan: three sessions a week at PureGym, 07:00. <!-- src: memory/2026-11-13.md#L5 -->
- Dentist appointment for Maya on 3 December at 10:00. <!-- src: memory/2026-11-13.md#L6 -->
- Dentist appointment for Tom on 9 December at 16:30. <!-- src: memory/2026-11-13.md#L7 -->
- Blood type 0 negative. #pin
"""


def daily(day: str, *lines: str) -> list[Item]:
    body = "## 09:00 · note\n" + "".join(f"- {line}\n" for line in lines)
    return extract_items(parse_note(f"memory/{day}.md", f"# {day}\n\n{body}"))


def dream(*lines: str, memory: str = MEMORY):
    doc = parse_memory(memory)
    items = daily("2026-11-20", *lines)
    plan = consolidate(doc, items, Policy(), TOKENS, evidence=items, today=NOW.date())
    enforce(doc, plan, {i.source: i for i in plan.consumed}, Policy())
    return plan, render(doc, plan)


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("Forget the gym plan, I'm not doing that anymore.", "gym plan"),
        ("Moved out, please forget my old address.", "old address"),
        ("Can you forget what I said about the Berlin offsite?", "Berlin offsite"),
        ("Please delete the note about the dentist.", "dentist"),
        ("Vergiss den Umzug nach Hamburg, wir bleiben in Köln.", "Umzug nach Hamburg"),
        ("Oublie le voyage à Lisbonne, on n'y va plus.", "voyage à Lisbonne"),
        ("Olvida la cena con Marta, se canceló.", "cena con Marta"),
        ("I forgot my keys at the gym.", None),
        ("Don't forget the tickets for Friday.", None),
        ("Forget about work for a day, we said.", None),
        ("Forget it, let's just go.", None),
        ("Assistant: forget the gym plan.", None),
    ],
)
def test_what_a_line_asks_to_forget(line: str, named: str | None) -> None:
    assert forget_request(line) == named


def test_the_one_entry_named_is_archived_citing_the_line() -> None:
    plan, text = dream("Had lunch at the Thai place.", "Forget the gym plan, I quit it.")
    assert [a.entry.text.split(" <!--")[0] for a in plan.archived] == [
        "- Gym plan: three sessions a week at PureGym, 07:00."
    ]
    archived = plan.archived[0]
    assert archived.asked and archived.sources == ("memory/2026-11-20.md#L5",)
    assert "memory/2026-11-20.md#L5 asks to forget it" in archived.reason
    assert "Gym plan" not in text and "Resting heart rate 58 bpm" in text
    assert not any("Forget" in a.text for a in plan.added)  # a request is not a fact
    request = next(s for s in plan.skipped if s.source == "memory/2026-11-20.md#L5")
    assert "a request to forget 'gym plan': archived" in request.reason
    assert not plan.refused


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("Forget the piano lessons, too expensive.", "no entry of MEMORY.md names it"),
        ("Forget the dentist appointment, we'll rebook.", "2 entries of MEMORY.md name it"),
        ("Forget my blood type, it's on the donor card.", "the entry it names is pinned"),
    ],
)
def test_a_request_naming_no_entry_several_or_a_pinned_one_archives_nothing(
    line: str, why: str
) -> None:
    plan, text = dream(line)
    assert not plan.archived
    assert text == MEMORY
    (skipped,) = [s for s in plan.skipped if s.text == line]
    assert why in skipped.reason and "a request to forget" in skipped.reason


def test_an_older_line_of_the_window_the_request_names_is_not_promoted() -> None:
    doc = parse_memory("# MEMORY\n\n## Inbox\n")
    items = daily("2026-11-18", "Booked the Berlin offsite for 12-14 March. #important")
    items += daily("2026-11-20", "Forget the Berlin offsite, it's off.")
    plan = consolidate(doc, items, Policy(), TOKENS, evidence=items, today=NOW.date())
    assert not plan.added and not plan.archived
    reasons = {s.source: s.reason for s in plan.skipped}
    assert "memory/2026-11-20.md#L4 asks to forget 'Berlin offsite'" in reasons[items[0].source]


def test_an_entry_newer_than_the_request_is_not_archived() -> None:
    memory = MEMORY.replace("memory/2026-11-13.md#L5", "memory/2026-11-21.md#L5")
    plan, text = dream("Forget the gym plan.", memory=memory)
    assert not plan.archived and text == memory


def test_dream_archives_then_undo_restores(vault_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")
    (vault_dir / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (vault_dir / "memory").mkdir(exist_ok=True)
    (vault_dir / "memory/2026-11-20.md").write_text(
        "# 2026-11-20\n\n## 09:00 · note\n- Vergiss den Gym plan, das mache ich nicht mehr.\n",
        encoding="utf-8",
    )
    with Vault(vault_dir) as vault:
        report = vault.dream(now=NOW)
        assert [a["text"].startswith("- Gym plan") for a in report.archived] == [True]
        memory = (vault_dir / "MEMORY.md").read_text(encoding="utf-8")
        assert "Gym plan" not in memory and "Blood type 0 negative" in memory
        archive = (vault_dir / "dreams/archive.md").read_text(encoding="utf-8")
        assert "Gym plan: three sessions a week at PureGym" in archive
        diary = (vault_dir / "dreams/2026-11-22.md").read_text(encoding="utf-8")
        assert "memory/2026-11-20.md#L4 asks to forget it" in diary
        vault.undo_dream(now=NOW + dt.timedelta(hours=1))
    assert (vault_dir / "MEMORY.md").read_text(encoding="utf-8") == MEMORY
