"""Threads: each message's parent, the previous one unless a topic change continues an earlier
exchange (embeddings, or the configured model, falling back to the latest message); stored as
`parent:` lines, so they survive restarts; a threaded window holds the current thread's path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.agents.window import ConversationWindow
from vault_memory.errors import VaultError
from vault_memory.sessions import parse_transcript, thread_path
from vault_memory.sessions.threads import ThreadPicker, exchanges, pick

from .llm_server import ScriptedLLMServer

CHAT = [
    {
        "role": "user",
        "content": "We need to pick a database for the billing service. PostgreSQL or MySQL?",
    },
    {
        "role": "assistant",
        "content": "For billing, PostgreSQL: strict transactions, good JSON "
        "support and mature replication.",
    },
    {
        "role": "user",
        "content": "Different question: what should I pack for a week of hiking "
        "in the Alps in October?",
    },
    {
        "role": "assistant",
        "content": "Layers, a waterproof jacket, warm hat and gloves, and "
        "good boots; nights get cold.",
    },
    {"role": "user", "content": "Do I need crampons on the trails at that time of year?"},
    {
        "role": "assistant",
        "content": "On most valley trails no, but microspikes help above 2500 m after early snow.",
    },
    {
        "role": "user",
        "content": "Back to billing: which PostgreSQL version should the "
        "database run, and with what replication?",
    },
    {"role": "assistant", "content": "PostgreSQL 16 with streaming replication to one standby."},
]


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T14:03")


def own(session: str) -> list[dict[str, str]]:
    """CHAT as a conversation of its own (one conversation keeps one transcript)."""
    return [{**CHAT[0], "content": f"{CHAT[0]['content']} ({session})"}, *CHAT[1:]]


def parents(root: Path, session: str) -> list[int | None]:
    (path,) = (root / "sessions").glob(f"*-{session}.md")
    return [m.parent for m in parse_transcript(path.name, path.read_text("utf-8")).messages]


def test_pick_keeps_the_latest_unless_another_is_clearly_more_alike() -> None:
    assert pick([0.9, 0.1, 0.5], 0.35) == 2  # the latest is alike enough
    assert pick([0.7, 0.05, 0.1], 0.35) == 0  # a return to the first topic
    assert pick([0.3, 0.05, 0.1], 0.35) == 2  # nothing alike enough: the latest
    assert pick([0.38, 0.05, 0.33], 0.35) == 2  # not clearly more alike than the latest
    assert pick([0.2], 0.35) == 0
    with pytest.raises(ValueError):
        pick([], 0.35)


def test_exchanges_pair_a_reply_with_what_it_answers() -> None:
    nodes = [
        (1, None, "system", "Be brief."),
        (2, 1, "user", "hi"),
        (3, 2, "assistant", "hello"),
        (4, 3, "assistant", ""),
        (5, 4, "tool", "output"),
        (6, 5, "user", "unanswered"),
    ]
    found = exchanges(nodes)
    assert [(e.end, e.text) for e in found] == [(3, "hi\nhello"), (6, "unanswered")]


def test_a_return_to_an_earlier_topic_continues_it(vault_dir: Path, loaded_embedder: Any) -> None:
    vault = Vault(vault_dir, {"sessions.threads": "embedding"})
    vault.flush(CHAT, session="topics")
    assert parents(vault_dir, "topics") == [None, 1, 2, 3, 4, 5, 2, 7]
    # the tree survives a restart: read back from the file, the thread is billing's
    found = vault.transcript("topics")
    assert [m.id for m in thread_path(found.messages)] == [1, 2, 7, 8]
    assert [m["content"] for m in vault.continue_session("topics", threaded=True).messages] == [
        CHAT[0]["content"],
        CHAT[1]["content"],
        CHAT[6]["content"],
        CHAT[7]["content"],
    ]
    # flushing more of it later goes on choosing from the messages in the file
    more = [
        *CHAT,
        {"role": "user", "content": "And which boots for the Alps hike: leather or synthetic?"},
    ]
    vault.flush(more, session="topics")
    assert parents(vault_dir, "topics")[-1] in (4, 6)  # the hiking exchange


def test_without_threads_each_message_continues_the_one_before(vault_dir: Path) -> None:
    Vault(vault_dir).flush(CHAT, session="linear")
    assert parents(vault_dir, "linear") == [None, 1, 2, 3, 4, 5, 6, 7]


def test_the_model_may_choose_and_any_failure_falls_back_to_the_latest(
    vault_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    (vault_dir / "vault.toml").write_text(
        f'[llm]\nbase_url = "{llm_server.base_url}"\nmodel = "m"\ntimeout_seconds = 5\n'
        "max_retries = 0\n"
    )
    vault = Vault(vault_dir)
    llm_server.reply_json({"continues": 4})  # for message 5: stays with hiking (the latest)
    llm_server.reply_json({"continues": 2})  # for message 7: billing
    vault.record_transcript(CHAT, session="by-model", threads="llm")
    assert parents(vault_dir, "by-model") == [None, 1, 2, 3, 4, 5, 2, 7]
    prompt = llm_server.requests[-1]["messages"][0]["content"]
    assert "Which exchange does the new message continue?" in prompt
    llm_server.reply_json({"continues": 99})  # not a listed exchange: the latest
    vault.record_transcript(own("bad-model"), session="bad-model", threads="llm")
    assert parents(vault_dir, "bad-model") == [None, 1, 2, 3, 4, 5, 6, 7]
    llm_server.reply_raw(500, "down")
    vault.record_transcript(own("down"), session="down", threads="llm")
    assert parents(vault_dir, "down") == [None, 1, 2, 3, 4, 5, 6, 7]


def test_an_unknown_thread_mode_is_a_clear_error(vault_dir: Path) -> None:
    with pytest.raises(VaultError, match="is not a way to thread"):
        ThreadPicker(Vault(vault_dir).config, "magic")


def test_a_threaded_window_holds_the_current_threads_path(
    vault_dir: Path, loaded_embedder: Any
) -> None:
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=2000, session="tw", threaded=True)
        window.add({"role": "system", "content": "Be brief."})
        left = window.extend(CHAT)
        assert [m["content"] for m in window.messages[2:]] == [
            CHAT[0]["content"],
            CHAT[1]["content"],
            CHAT[6]["content"],
            CHAT[7]["content"],
        ]
        assert [m["content"] for m in left] == [m["content"] for m in CHAT[2:6]]
        assert "hiking" in window.summary  # what left is summarised
        window.close()
        # the transcript has every message once, in order, with the tree
        assert parents(vault_dir, "tw") == [None, 1, 2, 3, 4, 5, 6, 3, 8]
        # a resumed threaded window picks up the same path
        again = ConversationWindow.resume(vault, "tw", max_tokens=2000, threaded=True)
        assert [m["content"] for m in again.recent] == [
            CHAT[0]["content"],
            CHAT[1]["content"],
            CHAT[6]["content"],
            CHAT[7]["content"],
        ]
    daily = (vault_dir / "memory" / "2026-11-22.md").read_text("utf-8")
    assert "flush · session tw" in daily  # the daily log got its entries too
