"""Transcripts: the conversation itself, redacted, as Markdown a person reads in Obsidian.

`sessions/YYYY-MM-DD-<session>.md` (the day of its first flush; a scope's own `sessions/`
folder when bound):

    ---
    session: "7f3a"
    started: 2026-11-22T14:03:00
    updated: 2026-11-22T15:10:41
    scope: ""
    title: "Which database for billing?"
    ---

    # Which database for billing?

    ### user · 14:03
    <!-- id: 1 · parent: - · at: 2026-11-22T14:03:00 · hash: 3f2a9c1b7d0e -->

    Which database for billing?

    ### assistant · 14:03
    <!-- id: 2 · parent: 1 · at: 2026-11-22T14:03:00 · hash: 9b1c… · meta: {"lines": 1, …} -->

    Let me look.

    > [!example]- tool call · search_memory
    > {"query": "billing database"}

One `### role · HH:MM` block per message (the date too when it is not the day the session
started), then one marker line that the file is read back by: the message's number, its
`parent:` (the message it answers or continues: the previous one, unless threads chose another,
see threads.py), when it was written, a hash of its content (how a repeated flush knows what
the file already holds) and, for tool calls, tool results and names, a JSON `meta`. Tool calls
and tool results are kept, folded (Obsidian callouts, closed until clicked). A line of a message
that would read as a marker gets one more leading backslash; an unclosed code fence is closed
after the message (so it cannot swallow the rest of the file).

Appends only: a flush appends the messages the file does not hold yet (chosen under
`.vault/transcripts.lock`, from the file as it is then; written with fsutil.append_entry, under
the append lock), and moves `updated:` forward in place (the same number of bytes). What
"does not hold yet" means is `new_from` (pure): the same conversation again adds nothing, a
longer version of it adds only its new tail, a window's next batch adds all of itself, a batch
flushed twice adds nothing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from ..config import CACHE_DIR
from ..errors import SessionInScopesError, VaultError
from ..files import date_from_name, fsutil, scope_of, scope_text
from .lineage import Origin, new_by_origin, origins_of, parents_by_origin

if TYPE_CHECKING:
    from ..files import Layout

SESSIONS_DIR = "sessions"
#: How a `ConversationWindow` opens its running summary; a summary is not part of the
#: conversation and is never written to a transcript.
SUMMARY_HEADER = "Earlier in this conversation (saved to memory"
TITLE_CHARS = 80
LOCK_TIMEOUT = 30.0
#: A transcript may grow past `[index] max_file_bytes` (50,000 messages: about 13 MB): it is
#: still read and appended to up to this size (the index skips it, with its usual warning).
MAX_TRANSCRIPT_BYTES = 512_000_000

_MARKER = re.compile(
    r"^<!-- id: (?P<id>\d+) · parent: (?P<parent>\d+|-) · at: (?P<at>[0-9T:.-]+) · "
    r"hash: (?P<hash>[0-9a-f]+)(?: · meta: (?P<meta>\{.*\}))? -->[ \t]*\r?$",
    re.M,
)
_LOOKS_LIKE_MARKER = re.compile(r"^\\*<!-- id: \d")
_ESCAPED_MARKER = re.compile(r"^\\+<!-- id: \d")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_FRONT_FIELD = re.compile(r"^(?P<key>session|started|updated|scope|title):[ \t]*(?P<value>.*)$")
_NAME = re.compile(r"^(?P<day>\d{4}-\d{2}-\d{2})-(?P<session>[A-Za-z0-9][A-Za-z0-9._-]{0,63})\.md$")


class TranscriptNotFoundError(VaultError):
    def __init__(self, session: str) -> None:
        self.session = session
        if session == "last":
            super().__init__(
                "there is no transcript yet: `vault flush` writes one for each conversation "
                "it reads (sessions/DATE-ID.md)."
            )
        else:
            super().__init__(
                f"no transcript of session {session!r} in sessions/. Run `vault sessions` to "
                "list the sessions, or `vault sessions continue last` for the latest."
            )


# -- messages --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # as the model wrote them (JSON text, usually)


@dataclass(frozen=True)
class Turn:
    """One message of a conversation, redacted: what a transcript stores."""

    role: str  # user | assistant | system | tool
    text: str
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    #: its id in its source and the message it answers, when the source names them
    #: (lineage.py); not part of what it says (`key`)
    origin: Origin | None = field(default=None, compare=False)

    @cached_property
    def key(self) -> str:
        """A hash of what the message says (spacing ignored): how a flush recognises it."""
        parts = [self.role, _squash(self.text)]
        for call in self.tool_calls:
            parts += [call.name, _squash(call.arguments)]
        seed = "\x1f".join(parts)
        return hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    def to_openai(self) -> dict[str, Any]:
        """The message as a chat API takes it back."""
        message: dict[str, Any] = {"role": self.role, "content": self.text}
        if self.name and self.role != "tool":
            message["name"] = self.name
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        if self.role == "tool":
            message["tool_call_id"] = self.tool_call_id or ""
            if self.name:
                message["name"] = self.name
        return message


@dataclass(frozen=True)
class StoredTurn:
    """A message as a transcript holds it."""

    id: int
    parent: int | None
    at: str  # ISO time it was written
    key: str
    turn: Turn
    line: int  # the line of its `### role · HH:MM` heading


def _squash(text: str) -> str:
    return " ".join(text.split())


def turns_from(raw: Any, parsed: Sequence[Any] | None = None) -> list[Turn]:
    """The messages of a conversation (anything `Vault.flush` takes), redacted. `parsed`: the
    conversation as `parse_conversation` read it, when the caller has it. Tool call ids and
    arguments, and the ids tool results answer, come from the raw messages when they are
    OpenAI-style JSON."""
    from ..capture import parse_conversation, redact_texts

    messages = list(parsed) if parsed is not None else parse_conversation(raw)
    items = _raw_items(raw)
    if items is not None and len(items) != len(messages):
        items = None
    origins = origins_of(items) if items is not None else None
    turns = []
    for index, message in enumerate(messages):
        item = items[index] if items is not None else {}
        calls: list[ToolCall] = []
        raw_calls = item.get("tool_calls") or []
        if isinstance(raw_calls, list) and len(raw_calls) == len(message.tool_calls):
            for number, (call, name) in enumerate(zip(raw_calls, message.tool_calls, strict=True)):
                function = call.get("function") if isinstance(call, dict) else None
                arguments = function.get("arguments") if isinstance(function, dict) else None
                if not isinstance(arguments, str):
                    arguments = (
                        "" if arguments is None else json.dumps(arguments, ensure_ascii=False)
                    )
                call_id = call.get("id") if isinstance(call, dict) else None
                calls.append(
                    ToolCall(str(call_id or f"call_{index}_{number}"), name, _clean(arguments))
                )
        else:
            calls = [
                ToolCall(f"call_{index}_{n}", name, "") for n, name in enumerate(message.tool_calls)
            ]
        call_id = item.get("tool_call_id")
        name = message.name
        if message.role == "tool" and isinstance(item.get("name"), str):
            name = _clean(item["name"])[:64] or None
        turns.append(
            Turn(
                message.role,
                message.text,
                name,
                tuple(calls),
                str(call_id) if message.role == "tool" and call_id is not None else None,
                origins[index] if origins is not None else None,
            )
        )
    # Secrets out, in one pass over every text and tool call argument.
    texts = [t.text for t in turns] + [c.arguments for t in turns for c in t.tool_calls]
    clean = iter(redact_texts(texts))
    turns = [replace(t, text=next(clean)) for t in turns]
    return [
        replace(t, tool_calls=tuple(ToolCall(c.id, c.name, next(clean)) for c in t.tool_calls))
        if t.tool_calls
        else t
        for t in turns
    ]


def _clean(text: str) -> str:
    from ..capture import clean_text

    return str(clean_text(text))


def _raw_items(raw: Any) -> list[dict[str, Any]] | None:
    """The message objects of OpenAI-style JSON input, or None for other input."""
    value = raw
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            return None
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped or stripped[0] not in "[{":
            return None
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            items = []
            for line in stripped.split("\n"):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError:
                    return None
                if isinstance(item, dict) and "role" not in item:
                    if isinstance(item.get("message"), dict):
                        item = item["message"]
                    elif "type" in item:
                        continue
                items.append(item)
            value = items
    if isinstance(value, dict):
        value = value.get("messages") if isinstance(value.get("messages"), list) else [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return None
    return value


# -- what a flush adds ------------------------------------------------------------------------


def is_summary(turn: Turn) -> bool:
    return turn.role == "system" and turn.text.startswith(SUMMARY_HEADER)


def new_from(existing: Sequence[str], incoming: Sequence[Turn]) -> list[Turn]:
    """The messages of `incoming` a transcript holding the messages `existing` (their keys,
    in order) does not hold yet. Pure.

    A window's running summary is never a message; a system message the transcript holds is
    not repeated. Then: `incoming` found whole in the transcript adds nothing (the same
    conversation again, or a batch flushed twice); else the longest start of `incoming` that
    ends the transcript is skipped (a longer version of the conversation adds its tail, a
    window's next batch all of itself)."""
    held = set(existing)
    turns = [
        t for t in incoming if not is_summary(t) and not (t.role == "system" and t.key in held)
    ]
    if not turns:
        return []
    keys = [t.key for t in turns]
    positions = [i for i, key in enumerate(existing) if key == keys[0]] if keys[0] in held else []
    total, skip = len(existing), 0
    for start in positions:
        run = min(len(keys), total - start)
        if list(existing[start : start + run]) != keys[:run]:
            continue
        if run == len(keys):
            return []  # held whole
        skip = max(skip, run)  # reaches the end of the transcript: its tail continues there
    return turns[skip:]


# -- the file ---------------------------------------------------------------------------------


@dataclass
class Transcript:
    """A transcript file read back."""

    path: str  # vault-relative
    session: str
    started: str
    updated: str
    scope: str
    title: str
    messages: list[StoredTurn] = field(default_factory=list)
    text: str = field(default="", repr=False)  # the file as read (set by `read_transcript`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "session": self.session,
            "started": self.started,
            "updated": self.updated,
            "scope": self.scope,
            "title": self.title,
            "messages": [
                {"id": m.id, "parent": m.parent, "at": m.at, **m.turn.to_openai()}
                for m in self.messages
            ],
        }


