"""Names resolved from the vault itself: a query that calls a speaker by a nickname (`Mel` for
Melanie) or misspells them (`Melanee`) finds what that speaker said, as the full name would,
with the real bundled model; `--explain` shows the `alias` that lifted the hit. The pure rule
(`resolve_names`, `within_one_edit`) is tested here too, without files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.search.people import misspelt_name, nickname_names
from vault_memory.search.ranking import resolve_names, take_turns, within_one_edit

CHAT = """\
# 2026-03-14

## 23:40 — chat

- **Caroline**: pottery pottery! my cousin does pottery every weekend, pottery is her whole life lol
- **Melanie**: signed up for a pottery class yesterday, made a lopsided bowl
- **Caroline**: haha send pics
"""


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    (vault_dir / "memory" / "2026-03-14.md").write_text(CHAT, encoding="utf-8")
    opened = Vault(vault_dir)
    opened.index()
    return configure(opened, coalesce_depth=0)


def configure(vault: Vault, **settings: object) -> Vault:
    searcher = vault.searcher
    searcher.settings = dataclasses.replace(searcher.settings, **settings)  # type: ignore[arg-type]
    return vault


@pytest.mark.parametrize("query", ["What pottery did Mel make?", "what pottery did melanee make"])
def test_a_nickname_or_a_misspelling_names_the_speaker(vault: Vault, query: str) -> None:
    hits = vault.search(query, limit=3, fresh=False)
    assert hits[0].start_line == 6, hits[0].text
    assert hits[0].scores["alias"] == 1.0 and hits[0].scores["subject"] == 1.5
    # Without aliases, Caroline's line (pottery four times) comes first.
    plain = configure(vault, name_aliases=False).search(query, limit=3, fresh=False)
    assert plain[0].start_line == 5, plain[0].text


def test_the_full_name_is_no_alias(vault: Vault) -> None:
    hits = vault.search("What pottery did Melanie make?", limit=3, fresh=False)
    assert hits[0].start_line == 6
    assert hits[0].scores["alias"] == 0.0 and hits[0].scores["subject"] == 1.5


def test_explain_shows_the_alias(run_cli, vault: Vault) -> None:
    result = run_cli(
        "--vault", str(vault.root), "search", "What pottery did Mel make?", "--json", "-n", "1"
    )
    assert result.exit_code == 0, result.stderr
    assert '"alias": 1.0' in result.stdout


def test_within_one_edit() -> None:
    assert within_one_edit("carolin", "carolin")
    assert within_one_edit("carolyn", "carolin")  # changed
    assert within_one_edit("melani", "melanie") and within_one_edit("melanie", "melani")
    assert within_one_edit("mleani", "melani")  # neighbours swapped
    assert not within_one_edit("melnaie", "melani")
    assert not within_one_edit("marina", "melani")


def test_resolve_names() -> None:
    labels = ["melani", "carolin", "arthur", "decis"]
    common = {"art", "mel"}.__contains__  # words the vault's text uses
    found = resolve_names(
        [("mel", True), ("art", False), ("carolyn", False), ("melani", True), ("zz", True)],
        labels,
        common,
    )
    # `mel` capitalised: a nickname; `art` lower-case and used by the text: a plain word;
    # `carolyn` one edit from a label; `melani` is a label already; too short for `zz`.
    assert found == {"mel": ["melani"], "carolyn": ["carolin"]}
    assert resolve_names([("arth", False)], labels, common) == {"arth": ["arthur"]}  # unknown
    assert resolve_names([("mel", True)], [*labels, "melissa"], common) == {}  # which one?


def test_a_short_name_typed_with_two_letters_swapped() -> None:
    """A name of four letters resolves with two neighbouring letters swapped (a typing slip),
    never with a letter changed: that would make Kate of Nate, or of kale."""
    labels = ["kate", "john"]
    common = {"pottery"}.__contains__
    found = resolve_names([("kaet", True), ("jhon", False)], labels, common)
    assert found == {"kaet": ["kate"], "jhon": ["john"]}
    assert resolve_names([("nate", True), ("kale", True)], labels, common) == {}
    assert misspelt_name("kaet", ["kate", "taek"]) == ["kate"]
    assert misspelt_name("kate", ["kate"]) == ["kate"]


TWO = """\
# 2026-03-15

