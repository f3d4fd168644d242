"""Fabricated coding-agent session files, written as the agents write them on disk (the record
shapes of Claude Code's `~/.claude/projects/<project>/<session>.jsonl` and of the Codex CLI's
`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`, as their public descriptions give them). The
content is made up. Each session holds tool calls and results, thinking, a sub-agent, a
compaction summary, one malformed line and text in several scripts.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

# 2026-03-10 12:00 UTC (day one) and the day after it
DAY1 = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC)
DAY2 = DAY1 + dt.timedelta(days=1)

CC_SESSION = "0a6afc57-2f31-4cb4-8ff0-01247f50c64c"
CC_AGENT = "a1b2c3d"
CWD = "/home/ines/billing"
PROJECT = "-home-ines-billing"
SECRET = "sk-proj-Xk4P9vQ2mR7tL1wZ8yN3bC6dF0gH5jK2sA9eU4iO7pT1qW6r"
READ_OUTPUT_LINE = "CREATE TABLE ledger_entries (id bigserial PRIMARY KEY, amount_cents bigint);"
TASK_PROMPT = "Find where ledger amounts are rounded and report the function and its file."
MALFORMED = '{"type":"assistant","uuid":"broken","message":{"role":"assistant","content":[{"ty'


def stamp(at: dt.datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def local_day(at: dt.datetime) -> str:
    """The local day of an instant, as the importer reads it (the test runs in any zone)."""
    return at.astimezone().date().isoformat()


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    """Each element a line: a record (as JSON) or a string written as it is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(
        (line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
        for line in lines
    )
    path.write_text(text, encoding="utf-8")
    return path


# -- Claude Code ----------------------------------------------------------------------------


class ClaudeSession:
    """Records of one Claude Code session, chained by parentUuid as Claude Code chains them."""

    def __init__(self, session: str = CC_SESSION, sidechain: bool = False, agent: str = ""):
        self.session = session
        self.sidechain = sidechain
        self.agent = agent
        self.records: list[Any] = []
        self.last: str | None = None
        self.count = 0

    def _base(self, kind: str, at: dt.datetime, parent: str | None = "last") -> dict[str, Any]:
        self.count += 1
        uuid = f"{self.agent or 'm'}-{self.count:04d}-{self.session[:8]}"
        record: dict[str, Any] = {
            "parentUuid": self.last if parent == "last" else parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": CWD,
            "sessionId": self.session,
            "version": "2.1.45",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": stamp(at),
        }
        if self.agent:
            record["agentId"] = self.agent
        self.last = uuid
        return record

    def user(self, text: Any, at: dt.datetime, **extra: Any) -> dict[str, Any]:
        parent = extra.pop("parent", "last")
        record = self._base("user", at, parent)
        record["message"] = {"role": "user", "content": text}
        record.update(extra)
        self.records.append(record)
        return record

    def assistant(self, block: dict[str, Any], at: dt.datetime) -> dict[str, Any]:
        record = self._base("assistant", at)
        record["requestId"] = f"req_{self.count:04d}"
        record["message"] = {
            "model": "claude-opus-4-6",
            "id": f"msg_{self.count:04d}",
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 40},
        }
        self.records.append(record)
        return record

    def tool_use(self, ident: str, name: str, given: dict[str, Any], at: dt.datetime) -> Any:
        return self.assistant({"type": "tool_use", "id": ident, "name": name, "input": given}, at)

    def tool_result(
        self, ident: str, content: Any, at: dt.datetime, error: bool = False, **extra: Any
    ) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": ident, "content": content}
        if error:
            block["is_error"] = True
        return self.user([block], at, **extra)

    def raw(self, value: Any) -> None:
        self.records.append(value)