@dataclass
class TranscriptReport:
    """What a flush did to a transcript."""

    path: str
    session: str
    appended: int  # messages appended
    held: int  # messages the transcript held before
    first_id: int | None = None  # the first appended message's number
    parents: list[int | None] = field(default_factory=list)  # of each appended message
    notes: list[str] = field(default_factory=list)  # where it went, and why, when not plain

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "session": self.session,
            "appended": self.appended,
            "held": self.held,
            "first_id": self.first_id,
            "parents": self.parents,
            "notes": self.notes,
        }


def transcript_folder(layout: Layout) -> str:
    return layout.prefix + SESSIONS_DIR


def find_transcript(root: Path, folder: str, session: str) -> tuple[Path, str] | None:
    """The transcript of `session` in `folder` (the earliest, should a copy have been made)."""
    base = root / folder
    if not base.is_dir():
        return None
    found = sorted(
        p.name
        for p in base.glob(f"????-??-??-{glob_escape(session)}.md")
        if (m := _NAME.match(p.name)) and m["session"] == session
    )
    if not found:
        return None
    relpath = f"{folder}/{found[0]}"
    return root / relpath, relpath


#: In `.vault/`: the first message's hash of each transcript, by inode (rebuilt as needed).
FIRST_KEYS_CACHE = "transcript-keys.json"


