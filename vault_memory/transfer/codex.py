"""OpenAI Codex CLI sessions as they are on disk: `~/.codex/sessions/YYYY/MM/DD/
rollout-<time>-<id>.jsonl`, one JSON line each: `{"timestamp", "type", "payload"}` where type
is `session_meta` (the first line: the session's `id`, `timestamp`, `cwd`, and for a
sub-agent its parent's `source.subagent.thread_spawn.parent_thread_id`), `response_item`
(what the model saw and said: messages, reasoning, function calls and their output),
`event_msg` (what the terminal showed, mostly repeating the response items),
`turn_context` and `compacted`. Rollouts of the first versions (2025) hold a first line with
the session's `id` and `timestamp`, then bare response items.

The response items are read: user and assistant messages (the context Codex adds to the
user's turn, `<environment_context>`, `<user_instructions>`, AGENTS.md instructions and the
like, is left out), tool calls (`function_call`, `custom_tool_call` such as apply_patch,
`local_shell_call`, `web_search_call`) in a few words, and their output's outcome (an exit
code, an error, a number of lines). Reasoning and compaction summaries are left out. When a
rollout holds no user message as a response item, its `user_message` / `agent_message`
events are read instead. A line has no id of its own, so a message is known by its rollout
and line (rollouts are only appended to); each continues the one before it.

A sub-agent's rollout given with its parent's (a folder holding both) is threaded into the
parent's transcript, under the parent's last message written before the sub-agent started.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .agentlog import (
    SUBAGENT,
    TASK,
    AgentChat,
    AgentMessage,
    BadLine,
    Reading,
    SessionFiles,
    anchor_for,
    call_arguments,
    command_line,
    outcome,
    read_jsonl,
    short,
    target_of,
    text_of,
)
from .formats import ChatProblem, _local

FORMAT = "codex"
ROLLOUT_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
#: How the context Codex puts into the user's turn opens (not the person's words).
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<context_update>",
    "<user_shell_command>",
    "<skill>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
)
_PATCHED = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)


@dataclass
class _Rollout(Reading):
    ident: str | None = None
    parent_thread: str | None = None
    at: Any = None  # the time of the latest line that has one (the first versions: few do)
    cwd: str | None = None
    tools: dict[str, str] = field(default_factory=dict)  # call id -> tool
    events: list[tuple[int, AgentMessage]] = field(default_factory=list)  # (line, message)
    lines: list[int] = field(default_factory=list)  # the line of each message


def session_meta(path: Path) -> dict[str, Any]:
    """The first line's session facts: {"id", "parent"} (what a folder is grouped by)."""
    try:
        for _, value in read_jsonl(path):
            if isinstance(value, dict):
                return _meta_of(value) or {}
            break
    except OSError:
        pass
    return {}


def _meta_of(line: dict[str, Any]) -> dict[str, Any] | None:
    payload = line.get("payload") if line.get("type") == "session_meta" else None
    if payload is None and "type" not in line and "id" in line and "timestamp" in line:
        payload = line  # the first versions: the session's facts on the first line
    if not isinstance(payload, dict) or not isinstance(payload.get("id"), str):
        return None
    source = payload.get("source")
    spawn = None
    if isinstance(source, dict) and isinstance(source.get("subagent"), dict):
        spawn = source["subagent"].get("thread_spawn")
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return {
        "id": payload["id"],
        "parent": parent if isinstance(parent, str) else None,
        "cwd": payload.get("cwd") if isinstance(payload.get("cwd"), str) else None,
        "at": _local(payload.get("timestamp") or line.get("timestamp")),
    }


