"""`vault import` of conversations: ChatGPT and Claude.ai data exports (small synthetic files in
their documented shapes, written here), OpenAI-style messages; idempotence, newer exports,
bad input reported with its position and nothing half-written, dry runs, the CLI."""

from __future__ import annotations

import datetime as dt
import json
import re
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vault_memory import Vault
from vault_memory.files.notes import parse_note
from vault_memory.transfer import ImportFormatError

from ..cli.test_cli_basic import error_of

# 2026-03-10 12:00 UTC and the days after it, as Unix times (ChatGPT) and ISO strings (Claude)
T0 = 1773144000.0
DAY = 86400.0


def day_of(stamp: float) -> str:
    """The local day of a Unix time, as the importer reads it (the test runs in any zone)."""
    return dt.datetime.fromtimestamp(stamp).date().isoformat()


def iso(stamp: float) -> str:
    return dt.datetime.fromtimestamp(stamp, dt.UTC).isoformat().replace("+00:00", "Z")


# -- ChatGPT's conversations.json -----------------------------------------------------------


def gpt_message(role: str, text: Any, stamp: float | None, kind: str = "text") -> dict[str, Any]:
    parts = text if isinstance(text, list) else [text]
    return {
        "id": f"m-{abs(hash((role, str(text), stamp))) % 10**8}",
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": stamp,
        "update_time": None,
        "content": {"content_type": kind, "parts": parts}
        if kind in ("text", "multimodal_text")
        else {"content_type": kind, "text": str(text)},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": {},
        "recipient": "all",
    }


def gpt_conversation(
    ident: str,
    title: str,
    nodes: list[tuple[str, str | None, dict[str, Any] | None]],
    current: str,
) -> dict[str, Any]:
    """A conversation from (node id, parent id, message) triples; children are derived."""
    mapping: dict[str, Any] = {
        node: {"id": node, "message": message, "parent": parent, "children": []}
        for node, parent, message in nodes
    }
    for node, parent, _ in nodes:
        if parent is not None:
            mapping[parent]["children"].append(node)
    stamps = [m["create_time"] for _, _, m in nodes if m and m["create_time"]]
    return {
        "title": title,
        "create_time": min(stamps),
        "update_time": max(stamps),
        "mapping": mapping,
        "moderation_results": [],
        "current_node": current,
        "plugin_ids": None,
        "conversation_id": ident,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": ident,
    }


def billing_chat(ident: str = "6761a3f2-b0c4-8000-9a1b-2f3e4d5c6b7a") -> dict[str, Any]:
    """Two days of one conversation, a regenerated reply (two branches), an image."""
    return gpt_conversation(
        ident,
        "Billing # migration [plan]",
        [
            ("root", None, None),
            ("sys", "root", gpt_message("system", "", None)),
            (
                "u1",
                "sys",
                gpt_message(
                    "user", "We decided to move billing-core from MySQL to PostgreSQL 16.", T0
                ),
            ),
            (
                "a1-old",
                "u1",
                gpt_message(
                    "assistant",
                    "We decided to abandon this branch entirely, said the old reply.",
                    T0 + 60,
                ),
            ),
            ("a1", "u1", gpt_message("assistant", "Sounds good.", T0 + 90)),
            (
                "u2",
                "a1",
                gpt_message(
                    "user",
                    [
                        {
                            "content_type": "image_asset_pointer",
                            "asset_pointer": "file-service://x",
                        },
                        "I prefer hand-written SQL migrations over ORM-generated ones.",
                    ],
                    T0 + DAY,
                    "multimodal_text",
                ),
            ),
            ("c1", "u2", gpt_message("assistant", "print(1)", T0 + DAY + 5, "code")),
            ("a2", "c1", gpt_message("assistant", "Noted.", T0 + DAY + 10)),
        ],
        current="a2",
    )


def trip_chat(ident: str = "7f00aa11-2222-4333-8444-555566667777") -> dict[str, Any]:
    return gpt_conversation(
        ident,
        "Trip to Lisbon",
        [
            ("r", None, None),
            (
                "u",
                "r",
                gpt_message(
                    "user",
                    "My sister Lena lives in Lisbon and works as an architect.",
                    T0 + 3 * DAY,
                ),
            ),
            ("a", "u", gpt_message("assistant", "Nice!", T0 + 3 * DAY + 30)),
        ],
        current="a",
    )


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def logs(vault: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((vault / "memory").glob("*.md"))}


