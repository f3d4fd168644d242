"""What `vault import` reads, streamed: ChatGPT and Claude.ai data exports, OpenAI-style
messages (what `vault flush` reads), and this project's own export.

- ChatGPT (`conversations.json`): a list of conversations, each a `mapping` of nodes (a tree:
  a regenerated reply or an edited question is a second child). The conversation as the user
  last saw it is the branch from the root to `current_node`; other branches are left out.
  Messages keep their `create_time`.
- Claude.ai (`conversations.json`): a list of conversations with `chat_messages` (`sender`
  human/assistant, `text` or `content` blocks, `created_at`).
- OpenAI messages: a JSON list, {"messages": [...]}, JSONL of messages (one conversation), or
  JSONL of {"messages": [...]} objects (one conversation a line).
- The project's export (transfer/export.py): JSONL or a JSON array of records.

Large files are parsed incrementally with ijson (its C backend), one conversation or record in
memory at a time. A file, a folder (its `conversations.json`, else its *.json and *.jsonl
files) or a .zip of a data export (its `conversations.json`) can be given.

Only text is imported. What a message holds besides text (images, audio, files, tool calls and
their output, reasoning) is left out and counted, with where it was (`Chat.left_out`). A
conversation that cannot be read (no messages, no mapping) is a `ChatProblem`: skipped, with
its position. A file that cannot be read at all (an unknown format, JSON that breaks off) is an
`ImportFormatError` before anything is written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import json
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import VaultError
from .export import FORMAT

FORMATS = ("auto", "chatgpt", "claude", "openai", "jsonl", "claude-code", "codex")
CONVERSATIONS = "conversations.json"
HEAD_BYTES = 1 << 20  # enough to see whether a file is JSONL (a first line shorter than this)
DETECT_ITEMS = 20  # elements of a list looked at to tell its format


class ImportFormatError(VaultError):
    """A file an import cannot read as a whole; nothing was written."""

    def __init__(self, name: str, what: str) -> None:
        self.name = name
        self.what = what
        super().__init__(
            f"cannot import {name}: {what}. Nothing was written. Give a ChatGPT or Claude.ai "
            "data export (conversations.json, its folder or its .zip), OpenAI-style messages "
            "(JSON or JSONL), Claude Code or Codex session files, or an export of a vault; "
            "give its `format` if it is not recognised."
        )


class ChatProblem(Exception):
    """Why one conversation of a file is skipped (the others are imported)."""


@dataclass(frozen=True)
class ChatMessage:
    role: str  # user | assistant | system
    text: str
    at: dt.datetime | None  # local wall time, naive (like `clock.now()`)

    @property
    def flushed(self) -> bool:
        """Whether facts are taken from it (a coding agent's sub-agent: no, agentlog.py)."""
        return True

    def as_message(self) -> dict[str, Any]:
        """The message as the flush reads it."""
        return {"role": self.role, "content": self.text}


@dataclass
class Chat:
    """One conversation read from an export."""

    source: str  # chatgpt | claude | openai
    number: int  # its position in the file, from 1
    id: str | None = None
    title: str | None = None
    created: dt.datetime | None = None
    messages: list[ChatMessage] = field(default_factory=list)
    raw: Any = None  # OpenAI-style input, handed to flush as it is
    left_out: list[str] = field(default_factory=list)  # "message 4: an image"

    @property
    def position(self) -> str:
        label = f"conversation {self.number}"
        details = [d for d in (self.id and f"id {self.id}", self.title and repr(self.title)) if d]
        return f"{label} ({', '.join(details)})" if details else label


# -- where the files are ---------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A file to read: on disk, or a member of a .zip."""

    path: Path
    member: str | None = None

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.member}" if self.member else self.path.name

    def size(self) -> int:
        if self.member is None:
            return self.path.stat().st_size
        with zipfile.ZipFile(self.path) as archive:
            return archive.getinfo(self.member).file_size

    @contextlib.contextmanager
    def open(self) -> Iterator[IO[bytes]]:
        try:
            if self.member is None:
                with self.path.open("rb") as fh:
                    yield fh
            else:
                with zipfile.ZipFile(self.path) as archive, archive.open(self.member) as fh:
                    yield fh
        except OSError as exc:
            what = f"it cannot be read ({exc.strerror or exc})"
            raise ImportFormatError(self.name, what) from None


