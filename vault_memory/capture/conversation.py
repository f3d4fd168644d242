"""Conversations as agents hand them over: OpenAI-style chat messages (a JSON list or
{"messages": [...]}, with tool calls and tool results), JSONL (one message per line, also
transcript files that wrap each message), or a plain `User: … / Assistant: …` transcript.

Parsing is strict about structure (a clear `MalformedConversationError` says what is wrong and
nothing is written) and lenient about spelling (`human`/`ai` roles, content parts, speaker
labels in bold or with a time).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import SecretSessionIdError, VaultError
from ..files import fsutil

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class MalformedConversationError(VaultError):
    """The input is not a conversation this tool can read; nothing was written."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"cannot read the conversation: {what}. Nothing was written. Give OpenAI-style "
            'messages (a JSON list or {"messages": [...]}), JSONL (one message per line), or a '
            "plain transcript (`User: ...` / `Assistant: ...` lines)."
        )


# -- messages -----------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    role: str  # user | assistant | system | tool
    text: str
    name: str | None = None
    tool_calls: tuple[str, ...] = ()  # names of the tools an assistant message called

    @property
    def speaker(self) -> str:
        return self.name or self.role.capitalize()


_ROLES = {
    "user": "user",
    "human": "user",
    "you": "user",
    "me": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "agent": "assistant",
    "model": "assistant",
    "chatbot": "assistant",
    "chatgpt": "assistant",
    "gpt": "assistant",
    "claude": "assistant",
    "gemini": "assistant",
    "copilot": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "tool result": "tool",
    "tool output": "tool",
    "observation": "tool",
}
_TEXT_PARTS = ("text", "input_text", "output_text")

# `User: …`, `**Assistant:** …`, `[10:02] user (maya): …`, `14:03 - AI: …`
_SPEAKER_LINE = re.compile(
    r"^[ \t]*(?:\[[^\]\n]{1,40}\][ \t]*|\(?\d{1,2}:\d{2}(?::\d{2})?\)?[ \t]*[-–]?[ \t]*)?"
    r"(?:\*\*|__)?(?P<who>[A-Za-z][A-Za-z ]{0,20}?)[ \t]*(?:\((?P<name>[^()\n]{1,40})\))?"
    r"[ \t]*(?:\*\*|__)?:(?:\*\*|__)?(?:[ \t]+|$)(?P<rest>.*)$"
)
# `### User` / `## Assistant:` (Markdown chat exports)
_SPEAKER_HEADING = re.compile(r"^#{1,6}[ \t]+(?P<who>[A-Za-z][A-Za-z ]{0,20}?)[ \t]*:?[ \t]*$")


