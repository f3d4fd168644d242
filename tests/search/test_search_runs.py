"""A chat as people send it: one speaker's runs of two to seven short messages, filler
between. A message is the unit that is found, cited and paid for (index/units.py), and a
message is lifted by its own speaker's other messages in a row only by the query words it
shares with them (`stages.shared_lifts`, `shared_context` in --explain). End to end with the
real bundled model."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_memory import Vault

from .test_search_subjects import configure

CHAT = """\
# 2024-04-12

## 19:02 — session 3

- **Ria**: hiii
- **Sam**: hey you, long time no talk
- **Ria**: omg so much happened this week
- **Ria**: my landlord finally fixed the heating
- **Ria**: and I adopted a rescue greyhound named Pixel
- **Ria**: she sleeps on the couch all day lol
- **Ria**: also my sister is visiting from Lyon next week
- **Ria**: we're gonna do a cooking class together
- **Ria**: haha
- **Sam**: wait a greyhound?? that's amazing
- **Sam**: send pics!!
- **Ria**: soon!!
- **Ria**: she's shy with cameras

## 21:40 — session 4

- **Sam**: my neighbour's kids are begging for a dog now
- **Ria**: lol
- **Ria**: ok random but my old landlord kept a greyhound in the office, huge softie
- **Sam**: haha cute
"""

ADOPTED = 9  # "and I adopted a rescue greyhound named Pixel"
RUN = range(7, 14)  # Ria's run of seven messages around it
ELSEWHERE = 23  # "my old landlord kept a greyhound in the office"


QUESTION = "Which greyhound did Ria adopt?"


@pytest.fixture
def chat(vault_dir: Path) -> Vault:
    (vault_dir / "memory" / "2024-04-12.md").write_text(CHAT, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.index()
    return vault


def test_a_question_about_one_message_cites_it_first_and_not_its_run(chat: Vault) -> None:
    """The answer is one message of a run of seven: it is the first hit, cited by its own
    line alone; the run's other messages, which say other things, do not come before a
    message of another day that matches the question better (Ria's old landlord's
    greyhound, "lol" before it joined to it)."""
    hits = chat.search(QUESTION, limit=8, fresh=False)
    assert (hits[0].start_line, hits[0].end_line) == (ADOPTED, ADOPTED), hits[0].text
    elsewhere = next(at for at, h in enumerate(hits) if h.start_line <= ELSEWHERE <= h.end_line)
    cited = {n for h in hits[:elsewhere] for n in range(h.start_line, h.end_line + 1)}
    assert not cited & (set(RUN) - {ADOPTED}), [h.text for h in hits[: elsewhere + 1]]


def test_run_mates_lift_a_message_only_by_the_words_it_shares(chat: Vault) -> None:
    """Without the rule, the window around the greyhound message lifts its run-mates (the
    heating, the cooking class) by the greyhound they do not mention: they rank with it and
    the first hit takes two of them in; `--explain` marks the messages the rule held back."""
    plain = configure(chat, shared_context=False, context_cap=0)
    hits = plain.search(QUESTION, limit=8, fresh=False)
    assert hits[0].start_line == ADOPTED and hits[0].end_line > ADOPTED
    shared = configure(chat, shared_context=True, context_cap=0)
    held = shared.search(QUESTION, limit=12, fresh=False)
    assert held[0].scores["shared_context"] == 1.0
    assert all(h.scores["shared_context"] == 0.0 for h in held if h.start_line >= 21)


def test_a_fragment_is_found_with_the_message_that_completes_it(vault_dir: Path) -> None:
    """A message that does not stand alone ("so i went", "to the lake w my dad") is one hit
    with the message that completes it, cited by the lines of all three."""
    (vault_dir / "memory" / "2024-06-01.md").write_text(
        "# 2024-06-01\n\n## 18:02 — session 4\n\n- **Jo**: how was ur weekend\n"
        "- **Sam**: so i went\n- **Sam**: to the lake w my dad\n- **Sam**: caught 3 fish!!\n"
        "- **Jo**: no way\n",
        encoding="utf-8",
    )
    vault = Vault(vault_dir)
    vault.index()
    vault = configure(vault, coalesce_depth=0)  # the unit alone, no neighbours merged
    hit = vault.search("Where did Sam catch fish?", limit=1, fresh=False)[0]
    assert (hit.start_line, hit.end_line) == (6, 8)
    assert "lake" in hit.text and "fish" in hit.text