def first_keys(root: Path, folder: str, save: bool = False) -> dict[str, str]:
    """File name -> the hash of its first message, of each transcript in `folder` (its
    marker is near the top). A transcript is appended to, never rewritten, so the hash is
    kept in `.vault/transcript-keys.json` by inode: a flush in a folder of thousands of
    transcripts lists the folder and reads only the files it has not seen. `save`: update
    that file (only a caller that writes anyway: a flush with nothing new writes nothing,
    not even `.vault/`). Symlinks and a folder outside the vault are never read (the cache
    is only a cache: lost, it is rebuilt)."""
    try:
        real, real_relpath = fsutil.resolve_in_vault(root, folder)
    except VaultError:
        return {}
    if scope_of(real_relpath) != scope_of(folder) or not real.is_dir():
        return {}
    cache_path = root / CACHE_DIR / FIRST_KEYS_CACHE
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
        held = cache if isinstance(cache, dict) else {}
    except (OSError, ValueError):
        held = {}
    mine = held.get(folder)
    known: dict[str, Any] = mine if isinstance(mine, dict) else {}
    fresh: dict[str, list[Any]] = {}
    found: dict[str, str] = {}
    with os.scandir(real) as entries:
        for entry in entries:
            if not _NAME.match(entry.name) or not entry.is_file(follow_symlinks=False):
                continue
            hit = known.get(entry.name)
            if isinstance(hit, list) and len(hit) == 2 and hit[0] == entry.inode():
                key = hit[1]
            else:
                key = _read_first_key(entry.path)
            fresh[entry.name] = [entry.inode(), key]
            if isinstance(key, str):
                found[entry.name] = key
    if save and fresh != known:
        held[folder] = fresh
        with contextlib.suppress(OSError, VaultError):
            cache_path.parent.mkdir(exist_ok=True)
            text = json.dumps(held, separators=(",", ":"))
            current = fsutil.sha256_bytes(cache_path.read_bytes()) if cache_path.exists() else None
            fsutil.write_atomic(cache_path, text, current)
    return found


