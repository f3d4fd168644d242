"""Messages that carry their source's ids: a transcript knows them by id (new or not, wherever
they sit in the input), threads them under the message they name, and dates each as it says."""

from __future__ import annotations

from pathlib import Path

from vault_memory import Vault
from vault_memory.sessions import Turn
from vault_memory.sessions.lineage import (
    Origin,
    new_by_origin,
    origins_of,
    parents_by_origin,
)


def turn(ref: str, parent: str | None = None, text: str = "yes") -> Turn:
    return Turn("user", text, origin=Origin(ref, parent))


def test_new_by_origin_is_by_id_not_by_words() -> None:
    held = {"a": 1, "b": 2}
    incoming = [turn("a"), turn("c"), turn("b"), turn("d"), turn("c")]
    assert [t.origin.ref for t in new_by_origin(held, incoming)] == ["c", "d"]  # type: ignore[union-attr]
    # the same words twice are two messages
    assert len(new_by_origin({}, [turn("x"), turn("y")])) == 2
    # messages without ids are all new
    assert len(new_by_origin(held, [Turn("user", "yes"), Turn("user", "yes")])) == 2


def test_parents_by_origin() -> None:
    held = {"a": 1, "b": 2}
    fresh = [
        turn("c", "a"),
        turn("d", None),
        turn("e", "c"),
        turn("f", "nowhere"),
        Turn("user", "x"),
    ]
    assert parents_by_origin(held, fresh, 3) == [1, None, 3, 5, 6]
    assert parents_by_origin({}, [turn("z", "gone")], 1) == [None]  # nothing before the first


def test_origins_only_when_every_message_has_an_id() -> None:
    items = [
        {"role": "user", "content": "a", "id": "1", "timestamp": "2026-03-10T12:00:00"},
        {"role": "assistant", "content": "b", "id": 2, "parent_id": "1"},
    ]
    found = origins_of(items)
    assert found is not None
    assert [(o.ref, o.parent) for o in found] == [("1", None), ("2", "1")]
    assert found[0].at is not None and found[0].at.isoformat() == "2026-03-10T12:00:00"
    assert origins_of([*items, {"role": "user", "content": "c"}]) is None
    assert origins_of([{"role": "user", "content": "c", "id": ""}]) is None


def test_flushed_messages_with_ids_thread_and_date_as_they_say(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    first = [
        {"role": "user", "content": "yes", "id": "u1", "timestamp": "2026-03-10T09:00:00"},
        {
            "role": "assistant",
            "content": "Done.",
            "id": "a1",
            "parent_id": "u1",
            "timestamp": "2026-03-10T09:01:00",
        },
    ]
    report = vault.record_transcript(first, "ids-1")
    assert report.appended == 2
    assert vault.record_transcript(first, "ids-1").appended == 0  # the same again: nothing
    later = [
        *first,
        {
            "role": "user",
            "content": "yes",
            "id": "u2",
            "parent_id": "u1",
            "timestamp": "2026-03-11T10:00:00",
        },
    ]
    assert vault.record_transcript(later, "ids-1").appended == 1  # "yes" again is new
    found = vault.transcript("ids-1")
    assert [(m.id, m.parent, m.at) for m in found.messages] == [
        (1, None, "2026-03-10T09:00:00"),
        (2, 1, "2026-03-10T09:01:00"),
        (3, 1, "2026-03-11T10:00:00"),
    ]
    assert found.path == "sessions/2026-03-10-ids-1.md"
    assert found.started == "2026-03-10T09:00:00" and found.updated == "2026-03-11T10:00:00"
    assert [m.turn.origin.ref for m in found.messages] == ["u1", "a1", "u2"]  # type: ignore[union-attr]
