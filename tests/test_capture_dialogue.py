"""Flushing a conversation between people (capture/dialogue.py): what each speaker tells is
kept under their name; questions, courtesy and reactions to the listener are not. Every line
of conversation here was written for these tests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.capture.conversation import Message, parse_conversation
from vault_memory.capture.dialogue import between_people, extract_dialogue, judge

DAY = dt.date(2026, 5, 11)  # a Monday


def people(*turns: tuple[str, str]) -> list[Message]:
    return [Message("user", text, name) for name, text in turns]


FRIENDS = people(
    ("Ines", "Hey Tomas! Long time no talk. How have you been?"),
    (
        "Tomas",
        "Hi Ines! Busy but good. I finally finished the boat I was building. "
        "It took three summers. The hull is cedar, and it floats!",
    ),
    ("Ines", "That's amazing, congrats! What will you call her?"),
    ("Tomas", "Thanks! She's called Mirja, after my grandmother. We launch her next month."),
    ("Ines", "I'm so proud of you. You always finish what you start."),
    (
        "Ines",
        "Thanks for asking about the move, we got the keys to the flat in Porto yesterday. "
        "The kitchen needs work but the view is great.",
    ),
    ("Tomas", "Sounds wonderful! Can't wait to visit."),
    ("Ines", "Been painting the walls all weekend. My arms hurt."),
    ("Tomas", "Tell me more about the neighbourhood!"),
)


def texts(messages: list[Message]) -> list[str]:
    return [e.text for e in extract_dialogue(messages, 500, DAY)]


def test_a_conversation_between_people_is_recognised() -> None:
    assert between_people(FRIENDS)
    assert not between_people(people(("Ines", "hi"), ("Ines", "again")))  # one person
    assert not between_people(
        [
            Message("user", "hi", "Ines"),
            Message("assistant", "hello"),
            Message("user", "I moved", "Tomas"),
        ]
    )  # an assistant speaks
    assert not between_people([Message("user", "I like tea"), Message("user", "me too")])


def test_what_each_speaker_tells_is_kept_under_their_name() -> None:
    assert texts(FRIENDS) == [
        "Tomas: I finally finished the boat I was building. It took three summers. The hull is "
        "cedar, and it floats!",  # "Busy but good." is too short to stand on its own
        "Tomas: She's called Mirja, after my grandmother. We launch her next month (2026-06).",
        "Ines: We got the keys to the flat in Porto yesterday (2026-05-10). The kitchen needs "
        "work but the view is great.",
        "Tomas: Can't wait to visit.",  # a plan, the subject left out
        "Ines: Been painting the walls all weekend.",
    ]


@pytest.mark.parametrize(
    ("sentence", "verdict"),
    [
        ("I finally finished the boat I was building.", "self"),
        ("Been painting the walls all weekend.", "self"),  # the subject left out
        ("Just started a pottery class on Tuesdays.", "self"),
        ("The hull is cedar and it took three summers to build.", "said"),
        ("It was a long drive but the coast was worth every minute.", "said"),
        ("How have you been?", None),
        ("What did you name her? (shared a photo of a boat)", None),  # a question, a remark after
        ("That's amazing, good for you!", None),
        ("I'm so proud of you.", None),
        ("I'm here for you, always.", None),
        ("You always finish what you start.", None),
        ("Your words mean a lot to me.", None),
        ("Tell me more about the neighbourhood!", None),
        ("Can't wait to hear about it.", None),
        ("It was so much fun!", None),
        ("Congrats on the new job!", None),
    ],
)
def test_sentences_are_judged(sentence: str, verdict: str | None) -> None:
    assert judge(sentence)[0] == verdict


def test_a_message_with_nothing_about_its_speaker_is_left_out() -> None:
    chat = people(
        ("Ines", "I adopted a greyhound."),
        ("Tomas", "Greyhounds are gentle dogs and they sleep a lot."),
    )
    assert texts(chat) == ["Ines: I adopted a greyhound."]


def test_the_listeners_name_used_as_an_address_is_dropped() -> None:
    chat = people(
        ("Ines", "Tomas, I signed the lease today."),
        ("Tomas", "I booked the ferry for us, Ines!"),
        ("Ines", "Tom, I mean it."),
    )  # a short form of the name: still an address
    assert texts(chat)[:2] == [
        "Ines: I signed the lease today (2026-05-11).",
        "Tomas: I booked the ferry for us!",
    ]


def test_long_messages_become_several_entries_at_sentence_boundaries() -> None:
    message = " ".join(
        f"On day {n} I sanded part {n} of the deck in the harbour." for n in range(1, 13)
    )
    entries = extract_dialogue(people(("Ines", "hi"), ("Tomas", message)), 200, DAY)
    assert len(entries) > 1
    assert all(len(e.text) <= len("Tomas: ") + 200 for e in entries)
    assert [n for e in entries for n in range(1, 13) if f"part {n} " in e.text] == list(
        range(1, 13)
    )  # nothing lost, in order


def test_tags_between_people() -> None:
    chat = people(
        ("Ines", "hi"),
        ("Tomas", "We decided to sell the old car. I love sailing in the autumn."),
        ("Ines", "I love how you describe it. I'd love to see your photos sometime."),
        ("Tomas", "Remember to bring a jacket when we sail. I'll be at the pier at nine."),
    )
    entries = extract_dialogue(chat, 500, DAY)
    assert [e.speaker for e in entries] == ["Tomas", "Tomas"]  # Ines only praises Tomas
    assert entries[0].text.endswith("#decision")  # the weightiest of its sentences
    # "remember" said to a friend is no instruction to the memory: no #important
    assert "Remember to bring a jacket" in entries[1].text
    assert "#important" not in entries[1].text


def test_a_named_transcript_is_read_as_people_talking() -> None:
    transcript = (
        "Ines: I got the keys to the flat yesterday!\n"
        "Tomas: Congratulations! Which floor?\n"
        "Ines: The fourth, with a view of the river.\n"
        "Tomas: I finished the boat last week.\n"
    )
    messages = parse_conversation(transcript)
    assert [(m.role, m.name) for m in messages] == [("user", "Ines"), ("user", "Tomas")] * 2
    assert between_people(messages)
    # notes that use a few labels are still notes, one message
    notes = "Decision: use uv\nContext: pip is slow\nDecision: pin versions\nContext: builds\n"
    assert [(m.role, m.name) for m in parse_conversation(notes)] == [("user", None)]
    assert len(parse_conversation("Some thoughts.\nJonas: owns billing.\nMore text.")) == 1


def test_flush_uses_the_people_rules_for_people_and_the_agent_rules_for_agents(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-05-11T18:00")
    chat = [
        {"role": "user", "name": n, "content": t}
        for n, t in (
            ("Ines", "I painted the kitchen green. It took two days."),
            ("Tomas", "Nice! I started a pottery class."),
        )
    ]
    with Vault(vault_dir) as vault:
        report = vault.flush(chat, session="friends")
        assert [e.text for e in report.entries] == [
            "Ines: I painted the kitchen green. It took two days.",
            "Tomas: I started a pottery class.",
        ]
        agent = vault.flush(
            [
                {"role": "user", "content": "I painted the kitchen green."},
                {"role": "assistant", "content": "Nice, what colour next?"},
            ],
            session="agent",
        )
    # with an agent, a user's plain remark without a name or number is not a memory
    assert agent.entries == []


def test_a_reply_to_a_question_tells_even_without_a_word_about_its_speaker() -> None:
    chat = people(
        ("Ines", "What do your turtles eat?"),
        ("Tomas", "Mostly leafy greens, some fruit and the odd cricket."),
        ("Tomas", "Greyhounds are gentle dogs and they sleep a lot."),
    )
    # the answer is kept; a remark that answers nothing and tells nothing of Tomas is not
    assert texts(chat) == ["Tomas: Mostly leafy greens, some fruit and the odd cricket."]
    # one's own question does not count
    assert texts(people(("Ines", "Where is it? The harbour is quiet at night."))) == []


def test_a_statement_that_ends_in_a_question_keeps_the_statement() -> None:
    chat = people(
        ("Ines", "I finished another pottery project - want to see a pic?"),
        ("Tomas", "Did you glaze it, or is it still raw?"),
    )
    assert texts(chat) == ["Ines: I finished another pottery project."]


def test_a_short_answer_that_names_things_is_kept() -> None:
    chat = people(
        ("Ines", "What are your cats called?"), ("Tomas", "Miso and Tofu! Great question.")
    )
    assert texts(chat) == ["Tomas: Miso and Tofu!"]
    assert judge("Luna and Oliver!")[0] == "said"
    assert judge("In Lisbon.")[0] == "said"
    assert judge("Idea!")[0] is None  # capitalised because it opens the sentence
    assert judge("Hey Tomas!", {"Tomas"})[0] is None  # the listener called out


def test_catching_up_is_left_out_and_the_news_kept() -> None:
    chat = people(
        ("Ines", "Tomas, since we last spoke, I took up pottery at the community centre."),
        ("Ines", "A lot has happened since we talked. Crazy stuff's been happening lately."),
        ("Ines", "Guess what, long time no see! I sold the old car."),
        ("Tomas", "Wow, nice!"),
    )
    assert texts(chat) == [
        "Ines: I took up pottery at the community centre.",
        "Ines: I sold the old car.",
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "I'll keep you posted on how it goes.",  # the conversation's own bookkeeping
        "I'll definitely let you know.",
        "I'm sure you'll nail the audition.",  # wishes and reassurance for the listener
        "I hope your knee heals soon.",
        "I'm so happy they gave you a warm welcome back.",
        "Glad I have friends like you in my corner.",
        "Keep up the great work!",  # cheering on
        "Don't give up, you are so close!",
        "Have a blast at the festival!",
        "Sorry about the hike, that sounds rough.",
        "I'm sure he'll be fine after a good night's sleep.",
        "Guess what!",
    ],
)
def test_what_is_said_for_the_listener_is_left_out(sentence: str) -> None:
    assert judge(sentence)[0] is None


def test_the_speakers_own_plans_are_no_request() -> None:
    assert judge("Now I'm going to submit it to two festivals in the autumn.")[0] == "self"
    assert judge("Now tell me about your trip to the coast.")[0] is None


def test_the_readme_example(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The docs' flush page, "Conversations between people": the transcript and what flush
    writes of it."""
    monkeypatch.setenv("VAULT_NOW", "2026-05-11T12:00")
    docs = Path(__file__).resolve().parent.parent / "docs"
    readme = (docs / "concepts" / "flush.md").read_text(encoding="utf-8")
    block = readme.split("$ cat friends.txt\n", 1)[1].split("$ vault flush", 1)[0]
    written = readme.split("$ tail -3 memory/2026-05-11.md\n", 1)[1].split("```", 1)[0]
    report = Vault(vault_dir).flush(block, session="friends", date=DAY)
    log = (vault_dir / report.path).read_text(encoding="utf-8")
    assert log.endswith(written)