def _read_first_key(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        head = os.read(fd, 8192).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    found = _MARKER.search(head)
    return found["hash"] if found else None


def session_of_name(name: str) -> str:
    """The session of a transcript's file name (`2026-11-22-7f3a.md` -> `7f3a`)."""
    match = _NAME.match(name)
    return match["session"] if match else name


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def transcript_files(
    root: Path, folder: str, allow_hardlinks: bool = False
) -> list[tuple[Path, str, str, str]]:
    """(path, vault-relative path, session, day) of every transcript in `folder`, by name:
    not one with several hard links (another scope's, or outside the vault?) unless
    `allow_hardlinks`."""
    base = root / folder
    if not base.is_dir():
        return []
    found = []
    for path in sorted(base.iterdir()):
        match = _NAME.match(path.name)
        relpath = f"{folder}/{path.name}"
        if not match or not path.is_file() or date_from_name(f"{match['day']}.md") is None:
            continue
        try:
            real, real_relpath = fsutil.resolve_in_vault(root, relpath)
        except VaultError:
            continue  # a symlink leading outside the vault is never read
        if scope_of(real_relpath) != scope_of(relpath):
            continue
        try:
            if fsutil.foreign_links(real.stat(), allow_hardlinks):
                continue
        except OSError:
            continue
        found.append((real, relpath, match["session"], match["day"]))
    return found


def header(
    session: str, scope: str, title: str, when: dt.datetime, updated: dt.datetime | None = None
) -> str:
    stamp = _stamp(when)
    return (
        "---\n"
        f"session: {json.dumps(session)}\n"
        f"started: {stamp}\n"
        f"updated: {_stamp(max(updated or when, when))}\n"
        f"scope: {json.dumps(scope)}\n"
        f"title: {json.dumps(title, ensure_ascii=False)}\n"
        "---\n\n"
        f"# {title or 'Session ' + session}\n"
    )


def _stamp(when: dt.datetime) -> str:
    return when.replace(tzinfo=None, microsecond=0).isoformat(timespec="seconds")


def title_of(turns: Sequence[Turn]) -> str:
    first = next((t for t in turns if t.role == "user" and t.text.strip()), None)
    first = first or next((t for t in turns if t.text.strip()), None)
    if first is None:
        return ""
    line = _squash(first.text.strip().split("\n", 1)[0])
    line = re.sub(r"[\x00-\x1f\x7f]", "", line)
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def render_turn(
    stored_id: int, parent: int | None, turn: Turn, when: dt.datetime, started: dt.date
) -> str:
    """One message block (it starts with a blank line), dated `when` unless its origin says
    when it was written."""
    when = written(turn, when)
    stamp = f"{when:%H:%M}" if when.date() == started else f"{when:%Y-%m-%d %H:%M}"
    meta: dict[str, Any] = {}
    body: list[str] = []
    if turn.role == "tool":
        label = "tool result" + (f" · {turn.name}" if turn.name else "")
        body = [f"> [!quote]- {label}", *_quoted(turn.text)]
        meta["tool"] = True
        if turn.tool_call_id is not None:
            meta["tool_call_id"] = turn.tool_call_id
    else:
        body = [
            ("\\" + line) if _LOOKS_LIKE_MARKER.match(line) else line
            for line in fsutil.split_lines(turn.text.strip("\n").rstrip())
        ]
        text_lines = len(body)
        if sum(1 for line in body if _FENCE.match(line)) % 2:
            body.append("```")  # an unclosed fence would swallow the rest of the file
        for call in turn.tool_calls:
            if body:
                body.append("")
            body.append(f"> [!example]- tool call · {call.name}")
            body.extend(_quoted(_pretty(call.arguments)))
        if len(body) != text_lines:
            meta["lines"] = text_lines
        if turn.tool_calls:
            meta["calls"] = [[c.id, c.name, c.arguments] for c in turn.tool_calls]
    if turn.name:
        meta["name"] = turn.name
    if turn.origin is not None:
        meta["ref"] = turn.origin.ref
        if turn.origin.form is not None:
            meta["form"] = turn.origin.form
    marker = (
        f"<!-- id: {stored_id} · parent: {'-' if parent is None else parent} · "
        f"at: {_stamp(when)} · hash: {turn.key}"
    )
    if meta:
        text = json.dumps(meta, ensure_ascii=False, separators=(",", ":"))
        marker += " · meta: " + text.replace(">", "\\u003e").replace("\n", "\\n")
    head = f"### {turn.role} · {stamp}\n{marker} -->\n"
    return "\n" + head + ("\n" + "\n".join(body) + "\n" if body else "")


def written(turn: Turn, when: dt.datetime) -> dt.datetime:
    return turn.origin.at if turn.origin is not None and turn.origin.at is not None else when


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in fsutil.split_lines(text)] or [">"]


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, indent=2)
    except (ValueError, TypeError):
        return arguments


