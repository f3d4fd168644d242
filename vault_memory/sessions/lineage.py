"""Messages that name themselves: a source that gives each message an id of its own (a coding
agent's session file, an agent framework's items) and the id of the message it answers.

A transcript keeps each such message's id (`ref`, in its marker's meta) and threads it under
the message it answers, so that:

- the same messages again add nothing, and a message the transcript does not hold is added
  wherever it sits in the input (a sub-agent's messages arriving between older ones, a
  session file read while it was still being written): what is new is decided by id, not by
  where the input starts to differ from the file;
- the same words said twice (two "yes") are two messages, as they were;
- a message's parent is the message it names, found by id among those the transcript holds and
  those appended with it; a parent it does not hold (a session resumed from another file) is
  the message before it, as without ids.

`new_by_origin` and `parents_by_origin` are pure.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

#: A parent to give a message that simply follows the one before it (whatever that is).
PREVIOUS = "\u0000previous"


@dataclass(frozen=True)
class Origin:
    """Where a message comes from: its id in its source (`ref`), the id of the message it
    answers (`parent`, None for the first of a thread), when it was written (`at`, local
    wall time) and, when the transcript's own form does not hold all of it, the source's
    form of it (`form`: JSON the source's reader knows, kept in the marker's meta)."""

    ref: str
    parent: str | None = None
    at: dt.datetime | None = None
    form: str | None = None


class Said(Protocol):
    """A message as these functions see it (a transcript's `Turn`)."""

    @property
    def origin(self) -> Origin | None: ...


T = TypeVar("T", bound=Said)


def new_by_origin(held: Mapping[str, int], incoming: Sequence[T]) -> list[T]:
    """The messages of `incoming` whose id the transcript (`held`: id -> message number) does
    not hold yet, each id once. Messages without an id are all new. Pure."""
    seen: set[str] = set()
    fresh = []
    for turn in incoming:
        origin = turn.origin
        if origin is not None:
            if origin.ref in held or origin.ref in seen:
                continue
            seen.add(origin.ref)
        fresh.append(turn)
    return fresh


def parents_by_origin(
    held: Mapping[str, int], fresh: Sequence[Said], first: int
) -> list[int | None]:
    """The parent number of each message of `fresh`, numbered from `first`: the message its
    origin names (held, or appended before it), None for the first of a thread, else (a
    parent not held, or `PREVIOUS`) the message before it. Pure."""
    numbers = dict(held)
    parents: list[int | None] = []
    for offset, turn in enumerate(fresh):
        number = first + offset
        before = number - 1 if number > 1 else None
        origin = turn.origin
        if origin is None:
            parents.append(before)
            continue
        if origin.parent is None:
            parents.append(None)
        else:
            parents.append(numbers.get(origin.parent, before))
        numbers[origin.ref] = number
    return parents


def origins_of(items: Sequence[Mapping[str, object]]) -> list[Origin] | None:
    """The origins of raw messages when every one carries an `id` (and maybe a `parent_id`
    and an ISO 8601 `timestamp`), else None: input without ids keeps the usual rules."""
    found = []
    for item in items:
        ref = item.get("id")
        if not isinstance(ref, str | int) or isinstance(ref, bool) or str(ref) == "":
            return None
        parent = item.get("parent_id")
        found.append(
            Origin(
                str(ref),
                str(parent) if isinstance(parent, str | int) and parent != "" else None,
                local_time(item.get("timestamp")),
            )
        )
    return found


def local_time(value: object) -> dt.datetime | None:
    """An ISO 8601 date-time as local wall time (naive), or None."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    try:
        return parsed.astimezone().replace(tzinfo=None) if parsed.tzinfo else parsed
    except (OverflowError, OSError):
        return None
