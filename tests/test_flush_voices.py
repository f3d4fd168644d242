"""Flush keeps what people say the way they say it: preferences, facts and decisions said with
"we", "you", a name or in the third person are kept, offline and with a model, between a user
and an assistant and between people."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.capture.extract import classify

from .llm_server import ScriptedLLMServer

DAY = dt.date(2026, 12, 6)


@pytest.mark.parametrize(
    ("sentence", "category"),
    [
        ("We both hate crowds.", "preference"),
        ("Both of us hate crowds, so no festivals.", "preference"),
        ("Neither of us likes horror movies.", "preference"),
        ("We'd rather take the night train.", "preference"),
        ("Maya can't stand cilantro.", "preference"),
        ("Jonas loves jazz.", "preference"),
        ("He hates spicy food.", "preference"),
        ("My sister never eats after eight.", "preference"),
        ("The kids hate broccoli.", "preference"),
        ("Maya and I both love sushi.", "preference"),
        ("We are vegetarians.", "fact"),
        ("Lena works at Siemens in Munich.", "fact"),
        ("They decided to sell the car.", "decision"),
        ("She went with the blue tiles for the bathroom.", "decision"),
        # not a taste: a reaction, a question, a wish for the listener
        ("We love it!", None),
        ("Do you both like sushi?", None),
        ("Maya loves you.", None),
    ],
)
def test_a_user_says_what_others_like(sentence: str, category: str | None) -> None:
    found = classify(sentence, "user")
    assert (found[0] if found else None) == category


def test_an_assistant_confirming_the_users_taste_is_kept() -> None:
    # (flush reads it without its leading "Got it, ")
    assert classify("You prefer tabs over spaces.", "assistant") == ("preference", 1)
    assert classify("You might prefer tabs here.", "assistant") is None  # advice, not a taste


def flushed(vault: Vault, chat: list[dict[str, str]], session: str) -> list[str]:
    return [e.text for e in vault.flush(chat, session=session, date=DAY).entries]


def test_offline_flush_keeps_we_you_and_named_tastes(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    chat = [
        {"role": "user", "content": "Plan a weekend in Lisbon for Maya and me."},
        {"role": "assistant", "content": "Happy to. Any likes or dislikes?"},
        {
            "role": "user",
            "content": "We both hate crowds. Maya can't stand cilantro. Our budget is 900 euros.",
        },
        {"role": "assistant", "content": "Got it, you prefer quiet places."},
    ]
    texts = flushed(vault, chat, "lisbon")
    assert "User: We both hate crowds. #preference" in texts
    assert "User: Maya can't stand cilantro. #preference" in texts
    assert "User: Our budget is 900 euros." in texts
    assert "Assistant: You prefer quiet places. #preference" in texts


def test_offline_flush_between_people_keeps_what_they_say_of_each_other(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    chat = [
        {
            "role": "user",
            "name": "Ines",
            "content": "You hate mornings, so I booked the late ferry.",
        },
        {"role": "user", "name": "Tomas", "content": "Ha, true. And Maya can't stand seafood."},
        {"role": "user", "name": "Ines", "content": "We both love the old town though."},
    ]
    texts = flushed(vault, chat, "ferry")
    assert any(t.startswith("Ines: You hate mornings") for t in texts)
    assert any("Maya can't stand seafood" in t for t in texts)
    assert any(t.startswith("Ines: We both love the old town") for t in texts)


def test_a_model_keeps_them_too(vault_dir: Path, llm_server: ScriptedLLMServer) -> None:
    with (vault_dir / "vault.toml").open("a") as fh:
        fh.write(f'\n[llm]\nbase_url = "{llm_server.base_url}"\nmodel = "m1"\n')
    vault = Vault(vault_dir)
    chat = [
        {"role": "user", "content": "We both hate crowds, and Maya can't stand cilantro."},
        {"role": "assistant", "content": "Noted: quiet places, no cilantro."},
    ]
    llm_server.reply_json(
        {
            "entries": [
                {"text": "The user and Maya both hate crowds.", "category": "preference"},
                {"text": "Maya can't stand cilantro.", "category": "preference"},
            ]
        }
    )
    report = vault.flush(chat, session="model", date=DAY)
    assert report.mode == "llm" and report.refused == []
    assert [e.text for e in report.entries] == [
        "The user and Maya both hate crowds. #preference",
        "Maya can't stand cilantro. #preference",
    ]
    prompt = llm_server.requests[0]["messages"][0]["content"]
    assert 'with "we"' in prompt and "third person" in prompt