def parse_conversation(raw: str | bytes | list[Any] | dict[str, Any]) -> list[Message]:
    """Messages from OpenAI-style JSON (a list, or an object with "messages"), JSONL, or a
    plain-text transcript. Raises `MalformedConversationError` saying what is wrong."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            raise MalformedConversationError(f"it is not UTF-8 text (byte {exc.start})") from None
    if isinstance(raw, str):
        messages = _parse_text(raw)
    elif isinstance(raw, list | dict):
        messages = _from_json(raw)
    else:
        raise MalformedConversationError(f"got a {type(raw).__name__}, not text or messages")
    if not messages:
        raise MalformedConversationError("it holds no messages")
    return messages


def _parse_text(text: str) -> list[Message]:
    stripped = text.strip()
    if not stripped:
        raise MalformedConversationError("the input is empty")
    if stripped[0] in "[{":
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as exc:
            lines = [line for line in stripped.split("\n") if line.strip()]
            if stripped[0] == "{" and len(lines) > 1:
                return _parse_jsonl(lines)
            if not any(_speaker(line) for line in lines):
                raise MalformedConversationError(
                    f"it looks like JSON but does not parse ({exc.msg} at line {exc.lineno} "
                    f"column {exc.colno})"
                ) from None
        else:
            return _from_json(value)
    return _parse_transcript(text)


def _parse_jsonl(lines: list[str]) -> list[Message]:
    messages: list[Message] = []
    for number, line in enumerate(lines, 1):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MalformedConversationError(
                f"JSONL line {number} is not JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(value, dict):
            raise MalformedConversationError(f"JSONL line {number} is not a JSON object")
        if "role" not in value and isinstance(value.get("message"), dict):
            value = value["message"]  # transcript wrappers: {"type": …, "message": {role, …}}
        elif "role" not in value and "type" in value:
            continue  # a metadata line of a transcript file (summary, snapshot …)
        message = _message(value, f"JSONL line {number}")
        if message is not None:
            messages.append(message)
    return messages


def _from_json(value: Any) -> list[Message]:
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            value = value["messages"]
        elif "role" in value:
            value = [value]
        else:
            raise MalformedConversationError('a JSON object needs a "messages" list')
    if not isinstance(value, list):
        raise MalformedConversationError("the JSON is neither a list of messages nor an object")
    messages = []
    for index, item in enumerate(value, 1):
        message = _message(item, f"message {index}")
        if message is not None:
            messages.append(message)
    return messages


def _message(item: Any, where: str) -> Message | None:
    if not isinstance(item, dict):
        raise MalformedConversationError(f"{where} is not an object with a role and content")
    role = item.get("role")
    if not isinstance(role, str) or not role.strip():
        raise MalformedConversationError(f'{where} has no "role"')
    canonical = _ROLES.get(role.strip().lower())
    if canonical is None:
        raise MalformedConversationError(
            f"{where} has the unknown role {role!r}; use user, assistant, system or tool"
        )
    content = item.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                if part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str):
                    parts.append(part["text"])
                # images, audio, tool_use and tool_result parts carry nothing to remember
            else:
                raise MalformedConversationError(f"{where} has a content part that is no object")
    elif content is not None:
        raise MalformedConversationError(
            f'{where}: "content" must be text, a list of parts or null, not '
            f"{type(content).__name__}"
        )
    calls = item.get("tool_calls")
    calls = () if calls is None else calls
    if not isinstance(calls, list | tuple):
        raise MalformedConversationError(f'{where}: "tool_calls" must be a list')
    names = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        names.append(str(name) if name else "tool")
    name = item.get("name")
    label = _clean_name(name) if isinstance(name, str) and canonical != "tool" else None
    return Message(canonical, clean_text("\n".join(parts)), label, tuple(names))


# NUL and other control characters would make a daily log unreadable ("binary") for every
# later reader; lone surrogates (from JSON `\ud800` escapes) cannot be written as UTF-8.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _SURROGATE.sub("\ufffd", _CONTROL.sub("", text))


def _clean_name(name: str) -> str | None:
    name = re.sub(r"[\s:#\[\]]+", " ", clean_text(name)).strip()[:40]
    return name or None


def _speaker(line: str) -> tuple[str, str | None, str] | None:
    """(role, name, rest of the line) when `line` opens a turn of a transcript."""
    match = _SPEAKER_LINE.match(line) or _SPEAKER_HEADING.match(line)
    if not match:
        return None
    role = _ROLES.get(match["who"].strip().lower())
    if role is None:
        return None
    groups = match.groupdict()
    name = _clean_name(groups["name"]) if groups.get("name") else None
    return role, name, groups.get("rest") or ""


def _parse_transcript(text: str) -> list[Message]:
    text = clean_text(text)
    turns: list[tuple[str, str | None, list[str]]] = []
    for line in fsutil.split_lines(text):
        found = _speaker(line)
        if found:
            role, name, rest = found
            turns.append((role, name, [rest] if rest else []))
        elif turns:
            turns[-1][2].append(line)
        # lines before the first speaker (a title, an export banner) are not a turn
    if not turns:
        named = _named_turns(text)
        if named:
            return named
        return [Message("user", text.strip())]  # plain notes: one message from the user
    return [Message(role, "\n".join(lines).strip(), name) for role, name, lines in turns]


# `Ines: …`, `**Jonas Berg:** …`: a name (capitalised words) before a colon
_NAMED_LINE = re.compile(
    r"^[ \t]*(?:\*\*|__)?(?P<name>[^\W\d_][\w'’.-]*(?: [^\W\d_][\w'’.-]*){0,2}?)"
    r"[ \t]*(?:\*\*|__)?:(?:\*\*|__)?[ \t]+(?P<rest>\S.*)$"
)
#: Labels people put in notes ("Decision: …"), never a speaker's name.
NOTE_LABELS = frozenset(
    re.findall(
        r"\S+",
        """
    decision decisions note notes update updates correction reminder todo to-do fix fixed plan
    idea question answer summary context status result action problem issue goal next why
    warning important tip example rule policy fyi ps nb remember owner deadline cause reason
    outcome agenda follow-up blocker risk done doing task tasks see also eta cost price time
    date where when who what how source link ref re subject topic
