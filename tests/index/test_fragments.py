"""Whether a chat message stands alone or is a fragment of its speaker's next message
(index/fragments.py): the rule that decides which messages share a unit. Pure, no files."""

from __future__ import annotations

import pytest

from vault_memory.index.fragments import FRAGMENT_CHARS, has_verb, is_fragment, leaves_open
from vault_memory.index.words import after_label


@pytest.mark.parametrize(
    ("said", "following"),
    [
        ("so i went", "to the lake w my dad"),  # short, no end
        ("to the lake w my dad", "caught 3 fish!!"),  # no verb
        ("the sunset from the rooftop bar last night, honestly unreal", "so pretty"),
        ("I have been thinking about going back to the", "beach next weekend with my sister"),
        ("We were going to stay the whole week in Lisbon,", "then fly home on Sunday"),
        ("omg!!", "best concert ever"),
    ],
)
def test_a_fragment_goes_with_the_next_message(said: str, following: str) -> None:
    assert is_fragment(said, following)


@pytest.mark.parametrize(
    ("said", "following"),
    [
        ("caught 3 fish!!", "my dad cooked them"),  # short, but a whole sentence
        ("I adopted a greyhound.", "The kitchen needs tiles"),
        ("we drove up to the lake on saturday", "caught three trout before noon"),
        ("I'm planning on taking a cooking class today", "What about you?"),
        ("It's an Italian cooking class and we made pasta", "so good"),
    ],
)
def test_a_whole_message_stands_alone(said: str, following: str) -> None:
    assert not is_fragment(said, following)


def test_the_verb_test_reads_forms_endings_and_contractions() -> None:
    assert has_verb("she sings in a choir") and has_verb("we've been there")
    assert has_verb("hiked the whole trail") and has_verb("it’s raining")
    assert not has_verb("such a good movie") and not has_verb("the one in Miami")


def test_an_open_sentence_needs_the_next_message_to_go_on() -> None:
    assert leaves_open("I was about to call my", "mom when you texted")
    assert not leaves_open("I was about to call my", "Mom says hi")  # a new sentence
    assert not leaves_open("see you at the", "")  # nothing follows: the end of the turn
    assert leaves_open("we went to Rome, Naples,", "and a tiny village")
    assert not leaves_open("we went to Rome.", "and then Naples")
    assert len("so i went") < FRAGMENT_CHARS


def test_what_a_message_says_after_its_label() -> None:
    assert after_label("- **Sam**: caught 3 fish!!") == "caught 3 fish!!"
    assert after_label("- **Decision:** ship it") == "ship it"
    assert after_label("- Ines: I adopted a greyhound.") == "I adopted a greyhound."
    assert after_label("- no label here") == "no label here"
