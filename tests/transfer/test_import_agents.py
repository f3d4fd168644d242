"""`vault import --format claude-code|codex`: coding agents' session files as they are on disk
(fabricated sessions in the agents' own record shapes, tests/support/agent_sessions.py): dated by
their own times, named by their own ids, tools summarised, thinking and compaction summaries left
out, sub-agents threaded under the call that started them, a malformed line skipped with its
number, secrets redacted, facts flushed, idempotent, listed and continued as sessions."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.transfer.agentlog import (
    BadLine,
    command_line,
    outcome,
    read_jsonl,
    target_of,
)

from ..support import agent_sessions as fx
from ..support.agent_sessions import DAY1, DAY2, local_day


def by_ref(transcript: Any) -> dict[str, Any]:
    return {m.turn.origin.ref: m for m in transcript.messages if m.turn.origin is not None}


@pytest.fixture
def claude(tmp_path: Path) -> dict[str, Any]:
    return fx.claude_code_project(tmp_path / "home")


@pytest.fixture
def codex(tmp_path: Path) -> dict[str, Any]:
    return fx.codex_sessions(tmp_path / "home")


# -- Claude Code ------------------------------------------------------------------------------


def test_claude_code_session_becomes_a_dated_threaded_transcript(
    vault_dir: Path, claude: dict[str, Any], run_cli: Any
) -> None:
    result = run_cli(
        "--vault", str(vault_dir), "import", str(claude["folder"]), "--format", "claude-code"
    )
    assert result.exit_code == 0, result.stderr
    assert "1 conversations (claude-code)" in result.stdout
    # the malformed line is named with its number, and the rest of the session is there
    assert f"{claude['main'].name} line {claude['malformed_line']}: not JSON" in result.stderr
    vault = Vault(vault_dir)
    found = vault.transcript(claude["session"])
    assert found.path == f"sessions/{local_day(DAY1)}-{claude['session']}.md"
    assert found.title == "Billing-Migration nach PostgreSQL"
    text = (vault_dir / found.path).read_text(encoding="utf-8")
    # thinking, the compaction summary and Claude Code's own command messages are left out
    for absent in (
        "SECRET-PLAN",
        "COMPACTED-TEXT",
        "<command-name>",
        fx.SECRET,
        fx.READ_OUTPUT_LINE,
    ):
        assert absent not in text
    assert "[REDACTED:openai-key]" in text
    assert "テストは全部通りました" in text and "prüfe" in text
    roles = [(m.turn.role, m.turn.name) for m in found.messages]
    assert ("user", None) in roles
    refs = by_ref(found)
    records = {
        r["uuid"]: r for r in claude["records"].records if isinstance(r, dict) and "uuid" in r
    }
    # every message is dated by its own record
    for ref, stored in refs.items():
        stamp = records.get(ref.split("#")[0], {}).get("timestamp")
        if stamp:
            expected = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone()
            assert stored.at == expected.replace(tzinfo=None).isoformat(timespec="seconds")


def test_claude_code_tools_are_summarised_not_dumped(
    vault_dir: Path, claude: dict[str, Any]
) -> None:
    vault = Vault(vault_dir)
    vault.import_history(claude["folder"], format="claude-code")
    found = vault.transcript(claude["session"])
    calls = {c.name: json.loads(c.arguments) for m in found.messages for c in m.turn.tool_calls}
    assert calls["Read"] == {"target": "db/migrations/0042_ledger.sql"}  # relative to the cwd
    assert calls["Bash"] == {"target": "pytest -q tests/test_ledger.py"}
    assert calls["Grep"] == {"target": "round( in ledger"}
    results = {m.turn.name: m.turn.text for m in found.messages if m.turn.role == "tool"}
    assert results["Read"] == "ok · 2 lines"
    assert results["Bash"] == "exit 1: FAILED tests/test_ledger.py::test_rounding - AssertionError"


def test_claude_code_subagent_is_threaded_under_its_task_call(
    vault_dir: Path, claude: dict[str, Any]
) -> None:
    vault = Vault(vault_dir)
    vault.import_history(claude["folder"], format="claude-code")
    found = vault.transcript(claude["session"])
    ids = {m.id: m for m in found.messages}
    task_call = next(m for m in found.messages if any(c.name == "Task" for c in m.turn.tool_calls))
    task = next(m for m in found.messages if m.turn.text == fx.TASK_PROMPT)
    # the task is what the main agent handed its sub-agent: not a user's message
    assert (task.turn.role, task.turn.name) == ("assistant", "task")
    assert task.parent == task_call.id
    sub = [
        m
        for m in found.messages
        if m.turn.name == "subagent"
        or (
            m.turn.role == "tool" and m.parent is not None and ids[m.parent].turn.name == "subagent"
        )
    ]
    assert sub and all(m.parent is not None for m in sub)
    reply = next(m for m in found.messages if m.turn.text.startswith("Found round_half_even"))
    chain = [reply.id]
    while ids[chain[-1]].parent is not None:
        chain.append(ids[chain[-1]].parent)
    assert task.id in chain and task_call.id in chain
    # the main thread goes on from the task's result, not from the sub-agent's last message
    result = next(m for m in found.messages if m.turn.tool_call_id == "toolu_task")
    assert result.parent == task_call.id
    # after the compaction the conversation continues from the message before it
    after = next(m for m in found.messages if m.turn.text.startswith("テスト"))
    assert ids[after.parent].turn.text == "Verstanden: kleine Commits."
    # the sub-agent's words are not flushed as facts
    logs = "".join(p.read_text(encoding="utf-8") for p in (vault_dir / "memory").glob("*.md"))
    assert "round_half_even" not in logs and "Locate" not in logs


def test_claude_code_facts_go_to_the_days_they_were_said(
    vault_dir: Path, claude: dict[str, Any], run_cli: Any
) -> None:
    Vault(vault_dir).import_history(claude["folder"], format="claude-code")
    first = (vault_dir / "memory" / f"{local_day(DAY1)}.md").read_text(encoding="utf-8")
    second = (vault_dir / "memory" / f"{local_day(DAY2)}.md").read_text(encoding="utf-8")
    heading = f"· flush · session {claude['session']} · Billing-Migration nach PostgreSQL"
    assert heading in first and heading in second
    assert "PostgreSQL 16" in first and "#decision" in first
    assert "I prefer small commits" in first and "#preference" in first
    assert fx.SECRET not in first
    assert "MySQL read replicas until April. #decision" in second
    listed = run_cli("--vault", str(vault_dir), "sessions", "--json")
    assert claude["session"] in [s["id"] for s in json.loads(listed.stdout)]
    resumed = run_cli(
        "--vault", str(vault_dir), "sessions", "continue", claude["session"], "--json"
    )
    assert resumed.exit_code == 0, resumed.stderr
    messages = json.loads(resumed.stdout)["messages"]
    assert messages[-1]["content"] == "Noted: the read replicas stay until April."


def test_claude_code_import_again_and_a_growing_session_add_only_what_is_new(
    vault_dir: Path, claude: dict[str, Any], tree_state: Any
) -> None:
    vault = Vault(vault_dir)
    first = vault.import_history(claude["folder"], format="claude-code")
    assert first.imported == 1 and first.entries == 4
    before = tree_state(vault_dir / "sessions"), tree_state(vault_dir / "memory")
    again = vault.import_history(claude["folder"], format="claude-code")
    assert (again.entries, again.unchanged) == (0, 1)
    assert (tree_state(vault_dir / "sessions"), tree_state(vault_dir / "memory")) == before
    # the session goes on (and its sub-agent wrote one more line meanwhile): only those land
    records = claude["records"]
    records.user("Ok, weiter: bitte auch die Tests für money.py.", DAY2 + dt.timedelta(minutes=5))
    fx.write_jsonl(claude["main"], records.records)
    with claude["agent"].open("a", encoding="utf-8") as fh:
        line = {
            "type": "assistant",
            "uuid": "late-1",
            "parentUuid": "a1b2c3d-0004-0a6afc57",
            "isSidechain": True,
            "sessionId": fx.CC_SESSION,
            "agentId": fx.CC_AGENT,
            "timestamp": fx.stamp(DAY1 + dt.timedelta(minutes=5, seconds=30)),
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        }
        fh.write(json.dumps(line) + "\n")
    held = len(vault.transcript(claude["session"]).messages)
    vault.import_history(claude["folder"], format="claude-code")
    found = vault.transcript(claude["session"])
    assert len(found.messages) == held + 2
    late = next(m for m in found.messages if m.turn.text == "Done.")
    assert {m.id: m for m in found.messages}[late.parent].turn.text.startswith("Found round")
    refs = [m.turn.origin.ref for m in found.messages if m.turn.origin is not None]
    assert len(refs) == len(set(refs)) == len(found.messages)  # each record once


def test_a_subagent_file_given_alone_imports_its_session(
    vault_dir: Path, claude: dict[str, Any]
) -> None:
    vault = Vault(vault_dir)
    report = vault.import_history(claude["agent"])  # auto: a Claude Code file
    assert report.formats == ["claude-code"] and report.imported == 1
    assert any(m.turn.name == "task" for m in vault.transcript(claude["session"]).messages)


def test_an_early_session_with_inline_sidechain_threads_it_by_its_prompt(
    vault_dir: Path, tmp_path: Path
) -> None:
    path = fx.claude_code_inline_sidechain(tmp_path / "home")
    vault = Vault(vault_dir)
    vault.import_history(path, format="claude-code")
    found = vault.transcript("last")
    call = next(m for m in found.messages if m.turn.tool_calls)
    task = next(m for m in found.messages if m.turn.text == "Locate the PDF renderer.")
    assert (task.turn.role, task.turn.name, task.parent) == ("assistant", "task", call.id)


def test_auto_reads_a_claude_code_file_as_one(vault_dir: Path, claude: dict[str, Any]) -> None:
    """Read as OpenAI-style JSONL it was dated today, named by a hash and lost to one bad
    line; as what it is, none of that."""
    report = Vault(vault_dir).import_history(claude["main"])
    assert report.formats == ["claude-code"]
    assert report.bad_lines == [
        f"{claude['main'].name} line {claude['malformed_line']}: not JSON "
        "(Invalid control character at, column 82)"
    ]
    assert (vault_dir / "sessions" / f"{local_day(DAY1)}-{claude['session']}.md").is_file()


def test_dry_run_writes_nothing(vault_dir: Path, claude: dict[str, Any], tree_state: Any) -> None:
    before = tree_state(vault_dir)
    report = Vault(vault_dir).import_history(claude["folder"], format="claude-code", dry_run=True)
    assert report.entries == 4
    assert tree_state(vault_dir) == before


def test_a_folder_without_sessions_is_one_clear_error(
    vault_dir: Path, tmp_path: Path, run_cli: Any
) -> None:
    from ..cli.test_cli_basic import error_of

    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli("--vault", str(vault_dir), "import", str(empty), "--format", "codex")
    assert "holds no codex session" in error_of(result)


# -- Codex --------------------------------------------------------------------------------------


def test_codex_rollouts_become_transcripts(vault_dir: Path, codex: dict[str, Any]) -> None:
    vault = Vault(vault_dir)
    report = vault.import_history(codex["folder"], format="codex")
    assert report.conversations == 2  # the sub-agent's rollout goes with its parent's
    assert report.bad_lines == [
        f"{codex['main'].name} line {codex['malformed_line']}: not JSON "
        "(Invalid control character at, column 89)"
    ]
    found = vault.transcript(codex["session"])
    assert found.path == f"sessions/{local_day(DAY1)}-{codex['session']}.md"
    text = (vault_dir / found.path).read_text(encoding="utf-8")
    for absent in (
        "SECRET-REASONING",
        "COMPACTED-SUMMARY",
        "<environment_context>",
        "AGENTS.md",
        "permissions instructions",
        "src/report.py:3",
    ):
        assert absent not in text
    users = [m.turn.text for m in found.messages if m.turn.role == "user"]
    assert users == [
        "Please add a CSV export. Wir bevorzugen Semikolon als Trennzeichen.",
        "We decided to ship the CSV export on Friday. 出荷は金曜日です。",
    ]  # each once: the events that repeat them are not read
    calls = {
        c.name: json.loads(c.arguments)["target"] for m in found.messages for c in m.turn.tool_calls
    }
    assert calls == {
        "shell": "rg -n export src",
        "apply_patch": "src/export_csv.py",
        "exec_command": "pytest -q tests/test_export.py",
    }
    results = {m.turn.name: m.turn.text for m in found.messages if m.turn.role == "tool"}
    assert results["shell"] == "ok · 2 lines"
    assert results["exec_command"] == "exit 1: FAILED tests/transfer/test_export.py::test_semicolon"
    # the sub-agent's messages hang under the parent's last message before it started
    ids = {m.id: m for m in found.messages}
    task = next(m for m in found.messages if m.turn.name == "task")
    assert task.turn.text == "Check the CSV quoting rules." and task.turn.role == "assistant"
    assert ids[task.parent].turn.tool_call_id == "call_patch"
    second = (vault_dir / "memory" / f"{local_day(DAY2)}.md").read_text(encoding="utf-8")
    assert f"session {codex['session']}" in second and "ship the CSV export on Friday" in second
    legacy = vault.transcript(codex["legacy_session"])
    assert legacy.path.startswith("sessions/2025-05-0")
    assert [m.turn.role for m in legacy.messages] == ["user", "assistant", "tool", "assistant"]
    again = vault.import_history(codex["folder"], format="codex")
    assert (again.entries, again.imported, again.unchanged) == (0, 0, 2)


def test_several_sources_in_one_import(
    vault_dir: Path, claude: dict[str, Any], codex: dict[str, Any], run_cli: Any
) -> None:
    result = run_cli(
        "--vault", str(vault_dir), "import", str(claude["main"]), str(codex["main"]), "--json"
    )
    report = json.loads(result.stdout)
    assert report["formats"] == ["claude-code", "codex"]
    assert len(report["bad_lines"]) == 2


# -- the pieces -------------------------------------------------------------------------------


def test_jsonl_lines_are_read_within_bounds(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b'{"a": 1}\n' + b"x" * 5000 + b"\n\n" + b"[" * 100_000 + b"\n" + b'\xff{"a"\n{"b": 2}'
    )
    found = list(read_jsonl(path, max_line_bytes=1000))
    assert found[0] == (1, {"a": 1})
    assert found[1] == (2, BadLine("longer than the limit of 1,000 bytes"))
    assert found[2][0] == 4 and isinstance(found[2][1], BadLine)  # too deep, never a crash
    assert found[3][0] == 5 and isinstance(found[3][1], BadLine)  # not UTF-8
    assert found[4] == (6, {"b": 2})  # the last line needs no newline


def test_tools_in_a_few_words() -> None:
    assert target_of({"file_path": "/w/p/src/a.py"}, "/w/p") == "src/a.py"
    assert target_of({"command": "ls -la\nrm -rf /", "description": "x"}) == "ls -la"
    assert target_of('{"cmd": "make test"}') == "make test"
    assert target_of({"url": "https://example.org/a"}) == "https://example.org/a"
    assert target_of("not json") == "not json"
    assert command_line(["bash", "-lc", "pytest -q"]) == "pytest -q"
    assert command_line(["git", "status"]) == "git status"
    assert outcome("") == "ok"
    assert outcome("a\nb\n\nc") == "ok · 3 lines"
    assert outcome("No such file\nmore", error=True) == "error: No such file"
    assert outcome("Exit code 2\nboom") == "exit 2: boom"
    assert outcome("Exit code: 0\nWall time: 1 s\nOutput:\none\ntwo") == "ok · 2 lines"
    assert outcome("boom", exit_code=3) == "exit 3: boom"


# -- following sessions as they are written ---------------------------------------------------


def test_due_waits_for_a_quiet_session() -> None:
    from vault_memory.transfer.agentlog import SessionFiles
    from vault_memory.transfer.follow import Seen, due

    a, b = SessionFiles(Path("a.jsonl")), SessionFiles(Path("b.jsonl"), (Path("b/agent.jsonl"),))
    seen = {
        Path("a.jsonl"): Seen((10, 1), since=0.0),
        Path("b.jsonl"): Seen((10, 1), since=0.0, imported=(10, 1)),
        Path("b/agent.jsonl"): Seen((5, 2), since=9.0, imported=(4, 1)),
    }
    assert due([a, b], seen, now=10.0, quiet=2.0) == [a]  # b's sub-agent is still writing
    assert due([a, b], seen, now=11.0, quiet=2.0) == [a, b]
    seen[Path("a.jsonl")].imported = (10, 1)
    assert due([a, b], seen, now=11.0, quiet=2.0) == [b]


def test_a_follower_imports_a_session_in_pieces_as_it_is_written(
    vault_dir: Path, claude: dict[str, Any]
) -> None:
    from vault_memory.transfer import SessionFollower

    vault = Vault(vault_dir)
    now = [100.0]
    follower = SessionFollower(
        vault.layout, claude["folder"], "claude-code", vault._recorder, 2.0, lambda: now[0]
    )
    assert follower.poll() is None  # just seen: not quiet yet
    now[0] += 2.5
    first = follower.poll()
    assert first is not None and first.imported == 1
    held = len(vault.transcript(claude["session"]).messages)
    now[0] += 5
    assert follower.poll() is None  # nothing changed
    records = claude["records"]
    records.user("Und jetzt die Doku, bitte.", DAY2 + dt.timedelta(minutes=9))
    fx.write_jsonl(claude["main"], records.records)
    assert follower.poll() is None  # it just changed: the agent may still be writing
    now[0] += 2.5
    second = follower.poll()
    assert second is not None and second.imported == 1
    found = vault.transcript(claude["session"])
    assert len(found.messages) == held + 1
    assert found.messages[-1].turn.text == "Und jetzt die Doku, bitte."


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_import_follow_runs_until_interrupted(
    vault_dir: Path, claude: dict[str, Any], signame: str
) -> None:
    """Ctrl-C (or a service manager's SIGTERM) stops following cleanly, even when it comes
    while an import is being written (the signal is sent as soon as the transcript shows)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vault_memory",
            "--vault",
            str(vault_dir),
            "import",
            str(claude["folder"]),
            "--follow",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    transcript = vault_dir / "sessions" / f"{local_day(DAY1)}-{claude['session']}.md"
    deadline = time.monotonic() + 300  # generous: a loaded machine starts Python slowly
    imported = False
    try:
        while not imported and process.poll() is None and time.monotonic() < deadline:
            imported = transcript.is_file() and "read replicas" in transcript.read_text("utf-8")
            time.sleep(0.05)
    finally:
        process.send_signal(getattr(signal, signame))
        stdout, stderr = process.communicate(timeout=120)
    assert imported, (process.returncode, stdout, stderr)
    assert process.returncode == 0, stderr
    assert "following" in stderr.decode() and "stopped" in stderr.decode()
    assert "Traceback" not in stderr.decode()


def test_follow_is_refused_clearly(vault_dir: Path, tmp_path: Path, run_cli: Any) -> None:
    from ..cli.test_cli_basic import error_of

    usage = run_cli("--vault", str(vault_dir), "import", str(tmp_path), str(tmp_path), "--follow")
    assert usage.exit_code == 2 and "--follow takes one file or folder" in usage.stderr
    plain = tmp_path / "notes"
    plain.mkdir()
    (plain / "chat.json").write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    result = run_cli("--vault", str(vault_dir), "import", str(plain), "--follow")
    assert "holds no Claude Code or Codex sessions to follow" in error_of(result)