def find_sources(path: Path) -> list[Source]:
    """The files to import for a path given by the user."""
    if path.is_dir():
        if (path / CONVERSATIONS).is_file():
            return [Source(path / CONVERSATIONS)]
        found = sorted(
            p for p in path.iterdir() if p.is_file() and p.suffix.lower() in (".json", ".jsonl")
        )
        if not found:
            raise ImportFormatError(
                path.name + "/", f"the folder holds no {CONVERSATIONS}, *.json or *.jsonl file"
            )
        return [Source(p) for p in found]
    if not path.is_file():
        raise ImportFormatError(str(path), "there is no such file or folder")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/")]
        chosen = [n for n in names if n.rsplit("/", 1)[-1] == CONVERSATIONS]
        if not chosen:
            chosen = sorted(n for n in names if n.lower().endswith((".json", ".jsonl")))[:1]
        if not chosen:
            raise ImportFormatError(path.name, f"the archive holds no {CONVERSATIONS}")
        return [Source(path, chosen[0])]
    return [Source(path)]


# -- which format --------------------------------------------------------------------------------


def _json_error(name: str, exc: Exception, after: str, fh: IO[bytes]) -> ImportFormatError:
    try:
        near = f" near byte {fh.tell():,}"
    except (OSError, ValueError):
        near = ""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ImportFormatError(name, f"the JSON breaks off or is invalid {after}{near} ({message})")


def _by_keys(keys: set[str], values: dict[str, Any]) -> str | None:
    record = values.get("type") in ("file", "section") and "sha256" in keys
    if values.get("format") == FORMAT or record:
        return "jsonl"  # an export (one missing its header is refused as one)
    if "mapping" in keys:
        return "chatgpt"
    if "chat_messages" in keys:
        return "claude"
    if keys & {"role", "messages", "message", "contents"}:
        return "openai"
    return None


def detect(source: Source) -> str:
    """chatgpt, claude, openai or jsonl (the project's export), from how the file begins."""
    import ijson

    with source.open() as fh:
        head = fh.read(HEAD_BYTES)
    head = head.removeprefix(b"\xef\xbb\xbf")
    start = head.lstrip()
    if not start:
        raise ImportFormatError(source.name, "it is empty")
    if start[:1] not in (b"[", b"{"):
        raise ImportFormatError(source.name, "it is not JSON or JSONL (unknown format)")
    first_line, newline, rest = start.partition(b"\n")
    if start[:1] == b"{" and newline and rest.strip():
        try:
            value = json.loads(first_line)
        except ValueError:
            value = None
        if isinstance(value, dict):  # JSONL: one record a line
            found = _by_keys(set(value), value)
            if found is None and "type" in value:
                found = "openai"  # transcript files: metadata lines, then wrapped messages
            if found in ("jsonl", "openai"):
                return found
            raise ImportFormatError(source.name, "its JSON lines are of an unknown format")
    prefix = "item" if start[:1] == b"[" else ""
    keys: set[str] = set()
    with source.open() as fh:
        try:  # the first elements that say what they are (a broken one may come first)
            for item in itertools.islice(ijson.items(fh, prefix, use_float=True), DETECT_ITEMS):
                if isinstance(item, dict):
                    found = _by_keys(set(item), item)
                    if found is not None:
                        return found
                    keys.update(item)
        except ijson.JSONError as exc:
            raise _json_error(source.name, exc, "at its start", fh) from None
    what = "its first elements have" if prefix else "its top-level object has"
    shown = ", ".join(sorted(keys)[:8]) or "none"
    raise ImportFormatError(source.name, f"unknown format: {what} the keys {shown}")


# -- reading conversations ------------------------------------------------------------------


def _top(fh: IO[bytes]) -> str:
    """ijson's prefix of the items: "item" when the file is a list, "" for one object."""
    while byte := fh.read(1):
        if not byte.isspace():
            return "item" if byte == b"[" else ""
    return ""


def iter_items(source: Source, at: Callable[[int], None] | None = None) -> Iterator[Any]:
    """The elements of a top-level JSON list (or the one top-level object), one at a time;
    `ImportFormatError` with the position where the JSON breaks off. `at` is told how many
    bytes have been read after each element."""
    import ijson

    with source.open() as fh:
        prefix = _top(fh)
    with source.open() as fh:
        count = 0
        try:
            for item in ijson.items(fh, prefix, use_float=True):
                count += 1
                if at is not None:
                    at(fh.tell())
                yield item
        except ijson.JSONError as exc:
            after = f"after element {count}" if count else "before its first element"
            raise _json_error(source.name, exc, after, fh) from None


