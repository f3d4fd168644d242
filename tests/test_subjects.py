"""Subject keys (search/subjects.py): who or what a sentence is about, which attribute, which
value; a newer value supersedes only under the same key; siblings never collide."""

from __future__ import annotations

import pytest

from vault_memory.search.subjects import read_facts, relation, same_value, value_kind

from .subject_corpus import KEYS, PAIRS


def differs(newer: str, older: str) -> bool:
    return any(relation(n, o) == "differs" for n in read_facts(newer) for o in read_facts(older))


def test_the_labelled_pairs() -> None:
    wrong = [(o, n) for o, n, label in PAIRS if differs(n, o) != label]
    assert wrong == []


@pytest.mark.parametrize(("text", "key"), KEYS)
def test_the_key_a_sentence_states(text: str, key: str | None) -> None:
    keys = [f.key for f in read_facts(text)]
    assert (key in keys) if key else keys == []


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "The EU billing database runs on PostgreSQL 14.",
            "The US billing database moved to MySQL.",
        ),
        ("The EU billing database runs on PostgreSQL 14.", "The billing database moved to MySQL."),
        ("The staging API is hosted on Fly.io.", "The production API is hosted on Render."),
        ("Maya lives in Stockholm.", "Maya's sister lives in Oslo."),
        ("The Pro plan costs €20 a month.", "The Team plan costs €45 a month."),
    ],
)
def test_siblings_never_collide(older: str, newer: str) -> None:
    assert not differs(newer, older)
    assert not differs(older, newer)


def test_values_and_their_kinds() -> None:
    assert value_kind("09:30") == "time" and value_kind("at 9am") == "time"
    assert value_kind("Tuesdays") == "day" and value_kind("12 March") == "date"
    assert value_kind("€25 a month") == "price" and value_kind("t.ruiz@x.example") == "email"
    assert value_kind("+46 70 123 45 67") == "phone" and value_kind("PostgreSQL 16") is None
    assert same_value(("postgresql",), ("postgresql", "16"))
    assert same_value(("postgres",), ("postgresql",))  # one value, two spellings
    assert not same_value(("postgresql", "14"), ("postgresql", "16"))
    (standup,) = read_facts("Standup is at 9.30am.")
    (moved,) = read_facts("Standup moved to 09:30.")
    assert standup.value == moved.value == ("09:30",) and relation(moved, standup) == "same"


def test_what_states_no_key() -> None:
    for text in (
        "What time is the standup?",  # a question
        "Losing my job was tough.",  # a gerund is no subject
        "She moved to Berlin.",  # a pronoun: whose move, the line does not say
        "The queue is full again.",  # an adjective is no name
        "Maya joined the call late.",  # a call is no employer
    ):
        assert read_facts(text) == (), text


def test_a_quoted_i_is_its_speaker() -> None:
    (caroline,) = read_facts("“I live in Boston.” — Caroline #preference")
    (melanie,) = read_facts("“I'm based in Denver now.” — Melanie")
    assert caroline.key == "caroline / place" and melanie.key == "melanie / place"
    assert relation(melanie, caroline) is None  # two people's homes, not one that changed
    (moved,) = read_facts("Caroline moved to Denver.")
    assert relation(moved, caroline) == "differs"