def claude_code_project(home: Path) -> dict[str, Any]:
    """`home/.claude/projects/-home-ines-billing/`: one session over two days with a
    sub-agent in its own file; returns what the tests look for."""
    t = DAY1
    minute = dt.timedelta(minutes=1)
    s = ClaudeSession()
    s.raw(
        {
            "type": "file-history-snapshot",
            "messageId": "snap-1",
            "snapshot": {"messageId": "snap-1", "trackedFileBackups": {}, "timestamp": stamp(t)},
            "isSnapshotUpdate": False,
        }
    )
    s.raw({"type": "summary", "summary": "Billing-Migration nach PostgreSQL", "leafUuid": "x"})
    s.user(
        "We decided to move billing-core to PostgreSQL 16 — die Entscheidung fiel am Montag. "
        "Bitte prüfe die Migrationen.",
        t,
        parent=None,
    )
    s.assistant(
        {"type": "thinking", "thinking": "SECRET-PLAN: look at migrations", "signature": "c2ln"},
        t + minute,
    )
    s.assistant({"type": "text", "text": "Ich schaue mir die Migrationen an."}, t + minute)
    s.tool_use(
        "toolu_read", "Read", {"file_path": f"{CWD}/db/migrations/0042_ledger.sql"}, t + minute
    )
    s.tool_result(
        "toolu_read",
        "\n".join(f"{n:>6}→{line}" for n, line in enumerate(["-- ledger", READ_OUTPUT_LINE], 1)),
        t + minute,
        toolUseResult={"type": "text", "file": {"filePath": "x", "numLines": 2}},
    )
    s.tool_use(
        "toolu_bash",
        "Bash",
        {"command": "pytest -q tests/test_ledger.py", "description": "Run the ledger tests"},
        t + 2 * minute,
    )
    s.tool_result(
        "toolu_bash",
        "Exit code 1\nFAILED tests/test_ledger.py::test_rounding - AssertionError",
        t + 2 * minute,
        error=True,
    )
    s.tool_use(
        "toolu_task",
        "Task",
        {"description": "Find rounding code", "prompt": TASK_PROMPT, "subagent_type": "Explore"},
        t + 3 * minute,
    )
    task_call = s.last
    s.raw(
        {
            "type": "progress",
            "parentUuid": task_call,
            "uuid": "progress-1",
            "sessionId": CC_SESSION,
            "timestamp": stamp(t + 3 * minute),
            "parentToolUseID": "toolu_task",
            "data": {"type": "agent_progress", "agentId": CC_AGENT, "prompt": TASK_PROMPT},
        }
    )
    s.last = task_call
    s.tool_result(
        "toolu_task",
        [{"type": "text", "text": "Rounding happens in ledger/money.py (round_half_even)."}],
        t + 6 * minute,
        toolUseResult={"status": "completed", "agentId": CC_AGENT, "totalToolUseCount": 1},
    )
    s.raw(MALFORMED)
    malformed_line = len(s.records)
    s.assistant(
        {"type": "text", "text": "Gerundet wird in ledger/money.py mit round_half_even."},
        t + 7 * minute,
    )
    s.user(
        [
            {"type": "text", "text": f"I prefer small commits with short messages. Key: {SECRET}"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
            },
        ],
        t + 8 * minute,
    )
    s.assistant({"type": "text", "text": "Verstanden: kleine Commits."}, t + 9 * minute)
    before_compaction = s.last
    s.user(
        "<command-name>/compact</command-name>\n<command-message>compact</command-message>",
        t + 10 * minute,
    )
    boundary = s._base("system", t + 11 * minute, parent=None)
    boundary.update(
        {
            "subtype": "compact_boundary",
            "logicalParentUuid": before_compaction,
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "manual"},
        }
    )
    s.records.append(boundary)
    s.user(
        "This session is being continued from a previous conversation. Summary: COMPACTED-TEXT",
        t + 11 * minute,
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    d = DAY2
    s.user("テストは全部通りました。 We decided to keep the MySQL read replicas until April.", d)
    s.assistant({"type": "text", "text": "Noted: the read replicas stay until April."}, d + minute)
    folder = home / ".claude" / "projects" / PROJECT
    main = write_jsonl(folder / f"{CC_SESSION}.jsonl", s.records)

    a = ClaudeSession(sidechain=True, agent=CC_AGENT)
    a.user(TASK_PROMPT, t + 3 * minute, parent=None)
    a.tool_use("toolu_grep", "Grep", {"pattern": "round(", "path": f"{CWD}/ledger"}, t + 4 * minute)
    a.tool_result("toolu_grep", "ledger/money.py:12: return round_half_even(x)", t + 4 * minute)
    a.assistant(
        {"type": "text", "text": "Found round_half_even in ledger/money.py line 12."},
        t + 5 * minute,
    )
    agent = write_jsonl(folder / CC_SESSION / "subagents" / f"agent-{CC_AGENT}.jsonl", a.records)
    return {
        "folder": folder,
        "main": main,
        "agent": agent,
        "session": f"claude-code-{CC_SESSION}",
        "malformed_line": malformed_line,
        "records": s,
    }


def claude_code_inline_sidechain(home: Path) -> Path:
    """An early-version session: the sub-agent's records in the session file, marked
    `isSidechain`, its first record with no parent."""
    session = "5e1f0c2a-9d8b-4c3e-a7f6-0b1c2d3e4f50"
    t = DAY1
    minute = dt.timedelta(minutes=1)
    s = ClaudeSession(session)
    s.user("Where is the invoice PDF rendered?", t, parent=None)
    s.tool_use("toolu_t", "Task", {"description": "find", "prompt": "Locate the PDF renderer."}, t)
    call = s.last
    side = ClaudeSession(session, sidechain=True, agent="")
    side.count = 100
    side.user("Locate the PDF renderer.", t + minute, parent=None)
    side.assistant({"type": "text", "text": "It is invoices/pdf.py."}, t + minute)
    s.records.extend(side.records)
    s.last = call
    s.tool_result("toolu_t", "invoices/pdf.py", t + 2 * minute)
    s.assistant({"type": "text", "text": "The PDF is rendered in invoices/pdf.py."}, t + 2 * minute)
    return write_jsonl(
        home / ".claude" / "projects" / "-home-ines-invoices" / f"{session}.jsonl", s.records
    )


# -- Codex ------------------------------------------------------------------------------------

CODEX_ID = "0199a213-81c0-7800-8aa1-bbab2a035a53"
CODEX_CHILD = "0199a215-0000-7000-8000-00000000c41d"
CODEX_LEGACY = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"


def _line(at: dt.datetime, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": stamp(at), "type": kind, "payload": payload}


def _message(role: str, text: str, kind: str | None = None) -> dict[str, Any]:
    part = kind or ("output_text" if role == "assistant" else "input_text")
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def rollout_path(home: Path, at: dt.datetime, ident: str) -> Path:
    folder = home / ".codex" / "sessions" / f"{at:%Y}" / f"{at:%m}" / f"{at:%d}"
    return folder / f"rollout-{at:%Y-%m-%dT%H-%M-%S}-{ident}.jsonl"


def codex_sessions(home: Path) -> dict[str, Any]:
    """`home/.codex/sessions/`: a rollout over two days, a sub-agent's rollout, and one
    rollout of the first (2025) format."""
    t = DAY1
    minute = dt.timedelta(minutes=1)
    meta = {
        "id": CODEX_ID,
        "timestamp": stamp(t),
        "cwd": "/home/ines/shop",
        "originator": "codex_cli_rs",
        "cli_version": "0.128.0",
        "source": "cli",
        "model_provider": "openai",
        "base_instructions": {"text": "You are Codex, a coding agent."},
        "git": {"branch": "main"},
    }
    shell = json.dumps(
        {"command": ["bash", "-lc", "rg -n export src"], "workdir": "/home/ines/shop"}
    )
    lines: list[Any] = [
        _line(t, "session_meta", meta),
        _line(
            t,
            "response_item",
            _message("developer", "<permissions instructions>sandbox</permissions instructions>"),
        ),
        _line(
            t,
            "response_item",
            _message(
                "user",
                "# AGENTS.md instructions for /home/ines/shop\n\n"
                "<INSTRUCTIONS>Use ruff.</INSTRUCTIONS>",
            ),
        ),
        _line(
            t,
            "response_item",
            _message(
                "user",
                "<environment_context>\n  <cwd>/home/ines/shop</cwd>\n</environment_context>",
            ),
        ),
        _line(
            t,
            "turn_context",
            {"cwd": "/home/ines/shop", "model": "gpt-5-codex", "approval_policy": "on-request"},
        ),
        _line(
            t,
            "response_item",
            _message("user", "Please add a CSV export. Wir bevorzugen Semikolon als Trennzeichen."),
        ),
        _line(
            t,
            "event_msg",
            {
                "type": "user_message",
                "message": "Please add a CSV export. Wir bevorzugen Semikolon als Trennzeichen.",
                "images": [],
            },
        ),
        _line(
            t + minute,
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "SECRET-REASONING"}],
                "encrypted_content": "gAAAA",
            },
        ),
        _line(
            t + minute,
            "response_item",
            {"type": "function_call", "name": "shell", "arguments": shell, "call_id": "call_rg"},
        ),
        _line(
            t + minute,
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_rg",
                "output": json.dumps(
                    {
                        "output": "src/report.py:3:def export():\n"
                        "src/report.py:9:    return rows\n",
                        "metadata": {"exit_code": 0, "duration_seconds": 0.1},
                    }
                ),
            },
        ),
        _line(
            t + 2 * minute,
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": "call_patch",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Add File: src/export_csv.py\n+import csv\n"
                "*** End Patch",
            },
        ),
        _line(
            t + 2 * minute,
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "call_patch",
                "output": "Success. Updated the following files:\nA src/export_csv.py\n",
            },
        ),
        '{"timestamp":"2026-03-10T12:03:00.000Z","type":"response_item","payload":{"type":"functi',
        _line(
            t + 3 * minute,
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "pytest -q tests/test_export.py"}),
                "call_id": "call_test",
            },
        ),
        _line(
            t + 3 * minute,
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_test",
                "output": "Exit code: 1\nWall time: 0.4 seconds\nOutput:\n"
                "FAILED tests/test_export.py::test_semicolon\n",
            },
        ),
        _line(
            t + 4 * minute,
            "response_item",
            _message("assistant", "Der CSV-Export ist da; ein Test schlägt noch fehl."),
        ),
        _line(
            t + 4 * minute,
            "event_msg",
            {
                "type": "agent_message",
                "message": "Der CSV-Export ist da; ein Test schlägt noch fehl.",
            },
        ),
        _line(t + 5 * minute, "compacted", {"message": "COMPACTED-SUMMARY of the export work"}),
        _line(
            DAY2,
            "response_item",
            _message("user", "We decided to ship the CSV export on Friday. 出荷は金曜日です。"),
        ),
        _line(DAY2 + minute, "response_item", _message("assistant", "Shipping on Friday, noted.")),
    ]
    main = write_jsonl(rollout_path(home, t, CODEX_ID), lines)
    malformed_line = next(i for i, line in enumerate(lines, 1) if isinstance(line, str))

    child_meta = dict(meta, id=CODEX_CHILD, timestamp=stamp(t + 2 * minute))
    child_meta["source"] = {
        "subagent": {
            "thread_spawn": {"parent_thread_id": CODEX_ID, "depth": 1, "agent_nickname": "Euler"}
        }
    }
    child = write_jsonl(
        rollout_path(home, t + 2 * minute, CODEX_CHILD),
        [
            _line(t + 2 * minute, "session_meta", child_meta),
            _line(
                t + 2 * minute, "response_item", _message("user", "Check the CSV quoting rules.")
            ),
            _line(
                t + 2 * minute,
                "response_item",
                _message("assistant", "Fields with ; must be quoted."),
            ),
        ],
    )
    legacy = write_jsonl(
        home
        / ".codex"
        / "sessions"
        / "2025"
        / "05"
        / "07"
        / f"rollout-2025-05-07T17-24-21-{CODEX_LEGACY}.jsonl",
        [
            {"id": CODEX_LEGACY, "timestamp": "2025-05-07T17:24:21.123Z", "instructions": None},
            {"record_type": "state"},
            _message("user", "Rename the logger to audit_log."),
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "rg -l logger"]}),
                "call_id": "call_1",
            },
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": json.dumps({"output": "app.py\n", "metadata": {"exit_code": 0}}),
            },
            _message("assistant", "Renamed in app.py."),
            {"record_type": "state"},
        ],
    )
    return {
        "folder": home / ".codex" / "sessions",
        "main": main,
        "child": child,
        "legacy": legacy,
        "session": f"codex-{CODEX_ID}",
        "legacy_session": f"codex-{CODEX_LEGACY}",
        "malformed_line": malformed_line,
    }