def iter_chats(source: Source, fmt: str, max_bytes: int) -> Iterator[Chat | ChatProblem]:
    """The conversations of a file of format `fmt` (chatgpt, claude or openai), in file order:
    a `Chat`, or a `ChatProblem` naming one that cannot be read."""
    if fmt == "openai":
        yield from _openai_chats(source, max_bytes)
        return
    convert = _chatgpt_chat if fmt == "chatgpt" else _claude_chat
    for number, item in enumerate(iter_items(source), 1):
        try:
            yield convert(item, number)
        except ChatProblem as exc:
            yield ChatProblem(f"conversation {number}{_label(item)}: {exc}")


def _label(item: Any) -> str:
    if not isinstance(item, dict):
        return ""
    ident = item.get("id") or item.get("conversation_id") or item.get("uuid")
    title = item.get("title") or item.get("name")
    details = [d for d in (ident and f"id {ident}", title and repr(title)) if d]
    return f" ({', '.join(str(d) for d in details)})" if details else ""


def _local(value: Any) -> dt.datetime | None:
    """A Unix time or an ISO 8601 string as local wall time (naive), or None."""
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return dt.datetime.fromtimestamp(float(value))
        if isinstance(value, str) and value.strip():
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return parsed.astimezone().replace(tzinfo=None) if parsed.tzinfo else parsed
    except (ValueError, OverflowError, OSError):
        return None
    return None


_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "system": "system"}
_QUIET = {"user_editable_context", "model_editable_context"}  # custom instructions, memory
_NON_TEXT = {
    "image_asset_pointer": "an image",
    "audio_asset_pointer": "audio",
    "real_time_user_audio_video_asset_pointer": "audio/video",
    "video_container_asset_pointer": "a video",
    "code": "a tool call (code)",
    "execution_output": "a tool's output",
    "tether_browsing_display": "a browsing result",
    "tether_quote": "a quoted web page",
    "system_error": "a tool error",
    "thoughts": "the model's reasoning",
    "reasoning_recap": "the model's reasoning",
    "sonic_webpage": "a web page",
    "computer_output": "a tool's output",
}