""",
    )
)


def _named_turns(text: str) -> list[Message] | None:
    """A transcript between named people (`Ines: …` / `Tomas: …`): every speaker's turn
    a `user` message with their name. Only when it reads as one: at least two names, each
    opening two turns or more, the turns alternating, and most lines opening a turn (so notes
    with a few `Decision: …` labels stay notes)."""
    lines = [line for line in fsutil.split_lines(text) if line.strip()]
    turns: list[tuple[str, list[str]]] = []
    for line in lines:
        match = _NAMED_LINE.match(line)
        name = match["name"].strip() if match else None
        if (
            name
            and name[0].isupper()
            and name.split()[0].lower() not in NOTE_LABELS
            and name.lower() not in NOTE_LABELS
        ):
            turns.append((name, [match["rest"]]))  # type: ignore[index]
        elif turns:
            turns[-1][1].append(line)
    counts: dict[str, int] = {}
    for name, _ in turns:
        counts[name] = counts.get(name, 0) + 1
    changes = sum(1 for a, b in zip(turns, turns[1:], strict=False) if a[0] != b[0])
    if (
        len([n for n, c in counts.items() if c >= 2]) < 2
        or changes < 2
        or len(turns) * 2 < len(lines)
    ):
        return None
    return [Message("user", "\n".join(body).strip(), _clean_name(name)) for name, body in turns]


def derive_session_id(messages: list[Message]) -> str:
    """A stable id for a conversation: a hash of how it opens (the system prompt, if any, and
    the first user or assistant message), so a longer version of it gets the same id."""
    system = next((m.text for m in messages if m.role == "system"), "")
    first = next((m for m in messages if m.role in ("user", "assistant") and m.text.strip()), None)
    if first is None:
        first = messages[0]
    seed = "\x1f".join([squash(system), first.role, squash(first.text)])
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:8]


def check_session_id(session: str) -> str:
    session = session.strip()
    from .redact import redact

    found = redact(session).counts
    if found:  # it goes into a heading of the daily log: never a secret (and never echoed)
        raise SecretSessionIdError(sorted(found))
    if not _SESSION_ID.match(session):
        raise VaultError(
            f"the session id {session!r} is not usable: use 1-64 letters, digits, '.', '_' or "
            "'-', starting with a letter or digit."
        )
    return session


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def transcript_for_model(messages: Iterable[Message]) -> str:
    """The conversation as the model sees it: redacted text, tool output left out."""
    lines = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            lines.append("[tool result omitted]")
            continue
        text = message.text.strip()
        if text:
            lines.append(f"{message.speaker}: {text}")
        for name in message.tool_calls:
            lines.append(f"[{message.speaker} called the tool {name}]")
    return "\n\n".join(lines)
