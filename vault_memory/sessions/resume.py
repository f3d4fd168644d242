"""Continue a session: its newest messages that fit a token budget, ready to resend, and the
older part as the running summary a `ConversationWindow` would have built (agents/window.py
uses the same lines, so a resumed window and one that never stopped look alike).

Pure but for the token counter: a transcript in, a `Continuation` out. It walks from the
newest message back, so a 50,000-message session costs what its budget holds plus one short
line per older message (bench/sessions.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .transcript import SUMMARY_HEADER, StoredTurn, Transcript

if TYPE_CHECKING:
    from ..search import TokenCounter

#: Tokens a chat API spends per message beyond its content (role, separators).
MESSAGE_OVERHEAD = 4
MIN_BUDGET = 64
NODES_KEPT = 50  # the latest messages a resumed threaded window may continue
SUMMARY_LINE_CHARS = 200
TRUNCATED = "\n[… cut to fit the context window; the whole message is saved in the vault]"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def content_text(message: dict[str, Any]) -> str:
    """What a message costs: its text (content parts joined) and its tool calls as JSON."""
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep their text
        content = "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    text = content or ""
    if message.get("tool_calls"):
        text += ("\n" if text else "") + json.dumps(message["tool_calls"], ensure_ascii=False)
    return str(text)


def summary_line(message: dict[str, Any]) -> str | None:
    """A dropped message in the running summary: its first sentence (None for tool output
    and bare tool calls)."""
    role = message.get("role")
    if role == "tool":
        return None  # raw tool output is not worth a summary line
    text = (
        " ".join(content_text(message).split())
        if role != "assistant" or not message.get("tool_calls")
        else ""
    )
    if not text:
        return None
    first = _SENTENCE.split(text, maxsplit=1)[0]
    if len(first) > SUMMARY_LINE_CHARS:
        first = first[: SUMMARY_LINE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return f"- {role}: {first}"


def summary_header(session: str) -> str:
    return f"{SUMMARY_HEADER}, session {session}):"


@dataclass
class Continuation:
    """A session picked up again: what to send, and how it was cut."""

    session: str
    path: str
    scope: str
    max_tokens: int
    system: list[dict[str, Any]] = field(default_factory=list)
    summary_lines: list[str] = field(default_factory=list)
    recent: list[dict[str, Any]] = field(default_factory=list)
    summarised: int = 0  # older messages folded into the summary
    total: int = 0  # messages of the session (of the thread, when threaded)
    tokens: int = 0
    threaded: bool = False
    last_id: int | None = None  # the newest message's number in the transcript
    recent_ids: list[int] = field(default_factory=list)  # the numbers of `recent`
    #: every message's number -> its parent's, and the latest few as (id, parent, role, text):
    #: what a threaded window needs to go on choosing parents
    parents: dict[int, int | None] = field(default_factory=dict, repr=False)
    nodes: list[tuple[int, int | None, str, str]] = field(default_factory=list, repr=False)
    #: the transcript's messages just before `recent`, and its last ones (a few of each):
    #: sent along with what a window flushes next, so the transcript knows where it goes
    before_recent: list[dict[str, Any]] = field(default_factory=list, repr=False)
    tail: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def summary_message(self) -> dict[str, Any] | None:
        if not self.summary_lines:
            return None
        return {
            "role": "system",
            "content": summary_header(self.session) + "\n" + "\n".join(self.summary_lines),
        }

    @property
    def messages(self) -> list[dict[str, Any]]:
        """System messages, the running summary (if any), then the recent messages."""
        summary = self.summary_message
        return [*self.system, *([summary] if summary else []), *self.recent]

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "path": self.path,
            "scope": self.scope,
            "max_tokens": self.max_tokens,
            "tokens": self.tokens,
            "total_messages": self.total,
            "summarised": self.summarised,
            "recent": len(self.recent),
            "threaded": self.threaded,
            "messages": self.messages,
        }


def thread_path(messages: Sequence[StoredTurn], tip: int | None = None) -> list[StoredTurn]:
    """The messages from the root to `tip` (default: the newest), following `parent:`."""
    if not messages:
        return []
    by_id = {m.id: m for m in messages}
    node = by_id.get(tip) if tip is not None else messages[-1]
    path: list[StoredTurn] = []
    seen: set[int] = set()
    while node is not None and node.id not in seen:
        seen.add(node.id)
        path.append(node)
        node = by_id.get(node.parent) if node.parent is not None else None
    return path[::-1]


def continue_from(
    transcript: Transcript,
    max_tokens: int,
    counter: TokenCounter,
    summary_tokens: int | None = None,
    threaded: bool = False,
) -> Continuation:
    """The newest messages of `transcript` within `max_tokens` (the system messages first),
    the older ones as summary lines within `summary_tokens` (default a quarter of the budget,
    as a window keeps it). `threaded`: the current thread's path only."""
    stored = thread_path(transcript.messages) if threaded else list(transcript.messages)
    found = Continuation(
        transcript.session,
        transcript.path,
        transcript.scope,
        max_tokens,
        total=len(stored),
        threaded=threaded,
        last_id=stored[-1].id if stored else None,
    )

    def cost(message: dict[str, Any]) -> int:
        return counter.count(content_text(message)) + MESSAGE_OVERHEAD

    # The system messages a conversation opens with stay, as a window keeps them.
    opening = 0
    while opening < len(stored) and stored[opening].turn.role == "system":
        opening += 1
    found.system = [m.turn.to_openai() for m in stored[:opening]]
    rest = stored[opening:]
    used = sum(cost(m) for m in found.system)
    summary_budget = max_tokens // 4 if summary_tokens is None else summary_tokens
    room = max_tokens - used
    if rest and len(rest) > 1:
        room -= min(summary_budget, room // 2)
    recent: list[dict[str, Any]] = []
    index = len(rest)
    while index > 0:
        message = rest[index - 1].turn.to_openai()
        spend = cost(message)
        if spend > room and recent:
            break
        recent.append(message)
        room -= spend
        index -= 1
    recent.reverse()
    # A tool result cannot stand without the call that asked for it.
    while len(recent) > 1 and recent[0].get("role") == "tool":
        recent.pop(0)
        index += 1
    if recent and room < 0:  # the newest message alone overflows: keep its start
        recent[-1] = _cut(recent[-1], cost(recent[-1]) + room, counter)
    found.recent = recent
    found.recent_ids = [m.id for m in rest[index:]]
    found.parents = {m.id: m.parent for m in transcript.messages}
    found.nodes = [(m.id, m.parent, m.turn.role, m.turn.text) for m in stored[-NODES_KEPT:]]
    if found.recent_ids:
        at = next(i for i, m in enumerate(transcript.messages) if m.id == found.recent_ids[0])
        found.before_recent = [m.turn.to_openai() for m in transcript.messages[max(0, at - 4) : at]]
    found.tail = [m.turn.to_openai() for m in transcript.messages[-4:]]
    older = rest[:index]
    found.summarised = len(older)
    found.summary_lines = _summary(older, summary_budget, transcript.session, counter)
    found.tokens = sum(cost(m) for m in found.messages)
    return found


def _summary(
    older: Sequence[StoredTurn], budget: int, session: str, counter: TokenCounter
) -> list[str]:
    """The newest summary lines of `older` whose summary message costs at most `budget`."""
    head = counter.count(summary_header(session)) + MESSAGE_OVERHEAD + 1
    lines: list[str] = []
    spent = head
    for message in reversed(older):
        line = summary_line(message.turn.to_openai())
        if line is None:
            continue
        spend = counter.count(line) + 1
        if spent + spend > budget:
            break
        lines.append(line)
        spent += spend
    lines.reverse()
    while (
        lines
        and counter.count(summary_header(session) + "\n" + "\n".join(lines)) + MESSAGE_OVERHEAD
        > budget
    ):
        lines.pop(0)
    return lines


def _cut(message: dict[str, Any], budget: int, counter: TokenCounter) -> dict[str, Any]:
    text = content_text(message)
    room = max(budget - MESSAGE_OVERHEAD - counter.count(TRUNCATED), 0)
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter.count(text[:mid]) <= room:
            lo = mid
        else:
            hi = mid - 1
    cut = {k: v for k, v in message.items() if k != "tool_calls"}
    cut["content"] = text[:lo] + TRUNCATED
    return cut
