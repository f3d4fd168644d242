"""One transcript per conversation, however often and under whatever id it is flushed: known by
its content; `sessions continue last` never resumes a copy; a pruned transcript stays pruned
when its conversation is flushed again, or the flush says why not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.sessions.identity import PRUNED_FILE, same_conversation
from vault_memory.sessions.transcript import Turn

CHAT = [
    {"role": "user", "content": "Which port does the zephyr gateway use?"},
    {"role": "assistant", "content": "Port 7443, as we decided in October."},
    {"role": "user", "content": "We prefer TLS everywhere, remember that."},
]
MORE = [
    {"role": "assistant", "content": "Noted: TLS everywhere."},
    {"role": "user", "content": "And staging uses port 8443 from now on."},
]


def transcripts(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "sessions").glob("*.md"))


@pytest.fixture
def vault(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Vault:
    monkeypatch.setenv("VAULT_NOW", "2026-12-06T10:00")
    return Vault(vault_dir)


def test_a_reflush_without_session_keeps_the_session_and_its_transcript(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = vault.flush(CHAT, session="support-42")
    assert first.transcript.appended == 3
    monkeypatch.setenv("VAULT_NOW", "2026-12-06T11:00")
    again = vault.flush(CHAT)  # no --session: known by its content
    assert again.session == "support-42" and again.session_derived
    assert again.entries == [] and again.already_in_other_sessions == 0
    assert again.transcript.appended == 0
    longer = vault.flush(CHAT + MORE)
    assert longer.session == "support-42" and longer.transcript.appended == 2
    assert transcripts(vault.root) == ["2026-12-06-support-42.md"]
    resumed = vault.continue_session("last")
    assert resumed.session == "support-42" and resumed.total == 5


def test_another_explicit_id_still_writes_one_transcript(vault: Vault) -> None:
    vault.flush(CHAT, session="support-42")
    other = vault.flush(CHAT + MORE, session="ticket-7")
    assert other.session == "ticket-7"  # its entries are under the id it was given
    assert other.transcript.session == "support-42" and other.transcript.appended == 2
    assert any("transcript is sessions/2026-12-06-support-42.md" in w for w in other.warnings)
    assert transcripts(vault.root) == ["2026-12-06-support-42.md"]


def test_a_conversation_that_only_opens_alike_is_another(vault: Vault) -> None:
    vault.flush(CHAT, session="a")
    forked = [*CHAT[:2], {"role": "user", "content": "Which port does the billing API use?"}]
    vault.flush(forked, session="b")
    assert transcripts(vault.root) == ["2026-12-06-a.md", "2026-12-06-b.md"]


def test_continue_last_never_resumes_a_copy(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy an older version wrote under a second id (re-flushed without --session), updated
    after the original: `continue last` resumes the original."""
    vault.flush(CHAT, session="support-42")
    sessions = vault.root / "sessions"
    original = sessions / "2026-12-06-support-42.md"
    copy = sessions / "2026-12-06-1f2e3d4c.md"
    shutil.copyfile(original, copy)
    text = copy.read_text().replace("10:00:00", "12:00:00").replace('"support-42"', '"1f2e3d4c"')
    copy.write_text(text)
    assert vault.transcript("last").path == "sessions/2026-12-06-support-42.md"
    assert vault.continue_session("last").session == "support-42"


def test_prune_then_reflush_stays_pruned_and_says_so(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:
    vault.flush(CHAT, session="support-42")
    monkeypatch.setenv("VAULT_NOW", "2027-02-01T10:00")
    pruned = vault.prune_sessions("30d")
    assert pruned.deleted == ["sessions/2026-12-06-support-42.md"]
    record = json.loads((vault.root / "sessions" / PRUNED_FILE).read_text())
    assert record["session"] == "support-42" and record["messages"] == 3
    assert "zephyr" not in json.dumps(record)  # hashes only, nothing of what was said
    for session in ("support-42", None):  # by its id, or known by its content
        again = vault.flush(CHAT, session=session)
        assert transcripts(vault.root) == []
        assert again.transcript.appended == 0
        assert any(
            "(sessions/2026-12-06-support-42.md) was pruned on 2027-02-01; it is not written "
            "again" in w
            for w in again.warnings
        )
    result = run_cli(
        "--vault", str(vault.root), "flush", "-", input=json.dumps(CHAT)
    )  # fmt: skip
    assert result.exit_code == 0 and "was pruned on 2027-02-01" in result.stderr
    assert transcripts(vault.root) == []


def test_after_a_prune_only_what_came_later_is_kept(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.flush(CHAT, session="support-42")
    monkeypatch.setenv("VAULT_NOW", "2027-02-01T10:00")
    vault.prune_sessions("30d")
    longer = vault.flush(CHAT + MORE)
    assert longer.session == "support-42"
    assert longer.transcript.appended == 2
    assert any("only the 2 messages after it were kept" in w for w in longer.warnings)
    kept = vault.transcript("support-42")
    assert [m.turn.text for m in kept.messages] == [m["content"] for m in MORE]
    # flushed again, whole: still only the two
    assert vault.flush(CHAT + MORE, session="support-42").transcript.appended == 0
    assert len(vault.transcript("support-42").messages) == 2


def test_another_conversation_under_a_pruned_id_is_written_and_says_why(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.flush(CHAT, session="support-42")
    monkeypatch.setenv("VAULT_NOW", "2027-02-01T10:00")
    vault.prune_sessions("30d")
    other = [{"role": "user", "content": "Our standup moves to 9:15 from Monday."}]
    report = vault.flush(other, session="support-42")
    assert report.transcript.appended == 1
    assert any("is not the one it held, so it was written in full" in w for w in report.warnings)


def turn(role: str, text: str) -> Turn:
    return Turn(role, text)


def test_same_conversation_is_two_said_messages_alike_at_the_start() -> None:
    hi, hello = turn("user", "hi"), turn("assistant", "Hello! How can I help?")
    question = turn("user", "Which port?")
    held = [hi.key, hello.key, question.key]
    assert same_conversation(held, [hi, hello])  # a start of it
    assert same_conversation(held, [hi, hello, question, turn("assistant", "7443")])  # longer
    assert not same_conversation(held, [hi])  # one message is no identity
    assert not same_conversation(held, [hi, hello, turn("user", "Which colour?")])
    system = turn("system", "You are a helpful assistant.")
    assert not same_conversation([system.key, hi.key], [system, hi])  # one said message
    assert not same_conversation([], [hi, hello])


def test_the_first_messages_are_remembered_by_inode_and_rebuilt(vault: Vault) -> None:
    from vault_memory.sessions.transcript import FIRST_KEYS_CACHE, first_keys

    vault.flush(CHAT, session="a")
    cache = vault.root / ".vault" / FIRST_KEYS_CACHE
    assert "2026-12-06-a.md" in json.loads(cache.read_text())["sessions"]
    outside = vault.root.parent / "elsewhere.md"
    outside.write_text((vault.root / "sessions" / "2026-12-06-a.md").read_text())
    (vault.root / "sessions" / "2026-12-06-link.md").symlink_to(outside)
    cache.write_text("{not json")  # damaged: only a cache
    found = first_keys(vault.root, "sessions")
    assert list(found) == ["2026-12-06-a.md"]  # the symlink is never read
    assert cache.read_text() == "{not json"  # a reader does not write
    first_keys(vault.root, "sessions", save=True)
    assert list(json.loads(cache.read_text())["sessions"]) == ["2026-12-06-a.md"]
    again = vault.flush(CHAT)  # known by its content through the rebuilt cache
    assert again.session == "a"