def _chatgpt_branch(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root to `current_node` (to the most recent leaf when it is missing)."""
    if not isinstance(current, str) or current not in mapping:
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            return []

        def made(key: str) -> float:
            message = mapping[key].get("message") or {}
            stamp = message.get("create_time") if isinstance(message, dict) else None
            return float(stamp) if isinstance(stamp, int | float) else 0.0

        current = max(leaves, key=made)
    branch: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        branch.append(node)
        node_id = node.get("parent")
    branch.reverse()
    return branch


def _chatgpt_chat(item: Any, number: int) -> Chat:
    if not isinstance(item, dict):
        raise ChatProblem("it is not a JSON object")
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise ChatProblem('it has no "mapping" of messages')
    ident = item.get("conversation_id") or item.get("id")
    title = item.get("title")
    chat = Chat(
        "chatgpt",
        number,
        str(ident) if ident else None,
        title if isinstance(title, str) and title.strip() else None,
        _local(item.get("create_time")),
    )
    position = 0
    for node in _chatgpt_branch(mapping, item.get("current_node")):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        position += 1
        where = f"message {position}"
        author = message.get("author")
        role = author.get("role") if isinstance(author, dict) else None
        metadata = message.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        if metadata.get("is_visually_hidden_from_conversation"):
            continue
        content = message.get("content")
        if not isinstance(content, dict):
            chat.left_out.append(f"{where}: no content")
            continue
        kind = content.get("content_type")
        if kind in _QUIET:
            continue
        if role == "tool" or kind in _NON_TEXT:
            chat.left_out.append(f"{where}: {_NON_TEXT.get(str(kind), 'a tool message')}")
            continue
        if role not in _ROLES:
            chat.left_out.append(f"{where}: the unknown role {role!r}")
            continue
        texts: list[str] = []
        parts = content.get("parts")
        if kind in ("text", "multimodal_text"):
            if not isinstance(parts, list):
                chat.left_out.append(f"{where}: no list of parts")
                continue
            for part in parts:
                if isinstance(part, str):
                    texts.append(part)
                elif isinstance(part, dict) and part.get("content_type") == "audio_transcription":
                    texts.append(str(part.get("text") or ""))
                elif isinstance(part, dict):
                    part_kind = str(part.get("content_type"))
                    chat.left_out.append(
                        f"{where}: {_NON_TEXT.get(part_kind, f'a {part_kind} part')}"
                    )
        else:
            chat.left_out.append(f"{where}: the unknown content type {kind!r}")
            continue
        text = "\n".join(t for t in texts if t.strip())
        if text.strip():
            at = _local(message.get("create_time"))
            chat.messages.append(ChatMessage(_ROLES[role], text, at))
    if not any(m.role in ("user", "assistant") for m in chat.messages):
        raise ChatProblem("it has no messages with text")
    return chat


_CLAUDE_BLOCKS = {
    "tool_use": "a tool call",
    "tool_result": "a tool's output",
    "thinking": "the model's reasoning",
    "redacted_thinking": "the model's reasoning",
    "image": "an image",
    "document": "a document",
}


def _claude_chat(item: Any, number: int) -> Chat:
    if not isinstance(item, dict):
        raise ChatProblem("it is not a JSON object")
    messages = item.get("chat_messages")
    if not isinstance(messages, list):
        raise ChatProblem('it has no "chat_messages" list')
    ident = item.get("uuid")
    name = item.get("name")
    chat = Chat(
        "claude",
        number,
        str(ident) if ident else None,
        name if isinstance(name, str) and name.strip() else None,
        _local(item.get("created_at")),
    )
    for position, message in enumerate(messages, 1):
        where = f"message {position}"
        if not isinstance(message, dict):
            chat.left_out.append(f"{where}: not a JSON object")
            continue
        role = _ROLES.get(str(message.get("sender", "")).lower())
        if role is None:
            chat.left_out.append(f"{where}: the unknown sender {message.get('sender')!r}")
            continue
        texts: list[str] = []
        blocks = message.get("content")
        if isinstance(blocks, list) and blocks:
            for block in blocks:
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                else:
                    chat.left_out.append(
                        f"{where}: {_CLAUDE_BLOCKS.get(str(kind), f'a {kind} block')}"
                    )
        elif isinstance(message.get("text"), str):
            texts.append(message["text"])
        for key in ("attachments", "files"):
            for attached in message.get(key) or []:
                named = attached.get("file_name") if isinstance(attached, dict) else None
                shown = f" {named!r}" if named else ""
                chat.left_out.append(f"{where}: an attached file{shown}")
        text = "\n".join(t for t in texts if t.strip())
        if text.strip():
            chat.messages.append(ChatMessage(role, text, _local(message.get("created_at"))))
    if not any(m.role in ("user", "assistant") for m in chat.messages):
        raise ChatProblem("it has no messages with text")
    return chat


def _openai_chats(source: Source, max_bytes: int) -> Iterator[Chat | ChatProblem]:
    """One conversation per file (JSON, JSONL of messages, a transcript), or one per line of
    JSONL whose lines are {"messages": [...]}."""
    with source.open() as fh:
        head = fh.read(HEAD_BYTES)
    first_line, _, rest = head.removeprefix(b"\xef\xbb\xbf").lstrip().partition(b"\n")
    try:
        first = json.loads(first_line)
    except ValueError:
        first = None
    if isinstance(first, dict) and isinstance(first.get("messages"), list) and rest.strip():
        with source.open() as fh:
            number = 0
            for line_number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                number += 1
                try:
                    value = json.loads(line)
                except ValueError as exc:
                    yield ChatProblem(
                        f"conversation {number} (line {line_number}): it is not JSON ({exc})"
                    )
                    continue
                yield Chat("openai", number, raw=_from_gemini(value))
        return
    with source.open() as fh:
        data = fh.read(max_bytes + 1)
    if len(data) <= max_bytes and data.lstrip()[:1] in (b"[", b"{"):
        try:
            yield Chat("openai", 1, raw=_from_gemini(json.loads(data)))
            return
        except ValueError:
            pass  # JSONL or a transcript: the flush reads it as it is
    yield Chat("openai", 1, raw=data)


def _from_gemini(value: Any) -> Any:
    """Gemini-style messages ({"contents": [{"role": "user"|"model", "parts": [{"text"}]}]},
    or the list itself) as OpenAI-style ones; anything else as it is."""
    contents = value.get("contents") if isinstance(value, dict) else value
    if (
        not isinstance(contents, list)
        or not contents
        or not all(isinstance(c, dict) and "parts" in c and "content" not in c for c in contents)
    ):
        return value
    return [
        {
            "role": c.get("role") or "user",
            "content": "\n".join(
                p["text"]
                for p in c["parts"] or []
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            ),
        }
        for c in contents
    ]