## 21:05 — chat

- **Joanna**: what animal do I like? turtles! my favourite animal, I like turtles so much

- **Joanna**: the animal I like at the zoo: turtles, such calm animals, I like them

- **Joanna**: got a turtle plush today, I like turtle animals a lot, animal lover

- **Nate**: honestly dogs r the best, had one since i was a kid
"""  # Joanna's lines apart (blank lines): three units, not one burst (index/units.py)


def test_a_question_about_two_people_asks_it_of_each(vault_dir: Path) -> None:
    (vault_dir / "memory" / "2026-03-15.md").write_text(TWO, encoding="utf-8")
    opened = Vault(vault_dir)
    opened.index()
    # Joanna's lines are a run of hers, each lifted by the other two as before the rule
    # that a run-mate lifts a message only by the words it shares (tested apart): turns
    # alone decide the order here.
    opened = configure(opened, coalesce_depth=0, shared_context=False)
    query = "What animal do Joanna and Nate like?"
    hits = opened.search(query, limit=4, fresh=False)
    assert [(h.start_line, h.scores["turn"]) for h in hits] == [
        (5, 0.0),
        (11, 1.0),
        (7, 0.0),
        (9, 0.0),
    ]
    # Without turns, Joanna's three lines come first.
    plain = configure(opened, subject_turns=False).search(query, limit=4, fresh=False)
    assert [h.start_line for h in plain] == [5, 7, 9, 11]
    # One name: no turns.
    one = configure(opened, subject_turns=True).search("What animal does Joanna like?", fresh=False)
    assert all(h.scores["turn"] == 0.0 for h in one)


def test_take_turns() -> None:
    ranked = [1, 2, 3, 4, 5, 6]
    assert take_turns(ranked, [{1, 2, 3}, {5, 6}]) == [1, 5, 2, 4, 6, 3]  # 4 keeps its place
    assert take_turns(ranked, [{6}, {1, 2, 3}]) == [1, 6, 2, 4, 5, 3]
    assert take_turns(ranked, [{1, 2}]) == ranked


CONTACTS = """\
# 2026-03-15

## 20:10 — chat

- **Mike**: pottery pottery! my cousin does pottery every weekend, pottery is her whole life lol
- **Katherine Moss**: signed up for a pottery class yesterday, made a lopsided bowl
- **Mike**: haha send pics
"""


@pytest.mark.parametrize("query", ["What pottery did Kate make?", "what pottery did katie make"])
def test_a_nickname_names_the_speaker_labelled_by_the_full_name(
    vault_dir: Path, query: str
) -> None:
    """A chat export labels people by their contact names; the person asking calls them by
    a nickname, which the `nicknames` package's list ties to the full name."""
    (vault_dir / "memory" / "2026-03-15.md").write_text(CONTACTS, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.index()
    hits = configure(vault, coalesce_depth=0).search(query, limit=3, fresh=False)
    assert hits[0].start_line == 6, hits[0].text
    assert hits[0].scores["alias"] == 1.0 and hits[0].scores["subject"] == 1.5
    # Without the list, Mike's line (pottery four times) comes first.
    plain = configure(vault, nicknames=False).search(query, limit=3, fresh=False)
    assert plain[0].start_line == 5, plain[0].text


def test_nickname_names() -> None:
    labels = ["katherin", "michael", "elizabeth", "robert"]
    assert nickname_names("kate", labels) == ["katherin"]  # a nickname of the full name
    assert nickname_names("mike", labels) == ["michael"]
    assert nickname_names("liz", labels) == ["elizabeth"]
    assert nickname_names("bob", labels) == ["robert"]
    assert nickname_names("katherin", ["kate", "mike"]) == ["kate"]  # the full name
    assert nickname_names("kati", ["kate", "mike"]) == ["kate"]  # two nicknames of one name
    assert nickname_names("pari", labels) == []  # no name of the list
    assert nickname_names("kate", ["mike"]) == []
    common = {"pottery"}.__contains__
    assert resolve_names([("kate", True)], labels, common) == {"kate": ["katherin"]}
    assert resolve_names([("kate", True)], labels, common, nicknames=False) == {}
    # Two labels the nickname could name: it names neither.
    assert resolve_names([("kate", True)], ["katherin", "kathryn"], common) == {}
