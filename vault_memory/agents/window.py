"""`ConversationWindow`: the context tier of an agent's memory.

It holds the recent messages of a conversation within a token budget. When a new message
would overflow it, the oldest messages leave the window, and before they go they are flushed
into the vault (`Vault.flush`, idempotent, redacted) and folded into a running summary that
stays at the top of the window. Nothing leaves the window unrecorded.

    window = ConversationWindow(vault, max_tokens=6000, session="support-42")
    window.add({"role": "system", "content": "You are a helpful assistant."})
    window.add({"role": "user", "content": "Hi, I'm Zoë; I prefer short answers."})
    reply = llm(window.messages)            # never more than 6000 tokens
    window.add({"role": "assistant", "content": reply})
    ...
    window.close()                          # flush what is still in the window

The summary is built offline by default (the first sentence of each dropped message, newest
kept when it outgrows its share of the budget; the vault keeps everything). With
`use_llm=True` and an `[llm]` section in vault.toml, a model rewrites the summary instead;
an unusable reply falls back to the offline summary with a warning.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import VaultError
from ..sessions import (
    MESSAGE_OVERHEAD,
    MIN_BUDGET,
    SUMMARY_HEADER,
    TRUNCATED,
    content_text as _content_text,
    summary_line as _summary_line,
)

if TYPE_CHECKING:
    from ..search import TokenCounter
    from ..vault import Vault

log = logging.getLogger("vault_memory")

SUMMARY_LINE_CHARS = 200
TAIL = 4  # messages flushed or added before, sent along so the transcript aligns the next


@dataclass
class WindowStats:
    messages: int
    tokens: int
    max_tokens: int
    summary_tokens: int
    dropped: int
    flushed_entries: int
    warnings: list[str] = field(default_factory=list)


class ConversationWindow:
    """Recent messages within `max_tokens`; dropped ones are flushed and summarised."""

    def __init__(
        self,
        vault: Vault,
        max_tokens: int = 8000,
        *,
        session: str | None = None,
        summary_tokens: int | None = None,
        use_llm: bool = False,
        counter: TokenCounter | None = None,
        threaded: bool = False,
        threads: str | None = None,
    ) -> None:
        if max_tokens < MIN_BUDGET:
            raise VaultError(
                f"a conversation window needs at least {MIN_BUDGET} tokens (got {max_tokens})."
            )
        if counter is None:
            from ..search import load_counter

            counter = load_counter()
        self.vault = vault
        self.max_tokens = max_tokens
        self.summary_budget = summary_tokens if summary_tokens is not None else max_tokens // 4
        self.session = session or f"window-{uuid.uuid4().hex[:12]}"
        self.use_llm = use_llm
        self.counter = counter
        self.system: list[dict[str, Any]] = []
        self.recent: list[dict[str, Any]] = []
        self.summary_lines: list[str] = []
        self.dropped = 0
        self.flushed_entries = 0
        self.warnings: list[str] = []
        self._saved_whole: list[dict[str, Any]] = []  # cut messages, flushed whole before
        # The last messages flushed, in order: sent again before the next batch, so the
        # transcript knows where the batch goes (a batch of one "ok" is not an older "ok").
        self._flushed_tail: list[dict[str, Any]] = []
        self._flushed: set[int] = set()  # id() of the messages of the window flushed already
        #: Threaded: the window holds the current thread's path, not the last N messages.
        #: Every message is recorded in the transcript as it comes (which numbers it and
        #: chooses its parent); `threads` is how ("embedding" unless vault.toml names one).
        self.threaded = threaded
        configured = vault.config.sessions.threads if threaded else "off"
        self.threads = threads or (configured if configured != "off" else "embedding")
        self._node: dict[int, int] = {}  # id(message) -> its number in the transcript
        self._parents: dict[int, int | None] = {}  # number -> parent's number
        self._added: list[dict[str, Any]] = []  # the last messages added, in order

    # -- what the agent sends ---------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """System messages, the running summary (if any), then the recent messages."""
        summary = self._summary_message()
        return [*self.system, *([summary] if summary else []), *self.recent]

    @property
    def summary(self) -> str:
        return "\n".join(self.summary_lines)

    def tokens(self) -> int:
        return sum(self.cost(m) for m in self.messages)

    def cost(self, message: dict[str, Any]) -> int:
        return self.counter.count(_content_text(message)) + MESSAGE_OVERHEAD

    def stats(self) -> WindowStats:
        summary = self._summary_message()
        return WindowStats(
            len(self.messages),
            self.tokens(),
            self.max_tokens,
            self.cost(summary) if summary else 0,
            self.dropped,
            self.flushed_entries,
            list(self.warnings),
        )

    # -- adding -----------------------------------------------------------------------------

    def add(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """Add one message; returns the messages that left the window (already flushed)."""
        message = _checked(message)
        if message["role"] == "system" and not self.recent:
            if sum(self.cost(m) for m in [*self.system, message]) > self.max_tokens // 2:
                raise VaultError(
                    f"the system messages alone take more than half of the window's "
                    f"{self.max_tokens} tokens; raise max_tokens or shorten them."
                )
            self.system.append(message)
            return []
        if self.threaded:
            left = self._follow_thread(message)
            self.recent.append(message)
            return left + self._fit()
        self.recent.append(message)
        return self._fit()

    @classmethod
    def resume(
        cls,
        vault: Vault,
        session: str = "last",
        max_tokens: int = 8000,
        *,
        summary_tokens: int | None = None,
        use_llm: bool = False,
        counter: TokenCounter | None = None,
        threaded: bool = False,
        threads: str | None = None,
    ) -> ConversationWindow:
        """A window picking up a flushed session (`"last"`: the one updated last) where it
        stopped: its system messages, the newest messages that fit, the older ones as the
        running summary; messages added from here on go on in the same transcript."""
        found = vault.continue_session(
            session, max_tokens, summary_tokens=summary_tokens, threaded=threaded
        )
        window = cls(
            vault,
            max_tokens,
            session=found.session,
            summary_tokens=summary_tokens,
            use_llm=use_llm,
            counter=counter,
            threaded=threaded,
            threads=threads,
        )
        window.system = found.system
        window.summary_lines = list(found.summary_lines)
        window.recent = found.recent
        window.dropped = found.summarised
        window._flushed_tail = found.before_recent[-TAIL:]
        window._flushed = {id(m) for m in found.recent}
        window._added = found.tail[-TAIL:]
        window._parents = dict(found.parents)
        window._node = {id(m): n for m, n in zip(found.recent, found.recent_ids, strict=True)}
        return window

    def _follow_thread(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """Record `message` (its parent chosen by the transcript); when it continues an
        earlier exchange, the messages off that thread's path leave the window (flushed and
        summarised). Returns them."""
        report = self.vault.record_transcript(
            [*self.system, *self._added, message], session=self.session, threads=self.threads
        )
        self._added = [*self._added, message][-TAIL:]
        if not report.appended or report.first_id is None:
            return []  # held already (it cannot be told from an earlier, identical message)
        number, parent = report.first_id + report.appended - 1, report.parents[-1]
        self._node[id(message)] = number
        self._parents[number] = parent
        latest = self._node.get(id(self.recent[-1])) if self.recent else None
        if parent is None or latest is None or parent == latest:
            return []
        path: set[int] = set()
        node: int | None = parent
        while node is not None and node not in path:
            path.add(node)
            node = self._parents.get(node)
        off = [m for m in self.recent if self._node.get(id(m)) not in path]
        if not off:
            return []
        self._flush(list(self.recent))
        self.recent = [m for m in self.recent if self._node.get(id(m)) in path]
        self._fold(off)
        return off

    def extend(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        dropped: list[dict[str, Any]] = []
        for message in messages:
            dropped += self.add(message)
        return dropped

    def close(self) -> int:
        """Flush the messages still in the window (end of a session). Returns entries added."""
        if not self.recent:
            return 0
        return self._flush(list(self.recent))

    # -- keeping the budget -----------------------------------------------------------------

    def _fit(self) -> list[dict[str, Any]]:
        dropped: list[dict[str, Any]] = []
        while self.tokens() > self.max_tokens and len(self.recent) > 1:
            batch = [self.recent.pop(0)]
            # A tool result cannot stand without the call that asked for it.
            while self.recent and self.recent[0].get("role") == "tool" and len(self.recent) > 1:
                batch.append(self.recent.pop(0))
            dropped += batch
            self._flush(batch)
            self._fold(batch)
            self._saved_whole = [c for c in self._saved_whole if not any(c is m for m in batch)]
        if self.tokens() > self.max_tokens:
            self._shrink_summary(0)
        if self.tokens() > self.max_tokens and self.recent:
            self._truncate_last()
        return dropped

    def _flush(self, batch: list[dict[str, Any]]) -> int:
        # A message cut to fit was flushed whole before it was cut: never flush the cut copy.
        batch = [m for m in batch if not any(m is cut for cut in self._saved_whole)]
        if not batch:
            return 0
        if self.threaded:  # each message is in the transcript already, threaded
            report = self.vault.flush(batch, session=self.session, transcript=False)
        else:
            again = all(id(m) in self._flushed for m in batch)  # close twice: no context
            # The system messages go along: the transcript keeps them once, first.
            context = [] if again else [*self.system, *self._flushed_tail]
            report = self.vault.flush([*context, *batch], session=self.session)
            self._flushed_tail = [*self._flushed_tail, *batch][-TAIL:]
            self._flushed.update(id(m) for m in batch)
        self.flushed_entries += len(report.entries)
        self.warnings += [str(w) for w in report.warnings]
        return len(report.entries)

    def _fold(self, batch: list[dict[str, Any]]) -> None:
        self.dropped += len(batch)
        lines = None
        if self.use_llm:
            lines = self._llm_summary(batch)
        if lines is None:
            lines = self.summary_lines + [line for m in batch if (line := _summary_line(m))]
        self.summary_lines = lines
        self._shrink_summary(self.summary_budget)

    def _shrink_summary(self, budget: int) -> None:
        """Drop the oldest summary lines until the summary message costs at most `budget`
        tokens (the vault holds what they said) — or until it is gone."""
        while len(self.summary_lines) > 1:
            message = self._summary_message()
            if message is None or self.cost(message) <= budget:
                return
            self.summary_lines.pop(0)
        message = self._summary_message()
        if message is None or self.cost(message) <= budget:
            return
        # One line left and still too long: keep the start of it, if anything fits.
        self.summary_lines = []
        room = budget - self.cost({"role": "system", "content": self._summary_header() + "\n"})
        line = _fit_prefix(self.counter, message["content"].split("\n", 1)[1], room)
        if line and room > 0:
            self.summary_lines = [line if line.endswith("…") else line + "…"]
            while self.summary_lines and self.cost(self._summary_message() or {}) > budget:
                self.summary_lines[0] = self.summary_lines[0][:-2] + "…"
                if len(self.summary_lines[0]) <= 3:
                    self.summary_lines = []

    def _truncate_last(self) -> None:
        """The newest message alone overflows the window: it was flushed whole, and the
        window keeps as much of its start as fits."""
        last = self.recent[-1]
        self._flush([last])
        text = _content_text(last)
        room = self.max_tokens - (self.tokens() - self.cost(last)) - MESSAGE_OVERHEAD
        room -= self.counter.count(TRUNCATED)
        kept = _fit_prefix(self.counter, text, max(room, 0))
        self.recent[-1] = {**last, "content": kept + TRUNCATED}
        self._saved_whole.append(self.recent[-1])
        self.recent[-1].pop("tool_calls", None)
        while self.tokens() > self.max_tokens and self.recent[-1]["content"]:
            content = self.recent[-1]["content"]
            self.recent[-1]["content"] = content[: len(content) // 2]

    def _summary_header(self) -> str:
        return f"{SUMMARY_HEADER}, session {self.session}):"

    def _summary_message(self) -> dict[str, Any] | None:
        if not self.summary_lines:
            return None
        return {
            "role": "system",
            "content": self._summary_header() + "\n" + "\n".join(self.summary_lines),
        }

    def _llm_summary(self, batch: list[dict[str, Any]]) -> list[str] | None:
        from ..capture import redact_text
        from ..llm import LLMClient, LLMError

        try:
            client = LLMClient.from_config(self.vault.config)
        except VaultError as exc:
            self._warn(f"summary by model unavailable ({exc}); summarised offline")
            return None
        if client is None:
            self._warn("use_llm is set but vault.toml has no [llm] model; summarised offline")
            return None
        transcript = "\n".join(
            f"{m.get('role')}: {_content_text(m)[:2000]}" for m in batch if m.get("role") != "tool"
        )
        budget_words = max(20, int(self.summary_budget * 0.6))
        prompt = (
            "Update the running summary of a conversation. Keep facts, decisions, preferences "
            "and open tasks; drop small talk. Answer with JSON: "
            '{"summary": ["short line", ...]}, at most '
            f"{budget_words} words in all.\n\n"
            f"Summary so far:\n{redact_text(self.summary) or '(empty)'}\n\n"
            f"Messages leaving the context window:\n{redact_text(transcript)}"
        )
        try:
            reply = client.chat_json([{"role": "user", "content": prompt}])
        except LLMError as exc:
            self._warn(f"{exc}; summarised offline")
            return None
        lines = reply.get("summary") if isinstance(reply, dict) else None
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            self._warn("the model's summary was not a list of lines; summarised offline")
            return None
        cleaned = [redact_text(" ".join(x.split()))[:SUMMARY_LINE_CHARS] for x in lines]
        return [f"- {x.lstrip('- ')}" for x in cleaned if x.strip()]

    def _warn(self, text: str) -> None:
        log.warning("conversation window: %s", text)
        self.warnings.append(text)


def _checked(message: Any) -> dict[str, Any]:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise VaultError(
            'a message is a dict with a "role" and a "content", e.g. '
            '{"role": "user", "content": "hello"}.'
        )
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise VaultError("a message's content must be text (or a list of content parts).")
    return dict(message)


def _fit_prefix(counter: TokenCounter, text: str, budget: int) -> str:
    """The longest prefix of `text` (cut at a space) that costs at most `budget` tokens."""
    if counter.count(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter.count(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut
