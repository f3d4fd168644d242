"""Claude Code sessions as they are on disk: `~/.claude/projects/<project>/<session>.jsonl`,
one JSON record a line, and the files of its sub-agents (`<session>/subagents/agent-<id>.jsonl`,
or `agent-<id>.jsonl` beside it in older versions, or lines marked `isSidechain` in the
session file itself in the oldest).

A record (`type` user or assistant) has its own `uuid`, the `parentUuid` of the record it
answers, a `timestamp`, the `sessionId`, and a `message` in the Messages API's shape. An
assistant reply is written as several records, one per content block (text, thinking, a
tool call), chained by `parentUuid`; a tool's result comes back as a user record holding a
`tool_result` block. Each record becomes at most one or two messages of the transcript, keyed
by its uuid: records never change once written, so a session read again (or while Claude Code
is still writing it) adds only what is new.

Left out: thinking (the model's reasoning), the compaction summary (`isCompactSummary`: the
model's summary of what the file already holds), records Claude Code writes for itself
(`isMeta`, slash commands and their output, system reminders), API errors, images. Kept, in
a few words: tool calls (tool and target) and tool results (outcome). A sub-agent's messages
are threaded under the call that started it (its `agentId`, else its prompt, else its time).
Other record types (summary titles aside) are bookkeeping: file snapshots, progress, queue
operations.
"""

from __future__ import annotations

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
    outcome,
    read_jsonl,
    target_of,
    text_of,
)
from .formats import ChatProblem, _local

FORMAT = "claude-code"
#: How a message Claude Code writes for itself opens (slash commands, their output, `!cmd`).
COMMAND_TAGS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)
REMINDER = "<system-reminder>"
TASK_TOOLS = ("Task", "Agent")  # the tool that starts a sub-agent (renamed in later versions)
_BLOCKS_LEFT_OUT = {
    "thinking": "the model's reasoning",
    "redacted_thinking": "the model's reasoning",
    "image": "an image",
    "document": "a document",
}


@dataclass
class _Session(Reading):
    """Claude Code's records read so far: what each record became, or whom it answers."""

    alias: dict[str, str | None] = field(default_factory=dict)  # no message: its parent
    last_of: dict[str, str] = field(default_factory=dict)  # record -> its last message
    calls: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # id: tool, ref, prompt
    agent_calls: dict[str, str] = field(default_factory=dict)  # agentId -> the tool_use id
    summaries: dict[str, str] = field(default_factory=dict)  # leafUuid -> title
    title: str | None = None  # a title the person gave (/rename)
    session_id: str | None = None
    cwd: str | None = None

    def resolve(self, uuid: str | None) -> str | None:
        """The message a record answers: through records that became none; an id this
        session does not hold stays as it is (the transcript takes the message before)."""
        seen: set[str] = set()
        while uuid is not None and uuid not in self.last_of and uuid in self.alias:
            if uuid in seen:
                return None
            seen.add(uuid)
            uuid = self.alias[uuid]
        return self.last_of.get(uuid, uuid) if uuid is not None else None


def session_files(path: Path) -> list[SessionFiles]:
    """The sessions under `path` (a session file, a sub-agent's file, a project folder or
    the whole `~/.claude/projects`), each with its sub-agents' files."""
    if path.is_file():
        if _is_agent_file(path):
            main = _main_of(path)
            if main is None:
                return [SessionFiles(path)]
            path = main
        return [SessionFiles(path, tuple(_agent_files(path, {})))]
    index: dict[Path, dict[str, list[Path]]] = {}
    mains = sorted(p for p in path.rglob("*.jsonl") if p.is_file() and not _is_agent_file(p))
    return [SessionFiles(main, tuple(_agent_files(main, index))) for main in mains]


