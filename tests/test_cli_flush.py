"""`vault flush` and `vault sessions` through click's CliRunner: exit codes, stdout data,
stderr messages, and the files they leave behind."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from vault_memory import clock

from .test_cli_basic import error_of
from .test_flush import CHAT, CHAT_ENTRIES, MORE, MORE_ENTRIES


def today() -> str:
    return clock.today().isoformat()


@pytest.fixture
def chat_file(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": CHAT}))
    return path


def test_flush_a_file_then_again(vault_dir: Path, chat_file: Path, run_cli) -> None:
    result = run_cli("flush", str(chat_file), "--session", "cli-1", cwd=vault_dir)
    assert result.exit_code == 0, result.stderr
    first, summary = result.stdout.splitlines()
    match = re.fullmatch(
        rf"memory/{today()}\.md:(\d+)-(\d+)  \d\d:\d\d · flush · session cli-1", first
    )
    assert match, first
    assert summary == "3 new, 0 already flushed, 0 secrets redacted (offline)"
    lines = (vault_dir / "memory" / f"{today()}.md").read_text().split("\n")
    start, end = int(match[1]), int(match[2])
    assert lines[start:end] == [f"- {t}" for t in CHAT_ENTRIES]
    again = run_cli("flush", str(chat_file), "--session", "cli-1", cwd=vault_dir)
    assert again.exit_code == 0, again.stderr
    assert again.stdout == (
        "session cli-1: nothing new (3 entries already flushed); nothing written\n"
    )


def test_the_same_chat_without_its_session_id_is_not_written_twice(
    vault_dir: Path, chat_file: Path, tmp_path: Path, run_cli, tree_state
) -> None:
    assert run_cli("flush", str(chat_file), "--session", "cli-x", cwd=vault_dir).exit_code == 0
    before = tree_state(vault_dir)
    # known by its content (its transcript): the same session, nothing new
    again = run_cli("flush", str(chat_file), cwd=vault_dir)
    assert again.exit_code == 0, again.stderr
    assert (
        again.stdout == "session cli-x: nothing new (3 entries already flushed); nothing written\n"
    )
    assert tree_state(vault_dir) == before
    longer = tmp_path / "longer.json"
    longer.write_text(json.dumps(CHAT + MORE))
    written = run_cli("flush", str(longer), cwd=vault_dir)
    assert "session cli-x" in written.stdout.splitlines()[0]
    assert written.stdout.splitlines()[1] == (
        "4 new, 3 already flushed, 0 secrets redacted (offline)"
    )
    assert len(list((vault_dir / "sessions").glob("*.md"))) == 1


def test_without_transcripts_the_entries_of_another_session_are_named(
    vault_dir: Path, chat_file: Path, tmp_path: Path, run_cli, tree_state
) -> None:
    off = {"VAULT_SESSIONS_TRANSCRIPTS": "false"}
    assert (
        run_cli("flush", str(chat_file), "--session", "cli-x", cwd=vault_dir, env=off).exit_code
        == 0
    )
    before = tree_state(vault_dir / "memory")
    again = run_cli("flush", str(chat_file), cwd=vault_dir, env=off)
    assert again.exit_code == 0, again.stderr
    derived = re.fullmatch(
        r"session (\w+): nothing new \(3 entries already flushed, 3 of them in "
        r"session cli-x\); nothing written\n",
        again.stdout,
    )
    assert derived and derived[1] != "cli-x", again.stdout
    assert tree_state(vault_dir / "memory") == before
    report = json.loads(run_cli("flush", str(chat_file), "--json", cwd=vault_dir, env=off).stdout)
    assert report["already_flushed"] == report["already_in_other_sessions"] == 3
    assert report["other_sessions"] == ["cli-x"] and report["written"] is False
    longer = tmp_path / "longer.json"
    longer.write_text(json.dumps(CHAT + MORE))
    written = run_cli("flush", str(longer), cwd=vault_dir, env=off)
    assert written.stdout.splitlines()[1] == (
        "4 new, 3 already flushed (3 of them in session cli-x), 0 secrets redacted (offline)"
    )


def test_counts_of_one_are_singular(vault_dir: Path, run_cli) -> None:
    result = run_cli("flush", "-", "--session", "one", cwd=vault_dir, input="User: hi\n")
    assert result.stdout == "session one: nothing worth keeping in 1 message; nothing written\n"
    chat = "User: I prefer uv over pip.\n"
    result = run_cli(
        "flush", "-", "--session", "one", "--date", "2026-11-22", cwd=vault_dir, input=chat
    )
    assert result.stdout.splitlines()[1] == "1 new, 0 already flushed, 0 secrets redacted (offline)"
    result = run_cli(
        "flush", "-", "--session", "one", "--date", "2026-11-22", cwd=vault_dir, input=chat
    )
    assert result.stdout == "session one: nothing new (1 entry already flushed); nothing written\n"
    result = run_cli(
        "flush", "-", "--session", "two", "--date", "2026-11-23", cwd=vault_dir, input=chat
    )
    assert result.stdout == (
        "session two: nothing new (1 entry already flushed, 1 of them in "
        "session one); nothing written\n"
    )
    assert run_cli("sessions", cwd=vault_dir).stdout == (
        "one  2026-11-22  1 entry  memory/2026-11-22.md:3-4\n"
    )


def test_flush_from_stdin_with_json(vault_dir: Path, run_cli) -> None:
    transcript = "User: I prefer uv over pip.\nAssistant: Noted!\n"
    result = run_cli(
        "flush", "-", "--json", "--date", "2026-11-22", cwd=vault_dir, input=transcript
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["path"] == "memory/2026-11-22.md" and report["written"] is True
    assert report["new_entries"] == 1 and report["session_derived"] is True
    assert [e["text"] for e in report["entries"]] == ["User: I prefer uv over pip. #preference"]
    assert report["entries"][0]["category"] == "preference"
    assert report["messages"] == 2 and report["mode"] == "offline" and report["warnings"] == []
    assert (vault_dir / report["path"]).read_text().split("\n")[report["start_line"]] == (
        "- User: I prefer uv over pip. #preference"
    )
    # without FILE, piped stdin is read too
    again = run_cli("flush", "--json", "--date", "2026-11-22", cwd=vault_dir, input=transcript)
    assert json.loads(again.stdout)["already_flushed"] == 1


def test_dry_run_prints_the_block_and_writes_nothing(
    vault_dir: Path, chat_file: Path, run_cli, tree_state
) -> None:
    before = tree_state(vault_dir)
    result = run_cli("flush", str(chat_file), "--dry-run", "--session", "d", cwd=vault_dir)
    assert result.exit_code == 0, result.stderr
    assert tree_state(vault_dir) == before
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"## \d\d:\d\d · flush · session d", lines[0])
    assert lines[1:] == [f"- {t}" for t in CHAT_ENTRIES]
    assert result.stderr == (
        f"dry run: 3 new, 0 already flushed, 0 secrets redacted (offline); "
        f"would append to memory/{today()}.md; nothing written\n"
    )


def test_a_longer_conversation_appends_only_what_is_new(
    vault_dir: Path, tmp_path: Path, run_cli
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in CHAT))
    assert run_cli("flush", str(path), cwd=vault_dir).exit_code == 0
    path.write_text("\n".join(json.dumps(m) for m in CHAT + MORE))
    result = run_cli("flush", str(path), "--json", cwd=vault_dir)
    report = json.loads(result.stdout)
    assert [e["text"] for e in report["entries"]] == MORE_ENTRIES
    assert report["already_flushed"] == 3


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (
            (),
            '[{"role": "user", "content": "x"}',
            "cannot read the conversation: it looks like JSON but does not parse",
        ),
        ((), "", "cannot read the conversation: the input is empty"),
        (
            ("--session", "no spaces please"),
            "User: I prefer tea.",
            "the session id 'no spaces please' is not usable",
        ),
        (("--date", "22/11/2026"), "User: I prefer tea.", "--date '22/11/2026' is not a date"),
    ],
)
def test_user_errors_exit_1_and_write_nothing(
    vault_dir: Path, run_cli, tree_state, args, stdin, message
) -> None:
    before = tree_state(vault_dir)
    result = run_cli("flush", "-", *args, cwd=vault_dir, input=stdin)
    assert error_of(result).startswith(message), result.stderr
    assert tree_state(vault_dir) == before


def test_oversized_input_is_refused(vault_dir: Path, run_cli, tree_state) -> None:
    before = tree_state(vault_dir)
    result = run_cli(
        "flush",
        "-",
        cwd=vault_dir,
        input="User: I prefer tea.\n" * 100,
        env={"VAULT_FLUSH_MAX_INPUT_BYTES": "1000"},
    )
    assert error_of(result) == (
        "the conversation is 1,001 bytes, over the limit of 1,000. Split it into smaller pieces."
    )
    assert tree_state(vault_dir) == before


def test_a_missing_file_is_a_usage_error(vault_dir: Path, run_cli) -> None:
    result = run_cli("flush", "no-such-file.json", cwd=vault_dir)
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_sessions_list_and_show(vault_dir: Path, chat_file: Path, tmp_path: Path, run_cli) -> None:
    assert run_cli("sessions", cwd=vault_dir).stderr == "no flushed sessions\n"
    assert json.loads(run_cli("sessions", "--json", cwd=vault_dir).stdout) == []
    run_cli("flush", str(chat_file), "--session", "a", "--date", "2026-11-21", cwd=vault_dir)
    more = tmp_path / "more.json"
    more.write_text(json.dumps(CHAT + MORE))
    run_cli("flush", str(more), "--session", "a", "--date", "2026-11-22", cwd=vault_dir)
    listed = run_cli("sessions", cwd=vault_dir)
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout == (
        "a  2026-11-21..2026-11-22  7 entries  memory/2026-11-21.md:3-6, memory/2026-11-22.md:3-7\n"
    )
    data = json.loads(run_cli("sessions", "--json", cwd=vault_dir).stdout)
    assert data == [
        {
            "id": "a",
            "scope": "",
            "dates": ["2026-11-21", "2026-11-22"],
            "first_date": "2026-11-21",
            "last_date": "2026-11-22",
            "entries": 7,
            "locations": ["memory/2026-11-21.md:3-6", "memory/2026-11-22.md:3-7"],
        }
    ]
    shown = run_cli("sessions", "show", "a", cwd=vault_dir)
    assert shown.exit_code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert re.fullmatch(r"memory/2026-11-21\.md:3-6  \d\d:\d\d · flush · session a", lines[0])
    assert lines[1] == f"     4  {CHAT_ENTRIES[0]}"
    assert len(lines) == 2 + 3 + 4
    as_json = json.loads(run_cli("sessions", "show", "a", "--json", cwd=vault_dir).stdout)
    assert [e["text"] for b in as_json["blocks"] for e in b["entries"]] == (
        CHAT_ENTRIES + MORE_ENTRIES
    )
    assert as_json["blocks"][1]["entries"][0] == {"line": 4, "text": MORE_ENTRIES[0]}
    missing = run_cli("sessions", "show", "zzz", cwd=vault_dir)
    assert error_of(missing) == (
        "no flushed session 'zzz' in the daily logs. Run "
        "`vault sessions` to list the sessions that were flushed."
    )


@pytest.mark.parametrize("command", [("flush",), ("sessions",), ("sessions", "show")])
def test_help_works_outside_a_vault_and_shows_an_example(tmp_path: Path, run_cli, command) -> None:
    result = run_cli(*command, "--help", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    description = result.stdout.split("Options:")[0].rstrip().splitlines()
    assert "  Example:" in description
    assert description[-1].startswith("    vault ")