def session_files(path: Path) -> list[SessionFiles]:
    """The rollouts under `path` (a rollout or a folder such as `~/.codex/sessions`), each
    with the rollouts of the sub-agents it spawned that the folder holds."""
    if path.is_file():
        return [SessionFiles(path)]
    found = sorted(p for p in path.rglob("rollout-*.jsonl") if p.is_file())
    if not found:
        found = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
    metas = {p: session_meta(p) for p in found}
    by_id = {meta["id"]: p for p, meta in metas.items() if meta.get("id")}
    children: dict[Path, list[Path]] = {}
    for rollout, meta in metas.items():
        parent = by_id.get(meta.get("parent") or "")
        if parent is not None and parent != rollout:
            children.setdefault(parent, []).append(rollout)
    owned = {child for kids in children.values() for child in kids}
    return [SessionFiles(p, tuple(children.get(p, []))) for p in found if p not in owned]


# -- reading --------------------------------------------------------------------------------


def read_session(files: SessionFiles, number: int) -> AgentChat | ChatProblem:
    """One rollout, with its sub-agents' rollouts threaded under it."""
    main = _Rollout()
    try:
        _read_rollout(files.main, main)
        for part in files.parts:
            child = _Rollout()
            _read_rollout(part, child)
            _adopt(main, child)
    except OSError as exc:
        return ChatProblem(f"{files.name}: it cannot be read ({exc.strerror or exc})")
    ident = main.ident or files.main.stem
    return main.chat(FORMAT, number, ident, None)


def _read_rollout(path: Path, rollout: _Rollout) -> None:
    tag = path.stem[-12:]  # a line has no id: the rollout (its id's end) and the line name it
    for number, value in read_jsonl(path):
        where = f"{path.name} line {number}"
        if isinstance(value, BadLine):
            rollout.bad(where, value.reason)
            continue
        if not isinstance(value, dict):
            rollout.bad(where, "not a JSON object")
            continue
        meta = _meta_of(value) if rollout.ident is None else None
        if meta is not None:
            rollout.ident, rollout.parent_thread = meta["id"], meta["parent"]
            rollout.cwd, rollout.at = meta["cwd"], meta["at"]
            continue
        kind, payload = value.get("type"), value.get("payload")
        at = rollout.at = _local(value.get("timestamp")) or rollout.at
        ref = f"{tag}:{number}"
        if kind in ROLLOUT_TYPES and isinstance(payload, dict):
            if kind == "response_item":
                _item(payload, at, ref, number, where, rollout)
            elif kind == "event_msg":
                _event(payload, at, ref, number, rollout)
            elif kind == "compacted":
                rollout.leave_out(where, "a compaction summary")
        elif isinstance(kind, str) and "payload" not in value:
            _item(value, at, ref, number, where, rollout)  # the first versions: bare items
        elif "record_type" not in value:
            rollout.bad(where, "not a Codex rollout line")
    _settle(rollout)


def _item(
    item: dict[str, Any], at: Any, ref: str, number: int, where: str, rollout: _Rollout
) -> None:
    kind = item.get("type")
    made: AgentMessage | None = None
    if kind == "message":
        made = _message(item, at, where, rollout)
    elif kind == "reasoning":
        rollout.leave_out(where, "the model's reasoning")
    elif kind in ("compaction", "compaction_summary"):
        rollout.leave_out(where, "a compaction summary")
    elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        made = _call(item, at, rollout)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = str(item.get("call_id") or "")
        tool = rollout.tools.get(call_id, "tool")
        made = AgentMessage("tool", _outcome(item.get("output")), at, call_id=call_id, tool=tool)
    if made is not None:
        rollout.messages.append(replace(made, ref=ref))
        rollout.lines.append(number)


def _message(item: dict[str, Any], at: Any, where: str, rollout: _Rollout) -> Any:
    role = item.get("role")
    if role not in ("user", "assistant"):
        return None  # developer and system messages: Codex's own instructions
    texts = []
    content = item.get("content")
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "input_image":
            rollout.leave_out(where, "an image")
    text = "\n".join(t for t in texts if t.strip())
    if not text.strip() or (role == "user" and text.lstrip().startswith(CONTEXT_PREFIXES)):
        return None
    return AgentMessage(str(role), text, at)