def _is_agent_file(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def _main_of(agent: Path) -> Path | None:
    if agent.parent.name == "subagents":
        owner = agent.parent.parent.with_suffix(".jsonl")
        return owner if owner.is_file() else None
    session = _session_of_file(agent)
    if not session:
        return None
    beside = agent.with_name(f"{session}.jsonl")
    return beside if beside.is_file() else None


def _agent_files(main: Path, index: dict[Path, dict[str, list[Path]]]) -> list[Path]:
    """A session's sub-agent files: in its own folder, and (older versions) beside it."""
    own = main.with_suffix("") / "subagents"
    found = sorted(p for p in own.glob("agent-*.jsonl") if p.is_file()) if own.is_dir() else []
    folder = main.parent
    if folder not in index:
        beside: dict[str, list[Path]] = {}
        for agent in sorted(folder.glob("agent-*.jsonl")):
            session = _session_of_file(agent)
            if session:
                beside.setdefault(session, []).append(agent)
        index[folder] = beside
    return found + index[folder].get(main.stem, [])


def _session_of_file(path: Path) -> str | None:
    """The `sessionId` of a file's first records (a few lines are enough)."""
    try:
        for number, value in read_jsonl(path):
            if isinstance(value, dict) and isinstance(value.get("sessionId"), str):
                return str(value["sessionId"])
            if number >= 5:
                break
    except OSError:
        return None
    return None


# -- reading ------------------------------------------------------------------------------


def read_session(files: SessionFiles, number: int) -> AgentChat | ChatProblem:
    """One session: its file, then its sub-agents' files, as a chat for the importer."""
    session = _Session()
    try:
        _read_file(files.main, session)
        for part in files.parts:
            start = len(session.messages)
            _read_file(part, session)
            _attach(session, start, _agent_id(part))
    except OSError as exc:
        return ChatProblem(f"{files.name}: it cannot be read ({exc.strerror or exc})")
    _attach_inline_sidechains(session)
    messages = [
        replace(m, parent=session.resolve(m.parent)) if m.parent is not None else m
        for m in session.messages
    ]
    session.messages = messages
    ident = session.session_id or files.main.stem
    return session.chat(FORMAT, number, ident, session.title or _summary(session))


def _read_file(path: Path, session: _Session) -> None:
    for number, value in read_jsonl(path):
        where = f"{path.name} line {number}"
        if isinstance(value, BadLine):
            session.bad(where, value.reason)
            continue
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            session.bad(where, "not a Claude Code record (no type)")
            continue
        if session.session_id is None and isinstance(value.get("sessionId"), str):
            session.session_id = value["sessionId"]
        if isinstance(value.get("cwd"), str):
            session.cwd = value["cwd"]
        kind = value["type"]
        if kind in ("user", "assistant"):
            _message_record(value, kind, f"{path.stem}:{number}", where, session)
        elif kind == "summary" and isinstance(value.get("summary"), str):
            session.summaries[str(value.get("leafUuid"))] = value["summary"]
        elif kind == "custom-title" and isinstance(value.get("customTitle"), str):
            session.title = value["customTitle"]
        else:
            _bookkeeping(value, session)


def _bookkeeping(record: dict[str, Any], session: _Session) -> None:
    """A record that is no message: what answers it answers the record before it (after a
    compaction, the last message before the compaction)."""
    data = record.get("data")
    if isinstance(data, dict) and data.get("type") == "agent_progress":
        agent, call = data.get("agentId"), record.get("parentToolUseID")
        if isinstance(agent, str) and isinstance(call, str):
            session.agent_calls.setdefault(agent, call)
    uuid = record.get("uuid")
    if isinstance(uuid, str):
        parent = record.get("logicalParentUuid") or record.get("parentUuid")
        session.alias[uuid] = str(parent) if parent else None


def _message_record(
    record: dict[str, Any], kind: str, fallback: str, where: str, session: _Session
) -> None:
    uuid = str(record.get("uuid") or fallback)
    parent_id = record.get("parentUuid") or record.get("logicalParentUuid")
    parent = str(parent_id) if parent_id else None
    skipped = _skipped(record)
    if skipped is not None:
        if skipped:
            session.leave_out(where, skipped)
        session.alias[uuid] = parent
        return
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    at = _local(record.get("timestamp"))
    sidechain = record.get("isSidechain") is True
    result = record.get("toolUseResult")
    if isinstance(result, dict) and isinstance(result.get("agentId"), str):
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and isinstance(block.get("tool_use_id"), str):
                session.agent_calls.setdefault(result["agentId"], block["tool_use_id"])
    if kind == "user":
        made = _from_user(content, at, sidechain, where, session)
    else:
        made = _from_assistant(content, at, sidechain, where, session)
    if not made:
        session.alias[uuid] = parent
        return
    refs = [uuid] + [f"{uuid}#{i}" for i in range(2, len(made) + 1)]
    for index, (ref, piece) in enumerate(zip(refs, made, strict=True)):
        piece = replace(piece, ref=ref, parent=parent if index == 0 else refs[index - 1])
        for call_id, tool, _ in piece.calls:
            prompt = session.calls.get(call_id, ("", "", ""))[2]
            session.calls[call_id] = (tool, ref, prompt)
        session.messages.append(piece)
    session.last_of[uuid] = refs[-1]


def _skipped(record: dict[str, Any]) -> str | None:
    """Why a message record is left out ("" when quietly), or None when it is kept."""
    if record.get("isCompactSummary"):
        return "a compaction summary"
    if record.get("isApiErrorMessage"):
        return "an API error"
    if record.get("isMeta") or record.get("isVisibleInTranscriptOnly"):
        return ""
    return None


def _from_user(
    content: Any, at: Any, sidechain: bool, where: str, session: _Session
) -> list[AgentMessage]:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    made: list[AgentMessage] = []
    texts: list[str] = []
    for block in blocks if isinstance(blocks, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            if text.lstrip().startswith(COMMAND_TAGS):
                session.leave_out(where, "a command's own message")
            elif not text.lstrip().startswith(REMINDER) and text.strip():
                texts.append(text)
        elif kind == "tool_result":
            made.append(_tool_result(block, at, sidechain, session))
        elif kind in _BLOCKS_LEFT_OUT:
            session.leave_out(where, _BLOCKS_LEFT_OUT[str(kind)])
    if texts:
        text = "\n".join(texts)
        if sidechain:  # the task the main agent handed its sub-agent, not the person's words
            made.append(AgentMessage("assistant", text, at, agent=TASK))
        else:
            made.append(AgentMessage("user", text, at))
    return made


def _tool_result(block: dict[str, Any], at: Any, sidechain: bool, session: _Session) -> Any:
    call_id = str(block.get("tool_use_id") or "")
    tool = session.calls.get(call_id, ("tool", "", ""))[0]
    said = outcome(text_of(block.get("content")), error=block.get("is_error") is True)
    agent = SUBAGENT if sidechain else None
    return AgentMessage("tool", said, at, call_id=call_id, tool=tool, agent=agent)


def _from_assistant(
    content: Any, at: Any, sidechain: bool, where: str, session: _Session
) -> list[AgentMessage]:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts: list[str] = []
    calls: list[tuple[str, str, str]] = []
    for block in blocks if isinstance(blocks, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            texts.append(block["text"])
        elif kind == "tool_use":
            call_id, tool = str(block.get("id") or ""), str(block.get("name") or "tool")
            arguments = block.get("input")
            calls.append((call_id, tool, call_arguments(target_of(arguments, session.cwd))))
            prompt = arguments.get("prompt") if isinstance(arguments, dict) else None
            if tool in TASK_TOOLS and isinstance(prompt, str):
                session.calls[call_id] = (tool, "", prompt)
        elif kind in _BLOCKS_LEFT_OUT:
            session.leave_out(where, _BLOCKS_LEFT_OUT[str(kind)])
    if not texts and not calls:
        return []
    agent = SUBAGENT if sidechain else None
    return [AgentMessage("assistant", "\n".join(texts), at, calls=tuple(calls), agent=agent)]


# -- sub-agents -----------------------------------------------------------------------------


def _agent_id(path: Path) -> str | None:
    stem = path.stem
    return stem[len("agent-") :] if stem.startswith("agent-") else None


def _attach(session: _Session, start: int, agent_id: str | None) -> None:
    """A sub-agent's file, read into `session.messages[start:]`: every message is the
    sub-agent's, and its first hangs under the call that started it."""
    part = session.messages[start:]
    if not part:
        return
    call = session.agent_calls.get(agent_id or "")
    anchor = session.calls[call][1] if call and call in session.calls else None
    session.messages[start:] = [
        replace(m, agent=m.agent or SUBAGENT, role="assistant" if m.role == "user" else m.role)
        for m in part
    ]
    if anchor is None:
        anchor = _by_prompt(session, part[0]) or anchor_for(session.messages[:start], part[0].at)
    if session.resolve(part[0].parent) not in {m.ref for m in session.messages}:
        session.messages[start] = replace(session.messages[start], parent=anchor)


def _attach_inline_sidechains(session: _Session) -> None:
    """Sidechain records in the session file itself (the oldest versions): each sidechain's
    first message hangs under the call whose prompt it is, else under the message before."""
    refs = {m.ref for m in session.messages}
    for index, message in enumerate(session.messages):
        if message.agent is None or session.resolve(message.parent) in refs:
            continue
        anchor = _by_prompt(session, message) or anchor_for(session.messages[:index], message.at)
        session.messages[index] = replace(message, parent=anchor)


def _by_prompt(session: _Session, first: AgentMessage) -> str | None:
    wanted = " ".join(first.text.split())
    for _tool, ref, prompt in session.calls.values():
        if ref and prompt and " ".join(prompt.split()) == wanted:
            return ref
    return None


def _summary(session: _Session) -> str | None:
    """The title Claude Code wrote for the session: the summary of a leaf it holds."""
    for leaf, summary in reversed(list(session.summaries.items())):
        if leaf in session.last_of or leaf in session.alias:
            return summary
    return next(iter(session.summaries.values()), None)


def first_record_is_claude_code(value: Any) -> bool:
    """Whether a JSONL file's first record is Claude Code's (for `--format auto`)."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind == "summary" and "leafUuid" in value:
        return True
    if kind == "file-history-snapshot" and "snapshot" in value:
        return True
    return "sessionId" in value and ("parentUuid" in value or kind == "queue-operation")
