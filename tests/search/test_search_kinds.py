"""Kinds and their instances (search/kinds.py): a question asking for a kind ("Which
instruments …") also finds the lines naming an instance of it ("clarinet"), which share no
word with it, at a share of a word."""

from __future__ import annotations

from pathlib import Path

from vault_memory import Vault
from vault_memory.search.kinds import KINDS_FILE, asked_instances, asked_kinds, instances

from .test_search_subjects import configure

NOTES = """\
# Week

## Monday

- Learned that the bus is late again.

## Tuesday

- Practised the clarinet for an hour.

## Wednesday

- The printer jammed.
"""


def test_the_kind_a_question_asks_for_is_read_from_its_form() -> None:
    assert asked_kinds("Which instruments have I learned?") == ["instrument"]
    assert asked_kinds("What kind of pets does Anna have?") == ["pet"]
    assert asked_kinds("what musical instruments does she play") == ["music", "instrument"]
    assert asked_kinds("What did Ria research?") == []  # asks for no kind
    assert asked_kinds("When is the concert?") == []


def test_instances_are_the_nouns_below_a_kind() -> None:
    assert {"clarinet", "violin", "piano"} <= set(instances("instrument"))
    assert {"japan", "portug"} <= set(instances("countri"))
    assert instances("entiti") == []  # a kind of everything names nothing
    assert instances("no-such-kind") == []
    assert KINDS_FILE.read_text(encoding="utf-8").startswith("# Kinds")


def test_an_index_server_is_asked_for_the_instances_of_the_kind_asked_for() -> None:
    terms = ["instrument", "sam", "plai"]
    found = asked_instances("What instruments does Sam play?", terms)
    assert "clarinet" in found and "violin" in found
    assert "instrument" not in found and len(found) == len(set(found))
    assert asked_instances("Where does Sam play?", ["sam", "plai"]) == []


def test_a_line_naming_an_instance_answers_a_question_about_its_kind(vault_dir: Path) -> None:
    (vault_dir / "notes").mkdir(exist_ok=True)
    (vault_dir / "notes" / "week.md").write_text(NOTES, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.index()
    question = "Which instruments have I learned?"
    found = vault.search(question, limit=3, fresh=False, mode="keyword")
    assert [h.start_line for h in found] == [5, 9]  # "learned", then the clarinet
    assert [h.scores["kind"] for h in found] == [0.0, 1.0]
    off = configure(vault, kind_weight=0.0).search(question, limit=3, fresh=False, mode="keyword")
    assert [h.start_line for h in off] == [5]