def entries(vault: Path) -> Counter[tuple[str, str]]:
    """Every flushed entry of the daily logs as (session, text), counted."""
    found: Counter[tuple[str, str]] = Counter()
    for name, text in logs(vault).items():
        note = parse_note(f"memory/{name}", text)
        for entry in note.entries():
            for line in note.lines[entry.start_line - 1 : entry.end_line]:
                if line.startswith("- "):
                    found[(entry.session or "", line[2:])] += 1
    return found


def test_chatgpt_export_follows_the_current_branch_into_the_days_it_happened(
    vault_dir: Path, tmp_path: Path
) -> None:
    export = write_json(tmp_path / "conversations.json", [billing_chat(), trip_chat()])
    report = Vault(vault_dir).import_history(export)
    assert report.formats == ["chatgpt"]
    assert (report.conversations, report.imported, report.skipped) == (2, 2, [])
    written = logs(vault_dir)
    first, second, third = day_of(T0), day_of(T0 + DAY), day_of(T0 + 3 * DAY)
    day1 = written[f"{first}.md"]
    assert re.search(
        r"^## \d\d:\d\d · flush · session chatgpt-6761a3f2b0c4 · Billing migration plan$",
        day1,
        re.M,
    ), day1
    assert "PostgreSQL 16" in day1
    assert "abandon this branch" not in "".join(written.values())  # the regenerated reply's
    assert "hand-written SQL" in written[f"{second}.md"]  # the message's own day
    assert "hand-written SQL" not in day1
    assert "Lena lives in Lisbon" in written[f"{third}.md"]
    assert "session chatgpt-7f00aa112222 · Trip to Lisbon" in written[f"{third}.md"]
    assert report.left_out == Counter({"an image": 1, "a tool call (code)": 1})
    assert any("conversation 1" in at and "message 4: an image" in at for at in report.left_out_at)
    assert report.entries == 3 and len(report.logs) == 3


def test_the_branch_of_current_node_not_the_newest_one(vault_dir: Path, tmp_path: Path) -> None:
    """The user went back to the first reply (ChatGPT's < 1/2 >): that branch is the
    conversation, although a newer one exists."""
    chat = billing_chat()
    chat["current_node"] = "a1-old"
    report = Vault(vault_dir).import_history(write_json(tmp_path / "c.json", [chat]))
    assert report.messages == 2  # the question and the reply it ends at
    assert "hand-written SQL" not in "".join(logs(vault_dir).values())
    del chat["current_node"]  # missing: the newest leaf
    report = Vault(vault_dir).import_history(write_json(tmp_path / "c.json", [chat]))
    assert "hand-written SQL" in "".join(logs(vault_dir).values())


def test_importing_twice_adds_nothing_and_a_newer_export_only_what_is_new(
    vault_dir: Path, tmp_path: Path
) -> None:
    vault = Vault(vault_dir)
    vault.import_history(write_json(tmp_path / "old.json", [billing_chat()]))
    before = logs(vault_dir)
    again = vault.import_history(write_json(tmp_path / "old.json", [billing_chat()]))
    assert (again.entries, again.imported, again.unchanged) == (0, 0, 1)
    assert logs(vault_dir) == before
    newer = billing_chat()
    newer["mapping"]["u3"] = {
        "id": "u3",
        "parent": "a2",
        "children": [],
        "message": gpt_message(
            "user", "Our cutover window is Friday night at 22:00 CET.", T0 + 5 * DAY
        ),
    }
    newer["mapping"]["a2"]["children"].append("u3")
    # a month later the user says again what the session already holds: not written twice
    newer["mapping"]["u4"] = {
        "id": "u4",
        "parent": "u3",
        "children": [],
        "message": gpt_message(
            "user", "We decided to move billing-core from MySQL to PostgreSQL 16.", T0 + 30 * DAY
        ),
    }
    newer["mapping"]["u3"]["children"].append("u4")
    newer["current_node"] = "u4"
    report = vault.import_history(write_json(tmp_path / "new.json", [trip_chat(), newer]))
    assert (report.imported, report.unchanged, report.entries) == (2, 0, 2)
    assert report.already_flushed == 3
    counted = entries(vault_dir)
    assert max(counted.values()) == 1  # no entry twice
    assert sum(counted.values()) == 4
    assert "cutover window" in logs(vault_dir)[f"{day_of(T0 + 5 * DAY)}.md"]
    for name, text in before.items():  # the earlier days' logs are as they were
        assert logs(vault_dir)[name] == text