def _call(item: dict[str, Any], at: Any, rollout: _Rollout) -> AgentMessage:
    kind = item.get("type")
    call_id = str(item.get("call_id") or item.get("id") or "")
    given_action = item.get("action")
    action: dict[str, Any] = given_action if isinstance(given_action, dict) else {}
    if kind == "local_shell_call":
        tool, command = "shell", action.get("command")
        target = command_line(command) if isinstance(command, list) else ""
    elif kind == "web_search_call":
        tool, target = "web_search", str(action.get("query") or "")
    elif kind == "custom_tool_call":
        tool, given = str(item.get("name") or "tool"), str(item.get("input") or "")
        patched = _PATCHED.findall(given)
        target = ", ".join(p.strip() for p in patched) if patched else short(given, 160)
    else:
        tool = str(item.get("name") or "tool")
        target = target_of(item.get("arguments"), rollout.cwd)
    rollout.tools[call_id] = tool
    return AgentMessage("assistant", "", at, calls=((call_id, tool, call_arguments(target)),))


def _outcome(output: Any) -> str:
    """What a tool's output says: its exit code, whether it failed, how long it is."""
    success = None
    if isinstance(output, dict):
        success = output.get("success")
        output = output.get("content")
    text = text_of(output)
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            wrapped = json.loads(output)
        except (ValueError, RecursionError):
            wrapped = None
        if isinstance(wrapped, dict) and "output" in wrapped:
            text = str(wrapped.get("output") or "")
            metadata = wrapped.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return outcome(text, exit_code=code if isinstance(code, int) else None)
    return outcome(text, error=success is False)


def _event(payload: dict[str, Any], at: Any, ref: str, number: int, rollout: _Rollout) -> None:
    """`user_message` and `agent_message` events: read only when the rollout holds no user
    message as a response item (see `_settle`)."""
    role = {"user_message": "user", "agent_message": "assistant"}.get(str(payload.get("type")))
    text = payload.get("message")
    if not role or not isinstance(text, str) or not text.strip():
        return
    if not (role == "user" and text.lstrip().startswith(CONTEXT_PREFIXES)):
        rollout.events.append((number, AgentMessage(role, text, at, ref=ref)))


def _settle(rollout: _Rollout) -> None:
    """The events in place of the messages they repeat, when needed; then each message
    continues the one before it."""
    if rollout.events and not any(m.role == "user" for m in rollout.messages):
        kept = [(n, m) for n, m in zip(rollout.lines, rollout.messages, strict=True)]
        kept = [(n, m) for n, m in kept if not (m.role == "assistant" and not m.calls)]
        merged = sorted(kept + rollout.events, key=lambda pair: pair[0])
        rollout.messages = [m for _, m in merged]
    rollout.messages = [
        replace(m, parent=rollout.messages[i - 1].ref if i else None)
        for i, m in enumerate(rollout.messages)
    ]


def _adopt(main: _Rollout, child: _Rollout) -> None:
    """A sub-agent's messages into its parent's session, its first under the parent's last
    message written before it started; its opening message is the task it was handed."""
    if not child.messages:
        return
    first = child.messages[0]
    anchor = anchor_for(main.messages, first.at)
    for index, message in enumerate(child.messages):
        role = message.role
        agent = SUBAGENT
        if index == 0 and role == "user":
            role, agent = "assistant", TASK
        elif role == "user":
            role = "assistant"
        parent = anchor if index == 0 else message.parent
        main.messages.append(replace(message, role=role, agent=agent, parent=parent))
    main.left_out.extend(child.left_out)
    main.bad_lines.extend(child.bad_lines)


def first_line_is_codex(value: Any) -> bool:
    """Whether a JSONL file's first line is a Codex rollout's (for `--format auto`)."""
    if not isinstance(value, dict):
        return False
    if value.get("type") in ROLLOUT_TYPES and "payload" in value:
        return True
    return _meta_of(value) is not None and set(value) <= {"id", "timestamp", "instructions", "git"}