def marker_keys(text: str) -> list[tuple[int, str]]:
    """(id, hash) of every message of a transcript's text, in file order (fast: markers only)."""
    return [(int(m["id"]), m["hash"]) for m in _MARKER.finditer(text)]


def marker_refs(text: str) -> dict[str, int]:
    """The source id (`ref`, lineage.py) -> message number of every message that has one."""
    found: dict[str, int] = {}
    if '"ref":' not in text:
        return found
    for match in _MARKER.finditer(text):
        meta = match["meta"]
        if not meta or '"ref":' not in meta:
            continue
        try:
            loaded = json.loads(meta)
        except ValueError:
            continue
        ref = loaded.get("ref") if isinstance(loaded, dict) else None
        if isinstance(ref, str):
            found.setdefault(ref, int(match["id"]))
    return found


def _new_turns(text: str, keys: list[tuple[int, str]], turns: Sequence[Turn]) -> list[Turn]:
    """What a transcript whose text is `text` (its markers `keys`) does not hold of `turns`:
    by id when the messages carry ids (lineage.py), else by content (`new_from`)."""
    if any(t.origin is not None for t in turns):
        return new_by_origin(marker_refs(text), turns)
    return new_from([k for _, k in keys], turns)


def parse_transcript(relpath: str, text: str) -> Transcript:
    """A transcript's text read back: its frontmatter and its messages. Pure."""
    lines = fsutil.split_lines(text.removeprefix("\ufeff"))
    fields: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        for line in lines[1:40]:
            if line.strip() == "---":
                break
            match = _FRONT_FIELD.match(line)
            if match:
                fields[match["key"]] = _yaml_scalar(match["value"])
    name = _NAME.match(relpath.rsplit("/", 1)[-1])
    session = fields.get("session") or (name["session"] if name else "")
    started = fields.get("started") or (name["day"] if name else "")
    transcript = Transcript(
        relpath,
        session,
        started,
        fields.get("updated") or started,
        fields.get("scope", scope_text(scope_of(relpath))),
        fields.get("title", ""),
    )
    markers = [
        (number, m)
        for number, line in enumerate(lines)
        if line.startswith("<!-- id: ") and (m := _MARKER.match(line))
    ]
    for index, (number, match) in enumerate(markers):
        end = markers[index + 1][0] - 1 if index + 1 < len(markers) else len(lines)
        body = lines[number + 1 : end]
        if body and not body[0].strip():
            body = body[1:]
        while body and not body[-1].strip():
            body.pop()
        meta: dict[str, Any] = {}
        if match["meta"]:
            try:
                loaded = json.loads(match["meta"])
                meta = loaded if isinstance(loaded, dict) else {}
            except ValueError:
                meta = {}
        heading = lines[number - 1] if number else ""
        role = heading[4:].split(" · ", 1)[0].strip() if heading.startswith("### ") else ""
        transcript.messages.append(
            StoredTurn(
                int(match["id"]),
                None if match["parent"] == "-" else int(match["parent"]),
                match["at"],
                match["hash"],
                _turn(role, body, meta),
                number,
            )
        )
    return transcript