def claude_export() -> list[dict[str, Any]]:
    return [
        {
            "uuid": "0b4c7d2e-1111-4222-8333-444455556666",
            "name": "Renderer fonts",
            "created_at": iso(T0),
            "updated_at": iso(T0 + DAY),
            "account": {"uuid": "acc"},
            "chat_messages": [
                {
                    "uuid": "1",
                    "sender": "human",
                    "created_at": iso(T0),
                    "updated_at": iso(T0),
                    "text": "ignored when content blocks exist",
                    "content": [
                        {
                            "type": "text",
                            "text": "The invoice renderer must embed the "
                            "Inter font because customers print invoices offline.",
                            "start_timestamp": iso(T0),
                            "citations": [],
                        }
                    ],
                    "attachments": [
                        {
                            "file_name": "invoice.pdf",
                            "file_size": 1200,
                            "file_type": "pdf",
                            "extracted_content": "INVOICE 42",
                        }
                    ],
                    "files": [],
                },
                {
                    "uuid": "2",
                    "sender": "assistant",
                    "created_at": iso(T0 + 20),
                    "updated_at": iso(T0 + 20),
                    "text": "",
                    "content": [
                        {"type": "thinking", "thinking": "hmm"},
                        {"type": "tool_use", "name": "web_search", "input": {}},
                        {"type": "text", "text": "Understood."},
                    ],
                },
                {
                    "uuid": "3",
                    "sender": "human",
                    "created_at": iso(T0 + DAY),
                    "updated_at": iso(T0 + DAY),
                    "text": "I prefer PDF/A-3 for every archived invoice.",
                    "content": [],
                },
            ],
        },
        {"uuid": "empty-one", "name": "Nothing here", "created_at": iso(T0), "chat_messages": []},
    ]


def test_claude_export_blocks_attachments_and_days(vault_dir: Path, tmp_path: Path) -> None:
    export = write_json(tmp_path / "conversations.json", claude_export())
    report = Vault(vault_dir).import_history(export)
    assert report.formats == ["claude"]
    assert report.conversations == 2 and report.imported == 1
    assert len(report.skipped) == 1
    assert "conversation 2 (id empty-one, 'Nothing here'): it has no messages" in report.skipped[0]
    written = logs(vault_dir)
    day1, day2 = written[f"{day_of(T0)}.md"], written[f"{day_of(T0 + DAY)}.md"]
    assert "Inter font" in day1 and "session claude-0b4c7d2e1111 · Renderer fonts" in day1
    assert "ignored when content blocks exist" not in day1 and "INVOICE 42" not in day1
    assert "PDF/A-3" in day2
    assert report.left_out == Counter(
        {"an attached file 'invoice.pdf'": 1, "the model's reasoning": 1, "a tool call": 1}
    )


def test_openai_messages_and_jsonl_of_conversations(vault_dir: Path, tmp_path: Path) -> None:
    vault = Vault(vault_dir)
    messages = [
        {"role": "user", "content": "I prefer tabs over spaces in Go code."},
        {"role": "assistant", "content": "Noted."},
    ]
    report = vault.import_history(write_json(tmp_path / "chat.json", messages))
    assert report.formats == ["openai"] and report.entries == 1
    lines = [
        json.dumps({"messages": [{"role": "user", "content": text}]})
        for text in ("My manager is Ines Duarte.", "We decided to ship the API on Thursdays.")
    ]
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_text("\n".join(lines) + "\n")
    report = vault.import_history(jsonl)
    assert (report.formats, report.conversations, report.entries) == (["openai"], 2, 2)
    again = vault.import_history(jsonl)
    assert again.entries == 0 and again.unchanged == 2


