"""Names as people write them in a chat (search/people.py): a speaker labelled by a display
name or a lower-case handle is asked about by the name the chat uses for them, the one they
gave themself ("I'm Kate") or the one the other speaker calls them ("Thanks, Kate!"), spelt
right or not. End to end with the real bundled model; the rules themselves without files."""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.mark.parametrize(
    ("text", "said", "called"),
    [
        # Python's case-blind match reads İ, ı, ſ and K as i, i, s and k: no pattern skipped
        ("İ'm Kate.", [("Kate", 1)], []),
        ("ıM Kate, hi", [("Kate", 1)], []),
        ("Wow Kate, ſo good", [], ["Kate"]),
        ("HEY Kate", [], ["Kate"]),
        ("Thank you, Mel.", [], ["Mel", "Mel"]),
        ("Welcome back Sam", [], ["Sam"]),
        ("Aww Kate, look", [], ["Kate"]),
        ("Good night, Jo!", [], ["Jo", "Jo"]),
        ("my name's Bob", [("Bob", 2)], []),
        ("CALL ME Bob", [("Bob", 2)], []),
        ("Kate, look at this", [], ["Kate"]),
        ("no capital letter here, kate", [], []),
        ("", [], []),
    ],
)
def test_names_read_whatever_the_case_of_the_words_around_them(
    text: str, said: list[tuple[str, int]], called: list[str]
) -> None:
    """Each pattern runs only on texts holding what it needs (a capital letter, its words in
    any case); the names read are those every pattern finds (compared on 505,514 texts of
    both development splits and a synthetic vault when the checks were written)."""
    assert (self_names(text), addressed_names(text)) == (said, called)
