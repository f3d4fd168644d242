"""Threads: the messages of a session form a tree. Each message has a parent, the message before
it by default. A user message that changes topic continues an earlier exchange instead: its
parent is the end of the recent exchange it is most like, chosen

- offline ("embedding"): cosine similarity of sentence embeddings (the vault's model) between
  the new message and each recent exchange (a user message with the reply to it); when the
  latest exchange is similar enough (`[sessions] thread_min_similarity`) nothing changes;
- or by the configured model ("llm"): it is shown the recent exchanges and names one;

and on any failure (no model, a bad reply) the parent is the latest message, as without threads.
Tool calls, tool results and replies always continue the message before them.

`pick` is pure (given the similarities); `parent_chooser` is what a flush hands to
`append_transcript`; `ThreadPicker` is what a threaded `ConversationWindow` asks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import VaultError

if TYPE_CHECKING:
    from ..config import Config
    from .transcript import ParentChooser, StoredTurn, Turn

log = logging.getLogger("vault_memory")

MODES = ("off", "embedding", "llm")
EXCHANGE_CHARS = 1000  # of each exchange, what is compared
VECTORS_KEPT = 4096
MARGIN = 0.1  # how much more like an earlier exchange than the latest a topic change must be


@dataclass(frozen=True)
class Exchange:
    """A place a new message may continue: `end` (a message id), with what was said there."""

    end: int
    text: str


def exchanges(nodes: Sequence[tuple[int, int | None, str, str]]) -> list[Exchange]:
    """The exchanges among recent messages given as (id, parent, role, text), oldest first: an
    assistant reply with the user message it answers, or a user message not answered yet."""
    by_id = {node[0]: node for node in nodes}
    answered: set[int] = set()
    found: list[Exchange] = []
    for node_id, parent, role, text in nodes:
        if role == "assistant" and text.strip():
            asked = by_id.get(parent) if parent is not None else None
            before = asked[3] if asked is not None and asked[2] == "user" else ""
            if asked is not None:
                answered.add(asked[0])
            found.append(Exchange(node_id, f"{before}\n{text}"[-EXCHANGE_CHARS:].strip()))
    for node_id, _, role, text in nodes:
        if role == "user" and node_id not in answered and text.strip():
            found.append(Exchange(node_id, text[:EXCHANGE_CHARS]))
    return sorted(found, key=lambda e: e.end)


def pick(similarities: Sequence[float], min_similarity: float, margin: float = MARGIN) -> int:
    """Which exchange (an index; the last is the latest) a new message continues. Pure.

    The latest, when it is similar enough, or when no other is both similar enough and
    clearly (`margin`) more similar than the latest; else the most similar one."""
    if not similarities:
        raise ValueError("no exchange to continue")
    latest = len(similarities) - 1
    if similarities[latest] >= min_similarity:
        return latest
    best = max(range(len(similarities)), key=lambda i: (similarities[i], i))
    if similarities[best] >= min_similarity and (
        similarities[best] - similarities[latest] >= margin
    ):
        return best
    return latest


Similar = Callable[[str, Sequence[str]], Sequence[float]]


class ThreadPicker:
    """Chooses the parent of a new user message among recent exchanges."""

    def __init__(self, config: Config, mode: str) -> None:
        if mode not in MODES:
            raise VaultError(
                f"[sessions] threads = {mode!r} is not a way to thread; use one of: "
                f"{', '.join(MODES)}."
            )
        self.config = config
        self.mode = mode
        self.min_similarity = config.sessions.thread_min_similarity
        self.window = max(2, config.sessions.thread_window)
        self._embedder: Any = None
        self._vectors: dict[str, Any] = {}  # text -> its embedding, the latest kept
        self._failed = False

    def parent(self, text: str, nodes: Sequence[tuple[int, int | None, str, str]]) -> int | None:
        """The id the new message (`text`) continues; the latest node's on any failure."""
        if not nodes:
            return None
        latest = nodes[-1][0]
        if self.mode == "off" or self._failed or not text.strip():
            return latest
        places = exchanges(nodes[-self.window :])
        if len(places) < 2:
            return latest
        try:
            if self.mode == "llm":
                chosen = self._ask_model(text, places)
            else:
                chosen = places[
                    pick(self._similar(text, [p.text for p in places]), self.min_similarity)
                ].end
        except (VaultError, OSError, RuntimeError, ValueError) as exc:
            self._failed = True
            log.warning("threads: %s; each message continues the one before it", exc)
            return latest
        # continuing the latest exchange is continuing the conversation where it is
        return latest if chosen == places[-1].end else chosen

    def _similar(self, text: str, others: Sequence[str]) -> Sequence[float]:
        """Cosine of `text` with each of `others`; each text is embedded once per picker
        (a flush of many messages compares each exchange with many new messages)."""
        import numpy as np

        if self._embedder is None:
            from ..index import shared_embedder

            self._embedder = shared_embedder(self.config.index.model)
        texts = [text, *others]
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            for key, vector in zip(missing, self._embedder.embed(missing), strict=True):
                self._vectors[key] = vector
            while len(self._vectors) > VECTORS_KEPT:
                self._vectors.pop(next(iter(self._vectors)))
        matrix = np.asarray([self._vectors[t] for t in texts])
        return [float(x) for x in matrix[1:] @ matrix[0]]

    def _ask_model(self, text: str, places: Sequence[Exchange]) -> int:
        from ..capture import redact_text
        from ..llm import LLMClient

        client = LLMClient.from_config(self.config)
        if client is None:
            raise VaultError('threads = "llm" but vault.toml has no [llm] model')
        listing = "\n\n".join(f"[{p.end}] {redact_text(p.text)[:400]}" for p in places)
        prompt = (
            "A conversation has these recent exchanges, each with its number:\n\n"
            f"{listing}\n\nA new message arrives:\n{redact_text(text)[:1000]}\n\n"
            "Which exchange does the new message continue? Answer with JSON "
            '{"continues": NUMBER}; the last number if it simply goes on from there.'
        )
        reply = client.chat_json([{"role": "user", "content": prompt}])
        chosen = reply.get("continues") if isinstance(reply, dict) else None
        if isinstance(chosen, str) and chosen.strip().isdigit():
            chosen = int(chosen)
        if not isinstance(chosen, int) or chosen not in {p.end for p in places}:
            raise VaultError(f"the model named no listed exchange ({chosen!r})")
        return chosen


def parent_chooser(config: Config, mode: str) -> ParentChooser:
    """What `append_transcript` calls: each new message's parent, given the messages the
    transcript holds."""
    picker = ThreadPicker(config, mode)

    def choose(held: Sequence[StoredTurn], new: Sequence[Turn], first: int) -> list[int | None]:
        nodes = [(m.id, m.parent, m.turn.role, m.turn.text) for m in held[-picker.window :]]
        parents: list[int | None] = []
        for offset, turn in enumerate(new):
            previous = nodes[-1][0] if nodes else None
            parent = picker.parent(turn.text, nodes) if turn.role == "user" else previous
            parents.append(parent)
            nodes.append((first + offset, parent, turn.role, turn.text))
            del nodes[: -picker.window]
        return parents

    return choose