def test_a_day_too_large_to_flush_skips_only_that_day(vault_dir: Path, tmp_path: Path) -> None:
    chat = billing_chat()
    chat["mapping"]["a2"]["message"]["content"]["parts"] = ["x" * 3000]
    vault = Vault(vault_dir, overrides={"flush.max_input_bytes": 2000})
    report = vault.import_history(write_json(tmp_path / "c.json", [chat]))
    assert report.entries == 1 and report.imported == 1
    assert len(report.skipped) == 1
    assert report.skipped[0].startswith(
        f"c.json: conversation 1 (id 6761a3f2-b0c4-8000-9a1b-2f3e4d5c6b7a, 'Billing # "
        f"migration [plan]'): {day_of(T0 + DAY)}: "
    )
    assert "over the" in report.skipped[0] or "too large" in report.skipped[0]


def test_gemini_style_contents(vault_dir: Path, tmp_path: Path, tree_state) -> None:
    """What `vault flush` refused (`message 1 has no "role"` / no text): Gemini-style parts."""
    contents = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "I prefer Fastify over Express for new services."},
                    {"inline_data": {"mime_type": "image/png", "data": "AA"}},
                ],
            },
            {"role": "model", "parts": [{"text": "Noted."}]},
        ]
    }
    report = Vault(vault_dir).import_history(write_json(tmp_path / "gemini.json", contents))
    assert report.formats == ["openai"] and report.entries == 1
    assert "Fastify over Express" in "".join(logs(vault_dir).values())