def _turn(role: str, body: list[str], meta: dict[str, Any]) -> Turn:
    name = meta.get("name") if isinstance(meta.get("name"), str) else None
    ref, form = meta.get("ref"), meta.get("form")
    origin = (
        Origin(ref, form=form if isinstance(form, str) else None) if isinstance(ref, str) else None
    )
    if meta.get("tool") or role == "tool":
        text = "\n".join(
            line[2:] if line.startswith("> ") else line.lstrip(">") for line in body[1:]
        )
        call_id = meta.get("tool_call_id")
        tool_call_id = str(call_id) if call_id is not None else None
        return Turn("tool", text, name, (), tool_call_id, origin)
    count = meta.get("lines")
    kept = body[:count] if isinstance(count, int) and count >= 0 else body
    while kept and not kept[-1].strip():
        kept = kept[:-1]
    text = "\n".join(line[1:] if _ESCAPED_MARKER.match(line) else line for line in kept)
    calls = tuple(
        ToolCall(str(c[0]), str(c[1]), str(c[2]))
        for c in meta.get("calls") or []
        if isinstance(c, list) and len(c) == 3
    )
    role = role if role in ("user", "assistant", "system") else "user"
    return Turn(role, text, name, calls, None, origin)


def _yaml_scalar(value: str) -> str:
    value = value.strip()
    if value.startswith('"'):
        try:
            loaded = json.loads(value)
            return loaded if isinstance(loaded, str) else value
        except ValueError:
            return value.strip('"')
    if value.startswith("'") and value.endswith("'") and len(value) > 1:
        return value[1:-1].replace("''", "'")
    return value


def read_transcript(
    root: Path,
    relpath: str,
    max_bytes: int = MAX_TRANSCRIPT_BYTES,
    allow_hardlinks: bool = False,
) -> Transcript:
    real, relpath = fsutil.resolve_in_vault(root, relpath)
    limit = max(max_bytes, MAX_TRANSCRIPT_BYTES)
    text = fsutil.read_text(real, relpath, limit, allow_hardlinks).text
    found = parse_transcript(relpath, text)
    found.text = text
    return found


