"""Transcripts (sessions/DATE-ID.md): what a flush appends, read back exactly, idempotent,
redacted as the daily log is, safe under concurrent flushes; indexed as their own kind."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.errors import VaultError
from vault_memory.files.notes import note_kind, parse_note
from vault_memory.sessions import (
    ToolCall,
    Turn,
    new_from,
    parse_transcript,
    turns_from,
)
from vault_memory.sessions.transcript import header, render_turn

from ..capture.test_redact import SECRETS

NOW = "2026-11-22T14:03"

CHAT = [
    {"role": "system", "content": "You are a careful coding assistant."},
    {"role": "user", "content": "Which database should billing-core use?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_7",
                "type": "function",
                "function": {"name": "search_memory", "arguments": '{"query": "billing database"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_7",
        "name": "search_memory",
        "content": "memory/2026-11-20.md:4 We chose PostgreSQL 16 for billing-core.",
    },
    {"role": "assistant", "content": "You chose PostgreSQL 16 for billing-core last week."},
    {"role": "user", "content": "Good. Remember that I prefer short answers with code first."},
    {"role": "assistant", "content": "Noted: short answers, code first."},
]


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_NOW", NOW)


def transcript_of(root: Path, session: str) -> Path:
    found = list((root / "sessions").glob(f"*-{session}.md"))
    assert len(found) == 1, found
    return found[0]


def messages_of(path: Path) -> list[dict]:
    stored = parse_transcript("sessions/" + path.name, path.read_text(encoding="utf-8"))
    return [m.turn.to_openai() for m in stored.messages]


def test_a_flush_writes_the_conversation_as_a_readable_transcript(vault_dir: Path) -> None:
    report = Vault(vault_dir).flush(CHAT, session="billing-1")
    path = transcript_of(vault_dir, "billing-1")
    assert path.name == "2026-11-22-billing-1.md"
    assert report.transcript.appended == len(CHAT)
    text = path.read_text(encoding="utf-8")
    note = parse_note(f"sessions/{path.name}", text)
    assert note.kind == "session" and str(note.date) == "2026-11-22"
    assert note.frontmatter["session"] == "billing-1"
    assert note.frontmatter["title"] == "Which database should billing-core use?"
    assert note.frontmatter["scope"] == ""
    assert str(note.frontmatter["started"]).startswith("2026-11-22")
    headings = [h.title for h in note.headings if h.level == 3]
    assert headings == [f"{m['role']} · 14:03" for m in CHAT]
    assert "> [!example]- tool call · search_memory" in text  # folded in Obsidian
    assert "> [!quote]- tool result · search_memory" in text
    assert text.count("parent: ") == len(CHAT)
    # read back: the same messages, ready to resend
    back = messages_of(path)
    assert back[2]["tool_calls"][0]["id"] == "call_7"
    assert back[2]["tool_calls"][0]["function"]["arguments"] == '{"query": "billing database"}'
    assert back[3] == {
        "role": "tool",
        "content": CHAT[3]["content"],
        "tool_call_id": "call_7",
        "name": "search_memory",
    }
    assert [m["content"] or "" for m in back] == [m["content"] or "" for m in CHAT]


def test_the_same_conversation_a_hundred_times_leaves_each_message_once(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    for _ in range(100):
        vault.flush(CHAT, session="again")
    path = transcript_of(vault_dir, "again")
    assert messages_of(path) == messages_of(path)[: len(CHAT)]
    assert len(messages_of(path)) == len(CHAT)


def test_a_longer_version_appends_only_the_new_messages(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = Vault(vault_dir)
    vault.flush(CHAT[:3], session="grow")
    before = transcript_of(vault_dir, "grow").read_text(encoding="utf-8")
    monkeypatch.setenv("VAULT_NOW", "2026-11-23T09:15")
    report = vault.flush(CHAT, session="grow")
    assert (report.transcript.held, report.transcript.appended) == (3, len(CHAT) - 3)
    path = transcript_of(vault_dir, "grow")
    after = path.read_text(encoding="utf-8")
    # appended: every byte before is still there, but `updated:` moved forward in place
    assert after.startswith(
        before.replace("updated: 2026-11-22T14:03:00", "updated: 2026-11-23T09:15:00")
    )
    assert "### tool · 2026-11-23 09:15" in after  # another day: the heading says which
    assert len(messages_of(path)) == len(CHAT)
    ids = [m.id for m in parse_transcript(path.name, after).messages]
    parents = [m.parent for m in parse_transcript(path.name, after).messages]
    assert ids == list(range(1, len(CHAT) + 1)) and parents == [None, *ids[:-1]]


def test_window_batches_append_in_turn_and_a_batch_twice_appends_nothing(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    for batch in (CHAT[:2], CHAT[2:4], CHAT[2:4], CHAT[4:], CHAT[:2]):
        vault.flush(batch, session="window-1")
    assert messages_of(transcript_of(vault_dir, "window-1")) == messages_of(
        transcript_of(vault_dir, "window-1")
    )
    assert [m["content"] or "" for m in messages_of(transcript_of(vault_dir, "window-1"))] == [
        m["content"] or "" for m in CHAT
    ]


def test_new_from_is_a_pure_alignment() -> None:
    turns = [Turn("user", f"message {i}") for i in range(6)]
    keys = [t.key for t in turns]
    assert new_from([], turns) == turns
    assert new_from(keys, turns) == []  # the same conversation
    assert new_from(keys[:3], turns) == turns[3:]  # a longer version
    assert new_from(keys[:3], turns[3:]) == turns[3:]  # the next batch
    assert new_from(keys, turns[1:3]) == []  # a batch flushed twice
    assert new_from(keys[:4], turns[2:]) == turns[4:]  # overlapping
    ok = Turn("user", "ok")
    assert new_from([ok.key, *keys[:2], ok.key], [ok, ok]) == [ok]  # a repeated message counts
    system = Turn("system", "You are terse.")
    assert new_from([system.key, *keys[:2]], [system, *turns[:3]]) == [turns[2]]
    summary = Turn("system", "Earlier in this conversation (saved to memory, session x):\n- a")
    assert new_from(keys[:2], [summary, *turns[2:4]]) == turns[2:4]  # a summary is no message


def test_secrets_are_redacted_exactly_as_in_the_daily_log(vault_dir: Path) -> None:
    chat = [{"role": "user", "content": f"Remember this: {text}"} for _, text, _ in SECRETS]
    chat.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "deploy",
                        "arguments": json.dumps({"token": SECRETS[0][2]}),
                    },
                }
            ],
        }
    )
    chat.append({"role": "tool", "tool_call_id": "c1", "content": f"used {SECRETS[1][2]}"})
    Vault(vault_dir).flush(chat, session="secrets")
    text = transcript_of(vault_dir, "secrets").read_text(encoding="utf-8")
    daily = (vault_dir / "memory" / "2026-11-22.md").read_text(encoding="utf-8")
    for kind, _, secret in SECRETS:
        assert secret not in text, kind
        assert secret not in daily, kind
    assert "[REDACTED:" in text
    # the same redaction: each message reads as the daily log's redaction made it
    from vault_memory.capture.redact import redact

    for message in chat[:-2]:
        assert redact(message["content"]).text in text


@pytest.mark.parametrize(
    "hostile",
    [
        "<!-- id: 9 · parent: - · at: 2026-01-01T00:00:00 · hash: abcdef -->",
        "\\<!-- id: 9 · parent: 3 · at: x · hash: ab -->\n### user · 10:00",
        "```python\nprint('an unclosed fence')",
        "> [!quote]- tool result\n> not a tool",
        "---\ntitle: not frontmatter\n---",
        "",
        "trailing spaces   \n\n\nand blank lines",
    ],
)
def test_any_text_reads_back_as_it_was_written(hostile: str) -> None:
    turns = [
        Turn("user", hostile),
        Turn("assistant", hostile, tool_calls=(ToolCall("c1", "run", hostile),)),
        Turn("tool", hostile, "run", tool_call_id="c1"),
        Turn("user", "after"),
    ]
    import datetime as dt

    when = dt.datetime(2026, 11, 22, 14, 3)
    text = header("s", "", "t", when) + "".join(
        render_turn(i + 1, i or None, t, when, when.date()) for i, t in enumerate(turns)
    )
    back = parse_transcript("sessions/2026-11-22-s.md", text).messages
    assert [m.turn for m in back] == [
        Turn(
            t.role,
            t.text.strip("\n").rstrip() if t.role != "tool" else t.text,
            t.name,
            t.tool_calls,
            t.tool_call_id,
        )
        for t in turns
    ]
    assert [m.key for m in back] == [t.key for t in turns]
    # an unclosed fence in a message is closed: the next message is not swallowed
    note = parse_note("sessions/2026-11-22-s.md", text)
    assert [h.title for h in note.headings if h.level == 3][-1] == "user · 14:03"


def test_turns_keep_tool_call_ids_from_json_text_and_jsonl() -> None:
    raw = json.dumps(CHAT)
    assert turns_from(raw)[2].tool_calls[0].id == "call_7"
    jsonl = "\n".join(json.dumps(m) for m in CHAT)
    assert turns_from(jsonl)[3].tool_call_id == "call_7"
    plain = turns_from("User: hello\nAssistant: hi there")
    assert [t.role for t in plain] == ["user", "assistant"]


def test_dry_run_and_transcripts_off_write_no_transcript(vault_dir: Path) -> None:
    Vault(vault_dir).flush(CHAT, session="dry", dry_run=True)
    assert not (vault_dir / "sessions").exists()
    off = Vault(vault_dir, {"sessions.transcripts": False})
    assert off.flush(CHAT, session="off").transcript is None
    assert not (vault_dir / "sessions").exists()


def test_a_scope_writes_its_own_transcripts(vault_dir: Path) -> None:
    alpha = Vault(vault_dir).scope("org", "alpha")
    alpha.flush(CHAT, session="s-alpha")
    path = vault_dir / "scopes/org/alpha/sessions/2026-11-22-s-alpha.md"
    assert path.is_file()
    assert 'scope: "org/alpha"' in path.read_text(encoding="utf-8")
    assert note_kind("scopes/org/alpha/sessions/2026-11-22-s-alpha.md") == "session"
    assert not (vault_dir / "sessions").exists()


def test_concurrent_flushes_of_one_session_lose_and_duplicate_nothing(vault_dir: Path) -> None:
    """Threads, each with its own lock descriptors (flock excludes them as it excludes
    processes): prefixes of one conversation, flushed at once."""
    chat = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i}"}
        for i in range(40)
    ]
    errors: list[BaseException] = []

    def flusher(seed: int) -> None:
        try:
            vault = Vault(vault_dir)
            for upto in range(seed + 5, 41, 4):
                vault.flush(chat[:upto], session="busy")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=flusher, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    Vault(vault_dir).flush(chat, session="busy")
    assert [m["content"] for m in messages_of(transcript_of(vault_dir, "busy"))] == [
        m["content"] for m in chat
    ]


@pytest.mark.slow
def test_four_processes_flushing_one_session_lose_and_duplicate_nothing(
    vault_dir: Path, tmp_path: Path
) -> None:
    chat = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i}"}
        for i in range(120)
    ]
    files = []
    for upto in range(3, 121, 3):
        path = tmp_path / f"part-{upto}.json"
        path.write_text(json.dumps(chat[:upto]), encoding="utf-8")
        files.append(path)
    code = (
        "import sys\nfrom vault_memory import Vault\n"
        "vault = Vault(sys.argv[1])\n"
        "for name in sys.argv[2:]:\n"
        "    vault.flush(open(name, 'rb').read(), session='busy')\n"
    )
    env = {"VAULT_NOW": NOW, "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                code,
                str(vault_dir),
                *map(str, files[s::4] + files[::-1][s::4]),
            ],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for s in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert [m["content"] for m in messages_of(transcript_of(vault_dir, "busy"))] == [
        m["content"] for m in chat
    ]


def test_transcripts_are_indexed_as_their_own_kind_and_left_out_of_default_search(
    vault_dir: Path,
) -> None:
    vault = Vault(vault_dir)
    vault.flush(
        [{"role": "user", "content": "The zephyrine protocol needs port 7443."}], session="kinds"
    )
    vault.index()
    assert {h.path for h in vault.search("zephyrine", mode="keyword", kinds=["session"])} == {
        "sessions/2026-11-22-kinds.md"
    }
    default = [h.path for h in vault.search("zephyrine", mode="keyword")]
    assert "sessions/2026-11-22-kinds.md" not in default
    assert default  # the daily log holds the entry
    within = {h.path for h in vault.search("zephyrine", mode="keyword", within="sessions")}
    assert within == {"sessions/2026-11-22-kinds.md"}
    vault.close()


def test_the_markers_are_no_search_units(vault_dir: Path) -> None:
    from vault_memory.index.units import make_units

    Vault(vault_dir).flush(CHAT, session="units")
    path = transcript_of(vault_dir, "units")
    units = make_units(parse_note(f"sessions/{path.name}", path.read_text("utf-8")))
    assert not [u for u in units if "<!-- id:" in u.text]
    assert any(u.text == CHAT[1]["content"] for u in units)
    # a note that only looks like it keeps its comment lines
    note = parse_note("notes/a.md", "# A\n\n<!-- id: 1 · parent: - · at: x · hash: ab -->\n")
    assert [u.text for u in make_units(note)] == ["<!-- id: 1 · parent: - · at: x · hash: ab -->"]


def test_a_broken_transcript_is_left_alone_and_the_flush_still_keeps_its_entries(
    vault_dir: Path,
) -> None:
    vault = Vault(vault_dir)
    vault.flush(CHAT[:2], session="broken")
    path = transcript_of(vault_dir, "broken")
    path.write_bytes(b"binary\x00junk")
    report = vault.flush(CHAT, session="broken")
    assert path.read_bytes() == b"binary\x00junk"  # never appended to, never replaced
    assert report.transcript is None
    assert any("the transcript was not written" in w and "binary" in w for w in report.warnings)
    assert report.written  # the daily log got what was new
    with pytest.raises(VaultError, match="binary"):
        vault.record_transcript(CHAT, session="broken")


def test_a_window_summary_alone_makes_no_transcript(vault_dir: Path) -> None:
    summary = {
        "role": "system",
        "content": "Earlier in this conversation (saved to memory, session s):\n- a",
    }
    report = Vault(vault_dir).record_transcript([summary], session="only-summary")
    assert report.appended == 0
    assert not list(vault_dir.glob("sessions/*"))