def test_a_folder_or_the_zip_of_a_data_export(vault_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    write_json(folder / "conversations.json", [trip_chat()])
    (folder / "user.json").write_text("{}")
    report = Vault(vault_dir).import_history(folder)
    assert report.entries == 1
    archive = tmp_path / "chatgpt.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(folder / "conversations.json", "export-2026/conversations.json")
        zf.writestr("export-2026/chat.html", "<html></html>")
    report = Vault(vault_dir).import_history(archive)
    assert report.formats == ["chatgpt"] and report.conversations == 1 and report.unchanged == 1


def test_dry_run_writes_nothing(vault_dir: Path, tmp_path: Path, tree_state) -> None:
    export = write_json(tmp_path / "c.json", [billing_chat(), trip_chat()])
    before = tree_state(vault_dir)
    report = Vault(vault_dir).import_history(export, dry_run=True)
    assert report.entries == 3 and report.imported == 2 and len(report.logs) == 3
    assert tree_state(vault_dir) == before


def test_progress_counts_conversations(vault_dir: Path, tmp_path: Path) -> None:
    export = write_json(tmp_path / "c.json", [billing_chat(), trip_chat()])
    seen: list[tuple[str, int, int]] = []
    Vault(vault_dir).import_history(export, progress=lambda *a: seen.append(a))
    assert seen == [("reading (MB)", 0, 1), ("import", 0, 2), ("import", 1, 2), ("import", 2, 2)]


# -- bad input -------------------------------------------------------------------------------


def test_a_cut_off_export_is_refused_with_its_position_and_nothing_written(
    vault_dir: Path, tmp_path: Path, tree_state
) -> None:
    whole = json.dumps([billing_chat(), trip_chat(), billing_chat("other-id")])
    cut = tmp_path / "conversations.json"
    cut.write_text(whole[: int(len(whole) * 0.8)])
    before = tree_state(vault_dir)
    with pytest.raises(ImportFormatError) as caught:
        Vault(vault_dir).import_history(cut)
    assert "breaks off or is invalid after element 2" in str(caught.value)
    assert "Nothing was written" in str(caught.value)
    assert tree_state(vault_dir) == before


@pytest.mark.parametrize(
    ("content", "what"),
    [
        ("User: hi\nAssistant: hello\n", "not JSON or JSONL (unknown format)"),
        ('[{"foo": 1, "bar": 2}]', "unknown format: its first elements have the keys bar, foo"),
        ('{"a": 1}\n{"b": 2}\n', "its JSON lines are of an unknown format"),
        ("", "it is empty"),
    ],
)
def test_unknown_formats_are_refused(
    vault_dir: Path, tmp_path: Path, content: str, what: str, tree_state
) -> None:
    path = tmp_path / "input.json"
    path.write_text(content)
    before = tree_state(vault_dir)
    with pytest.raises(ImportFormatError, match=re.escape(what)):
        Vault(vault_dir).import_history(path)
    assert tree_state(vault_dir) == before


def test_broken_conversations_are_skipped_with_their_position(
    vault_dir: Path, tmp_path: Path
) -> None:
    weird = billing_chat("8888aaaa-0000")
    weird["mapping"]["u1"]["message"]["content"] = {"content_type": "hologram", "x": 1}
    weird["mapping"]["a2"]["message"]["content"]["parts"] = "a string, not a list of parts"
    export = write_json(
        tmp_path / "c.json",
        [
            {"title": "no mapping", "id": "abc"},
            trip_chat(),
            "not an object",
            weird,
        ],
    )
    report = Vault(vault_dir).import_history(export)
    assert report.conversations == 4
    assert report.skipped == [
        "c.json: conversation 1 (id abc, 'no mapping'): it has no \"mapping\" of messages",
        "c.json: conversation 3: it is not a JSON object",
    ]
    assert report.imported == 2
    assert report.left_out["the unknown content type 'hologram'"] == 1
    assert report.left_out["no list of parts"] == 1
    assert any(
        "conversation 4" in at and "message 2: the unknown content type" in at
        for at in report.left_out_at
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=st.floats(min_value=0.0, max_value=1.0), flip=st.integers(0, 10_000))
def test_fuzzed_exports_are_imported_whole_or_refused_whole(
    tmp_path: Path, cut: float, flip: int
) -> None:
    """A ChatGPT export cut anywhere, or with one byte changed: imported (the part that reads)
    or refused as a whole with nothing written; never a traceback, never a partial file."""
    work = tmp_path / f"fuzz-{abs(hash((cut, flip)))}"
    vault = Vault.init(work / "vault").root
    data = bytearray(json.dumps([billing_chat(), trip_chat()]).encode())
    data = data[: max(1, int(len(data) * cut))] if cut < 1 else data
    if flip < len(data):
        data[flip] = ord("}") if data[flip] != ord("}") else ord("x")
    path = work / "conversations.json"
    path.write_bytes(bytes(data))
    before = {p: p.read_bytes() for p in (vault / "memory").glob("*")}
    try:
        report = Vault(vault).import_history(path)
    except ImportFormatError as exc:
        assert "Nothing was written" in str(exc)
        assert {p: p.read_bytes() for p in (vault / "memory").glob("*")} == before
        return
    assert report.conversations >= 0
    for text in logs(vault).values():
        assert text.endswith("\n")


# -- the CLI ---------------------------------------------------------------------------------


def test_cli_import_summary_json_and_errors(vault_dir: Path, tmp_path: Path, run_cli) -> None:
    export = write_json(tmp_path / "conversations.json", [billing_chat(), trip_chat()])
    result = run_cli("import", str(export), "--dry-run", cwd=vault_dir)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "2 conversations (chatgpt): 3 new entries in 3 daily logs from 2, 0 with nothing new, "
        "0 skipped; 0 entries already there, 0 secrets redacted; dry run, nothing written\n"
    )
    assert "left out (not text): 1 × an image, 1 × a tool call (code)" in result.stderr
    assert (
        "  conversations.json: conversation 1 (id 6761a3f2-b0c4-8000-9a1b-2f3e4d5c6b7a, "
        "'Billing # migration [plan]'), message 4: an image\n"
    ) in result.stderr
    result = run_cli("import", str(export), "--json", cwd=vault_dir)
    data = json.loads(result.stdout)
    assert (data["imported"], data["new_entries"], data["formats"]) == (2, 3, ["chatgpt"])
    again = run_cli("import", str(export), "--format", "chatgpt", cwd=vault_dir)
    assert "0 new entries in 0 daily logs from 0, 2 with nothing new" in again.stdout
    wrong = run_cli("import", str(export), "--format", "claude", cwd=vault_dir)
    assert wrong.exit_code == 0
    assert "Warning: skipped conversations.json: conversation 1" in wrong.stderr
    assert 'no "chat_messages" list' in wrong.stderr
    bad = tmp_path / "notes.txt"
    bad.write_text("just some text")
    failed = run_cli("import", str(bad), cwd=vault_dir)
    assert failed.exit_code == 1
    assert error_of(failed).startswith("cannot import notes.txt: it is not JSON or JSONL")