# -- writing -------------------------------------------------------------------------------


ParentChooser = Callable[[Sequence[StoredTurn], Sequence[Turn], int], list[int | None]]


def append_transcript(
    layout: Layout,
    turns: Sequence[Turn],
    session: str,
    when: dt.datetime | None = None,
    choose_parents: ParentChooser | None = None,
    title: str | None = None,
) -> TranscriptReport:
    """Append to the session's transcript the messages it does not hold yet (see `new_from`),
    creating it when needed (titled `title`, else by how the conversation opens). Safe from
    several processes at once: the choice is made under the append lock, from the file as it
    is then. `choose_parents(held, new, first_id)` may name each new message's parent
    (default: the message before it). Messages that carry their source's ids (lineage.py)
    are chosen by id and threaded as their source says, each dated as it says (a new
    transcript, by default, by the first of them)."""
    stated = [t.origin.at for t in turns if t.origin is not None and t.origin.at is not None]
    when = when or (min(stated) if stated else clock.now())
    folder = transcript_folder(layout)
    found = find_transcript(layout.root, folder, session)
    if found is None:
        relpath = f"{folder}/{when:%Y-%m-%d}-{session}.md"
        path, relpath = layout.resolve_own(relpath)
    else:
        path, relpath = layout.resolve_own(found[1])
    report = TranscriptReport(relpath, session, 0, 0)
    max_bytes = max(layout.config.index.max_file_bytes, MAX_TRANSCRIPT_BYTES)
    links_ok = layout.allow_hardlinks
    looked: dict[str, Any] = {}
    if path.exists():
        # A first look without the lock: the same conversation again writes nothing.
        read = fsutil.read_text(path, relpath, max_bytes, links_ok)
        keys = marker_keys(read.text)
        if not _new_turns(read.text, keys, turns):
            report.held = len(keys)
            return report
        looked = {"sha256": read.sha256, "keys": keys}
    path.parent.mkdir(parents=True, exist_ok=True)

    def blocks(current: str | None, sha256: str | None = None) -> str:
        if not current:
            held: list[tuple[int, str]] = []
        elif sha256 is not None and sha256 == looked.get("sha256"):
            held = looked["keys"]  # unchanged since the first look
        else:
            held = marker_keys(current)
        fresh = _new_turns(current or "", held, turns)
        report.held = len(held)
        report.appended = len(fresh)
        if not fresh:
            return ""
        start = _started(current, when) if current else when.date()
        first = max((i for i, _ in held), default=0) + 1
        report.first_id = first
        parents: list[int | None] = [
            (first + i - 1) if first + i - 1 >= 1 else None for i in range(len(fresh))
        ]
        if any(t.origin is not None for t in fresh):
            parents = parents_by_origin(marker_refs(current or ""), fresh, first)
        elif choose_parents is not None:
            stored = parse_transcript(relpath, current).messages if current else []
            chosen = choose_parents(stored, fresh, first)
            if len(chosen) == len(fresh):
                parents = chosen
        report.parents = list(parents)
        if current:
            _move_updated(path, current, max(written(t, when) for t in fresh))
        return "".join(
            render_turn(first + i, parents[i], t, when, start) for i, t in enumerate(fresh)
        )

    # Transcript writers take turns (`.vault/transcripts.lock`), each choosing what to append
    # from the file as it is then; a new file is created atomically with every message, an
    # existing one appended to (under the append lock too, so no other appender interleaves).
    scope = scope_text(layout.scope)
    with fsutil.lock_file(layout.cache_dir / "transcripts.lock", "transcript", LOCK_TIMEOUT):
        if path.exists():
            read = fsutil.read_text(path, relpath, max_bytes, links_ok)
            text = blocks(read.text, read.sha256)
            if text:
                fsutil.append_entry(path, text, allow_hardlinks=links_ok)
        else:
            text = blocks(None)
            if text:
                latest = max(written(t, when) for t in turns)
                opening = header(session, scope, title or title_of(turns), when, latest)
                fsutil.append_entry(path, text, create_with=opening, allow_hardlinks=links_ok)
    return report


