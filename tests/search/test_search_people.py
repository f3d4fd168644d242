"""Names as people write them in a chat (search/people.py): a speaker labelled by a display
name or a lower-case handle is asked about by the name the chat uses for them, the one they
gave themself ("I'm Kate") or the one the other speaker calls them ("Thanks, Kate!"), spelt
right or not. End to end with the real bundled model; the rules themselves without files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from vault_memory import Vault
from vault_memory.search.people import (
    addressed_names,
    edits_apart,
    misspelt_name,
    named_speakers,
    self_names,
)

from .test_search_subjects import configure

CHAT = """\
# 2024-03-02

## 21:10 — session 1

- **Emi**: hey! how is your week going?
- **jules**: good!! just got back from my pottery class
- **Emi**: oh fun, I'm Kate btw, never said
- **jules**: haha I'm Juliette. Nice to meet you Kate!
- **Emi**: Thanks Juliette! I spent the whole afternoon baking sourdough bread
- **jules**: Wow Kate, that sounds amazing
- **jules**: Kate, my sister bakes sourdough bread every sunday for the whole family
- **Emi**: I also ran a half marathon in the morning, my legs are dead
"""


@pytest.fixture
def chat(vault_dir: Path) -> Vault:
    (vault_dir / "memory" / "2024-03-02.md").write_text(CHAT, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.index()
    return configure(vault, coalesce_depth=0)


def test_a_name_the_chat_gives_a_speaker_names_them(chat: Vault) -> None:
    """`Emi` said "I'm Kate" and `jules` calls her Kate: a question about Kate weighs Emi's
    messages, not the ones that speak to Kate."""
    hits = chat.search("What did Kate bake?", limit=3, fresh=False)
    assert hits[0].start_line == 9, hits[0].text
    assert hits[0].scores["alias"] == 1.0 and hits[0].scores["subject"] == 1.5
    before = configure(chat, message_names=False).search("What did Kate bake?", limit=3)
    assert before[0].start_line != 9 and before[0].scores["subject"] == 1.0


def test_a_lower_case_label_is_named_by_its_name_and_a_misspelling(chat: Vault) -> None:
    """`jules` is Juliette ("I'm Juliette", "Thanks Juliette!"), misspelt two letters off too."""
    for question in ("Which class does Juliette take?", "Which class does Julliete take?"):
        hit = chat.search(question, limit=3, fresh=False)[0]
        assert hit.start_line == 6, (question, hit.text)
        assert hit.scores["alias"] == 1.0 and hit.scores["subject"] == 1.5


def test_explain_shows_the_name(run_cli, chat: Vault) -> None:
    result = run_cli("--vault", str(chat.root), "search", "What did Kate bake?", "--json")
    assert result.exit_code == 0, result.stderr
    assert '"alias": 1.0' in result.stdout


def test_self_names() -> None:
    assert self_names("oh fun, I'm Kate btw, never said") == [("Kate", 1)]
    assert self_names("Hi, I'm Robert, but call me Bob.") == [("Bob", 2), ("Robert", 1)]
    assert self_names("My name is Jo") == [("Jo", 2)]
    assert self_names("I'm in Miami") == [] and self_names("I'm Kate's sister") == []
    assert self_names("call me when you land") == []


def test_addressed_names() -> None:
    assert addressed_names("Hello Kate. Happy New Year!") == ["Kate"]
    assert addressed_names("Wow Kate, that looks amazing") == ["Kate"]
    assert addressed_names("Thanks so much, Mel!") == ["Mel"]
    assert addressed_names("Kate, look at this") == ["Kate"]
    assert addressed_names("Hey! How are you?") == [] and addressed_names("I love it, OK!") == []


def test_a_name_is_a_speakers_by_most_of_the_messages_that_use_it() -> None:
    assert named_speakers({"emi": 1}, {"emi": 3}) == ["emi"]
    assert named_speakers({"emi": 2}, {}) == ["emi"]  # "call me Kate"
    assert named_speakers({"emi": 1}, {}) == []  # one "I'm Italian" names nobody
    assert named_speakers({}, {"emi": 2, "elise": 2}) == []  # called out to both
    assert named_speakers({}, {"emi": 4, "elise": 1}) == ["emi"]


def test_misspelt_names() -> None:
    assert edits_apart("julliet", "juliett", 2) and not edits_apart("julliet", "juliett", 0)
    assert edits_apart("mleani", "melani", 1)  # two neighbours swapped: one edit
    assert misspelt_name("carolyn", ["carolin", "melani"]) == ["carolin"]
    assert misspelt_name("kathrin", ["katharina"]) == ["katharina"]  # two edits, 7+ letters
    assert misspelt_name("jane", ["june"]) == []  # four letters: no edit is a misspelling
    assert misspelt_name("melania", ["melani"]) == ["melani"]


def _every_pattern(text: str) -> tuple[list[tuple[str, int]], list[str]]:
    """self_names and addressed_names with every pattern run on every text (no checks)."""
    from vault_memory.search import people

    said = [(n, 2) for n in people._names(people._CALLED.findall(text))]
    said += [(n, 1) for n in people._names(people._I_AM.findall(text))]
    called = people._GREETED.findall(text) + people._EXCLAIMED.findall(text)
    called += people._TRAILING.findall(text) + people._OPENING.findall(text)
    return said, people._names(called)


@pytest.mark.parametrize(
    "text",
    [
        "İ'm Kate.",  # Python's case-blind match reads İ, ı, ſ and K as i, i, s and k
        "ıM Kate, hi",
        "HEY Kate",
        "Thank you, Mel.",
        "Welcome back Sam",
        "Aww Kate, look",
        "Good night, Jo!",
        "my name's Bob",
        "CALL ME Bob",
        "Kate, look at this",
        "no capital letter here, kate",
        "Wow Kate, ſo good",
        "",
    ],
)
def test_names_read_as_when_every_pattern_ran(text: str) -> None:
    """The patterns are skipped for texts lacking what they need (a capital letter, their
    words); the names read are the same as with every pattern run."""
    assert (self_names(text), addressed_names(text)) == _every_pattern(text)


def test_a_case_blind_letter_beyond_ascii_still_reads_the_name() -> None:
    assert self_names("İ'm Kate.") == [("Kate", 1)]
    assert addressed_names("ſo Kate, look") == ["Kate"]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="aehikmnostwyAEHIKMST ,.!?'’\u0130\u0131\u017f\u212a", max_size=24))
def test_names_read_as_when_every_pattern_ran_for_any_text(text: str) -> None:
    assert (self_names(text), addressed_names(text)) == _every_pattern(text)