def test_cli_import_into_a_scope(vault_dir: Path, tmp_path: Path, run_cli) -> None:
    export = write_json(tmp_path / "conversations.json", [trip_chat()])
    result = run_cli("import", str(export), "--scope", "acme/bot", cwd=vault_dir)
    assert result.exit_code == 0, result.stderr
    day = day_of(T0 + 3 * DAY)
    assert "Lena" in (vault_dir / "scopes/acme/bot/memory" / f"{day}.md").read_text()
    assert not (vault_dir / "memory" / f"{day}.md").exists()


def test_each_conversation_is_kept_as_its_titled_transcript_once(
    vault_dir: Path, tmp_path: Path
) -> None:
    """An import with sessions: an imported conversation also lands whole in one
    transcript, dated by its first day and titled by its own title; importing it again
    appends nothing, a newer export only its new messages."""
    vault = Vault(vault_dir)
    vault.import_history(write_json(tmp_path / "old.json", [billing_chat()]))
    [head] = vault.transcripts()
    assert head.path == f"sessions/{day_of(T0)}-chatgpt-6761a3f2b0c4.md"
    assert head.title == "Billing migration plan"
    texts = [m.turn.text for m in vault.transcript("chatgpt-6761a3f2b0c4").messages]
    assert any("PostgreSQL 16" in t for t in texts)
    assert any("hand-written SQL" in t for t in texts)  # the second day's, same transcript
    assert not any("abandon this branch" in t for t in texts)
    before = (vault_dir / head.path).read_bytes()
    vault.import_history(write_json(tmp_path / "old.json", [billing_chat()]))
    assert (vault_dir / head.path).read_bytes() == before
    newer = billing_chat()
    newer["mapping"]["u3"] = {
        "id": "u3",
        "parent": "a2",
        "children": [],
        "message": gpt_message(
            "user", "Our cutover window is Friday night at 22:00 CET.", T0 + 5 * DAY
        ),
    }
    newer["mapping"]["a2"]["children"].append("u3")
    newer["current_node"] = "u3"
    vault.import_history(write_json(tmp_path / "new.json", [newer]))
    after = [m.turn.text for m in vault.transcript("chatgpt-6761a3f2b0c4").messages]
    assert after[: len(texts)] == texts and len(after) == len(texts) + 1
    assert "cutover window" in after[-1]
    assert len(vault.transcripts()) == 1


def test_a_sitting_past_midnight_stays_with_the_evening_it_began(
    vault_dir: Path, tmp_path: Path
) -> None:
    """A chat from 23:40 to 00:20: its second half goes to the same day's log, in the
    same section as the first, and its "yesterday" is read from that evening; a message the
    next afternoon, hours later, starts that day's own."""

    def local(day: int, hour: int, minute: int) -> float:  # local time, whatever the zone
        return dt.datetime(2026, 3, day, hour, minute).timestamp()

    chat = gpt_conversation(
        "0a0b0c0d-1111-4222-8333-444455556666",
        "Late chat",
        [
            ("r", None, None),
            (
                "u1",
                "r",
                gpt_message(
                    "user",
                    "My sister Lena moved to Porto and works as a nurse there.",
                    local(10, 23, 40),
                ),
            ),
            ("a1", "u1", gpt_message("assistant", "Nice!", local(10, 23, 41))),
            (
                "u2",
                "a1",
                gpt_message(
                    "user",
                    "I decided to visit Lena in Porto in April, I booked it yesterday.",
                    local(11, 0, 20),
                ),
            ),
            ("a2", "u2", gpt_message("assistant", "Great.", local(11, 0, 21))),
            (
                "u3",
                "a2",
                gpt_message(
                    "user",
                    "I decided to learn Portuguese before the trip to Porto.",
                    local(11, 14, 0),
                ),
            ),
        ],
        current="u3",
    )
    Vault(vault_dir).import_history(write_json(tmp_path / "conversations.json", [chat]))
    written = logs(vault_dir)
    evening, next_day = written["2026-03-10.md"], written["2026-03-11.md"]
    assert "visit Lena in Porto" in evening and "visit Lena" not in next_day
    assert "yesterday (2026-03-09)" in evening  # said before they slept: the 9th
    note = parse_note("memory/2026-03-10.md", evening)
    sections = {e.start_line for e in note.entries()}
    assert len(sections) == 1  # one section: the turns keep their neighbours
    assert "learn Portuguese" in next_day and "learn Portuguese" not in evening
