"""Picking a session up again: `vault sessions continue`, `Vault.continue_session`,
`ConversationWindow.resume`, `vault sessions show --transcript`, and the round trip
flush -> continue -> a new window -> flush that appends nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.agents.window import ConversationWindow
from vault_memory.search.tokens import load_counter
from vault_memory.sessions import (
    MESSAGE_OVERHEAD,
    SUMMARY_HEADER,
    content_text,
    parse_transcript,
)

from ..agents.test_window import conversation


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T14:03")


def transcript_path(root: Path, session: str) -> Path:
    (found,) = (root / "sessions").glob(f"*-{session}.md")
    return found


def stored(root: Path, session: str) -> list[dict]:
    path = transcript_path(root, session)
    return [
        m.turn.to_openai() for m in parse_transcript(path.name, path.read_text("utf-8")).messages
    ]


def cost(messages: list[dict]) -> int:
    counter = load_counter()
    return sum(counter.count(content_text(m)) + MESSAGE_OVERHEAD for m in messages)


CHAT = [{"role": "system", "content": "You are terse."}, *conversation(30)]


def test_continue_gives_the_newest_messages_within_the_budget_and_a_summary(
    vault_dir: Path,
) -> None:
    with Vault(vault_dir) as vault:
        vault.flush(CHAT, session="long")
        found = vault.continue_session("long", 600)
    messages = found.messages
    assert cost(messages) <= 600 and found.tokens == cost(messages)
    assert messages[0] == CHAT[0]
    assert messages[1]["role"] == "system" and messages[1]["content"].startswith(SUMMARY_HEADER)
    assert messages[2:] == CHAT[-len(found.recent) :]  # the newest, as they were
    assert found.summarised == len(CHAT) - 1 - len(found.recent) > 0
    # the summary ends with the message just before the recent ones
    before = CHAT[-len(found.recent) - 1]
    assert messages[1]["content"].splitlines()[-1].startswith(f"- {before['role']}: ")
    # a larger budget holds more, the whole conversation when it fits
    more = Vault(vault_dir).continue_session("long", 100_000)
    assert more.messages == CHAT and more.summarised == 0


def test_continue_never_starts_with_a_tool_result_cut_from_its_call(vault_dir: Path) -> None:
    chat = [
        {"role": "user", "content": "Look it up."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "result " * 150},
        {"role": "assistant", "content": "Found it."},
    ]
    with Vault(vault_dir) as vault:
        vault.flush(chat, session="tools")
        found = vault.continue_session("tools", 120)
    assert found.recent[0]["role"] != "tool"
    assert found.messages[-1]["content"] == "Found it."


def test_the_round_trip_appends_nothing(vault_dir: Path) -> None:
    """flush -> continue -> feed to a new window -> flush again appends nothing."""
    with Vault(vault_dir) as vault:
        vault.flush(CHAT, session="trip")
        transcript = transcript_path(vault_dir, "trip").read_bytes()
        daily = (vault_dir / "memory" / "2026-11-22.md").read_bytes()
        for budget in (300, 800, 100_000):
            messages = vault.continue_session("last", budget).messages
            window = ConversationWindow(vault, max_tokens=budget, session="trip")
            window.extend(messages)
            window.close()
            report = vault.flush(messages, session="trip")
            assert report.transcript.appended == 0
            assert transcript_path(vault_dir, "trip").read_bytes() == transcript
            assert (vault_dir / "memory" / "2026-11-22.md").read_bytes() == daily


def test_a_resumed_window_goes_on_in_the_same_transcript(vault_dir: Path) -> None:
    with Vault(vault_dir) as vault:
        vault.flush(CHAT, session="resume")
        window = ConversationWindow.resume(vault, "last", max_tokens=500)
        assert window.session == "resume"
        assert window.messages == vault.continue_session("resume", 500).messages
        new = [
            {"role": "user", "content": "ok"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "Next: the release notes for version 4.2."},
            *conversation(8, seed=7),
        ]  # enough to push the new "ok" out of the window
        for message in new:
            window.add(message)
        assert window.tokens() <= 500
        window.close()
    assert stored(vault_dir, "resume") == [*CHAT, *new]


def test_a_window_records_the_whole_conversation_once_even_repeated_messages(
    vault_dir: Path,
) -> None:
    chat = conversation(20)
    for i in range(0, len(chat), 5):
        chat.insert(i, {"role": "user", "content": "ok"})
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=200, session="small")
        window.extend(chat)
        window.close()
        window.close()
    assert stored(vault_dir, "small") == chat


def test_the_cli_continues_and_shows_the_transcript(vault_dir: Path, run_cli) -> None:
    Vault(vault_dir).flush(CHAT, session="cli-1")
    result = run_cli(
        "--vault", str(vault_dir), "sessions", "continue", "last", "--budget", "400", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["session"] == "cli-1" and data["path"] == "sessions/2026-11-22-cli-1.md"
    assert data["messages"][-1] == CHAT[-1] and data["tokens"] <= 400
    text = run_cli("--vault", str(vault_dir), "sessions", "continue", "cli-1", "--budget", "400")
    assert text.exit_code == 0
    assert text.stdout.startswith("### system\nYou are terse.\n")
    assert "older summarised" in text.stderr
    shown = run_cli("--vault", str(vault_dir), "sessions", "show", "cli-1", "--transcript")
    assert shown.stdout == transcript_path(vault_dir, "cli-1").read_text("utf-8")
    as_json = run_cli(
        "--vault", str(vault_dir), "sessions", "show", "last", "--transcript", "--json"
    )
    assert json.loads(as_json.stdout)["messages"][1]["content"] == CHAT[1]["content"]


def test_clear_errors_for_a_missing_session_or_a_tiny_budget(vault_dir: Path, run_cli) -> None:
    none = run_cli("--vault", str(vault_dir), "sessions", "continue")
    assert none.exit_code == 1 and "there is no transcript yet" in none.stderr
    Vault(vault_dir).flush(CHAT, session="there")
    missing = run_cli("--vault", str(vault_dir), "sessions", "continue", "nope")
    assert missing.exit_code == 1
    assert "no transcript of session 'nope'" in missing.stderr
    bad = run_cli("--vault", str(vault_dir), "sessions", "continue", "../x")
    assert bad.exit_code == 1 and "is not usable" in bad.stderr
    tiny = run_cli("--vault", str(vault_dir), "sessions", "continue", "--budget", "10")
    assert tiny.exit_code == 1 and "too small" in tiny.stderr


def test_last_is_the_transcript_updated_last_across_scopes(vault_dir: Path, monkeypatch) -> None:
    vault = Vault(vault_dir)
    vault.flush(CHAT[:3], session="older")
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T15:00")
    vault.scope("team").flush(CHAT[:5], session="newer")
    assert vault.transcript("last").session == "newer"
    assert vault.scope("team").transcript("last").path == (
        "scopes/team/sessions/2026-11-22-newer.md"
    )
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T16:00")
    vault.flush(CHAT[:6], session="older")  # a longer version: updated now
    assert vault.transcript("last").session == "older"


def test_the_transcripts_are_listed_even_those_that_left_no_entry(
    vault_dir: Path, run_cli, monkeypatch
) -> None:
    vault = Vault(vault_dir)
    vault.flush(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}],
        session="small-talk",
    )
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T15:00")
    vault.flush(CHAT, session="work")
    assert vault.sessions()[0].id == "work" and len(vault.sessions()) == 1
    assert [t.session for t in vault.transcripts()] == ["work", "small-talk"]
    listed = run_cli("--vault", str(vault_dir), "sessions", "--transcripts")
    assert listed.stdout.splitlines()[1].startswith(
        "small-talk  2026-11-22T14:03..2026-11-22T14:03  sessions/2026-11-22-small-talk.md  hi"
    )
    data = json.loads(
        run_cli("--vault", str(vault_dir), "sessions", "--transcripts", "--json").stdout
    )
    assert [d["session"] for d in data] == ["work", "small-talk"]
    assert "messages" not in data[0]
