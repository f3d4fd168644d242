"""The OpenAI Agents SDK's conversation memory (`agents.memory.Session`) kept in a vault: the
session's items are a session transcript, `sessions/DATE-<session id>.md` (responses.py).

    from agents import Agent, Runner
    from vault_memory.adapters.agents_session import VaultSession

    session = VaultSession("support-42", "~/notes")
    await Runner.run(agent, "Which database did we pick for billing?", session=session)

`get_items(limit)` (the newest `limit` items, oldest first), `add_items`, `pop_item` (the
newest, taken out of the file), `clear_session` (the transcript deleted), as the SDK's
`Session` protocol asks; `session_settings` (its `limit`) too. Each item is one message of
the transcript, threaded after the one before it and dated when it was added; a person reads
the conversation there, `vault sessions continue support-42` picks it up, and search finds
it. Items come back as they were given, except for secrets in what they say, which the
vault never writes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

try:
    from agents.memory.session_settings import SessionSettings, resolve_session_limit
except ImportError as exc:  # pragma: no cover - said once, at import
    raise ImportError(
        "the Agents SDK session needs openai-agents: pip install 'vault-memory[agents]'"
    ) from exc

from .. import clock
from ..capture import check_session_id
from ..errors import VaultError
from ..sessions import (
    PREVIOUS,
    Origin,
    TranscriptNotFoundError,
    append_transcript,
    drop_last_message,
    find_transcript,
    forget_transcript,
    read_transcript,
    transcript_folder,
)
from ..vault import Vault
from .responses import redact_item, to_item, to_turn


class VaultSession:
    """A session of the OpenAI Agents SDK whose items are the transcript of `session_id` in
    `vault` (a scope's own `sessions/` with `scope=("org", "acme")`)."""

    def __init__(
        self,
        session_id: str,
        vault: Vault | str | Path,
        *,
        scope: Sequence[str] = (),
        session_settings: SessionSettings | None = None,
        redact: bool = True,
    ) -> None:
        self.session_id = check_session_id(session_id)
        root = vault if isinstance(vault, Vault) else Vault(vault)
        self.vault = root.scope(*scope) if scope else root
        self.session_settings = session_settings
        self.redact = redact

    # -- the Session protocol -------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
        limit = resolve_session_limit(limit, self.session_settings)
        return await asyncio.to_thread(self.items, limit)

    async def add_items(self, items: list[Any]) -> None:
        if items:
            await asyncio.to_thread(self.add, list(items))

    async def pop_item(self) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.pop)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self.clear)

    # -- the same, synchronous ------------------------------------------------------------

    def items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The newest `limit` items (all when None), oldest first."""
        if limit is not None and limit <= 0:
            return []
        messages = self._messages()
        chosen = messages if limit is None else messages[-limit:]
        return [to_item(m.turn) for m in chosen]

    def add(self, items: Sequence[Any]) -> None:
        """Append the items to the transcript, each after the one before it."""
        layout = self.vault.layout
        held = self._messages()
        last = held[-1].turn.origin if held else None
        parent = last.ref if last is not None else (PREVIOUS if held else None)
        now = clock.now()
        turns = []
        for item in items:
            given = _as_dict(item)
            if self.redact:
                given = redact_item(given)
            ref = uuid.uuid4().hex  # an item's own id may repeat (a retried call); this never does
            turns.append(to_turn(given, Origin(ref, parent, now)))
            parent = ref
        append_transcript(layout, turns, self.session_id, now)

    def pop(self) -> dict[str, Any] | None:
        """Take the newest item out of the transcript and return it."""
        dropped = drop_last_message(self.vault.layout, self.session_id)
        return to_item(dropped.turn) if dropped is not None else None

    def clear(self) -> None:
        """Delete the transcript."""
        forget_transcript(self.vault.layout, self.session_id)

    def _messages(self) -> list[Any]:
        layout = self.vault.layout
        found = find_transcript(layout.root, transcript_folder(layout), self.session_id)
        if found is None:
            return []
        try:
            return list(read_transcript(layout.root, found[1]).messages)
        except TranscriptNotFoundError:
            return []


def _as_dict(item: Any) -> dict[str, Any]:
    """An item as a plain dict (the SDK hands dicts; a pydantic model is dumped)."""
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        value = dump(exclude_unset=True)
        if isinstance(value, dict):
            return value
    raise VaultError(f"a session item is a JSON object, not {type(item).__name__}")
