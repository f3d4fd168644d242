"""`Vault.flush` and `Vault.sessions`: input formats, offline extraction, idempotence read back
from the files, redaction, limits, the LLM path against a real 127.0.0.1 server, concurrency."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import vault_memory
from vault_memory import Vault
from vault_memory.capture.conversation import (
    MalformedConversationError,
    derive_session_id,
    parse_conversation,
)
from vault_memory.capture.extract import cap_text, classify, entry_key, extract_offline
from vault_memory.capture.flush import SessionNotFoundError
from vault_memory.errors import InputTooLargeError, VaultError
from vault_memory.files.notes import parse_note
from vault_memory.llm import MAX_REPLY_BYTES

from .llm_server import ScriptedLLMServer
from .test_redact import SECRETS

DAY = dt.date(2026, 11, 22)

CHAT = [
    {"role": "system", "content": "You are a careful coding assistant."},
    {"role": "user", "content": "Hi! I'm Maya, I lead the billing team at Ledgerly."},
    {"role": "assistant", "content": "Hello Maya! How can I help you today?"},
    {
        "role": "user",
        "content": "We decided to move billing-core from MySQL 5.7 to PostgreSQL 16. "
        "Can you write the migration for the invoices table?\n\n```sql\nCREATE TABLE invoices "
        "(id bigint);\n```",
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "schema.sql"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "CREATE TABLE invoices (id int, total decimal(10,2)); -- 41M rows, owner Jonas",
    },
    {
        "role": "assistant",
        "content": "Here is the migration. I think we should use NUMERIC(12,4) "
        "for totals.\n\n```sql\nALTER TABLE invoices ALTER COLUMN total TYPE numeric(12,4);\n```",
    },
    {
        "role": "user",
        "content": "Thanks! I prefer hand-written SQL migrations over ORM-generated ones.",
    },
]
MORE = [
    {
        "role": "user",
        "content": "Actually, the cutover is on Friday 13 Nov at 22:00 CET, not "
        "Thursday. Please remember that Jonas must approve every schema change.",
    },
    {
        "role": "assistant",
        "content": "Got it. Confirmed: the cutover is Friday 13 Nov at 22:00 "
        "CET. I'll always show the SQL before running it.",
    },
    {"role": "user", "content": "ok"},
    {"role": "user", "content": "pip install psycopg[binary]\ngit push --force origin main"},
]
CHAT_ENTRIES = [
    "User: I'm Maya, I lead the billing team at Ledgerly.",
    "User: We decided to move billing-core from MySQL 5.7 to PostgreSQL 16. #decision",
    "User: I prefer hand-written SQL migrations over ORM-generated ones. #preference",
]
MORE_ENTRIES = [
    "User: Actually, the cutover is on Friday 13 Nov at 22:00 CET, not Thursday. #correction",
    "User: Please remember that Jonas must approve every schema change. #important",
    "Assistant: Confirmed: the cutover is Friday 13 Nov at 22:00 CET.",
    "Assistant: I'll always show the SQL before running it. #todo",
]


def log_lines(vault_dir: Path, day: dt.date = DAY) -> list[str]:
    path = vault_dir / "memory" / f"{day.isoformat()}.md"
    return path.read_text(encoding="utf-8").split("\n") if path.exists() else []


def bullets(vault_dir: Path, day: dt.date = DAY) -> list[str]:
    return [line[2:] for line in log_lines(vault_dir, day) if line.startswith("- ")]


# -- input formats -----------------------------------------------------------------------------


def test_openai_messages_with_tool_calls_and_results() -> None:
    messages = parse_conversation(json.dumps({"messages": CHAT}))
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert messages[4].text == "" and messages[4].tool_calls == ("read_file",)
    assert messages[5].role == "tool" and "41M rows" in messages[5].text
    assert parse_conversation(CHAT) == messages  # already-parsed data gives the same
    assert parse_conversation({"messages": CHAT}) == messages


def test_content_parts_names_and_role_aliases() -> None:
    messages = parse_conversation(
        [
            {
                "role": "human",
                "name": "maya",
                "content": [
                    {"type": "text", "text": "I use Neovim."},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
                    {"type": "input_text", "text": "Lua, not Vimscript."},
                ],
            },
            {"role": "ai", "content": [{"type": "output_text", "text": "Noted."}]},
            {"role": "developer", "content": "Be brief."},
            {"role": "function", "name": "search", "content": "[]"},
        ]
    )
    assert [(m.role, m.name, m.text) for m in messages] == [
        ("user", "maya", "I use Neovim.\nLua, not Vimscript."),
        ("assistant", None, "Noted."),
        ("system", None, "Be brief."),
        ("tool", None, "[]"),
    ]
    assert messages[0].speaker == "maya" and messages[1].speaker == "Assistant"


def test_jsonl_with_transcript_wrappers_and_metadata_lines() -> None:
    text = "\n".join(
        [
            json.dumps({"type": "summary", "summary": "Billing migration"}),
            json.dumps({"role": "user", "content": "I prefer uv over pip."}),
            "",
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": "a1",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "OK."}]},
                }
            ),
            json.dumps({"role": "tool", "content": "exit 0"}),
        ]
    )
    messages = parse_conversation(text.encode())
    assert [(m.role, m.text) for m in messages] == [
        ("user", "I prefer uv over pip."),
        ("assistant", "OK."),
        ("tool", "exit 0"),
    ]


def test_plain_transcripts() -> None:
    text = (
        "Chat export 2026-11-22\n"
        "User: I live in Malmö.\n"
        "I moved here in 2019.\n"
        "**Assistant:** Good to know.\n"
        "[10:02] user (maya): We use GitLab CI.\n"
        "14:03 - AI: Noted.\n"
        "### Human\n"
        "My manager is Jonas.\n"
        "Tool: exit 0\n"
    )
    messages = parse_conversation(text)
    assert [(m.role, m.name, m.text) for m in messages] == [
        ("user", None, "I live in Malmö.\nI moved here in 2019."),
        ("assistant", None, "Good to know."),
        ("user", "maya", "We use GitLab CI."),
        ("assistant", None, "Noted."),
        ("user", None, "My manager is Jonas."),
        ("tool", None, "exit 0"),
    ]
    # no speaker at all: the whole text is one message from the user
    assert [(m.role, m.text) for m in parse_conversation("Note: ship v2 on Friday.\n")] == [
        ("user", "Note: ship v2 on Friday.")
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('[{"role": "user", "content": "hi"}', "looks like JSON but does not parse (Expecting"),
        ('{"role": "user"}\n{"role": "assistant", "content": }', "JSONL line 2 is not JSON"),
        ('{"role": "user"}\n[1, 2]', "JSONL line 2 is not a JSON object"),
        ('[{"role": "wizard", "content": "hi"}]', "message 1 has the unknown role 'wizard'"),
        ('[{"content": "hi"}]', 'message 1 has no "role"'),
        ('[{"role": "user", "content": 42}]', '"content" must be text, a list of parts or null'),
        ('[{"role": "user", "content": [7]}]', "content part that is no object"),
        ('[{"role": "user", "tool_calls": {}}]', '"tool_calls" must be a list'),
        ('["hello"]', "message 1 is not an object"),
        ('{"conversation": []}', 'a JSON object needs a "messages" list'),
        ("[1, 2]", "message 1 is not an object"),
        ("[]", "it holds no messages"),
        ("   \n", "the input is empty"),
        (b"User: caf\xe9", "it is not UTF-8 text (byte 9)"),
    ],
)
def test_malformed_input_says_what_is_wrong(raw, message) -> None:
    with pytest.raises(MalformedConversationError) as info:
        parse_conversation(raw)
    assert message in str(info.value)
    assert "Nothing was written" in str(info.value)


def test_derived_session_id_is_stable_and_ignores_later_messages() -> None:
    short = parse_conversation(CHAT[:2])
    assert derive_session_id(short) == derive_session_id(parse_conversation(CHAT + MORE))
    other = parse_conversation([CHAT[0], {"role": "user", "content": "I'm Ana."}])
    assert derive_session_id(other) != derive_session_id(short)
    assert len(derive_session_id(short)) == 8


# -- offline extraction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I prefer short answers with code first.", "preference"),
        ("Never use tabs in YAML files.", "preference"),
        ("We decided to go with PostgreSQL for billing.", "decision"),
        ("Let's go with the blue-green deploy.", "decision"),
        ("I'll send the report to Zoë by Friday.", "commitment"),
        ("Remind me to renew the TLS certificate in March.", "commitment"),
        ("Actually, the meeting is on Tuesday, not Monday.", "correction"),
        ("Our staging cluster runs Kubernetes 1.29.", "fact"),
        ("My daughter is called Ines.", "fact"),
        ("Remember that the invoices table has 41M rows.", "fact"),
        ("The build takes 14 minutes on the GitLab runners.", "fact"),
        ("Hello there!", None),
        ("Thanks, that works great!", None),
        ("Ok sounds good.", None),
        ("Can you explain how the index works?", None),
        ("Write a function that parses the CSV export.", None),
        ("I want you to refactor this module.", None),
        ("This doesn't look right to me.", None),
        ("make sure the invoices stay immutable after 1 Dec", "fact"),
        ("go with postgres for the ledger, we settled it", "decision"),
        ("I'm not sure about that.", None),
        ("Priya owns the proration module now.", "fact"),
        ("That charity race sounds great, Mel!", None),
        ("It was an awesome time, Caroline!", None),
        ("I love it!", None),
        ("Remember, just do it!", None),
        ("I'm gonna make it happen!", None),
        ("Kids are amazingly resilient in tough situations.", None),
        ("Always here to cheer you on.", None),
    ],
)
def test_user_sentences(sentence: str, expected: str | None) -> None:
    found = classify(sentence, "user")
    assert (found[0] if found else None) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("We agreed to keep MySQL read-only for 30 days.", "decision"),
        ("Decision: the cutover happens on 13 Nov.", "decision"),
        ("From now on I will answer in English.", "commitment"),
        ("The root cause was a reused idempotency key.", "fact"),
        ("The flaky test has been fixed in PR 2291.", "fact"),
        ("I've opened PR #2291 with the clock injection.", "fact"),
        ("The deploy to staging has been completed.", "fact"),
        ("Here is the migration you asked for.", None),
        ("I think we should use NUMERIC(12,4) for totals.", None),
        ("You could also try increasing the pool size.", None),
        ("Sure! Let me look at the schema first.", None),
        ("PostgreSQL supports transactional DDL.", None),  # explanation, not a decision
        # a promise with a time on it is a commitment, whatever its verb
        ("I'll open the PR by Friday.", "commitment"),
        ("I'll fix it by Friday.", "commitment"),
        ("Sure, I'll have the review done by next Monday.", "commitment"),
        ("We'll ship the migration before 1 December.", "commitment"),
        ("I will send you the draft tomorrow morning.", "commitment"),
        ("I'm going to run the backfill tonight.", "commitment"),
        ("I'll check the logs by end of day.", "commitment"),
        ("By Friday I'll have the report ready.", "commitment"),
        ("We will rotate the keys on 2026-12-01 at 17:00.", "commitment"),
        ("I'll renew the certificate in early March.", "commitment"),
        # no time, hedged, an offer, or the time belongs to something else
        ("I'll check the logs.", None),
        ("I'll now run the tests.", None),
        ("I'll try to fix it by Friday.", None),
        ("Maybe I'll deploy on Monday.", None),
        ("I'll probably finish it tomorrow.", None),
        ("I can fix it by Friday.", None),
        ("The deploy ran on Friday and I'll check the logs.", None),
        ("I'll look at Monday's report.", None),
        ("I'll walk you through the end-of-day report.", None),
        ("I'll open the PR by Friday?", None),
    ],
)
def test_assistant_sentences_are_kept_conservatively(sentence: str, expected: str | None) -> None:
    found = classify(sentence, "assistant")
    assert (found[0] if found else None) == expected


def test_an_assistant_commitment_reaches_the_log(vault_dir: Path) -> None:
    chat = [
        {"role": "user", "content": "Can you take the billing PR?"},
        {"role": "assistant", "content": "Sure. I'll check the logs. I'll open the PR by Friday."},
    ]
    report = Vault(vault_dir).flush(chat, session="promise", date=DAY)
    assert [e.text for e in report.entries] == ["Assistant: I'll open the PR by Friday. #todo"]
    assert bullets(vault_dir) == ["Assistant: I'll open the PR by Friday. #todo"]


def test_code_commands_logs_and_tool_output_are_dropped() -> None:
    text = (
        "I prefer pytest over unittest.\n\n"
        "```python\nimport os  # my password is in os.environ\n```\n"
        "$ pytest -q --maxfail=1\n"
        "make test-integration ENV=staging\n"
        "export PATH=$HOME/.local/bin:$PATH\n"
        "pip install -r requirements.txt\n"
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "ValueError: invoice 42 has no lines\n"
        "| tenant | rows |\n|---|---|\n| nordhavn | 41000000 |\n"
        "> quoted text from an email about Jonas\n"
        "    indented_code = call(Jonas, 42)\n"
        "git push --force to main is forbidden, we decided that in March.\n"
        "make sure the totals stay immutable after 1 Dec\n"
    )
    messages = parse_conversation(
        [
            {"role": "user", "content": text},
            {"role": "tool", "content": "I prefer tools that return 42."},
        ]
    )
    assert [e.text for e in extract_offline(messages, 500)] == [
        "User: I prefer pytest over unittest. #preference",
        "User: git push --force to main is forbidden, we decided that in March. #decision",
        "User: make sure the totals stay immutable after 1 Dec",
    ]


def test_a_lead_in_keeps_its_list_and_filler_prefixes_go() -> None:
    text = (
        "Ok, so my constraints for the report:\n- budget 5k EUR\n- due on 1 Dec\n\n"
        "Thanks! Also, our CI runs on Hetzner."
    )
    messages = parse_conversation([{"role": "user", "content": text}])
    assert [e.text for e in extract_offline(messages, 500)] == [
        "User: My constraints for the report: budget 5k EUR; due on 1 Dec. #todo",
        "User: Our CI runs on Hetzner.",
    ]


def test_entries_are_capped_at_a_sentence_boundary() -> None:
    long = (
        "We decided to keep every invoice immutable. " + "The totals stay exactly as issued "
        "to the customer, including rounding. " * 12
    )
    assert cap_text(long, 120) == (
        "We decided to keep every invoice immutable. The totals stay "
        "exactly as issued to the customer, including rounding."
    )
    words = "word " * 100
    assert cap_text(words, 50) == "word " * 8 + "word …"
    assert cap_text("abcdefghij" * 10, 50) == "abcdefghij" * 4 + "abcdefgh …"
    messages = parse_conversation([{"role": "user", "content": long}])
    entries = extract_offline(messages, 120)
    assert all(len(e.text) <= len("User: ") + 120 + len(" #decision") for e in entries)


def test_entry_key_ignores_bullets_tags_case_and_final_punctuation() -> None:
    assert entry_key("- User: We use GitLab CI. #decision") == entry_key("user: we use  gitlab ci")
    assert entry_key("User: We use GitLab CI #important") == entry_key("* User: We use GitLab CI!")
    assert entry_key("User: We use GitLab CI") != entry_key("User: We use GitHub CI")


# -- writing and idempotence -------------------------------------------------------------------


def test_flush_appends_one_block_under_a_flush_heading(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    vault.add("Call the dentist on Friday", when=dt.datetime(2026, 11, 22, 9, 0))
    report = vault.flush(CHAT, session="s-1", date=DAY)
    assert report.written and report.mode == "offline" and report.session == "s-1"
    assert [e.text for e in report.entries] == CHAT_ENTRIES
    lines = log_lines(vault_dir)
    heading = lines[report.start_line - 1]
    assert heading.startswith("## ") and heading.endswith(" · flush · session s-1")
    assert report.heading == heading[3:]
    assert lines[report.start_line : report.end_line] == [f"- {t}" for t in CHAT_ENTRIES]
    assert lines[:5] == ["# 2026-11-22", "", "## 09:00 · note", "- Call the dentist on Friday", ""]
    got = vault.get(report.path, report.start_line, report.end_line)
    assert got.text == report.text.lstrip("\n")
    # the log parses as daily-log entries
    note = parse_note(report.path, (vault_dir / report.path).read_text())
    assert [(e.source, e.session) for e in note.entries()] == [("note", None), ("flush", "s-1")]


def test_same_conversation_twice_then_a_longer_one(vault_dir: Path, tree_state) -> None:
    vault = Vault(vault_dir)
    first = vault.flush(CHAT, date=DAY)
    assert first.session_derived and len(first.entries) == 3
    before = tree_state(vault_dir / "memory")
    again = vault.flush(CHAT, date=DAY)
    assert not again.written and again.entries == [] and again.already_flushed == 3
    assert again.session == first.session
    assert tree_state(vault_dir / "memory") == before
    longer = vault.flush(CHAT + MORE, date=DAY)
    assert longer.session == first.session
    assert [e.text for e in longer.entries] == MORE_ENTRIES
    assert longer.already_flushed == 3
    assert bullets(vault_dir) == CHAT_ENTRIES + MORE_ENTRIES
    assert vault.flush(CHAT + MORE, date=DAY).entries == []


def test_idempotence_survives_deleting_the_cache_and_editing_tags(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    vault.flush(CHAT, session="s", date=DAY)
    shutil.rmtree(vault_dir / ".vault")
    path = vault_dir / "memory" / "2026-11-22.md"
    text = path.read_text().replace(
        "ORM-generated ones. #preference", "ORM-generated ones #preference #important"
    )
    path.write_text(text)
    report = vault.flush(CHAT + MORE, session="s", date=DAY)
    assert [e.text for e in report.entries] == MORE_ENTRIES
    assert len(bullets(vault_dir)) == len(CHAT_ENTRIES + MORE_ENTRIES)


def test_a_flush_in_the_same_minute_continues_the_session_block(
    vault_dir: Path, monkeypatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T09:30")
    vault = Vault(vault_dir)
    first = vault.flush(CHAT, session="m")
    assert (first.start_line, first.end_line, first.continued) == (3, 6, False)
    before = (vault_dir / first.path).read_bytes()
    longer = vault.flush(CHAT + MORE, session="m")
    assert longer.continued and longer.heading == first.heading == "09:30 · flush · session m"
    assert (longer.start_line, longer.end_line) == (3, 10)  # the heading, the last entry
    assert longer.text == "".join(f"- {t}\n" for t in MORE_ENTRIES)
    assert (vault_dir / first.path).read_bytes() == before + longer.text.encode()  # appended
    got = vault.get(longer.path, longer.start_line, longer.end_line).text
    assert got == "## 09:30 · flush · session m\n" + "".join(
        f"- {t}\n" for t in CHAT_ENTRIES + MORE_ENTRIES
    )
    [block] = vault.session("m").blocks
    assert [text for _, text in block.entries] == CHAT_ENTRIES + MORE_ENTRIES


@pytest.mark.parametrize(
    ("between", "session", "minute"),
    [
        ("", "other", "09:30"),  # another session
        ("", "m", "09:31"),  # another minute
        ("\n## 09:30 · note\n- Call the dentist.\n", "m", "09:30"),  # another block after it
        ("\n### Details\n- a sub-heading\n", "m", "09:30"),
        ("\n```\nan open code fence\n", "m", "09:30"),
    ],
    ids=["session", "minute", "note", "sub-heading", "open-fence"],
)
def test_a_new_heading_when_the_log_does_not_end_with_that_block(
    vault_dir: Path, monkeypatch, between: str, session: str, minute: str
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T09:30")
    vault = Vault(vault_dir)
    vault.flush(CHAT, session="m")
    path = vault_dir / "memory" / "2026-11-22.md"
    with path.open("a") as fh:
        fh.write(between)
    monkeypatch.setenv("VAULT_NOW", f"2026-11-22T{minute}")
    report = vault.flush(CHAT + MORE, session=session)
    lines = path.read_text().split("\n")
    assert not report.continued
    assert lines[report.start_line - 1] == f"## {minute} · flush · session {session}"
    assert lines[report.end_line - 1] == f"- {MORE_ENTRIES[-1]}" and lines[report.end_line] == ""


def test_a_session_flushed_across_midnight_is_not_duplicated(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    vault.flush(CHAT, session="night", date=DAY)
    next_day = DAY + dt.timedelta(days=1)
    report = vault.flush(CHAT + MORE, session="night", date=next_day)
    assert report.path == "memory/2026-11-23.md"
    assert [e.text for e in report.entries] == MORE_ENTRIES
    assert bullets(vault_dir, next_day) == MORE_ENTRIES
    assert bullets(vault_dir, DAY) == CHAT_ENTRIES
    info = vault.session("night")
    assert info.dates == ["2026-11-22", "2026-11-23"] and info.entries == 7


def test_what_any_session_flushed_within_a_week_is_not_written_again(
    vault_dir: Path, tree_state, monkeypatch
) -> None:
    vault = Vault(vault_dir)
    assert len(vault.flush(CHAT, session="x", date=DAY, transcript=False).entries) == 3
    before = tree_state(vault_dir / "memory")
    # the same conversation without --session and without a transcript to know it by: its id
    # is derived, its entries are known
    again = vault.flush(CHAT, date=DAY, transcript=False)
    assert again.session_derived and again.session != "x"
    assert again.entries == [] and not again.written
    assert (again.already_flushed, again.already_in_other_sessions) == (3, 3)
    assert again.other_sessions == ["x"]
    assert tree_state(vault_dir / "memory") == before
    # a week later, a longer version of it adds only what is new
    week = vault.flush(CHAT + MORE, date=DAY + dt.timedelta(days=7), transcript=False)
    assert [e.text for e in week.entries] == MORE_ENTRIES
    assert (week.already_flushed, week.already_in_other_sessions) == (3, 3)
    # eight days on, the first log is out of the window: another session may say it again
    later = vault.flush(CHAT + MORE, session="y", date=DAY + dt.timedelta(days=8), transcript=False)
    assert [e.text for e in later.entries] == CHAT_ENTRIES
    assert later.already_flushed == later.already_in_other_sessions == 4
    assert later.other_sessions == [week.session]
    # a session never repeats itself, however far apart
    far = vault.flush(CHAT, session="x", date=DAY + dt.timedelta(days=300))
    assert far.entries == [] and far.already_in_other_sessions == 0
    # the window is a setting; 0 leaves only the same session's entries out
    monkeypatch.setenv("VAULT_FLUSH_DEDUPE_DAYS", "1")
    assert (
        len(Vault(vault_dir).flush(CHAT, session="z", date=DAY + dt.timedelta(days=2)).entries) == 3
    )
    monkeypatch.setenv("VAULT_FLUSH_DEDUPE_DAYS", "0")
    assert (
        len(Vault(vault_dir).flush(MORE, session="w", date=DAY + dt.timedelta(days=7)).entries) == 4
    )
    monkeypatch.setenv("VAULT_FLUSH_DEDUPE_DAYS", "-1")
    with pytest.raises(
        VaultError,
        match=r"^flush.dedupe_days is -1; give 0 or more days \(0 "
        r"compares only with the same session's entries\)\.$",
    ):
        Vault(vault_dir).flush(CHAT, session="v", date=DAY)


def test_dry_run_writes_nothing_and_shows_the_block(vault_dir: Path, tree_state) -> None:
    vault = Vault(vault_dir)
    before = tree_state(vault_dir)
    dry = vault.flush(CHAT, session="d", dry_run=True, date=DAY)
    assert tree_state(vault_dir) == before
    assert not dry.written and dry.dry_run and len(dry.entries) == 3
    assert dry.start_line is None
    real = vault.flush(CHAT, session="d", date=DAY)
    assert real.text == dry.text
    assert (
        vault.flush(CHAT + MORE, session="d", dry_run=True, date=DAY).entries[0].text
        == (MORE_ENTRIES[0])
    )


def test_nothing_worth_keeping_writes_nothing(vault_dir: Path, tree_state) -> None:
    before = tree_state(vault_dir)
    report = Vault(vault_dir).flush("User: hi\nAssistant: Hello! How can I help?\nUser: thanks")
    assert report.entries == [] and report.already_flushed == 0 and not report.written
    after = tree_state(vault_dir)
    # only the conversation itself was kept, as its transcript (sessions/), and the cache
    # that knows a transcript by its first message
    assert {p for p in after if after.get(p) != before.get(p)} == {
        report.transcript.path,
        ".vault/transcripts.lock",
        ".vault/transcript-keys.json",
    }


def test_secrets_never_reach_the_log(vault_dir: Path) -> None:
    messages = [
        {"role": "user", "content": f"Remember this for the deploy: {text}"}
        for _, text, _ in SECRETS
    ]
    report = Vault(vault_dir).flush(messages, session="keys", date=DAY)
    written = (vault_dir / "memory" / "2026-11-22.md").read_text()
    assert len(report.entries) == len(SECRETS)
    for _, _, secret in SECRETS:
        assert secret not in written
    assert sum(report.redactions.values()) == len(SECRETS)
    assert written.count("[REDACTED:") == len(SECRETS)


def test_bad_input_changes_nothing(vault_dir: Path, tree_state, monkeypatch) -> None:
    vault = Vault(vault_dir)
    before = tree_state(vault_dir)
    with pytest.raises(MalformedConversationError):
        vault.flush('[{"role": "user", "content": "I prefer tea."}, {"role": 3}]')
    with pytest.raises(VaultError, match="session id 'a b' is not usable"):
        vault.flush(CHAT, session="a b")
    with pytest.raises(VaultError, match="date='tomorrow' is not a date"):
        vault.flush(CHAT, date="tomorrow")
    monkeypatch.setenv("VAULT_FLUSH_MAX_INPUT_BYTES", "1000")
    big = [{"role": "user", "content": "I prefer tea. " * 100}]
    with pytest.raises(
        InputTooLargeError, match="the conversation is 1,4.. bytes, over the limit of 1,000"
    ):
        Vault(vault_dir).flush(big)
    assert tree_state(vault_dir) == before


def test_control_characters_and_lone_surrogates_never_reach_the_log(vault_dir: Path) -> None:
    raw = json.dumps(
        [
            {
                "role": "user",
                "content": "I prefer Lua\u0000 over \ud800Vimscript.\r\nWe use Ne\u0007ovim 0.10.",
            }
        ]
    )
    vault = Vault(vault_dir)
    report = vault.flush(raw, session="ctl", date=DAY)
    assert [e.text for e in report.entries] == [
        "User: I prefer Lua over \ufffdVimscript. #preference",
        "User: We use Neovim 0.10.",
    ]
    vault.add("still appendable", when=dt.datetime(2026, 11, 22, 23, 0))  # not a binary file
    assert bullets(vault_dir)[-1] == "still appendable"


def test_a_symlinked_log_outside_the_vault_is_not_read(vault_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text(
        "# 2026-11-20\n\n## 10:00 · flush · session x\n- User: SECRET plan for Q3 is ready.\n"
    )
    (vault_dir / "memory" / "2026-11-20.md").symlink_to(outside)
    vault = Vault(vault_dir)
    assert vault.sessions() == []
    report = vault.flush(
        [{"role": "user", "content": "SECRET plan for Q3 is ready."}],
        session="x",
        dry_run=True,
        date=DAY,
    )
    assert report.already_flushed == 0 and len(report.entries) == 1
    shutil.copy(outside, vault_dir / "memory" / "2026-11-21.md")  # the same text, inside
    assert (
        vault.flush(
            [{"role": "user", "content": "SECRET plan for Q3 is ready."}],
            session="x",
            dry_run=True,
            date=DAY,
        ).already_flushed
        == 1
    )


def test_a_binary_daily_log_is_refused(vault_dir: Path) -> None:
    path = vault_dir / "memory" / "2026-11-22.md"
    path.write_bytes(b"\x00\x01binary")
    with pytest.raises(VaultError, match="binary file"):
        Vault(vault_dir).flush(CHAT, date=DAY)
    assert path.read_bytes() == b"\x00\x01binary"


# -- sessions ----------------------------------------------------------------------------------


def test_sessions_are_discovered_from_the_logs(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    assert vault.sessions() == []
    vault.flush(CHAT, session="alpha", date=DAY)
    vault.flush(CHAT + MORE, session="alpha", date=DAY + dt.timedelta(days=1))
    vault.flush(session_chat(9, 4), session="beta", date=DAY)
    # a person's heading that names a session but is no flush does not count
    with (vault_dir / "memory" / "2026-11-22.md").open("a") as fh:
        fh.write("\n## 18:00 — session 3\n- gym\n")
    found = vault.sessions()
    assert [s.id for s in found] == ["alpha", "beta"]
    alpha = found[0]
    assert alpha.dates == ["2026-11-22", "2026-11-23"] and alpha.entries == 7
    assert alpha.locations == ["memory/2026-11-22.md:3-6", "memory/2026-11-23.md:3-7"]
    assert [text for _, text in alpha.blocks[1].entries] == MORE_ENTRIES
    assert vault.session("beta").entries == 4
    with pytest.raises(SessionNotFoundError, match="no flushed session 'gamma'"):
        vault.session("gamma")


# -- the LLM path ------------------------------------------------------------------------------


def use_llm(vault_dir: Path, server: ScriptedLLMServer, timeout: float = 5.0) -> Vault:
    with (vault_dir / "vault.toml").open("a") as fh:
        fh.write(
            f'\n[llm]\nbase_url = "{server.base_url}"\nmodel = "m1"\ntimeout_seconds = {timeout}\n'
        )
    return Vault(vault_dir)


SECRET_CHAT = [
    *CHAT,
    {
        "role": "user",
        "content": "The deploy token is ghp_jAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOzd, keep it safe.",
    },
]


def test_llm_entries_are_validated_and_written(
    vault_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    vault = use_llm(vault_dir, llm_server)
    llm_server.reply_json(
        {
            "entries": [
                {
                    "text": "Maya leads the billing team at Ledgerly.",
                    "category": "fact",
                    "importance": 2,
                },
                {
                    "text": "Billing-core moves from MySQL 5.7 to PostgreSQL 16.",
                    "category": "Decision",
                    "importance": 3,
                },
                {"text": "Maya prefers hand-written SQL migrations.", "category": "preference"},
                {
                    "text": "The deploy token is sk-u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8dKLzdocJ2isAj.",  # noqa: E501
                    "category": "fact",
                    "importance": 1,
                },
                {"text": "pip install psycopg[binary]", "category": "fact", "importance": 1},
            ]
        }
    )
    report = vault.flush(SECRET_CHAT, session="llm", date=DAY)
    assert report.mode == "llm" and report.model == "m1" and report.warnings == []
    assert [e.text for e in report.entries] == [
        "Maya leads the billing team at Ledgerly.",
        "Billing-core moves from MySQL 5.7 to PostgreSQL 16. #decision #important",
        "Maya prefers hand-written SQL migrations. #preference",
        "The deploy token is [REDACTED:openai-key].",
    ]
    assert report.redactions == {"github-token": 1, "openai-key": 1}
    sent = json.dumps(llm_server.requests[0])
    assert "ghp_jAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOzd" not in sent
    assert "[REDACTED:github-token]" in sent
    assert "[tool result omitted]" in sent and "41M rows" not in sent
    assert llm_server.requests[0]["response_format"] == {"type": "json_object"}
    # a second flush tells the model what the session already holds
    llm_server.reply_json(
        {
            "entries": [
                {"text": "Maya prefers hand-written SQL migrations.", "category": "preference"}
            ]
        }
    )
    again = vault.flush(SECRET_CHAT, session="llm", date=DAY)
    assert again.entries == [] and again.already_flushed == 1
    prompt = llm_server.requests[1]["messages"][1]["content"]
    assert "- Maya leads the billing team at Ledgerly." in prompt


@pytest.mark.parametrize(
    ("script", "why"),
    [
        (lambda s: s.reply_content("{not json"), "the reply is not valid JSON"),
        (lambda s: s.reply_raw(500, "model crashed"), "answered HTTP 500 (model crashed)"),
        (lambda s: s.reply_raw(200, b"x" * (MAX_REPLY_BYTES + 10)), "longer than"),
        (
            lambda s: s.reply_json({"entries": [{"text": "x" * 5000, "category": "fact"}]}),
            "entry 1 is 5,000 characters long",
        ),
        (
            lambda s: s.reply_json({"entries": [{"text": "A fact.", "category": "gossip"}]}),
            "unknown category 'gossip'",
        ),
        (lambda s: s.reply_json({"memories": []}), 'expected an object with an "entries" list'),
        (
            lambda s: s.reply_json({"entries": [{"text": "A.", "category": "fact"}] * 300}),
            "300 entries, more than 200",
        ),
    ],
    ids=[
        "malformed-json",
        "http-500",
        "over-long-reply",
        "over-long-entry",
        "bad-category",
        "wrong-shape",
        "too-many",
    ],
)
def test_unusable_llm_replies_fall_back_to_offline(
    vault_dir: Path, llm_server, vault_warnings, script, why: str
) -> None:
    vault = use_llm(vault_dir, llm_server)
    script(llm_server)
    report = vault.flush(CHAT, session="fb", date=DAY)
    assert report.mode == "offline" and report.model is None
    assert [e.text for e in report.entries] == CHAT_ENTRIES
    assert len(report.warnings) == 1 and why in report.warnings[0]
    assert "used the offline extraction instead" in report.warnings[0]
    assert vault_warnings() == report.warnings
    assert bullets(vault_dir) == CHAT_ENTRIES


def test_an_llm_timeout_falls_back_to_offline(vault_dir: Path, llm_server, vault_warnings) -> None:
    vault = use_llm(vault_dir, llm_server, timeout=0.3)
    llm_server.reply_delay(5.0, '{"entries": []}')
    report = vault.flush(CHAT, session="slow", date=DAY)
    assert report.mode == "offline" and len(report.entries) == 3
    assert "no answer from" in report.warnings[0] and "within 0.3 s" in report.warnings[0]
    assert vault_warnings() == report.warnings


def test_an_unset_api_key_or_a_long_conversation_falls_back(
    vault_dir: Path, llm_server, monkeypatch
) -> None:
    vault = use_llm(vault_dir, llm_server)
    with (vault_dir / "vault.toml").open("a") as fh:
        fh.write('api_key_env = "NO_SUCH_KEY_VAR"\n')
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    report = Vault(vault_dir).flush(CHAT, session="k", dry_run=True)
    assert report.mode == "offline" and "NO_SUCH_KEY_VAR, which is not set" in report.warnings[0]
    monkeypatch.setenv("NO_SUCH_KEY_VAR", "secret")
    monkeypatch.setenv("VAULT_FLUSH_LLM_MAX_INPUT_CHARS", "100")
    report = Vault(vault_dir).flush(CHAT, session="k", dry_run=True)
    assert report.mode == "offline" and "over the 100 sent to a model" in report.warnings[0]
    assert llm_server.requests == [] and vault is not None


# -- concurrency -------------------------------------------------------------------------------


def session_chat(s: int, upto: int) -> list[dict[str, str]]:
    chat = []
    for i in range(upto):
        chat.append(
            {
                "role": "user",
                "content": f"I prefer build step {s}-{i} to run on runner "
                f"R{s}{i} with {i + 2} cores.",
            }
        )
        chat.append({"role": "assistant", "content": "Got it."})
    return chat


def check_interleaving(vault_dir: Path, sessions: int, per_session: int, adds: int) -> None:
    """Every block holds only its own lines, every add is there once, every session has each
    of its entries exactly once."""
    seen_adds: list[int] = []
    seen_entries: dict[str, list[str]] = {f"s{s}": [] for s in range(sessions)}
    for path in sorted((vault_dir / "memory").glob("*.md")):
        text = path.read_text()
        note = parse_note(f"memory/{path.name}", text)
        assert text.count("\n# ") == 0 and text.startswith("# ")
        for entry in note.entries():
            body = [line for line in note.lines[entry.start_line - 1 : entry.end_line] if line]
            if entry.source == "note":
                assert len(body) == 3, body
                number = int(body[0].split()[2])
                assert body == [f"- add {number} line {k}" for k in ("one", "two", "three")]
                seen_adds.append(number)
            else:
                assert entry.source == "flush" and entry.session in seen_entries, entry
                s = entry.session[1:]
                assert body and all(
                    line.startswith(f"- User: I prefer build step {s}-") for line in body
                ), body
                seen_entries[entry.session].extend(body)
    assert sorted(seen_adds) == list(range(adds))
    for session, lines in seen_entries.items():
        assert len(lines) == per_session == len(set(lines)), (session, lines)


def test_concurrent_flushes_and_adds_in_threads(vault_dir: Path) -> None:
    sessions, steps, adds = 4, (3, 6, 10), 30
    errors: list[BaseException] = []

    def flusher(s: int) -> None:
        try:
            with Vault(vault_dir) as vault:
                for upto in steps:
                    vault.flush(session_chat(s, upto), session=f"s{s}", date=DAY)
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)

    def adder() -> None:
        try:
            with Vault(vault_dir) as vault:
                for i in range(adds):
                    vault.add(
                        f"add {i} line one\nadd {i} line two\nadd {i} line three",
                        when=dt.datetime.combine(DAY, dt.time(12, 0)),
                    )
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=flusher, args=(s,)) for s in range(sessions)]
    threads.append(threading.Thread(target=adder))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    check_interleaving(vault_dir, sessions, steps[-1], adds)


@pytest.mark.slow
def test_four_flush_processes_and_an_add_process(vault_dir: Path, tmp_path: Path) -> None:
    """4 `python -m vault_memory flush` processes (each flushing a growing conversation three
    times) while a fifth process runs `vault add` in a loop until they are done. 4-10 s on
    two busy cores, hence slow; the threaded test above is its quick cousin."""
    root = str(Path(vault_memory.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    env.pop("VAULT_PATH", None)
    steps = (4, 8, 12)
    for s in range(4):
        for upto in steps:
            (tmp_path / f"s{s}-{upto}.json").write_text(json.dumps(session_chat(s, upto)))
    stop = tmp_path / "stop"
    adder_code = (
        "import sys, pathlib\n"
        "from vault_memory.cli import cli\n"
        "vault, stop = sys.argv[1], pathlib.Path(sys.argv[2])\n"
        "i = 0\n"
        "while not stop.exists() or i < 20:\n"
        "    try:\n"
        "        cli.main(['--vault', vault, 'add', f'add {i} line one\\nadd {i} line two\\n"
        "add {i} line three'], prog_name='vault', standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    i += 1\n"
        "print(i)\n"
    )
    adder = subprocess.Popen(
        [sys.executable, "-c", adder_code, str(vault_dir), str(stop)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def flusher(s: int, results: list[subprocess.CompletedProcess[str]]) -> None:
        for upto in steps:
            results.append(
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "vault_memory",
                        "--vault",
                        str(vault_dir),
                        "flush",
                        str(tmp_path / f"s{s}-{upto}.json"),
                        "--session",
                        f"s{s}",
                        "--json",
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
            )

    results: list[subprocess.CompletedProcess[str]] = []
    threads = [threading.Thread(target=flusher, args=(s, results)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    stop.touch()
    out, err = adder.communicate(timeout=120)
    assert adder.returncode == 0, err
    assert len(results) == 12
    for result in results:
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["new_entries"] == 4
    date_files = sorted((vault_dir / "memory").glob("*.md"))
    assert date_files
    check_interleaving(vault_dir, 4, steps[-1], int(out.split()[-1]))


def test_flush_logs_nothing_when_offline(vault_dir: Path, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="vault_memory")
    Vault(vault_dir).flush(CHAT, session="quiet", dry_run=True)
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        ("My token is [REDACTED:openai-key]", False),
        ("Here: [REDACTED:github-token] [REDACTED:aws-access-key]", False),
        (
            "The staging deploy key lives in 1Password, never in the repo: [REDACTED:openai-key]",
            True,
        ),
    ],
)
def test_a_sentence_that_was_only_a_secret_is_not_kept(sentence: str, kept: bool) -> None:
    assert (classify(sentence, "user") is not None) is kept
