"""What the coding-agent readers (claude_code.py, codex.py) share: a session's messages with
their ids and threads, JSONL read one line at a time within a bound, and tool calls and tool
results told in a few words (tool, target, outcome) instead of dumped.

A message keeps its id in the session file (`ref`) and the id of the message it answers
(`parent`), so the transcript threads it as the agent did, a sub-agent's messages under the
call that started them, and a session imported again (or while it is still being written)
adds only the messages the transcript does not hold yet (sessions/lineage.py).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .formats import Chat, ChatMessage, ChatProblem

#: Bytes one line of a session file may take: a line holds one record (a tool's whole output
#: at most, a few MB in real sessions); a longer one is reported and skipped.
MAX_LINE_BYTES = 32 << 20
TARGET_CHARS = 160  # of a tool call's target (a command's first line, a path, a query)
OUTCOME_CHARS = 200  # of a tool result's outcome (an error's first line)
SUBAGENT = "subagent"  # the name a sub-agent's messages go by in the transcript
TASK = "task"  # the name of the message that hands a sub-agent its task


@dataclass(frozen=True)
class AgentMessage(ChatMessage):
    """One message of a coding agent's session, as the transcript keeps it."""

    ref: str = ""  # its id in the session file
    parent: str | None = None  # the id of the message it answers (None: a thread's first)
    calls: tuple[tuple[str, str, str], ...] = ()  # (call id, tool, {"target": …} as JSON)
    call_id: str | None = None  # a tool result: the call it answers
    tool: str | None = None  # a tool result: the tool's name
    agent: str | None = None  # a sub-agent's message: who speaks (kept, never flushed)

    @property
    def flushed(self) -> bool:
        """A sub-agent's messages go to the transcript only: what the person said and the
        agent answered them is what facts are taken from."""
        return self.agent is None

    def as_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": self.role, "content": self.text}
        if self.agent is not None:
            message["name"] = self.agent
        if self.calls:
            message["tool_calls"] = [
                {"id": ident, "type": "function", "function": {"name": tool, "arguments": args}}
                for ident, tool, args in self.calls
            ]
        if self.role == "tool":
            message["tool_call_id"] = self.call_id or ""
            if self.tool:
                message["name"] = self.tool
        message["id"] = self.ref
        if self.parent is not None:
            message["parent_id"] = self.parent
        if self.at is not None:
            message["timestamp"] = self.at.isoformat()
        return message


@dataclass
class AgentChat(Chat):
    """A coding agent's session: recorded whole and threaded, its lines that cannot be read
    named (`bad_lines`), its sub-agents' messages under the calls that started them."""

    session: str = ""  # the session id in the vault: `claude-code-<its id>`, `codex-<its id>`
    bad_lines: list[str] = field(default_factory=list)  # "session.jsonl line 7: not JSON (…)"


def session_name(source: str, ident: str) -> str:
    """`claude-code-0a6afc57-2f31-…`: the session's own id (letters, digits and dashes kept),
    so that `vault sessions continue` takes the id the agent shows."""
    compact = re.sub(r"[^A-Za-z0-9-]", "", ident).strip("-")[: 63 - len(source)]
    return f"{source}-{compact or 'session'}"


# -- reading JSONL ------------------------------------------------------------------------