def _started(text: str, fallback: dt.datetime) -> dt.date:
    match = re.search(r"^started:[ \t]*(\d{4}-\d{2}-\d{2})", text[:2000], re.M)
    if match:
        try:
            return dt.date.fromisoformat(match[1])
        except ValueError:
            pass
    return fallback.date()


def _move_updated(path: Path, text: str, when: dt.datetime) -> None:
    """Set the frontmatter's `updated:` to `when`, in place: same length, nothing else moves.
    A line of another length (a person edited it) is left alone."""
    match = re.search(r"\A---\r?\n(?:.*\r?\n)*?(updated:[ \t]*)(\S+)[ \t]*\r?\n", text[:4000])
    if not match:
        return
    value = _stamp(when)
    if len(value) != len(match[2]) or value <= match[2]:
        return
    offset = len(text[: match.start(2)].encode("utf-8"))
    fd = os.open(path, os.O_WRONLY)
    try:
        if os.fstat(fd).st_nlink > 1:  # never written through a hard link (allowed ones too)
            return
        os.pwrite(fd, value.encode("ascii"), offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def transcript_head(path: Path, relpath: str, session: str, day: str) -> Transcript:
    """A transcript's frontmatter only (the first few kB read)."""
    try:
        with path.open("rb") as fh:
            start = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        start = ""
    head = parse_transcript(relpath, start.split("\n<!-- id: ", 1)[0])
    head.session = head.session or session
    head.started = head.started or day
    return head


def locate_transcript(
    root: Path, folders: Sequence[str], session: str, allow_hardlinks: bool = False
) -> str:
    """The vault-relative path of the transcript of `session` in `folders` ("last": the one
    updated last). `TranscriptNotFoundError` when there is none."""
    from ..capture import check_session_id

    if session.strip() == "last":
        heads = [
            (transcript_head(path, relpath, name, day).updated, path.stat().st_mtime_ns, relpath)
            for folder in folders
            for path, relpath, name, day in transcript_files(root, folder, allow_hardlinks)
        ]
        if not heads:
            raise TranscriptNotFoundError("last")
        return original_of(root, max(heads)[2], [h[2] for h in heads])
    session = check_session_id(session)
    found = [hit[1] for folder in folders if (hit := find_transcript(root, folder, session))]
    if not found:
        raise TranscriptNotFoundError(session)
    if len(found) > 1:
        raise SessionInScopesError(
            session, [scope_text(scope_of(p)) for p in found], transcript=True
        )
    return found[0]


def original_of(root: Path, latest: str, relpaths: Sequence[str]) -> str:
    """`latest`, or the transcript it duplicates: a copy of one conversation that an older
    version wrote under a second session id (the same first message, and one holds the
    other's messages at its start). The copy holding the most messages wins, the one started
    first on a tie; a copy is never resumed over the conversation's own transcript."""
    folders = {r.rsplit("/", 1)[0] for r in relpaths}
    keys = {f"{f}/{name}": k for f in folders for name, k in first_keys(root, f).items()}
    key = keys.get(latest)
    same = [r for r in relpaths if key is not None and keys.get(r) == key]
    if len(same) < 2:
        return latest
    held: dict[str, list[str]] = {}
    for relpath in same:
        try:
            held[relpath] = [k for _, k in marker_keys(read_transcript(root, relpath).text)]
        except VaultError:
            continue
    mine = held.get(latest, [])
    copies = [
        r
        for r, keys in held.items()
        if keys[: len(mine)] == mine[: len(keys)] and min(len(keys), len(mine)) >= 2
    ]
    if len(copies) < 2:
        return latest

    def started(relpath: str) -> str:
        name = relpath.rsplit("/", 1)[-1]
        return transcript_head(root / relpath, relpath, "", name[:10]).started

    return min(copies, key=lambda r: (-len(held[r]), started(r), r))
