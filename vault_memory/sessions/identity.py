"""One transcript per conversation: a conversation is known by what it says, not only by the
session id it was flushed under.

A flush without `--session` derives an id from how the conversation opens; flushed once with
`--session support-42` and again without, the same conversation used to get a second
transcript (and `sessions continue last` picked the copy). Here:

- `same_conversation` (pure): two message sequences are one conversation when they open with
  the same messages as far as the shorter goes, two said messages at least (a canned "hi" /
  "How can I help?" is no identity).
- `find_conversation`: the transcript of a folder that holds a conversation, by content. Only
  the first message of each transcript is read (its marker, near the top; remembered by inode
  in `.vault/`, see `transcript.first_keys`); a candidate is then read whole.
- Pruned transcripts leave a record in `sessions/.pruned.jsonl` (a dotfile: never indexed;
  in git it is committed with the deletion): the session, when, how many messages it held
  and a digest of their hashes, nothing of what they said. `after_pruned` takes those
  messages out of a later flush of the same conversation, so that a pruned transcript stays
  pruned, and says so; only messages after them are kept.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import VaultError
from ..files import fsutil
from .transcript import Turn, first_keys, is_summary, marker_keys, session_of_name

log = logging.getLogger("vault_memory")

PRUNED_FILE = ".pruned.jsonl"
#: Said messages (user, assistant) two conversations must share at their start to be one.
MIN_SHARED = 2
_MAX_PRUNED_BYTES = 50_000_000


def conversation_keys(turns: Sequence[Turn]) -> list[str]:
    """The keys a transcript would hold for `turns`, in order (a window's summary is none)."""
    return [t.key for t in turns if not is_summary(t)]


def same_conversation(held: Sequence[str], turns: Sequence[Turn]) -> bool:
    """Whether a transcript holding the message keys `held` keeps the conversation `turns`:
    both open with the same messages as far as the shorter goes, `MIN_SHARED` of them said
    by a user or an assistant. Pure."""
    said = [t for t in turns if not is_summary(t)]
    shared = min(len(held), len(said))
    if shared == 0 or list(held[:shared]) != [t.key for t in said[:shared]]:
        return False
    return sum(t.role in ("user", "assistant") for t in said[:shared]) >= MIN_SHARED


def find_conversation(
    root: Path, folder: str, turns: Sequence[Turn], max_bytes: int, save: bool = False
) -> tuple[str, str] | None:
    """(vault-relative path, session) of the transcript in `folder` that keeps the
    conversation `turns`, the one started first; None when there is none. `save`: see
    `first_keys`."""
    keys = conversation_keys(turns)
    if not keys:
        return None
    opening = [name for name, key in first_keys(root, folder, save).items() if key == keys[0]]
    for name in sorted(opening):  # named by the day they started: the oldest first
        relpath = f"{folder}/{name}"
        try:
            path, _ = fsutil.resolve_in_vault(root, relpath)
            text = fsutil.read_text(path, relpath, max_bytes).text
        except VaultError:
            continue
        if same_conversation([k for _, k in marker_keys(text)], turns):
            return relpath, session_of_name(name)
    return None


# -- what pruning leaves behind --------------------------------------------------------------


@dataclass(frozen=True)
class Pruned:
    """A transcript pruned: its session, file, when, and the messages it held (how many, the
    first one's hash and a digest of all their hashes)."""

    session: str
    path: str
    pruned: str  # ISO date-time
    messages: int
    opening: str
    digest: str

    def line(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False) + "\n"


def keys_digest(keys: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(keys).encode("ascii")).hexdigest()[:16]


def pruned_record(session: str, relpath: str, text: str, when: dt.datetime) -> Pruned | None:
    """What to remember of the transcript `text` pruned at `when` (None: it held nothing)."""
    keys = [k for _, k in marker_keys(text)]
    if not keys:
        return None
    return Pruned(
        session, relpath, when.isoformat(timespec="seconds"), len(keys), keys[0], keys_digest(keys)
    )


def remember_pruned(root: Path, folder: str, records: Sequence[Pruned]) -> str | None:
    """Append `records` to `folder`/.pruned.jsonl; its vault-relative path (None: nothing)."""
    if not records:
        return None
    relpath = f"{folder}/{PRUNED_FILE}"
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    fsutil.append_entry(path, "".join(r.line() for r in records))
    return relpath


def read_pruned(root: Path, folder: str) -> list[Pruned]:
    """The records of `folder`/.pruned.jsonl, oldest first; a line that is not one is
    skipped (a person may edit the file)."""
    path = root / folder / PRUNED_FILE
    if not path.is_file():
        return []
    try:
        text = fsutil.read_text(path, f"{folder}/{PRUNED_FILE}", _MAX_PRUNED_BYTES).text
    except VaultError as exc:
        log.warning("%s; pruned transcripts may be written again", exc)
        return []
    found = []
    for line in text.splitlines():
        try:
            found.append(Pruned(**json.loads(line)))
        except (ValueError, TypeError):
            continue
    return found


@dataclass
class AfterPruned:
    """What may still be written of a conversation: `turns`, the pruned transcript it
    matched (`path`, None when none) and what to tell the person."""

    turns: list[Turn]
    path: str | None = None
    notes: tuple[str, ...] = ()


def after_pruned(root: Path, folder: str, session: str, turns: Sequence[Turn]) -> AfterPruned:
    """`turns` without the messages a pruned transcript of this conversation held (matched
    by session or by its opening), and what to tell the person about it."""
    records = read_pruned(root, folder)
    if not records:
        return AfterPruned(list(turns))
    said = [t for t in turns if not is_summary(t)]
    keys = [t.key for t in said]
    for record in reversed(records):  # the latest prune first
        if record.session != session and (not keys or record.opening != keys[0]):
            continue
        held = record.messages
        when = record.pruned[:10]
        if len(keys) < held or keys_digest(keys[:held]) != record.digest:
            if record.session == session:
                why = (
                    f"a transcript of session {session} was pruned on {when}; this "
                    "conversation is not the one it held, so it was written in full"
                )
                return AfterPruned(list(turns), record.path, (why,))
            continue
        rest = said[held:]
        if not rest:
            why = (
                f"the transcript of this conversation ({record.path}) was pruned on {when}; "
                "it is not written again"
            )
        else:
            many = len(rest) != 1
            why = (
                f"the transcript of this conversation ({record.path}) was pruned on {when}; "
                f"only the {len(rest)} message{'s' if many else ''} after it "
                f"{'were' if many else 'was'} kept"
            )
        return AfterPruned(rest, record.path, (why,))
    return AfterPruned(list(turns))


def pruned_session(root: Path, folder: str, turns: Sequence[Turn]) -> str | None:
    """The session of a pruned transcript that held the start of `turns`, if any."""
    keys = conversation_keys(turns)
    for record in reversed(read_pruned(root, folder)):
        held = record.messages
        if keys and record.opening == keys[0] and keys_digest(keys[:held]) == record.digest:
            return record.session
    return None