def read_jsonl(path: Path, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line, or (line number, `BadLine`) for a line
    that is not JSON, is nested too deep or is longer than `max_line_bytes` (its bytes are
    skipped, never held). The file is read one line at a time."""
    with path.open("rb") as fh:
        number = 0
        while True:
            line = fh.readline(max_line_bytes + 1)
            if not line:
                return
            number += 1
            if len(line) > max_line_bytes and not line.endswith(b"\n"):
                while (rest := fh.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                yield number, BadLine(f"longer than the limit of {max_line_bytes:,} bytes")
                continue
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except RecursionError:
                yield number, BadLine("nested too deep")
            except json.JSONDecodeError as exc:
                yield number, BadLine(f"not JSON ({exc.msg}, column {exc.colno})")
            except ValueError as exc:  # not UTF-8
                yield number, BadLine(f"not JSON ({str(exc)[:120]})")


@dataclass(frozen=True)
class BadLine:
    """Why a line of a session file is skipped."""

    reason: str


# -- tools in a few words ------------------------------------------------------------------


def short(text: str, limit: int) -> str:
    """The first non-blank line of `text`, at most `limit` characters."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def relative(path: str, cwd: str | None) -> str:
    """A path inside the working folder, relative to it (shorter, and no home folder)."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


_TARGET_KEYS = (
    "file_path",
    "notebook_path",
    "command",
    "cmd",
    "pattern",
    "url",
    "query",
    "path",
    "description",
    "subagent_type",
    "prompt",
)


def target_of(arguments: Any, cwd: str | None = None) -> str:
    """What a tool call acts on, in one short line: the file, the command, the pattern, the
    address or the query of its arguments (the first of those it has)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return short(arguments, TARGET_CHARS)
    if not isinstance(arguments, dict):
        return ""
    for key in _TARGET_KEYS:
        value = arguments.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = command_line(value)
        if isinstance(value, str) and value.strip():
            if key in ("file_path", "notebook_path", "path"):
                value = relative(value, cwd)
            found = short(value, TARGET_CHARS)
            where = arguments.get("path")
            if key == "pattern" and isinstance(where, str) and where.strip():
                found += f" in {relative(where, cwd)}"
            return found
    return ""


def command_line(argv: list[str]) -> str:
    """`["bash", "-lc", "pytest -q"]` as `pytest -q`; other argument lists joined."""
    if (
        len(argv) == 3
        and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
        and argv[1]
        in (
            "-c",
            "-lc",
        )
    ):
        return argv[2]
    return " ".join(argv)


def call_arguments(target: str) -> str:
    """A summarised call's arguments, as the transcript keeps them."""
    return json.dumps({"target": target} if target else {}, ensure_ascii=False)


_EXIT = re.compile(r"\A\s*(?:Exit code:?|Process exited with code)\s*(-?\d+)[^\n]*\n?")


def outcome(text: str, error: bool = False, exit_code: int | None = None) -> str:
    """A tool result in a few words: `ok`, `ok · 120 lines`, `error: …`, `exit 1: …` (an
    output that opens with its exit code, as shells report it, gives that code)."""
    stated = _EXIT.match(text)
    if stated and exit_code is None:
        exit_code, text = int(stated[1]), text[stated.end() :]
        text = text.split("Output:", 1)[1] if text.lstrip().startswith("Wall time") else text
    if exit_code not in (None, 0):
        first = short(text, OUTCOME_CHARS)
        return f"exit {exit_code}: {first}" if first else f"exit {exit_code}"
    if error:
        first = short(text, OUTCOME_CHARS)
        return f"error: {first}" if first else "error"
    lines = sum(1 for line in text.splitlines() if line.strip())
    return f"ok · {lines} lines" if lines > 1 else "ok"


def text_of(content: Any) -> str:
    """The text of a tool result's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text") or "")
            for block in content
            if isinstance(block, dict) and block.get("type") in ("text", "input_text", None)
        )
    return ""


# -- a session being read ------------------------------------------------------------------


@dataclass(frozen=True)
class SessionFiles:
    """The files of one session: its own, and those of its sub-agents."""

    main: Path
    parts: tuple[Path, ...] = ()

    @property
    def name(self) -> str:
        return self.main.name


@dataclass
class Reading:
    """What has been read of a session so far."""

    messages: list[AgentMessage] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # "session.jsonl line 9: an image"
    bad_lines: list[str] = field(default_factory=list)

    def leave_out(self, where: str, what: str) -> None:
        self.left_out.append(f"{where}: {what}")

    def bad(self, where: str, reason: str) -> None:
        self.bad_lines.append(f"{where}: {reason}")

    def chat(
        self, source: str, number: int, ident: str, title: str | None
    ) -> AgentChat | ChatProblem:
        """The session as the importer takes it, its messages in the order they were written
        (a message without a time keeps its place after the one before it)."""
        if not any(m.role in ("user", "assistant") and m.text.strip() for m in self.messages):
            lines = f" ({len(self.bad_lines)} lines could not be read)" if self.bad_lines else ""
            return ChatProblem(f"session {ident}: it holds no messages{lines}")
        ordered = in_time_order(self.messages)
        return AgentChat(
            source,
            number,
            ident,
            clean_title(title),
            ordered[0].at,
            list(ordered),
            left_out=self.left_out,
            session=session_name(source, ident),
            bad_lines=self.bad_lines,
        )


def in_time_order(messages: list[AgentMessage]) -> list[AgentMessage]:
    last: dt.datetime | None = None
    keyed = []
    for index, message in enumerate(messages):
        last = message.at or last
        keyed.append(((last or dt.datetime.min), index, message))
    return [m for _, _, m in sorted(keyed, key=lambda k: (k[0], k[1]))]


def clean_title(title: str | None) -> str | None:
    """A session's own title (a summary the agent wrote), without secrets."""
    if not title or not title.strip():
        return None
    from ..capture import redact_text

    return str(redact_text(" ".join(title.split())))


def anchor_for(messages: list[AgentMessage], at: dt.datetime | None) -> str | None:
    """The message a sub-agent whose start is not linked to a call continues: the session's
    last message (not a sub-agent's) written at or before `at`."""
    candidates = [m for m in messages if m.agent is None]
    if at is not None:
        candidates = [m for m in candidates if m.at is None or m.at <= at]
    return candidates[-1].ref if candidates else None
