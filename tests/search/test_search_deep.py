"""Deep search (search/deep.py): a small local generative model names the words an answer
would use, and they join the keywords at a share of a word. The parsing, the prompt, the
cache and the ranking hook are tested with a scripted completion in place of the model (the
ranking logic is what is tested there); the slow test at the end runs the real model of the
`deep` extra when it is installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.search import deep
from vault_memory.search.deep import (
    DeepUnavailableError,
    Expander,
    expanded_terms,
    expansion_prompt,
    reply_words,
)

from .test_search_subjects import configure

NOTES = """\
# Week

## Monday

- The quarterly report took hours, and I enjoy nothing about reports.

## Tuesday

- Off to go swimming with my brother tonight.

## Wednesday

- The office printer jammed again.
"""


def scripted(reply: str, calls: list[str] | None = None) -> Expander:
    """An expander whose "model" answers every prompt with `reply` (and records it)."""

    def complete(prompt: str) -> str:
        if calls is not None:
            calls.append(prompt)
        return reply

    return Expander(load=lambda: complete)


def test_reply_words_are_the_first_line_s_new_words() -> None:
    reply = "swimming, Painting, camping, activities, the, hiking!\nQuestion: more words"
    words = reply_words(reply, "What activities does Sam enjoy?")
    # "activities" is the question's own, "the" a stop word, the second line not read
    assert words == ["swimming", "painting", "camping", "hiking"]
    assert len(reply_words(", ".join(f"word{chr(97 + i)}" for i in range(20)), "x")) == 8


def test_the_prompt_ends_with_the_question_for_the_model_to_go_on() -> None:
    prompt = expansion_prompt("What   pets does\nSam have?")
    assert prompt.endswith("\n\nQuestion: What pets does Sam have?\nWords:")
    assert prompt.count("Question:") == len(deep.EXAMPLES) + 1


def test_a_question_s_words_are_asked_once() -> None:
    calls: list[str] = []
    expander = scripted("swimming, hiking", calls)
    assert expander.words("What activities?") == ["swimming", "hiking"]
    assert expander.words("What  activities?") == ["swimming", "hiking"]
    assert len(calls) == 1
    assert expanded_terms(["swimming", "hiking"], 0.3) == {"swimm": 0.3, "hike": 0.3}


def notes_vault(vault_dir: Path) -> Vault:
    (vault_dir / "notes").mkdir(exist_ok=True)
    (vault_dir / "notes" / "week.md").write_text(NOTES, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.index()
    return vault


def test_deep_words_find_the_instance_the_question_names_only_by_its_kind(
    vault_dir: Path,
) -> None:
    """'activities' names the kind, 'swimming' the instance: no word in common, so a keyword
    search cannot find the line; with the model's words it does, marked `deep`, below the
    line holding the question's own word (a model's word counts a share of one). Nothing is
    marked without `deep`. (Kinds off: "swimming" is an activity there too.)"""
    vault = configure(notes_vault(vault_dir), kind_weight=0.0)
    question = "What activities do I enjoy?"
    plain = vault.search(question, limit=3, fresh=False, mode="keyword")
    assert [h.start_line for h in plain] == [5]  # "enjoy"
    vault.searcher.expander = scripted("swimming, hiking, painting")
    found = vault.search(question, limit=3, fresh=False, mode="keyword", deep=True)
    assert [h.start_line for h in found] == [5, 9]
    assert [h.scores["deep"] for h in found] == [0.0, 1.0]
    assert not any(h.scores["deep"] for h in vault.search(question, limit=3, fresh=False))


def test_without_the_extra_a_deep_search_says_how_to_install_it(
    vault_dir: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes_vault(vault_dir)
    monkeypatch.setattr(deep, "MODEL_PACKAGE", "no_such_model_package_here")
    result = run_cli("--vault", str(vault_dir), "search", "what hobbies?", "--deep")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "pip install 'vault-memory[deep]'" in errors[0]
    assert errors[0].endswith("or search without --deep.")  # the library says deep=False
    assert "Traceback" not in result.stderr
    # the runtime missing says so too (a model file alone cannot run)
    monkeypatch.setattr(deep, "model_path", lambda: vault_dir / "MEMORY.md")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(DeepUnavailableError, match="llama-cpp-python.*deep=False"):
        Vault(vault_dir).search("what hobbies?", deep=True, fresh=False)
    # and a search without --deep needs neither
    assert run_cli("--vault", str(vault_dir), "search", "swimming").exit_code == 0


@pytest.mark.slow
def test_the_deep_extra_s_model_names_instances_of_a_kind(vault_dir: Path) -> None:
    """The real model of the `deep` extra, through llama.cpp (skipped without the extra):
    asked for a kind, it names instances of it, and a deep search finds the line telling
    one that no word of the question reaches (kinds off, so only the model's words can)."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip(deep.MODEL_PACKAGE)
    words = Expander().words("What instruments does Sam play?")
    assert all(w.replace("-", "").replace("'", "").isalpha() for w in words)
    assert {"guitar", "piano", "violin", "drums", "flute", "cello", "bass"} & set(words)
    vault = configure(notes_vault(vault_dir), kind_weight=0.0)
    question = "What activities do I enjoy?"
    hits = vault.search(question, limit=3, fresh=False, mode="keyword", deep=True)
    swimming = [h for h in hits if h.start_line == 9]
    assert swimming and swimming[0].scores["deep"] == 1.0
