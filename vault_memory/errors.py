"""Errors raised by the library.

Every `VaultError` is a user-facing condition: its message says what happened and what to do
next. The CLI turns them into `Error: ...` and exit status 1; anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

from pathlib import Path


class VaultError(Exception):
    """Base class of the errors a user can act on."""


class VaultNotFoundError(VaultError):
    def __init__(self, start: Path) -> None:
        self.start = start
        super().__init__(
            f"no vault found at or above {start} (no vault.toml). "
            "Run `vault init` to create one, or pass --vault PATH / set VAULT_PATH."
        )


class NotAVaultError(VaultError):
    """--vault / VAULT_PATH names something that is not a vault folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.is_dir():
            message = (
                f"{path} is not a vault (it holds no vault.toml, MEMORY.md or memory/). Run "
                f"`vault init {path}` to make it one, or pass the folder of an existing vault."
            )
        elif path.exists():
            message = (
                f"{path} is a file, not a vault folder. Pass the folder that holds vault.toml."
            )
        else:
            message = (
                f"{path} does not exist. Pass an existing vault folder, or run "
                f"`vault init {path}` to create one."
            )
        super().__init__(message)


class ConfigError(VaultError):
    """vault.toml or a VAULT_* variable holds something unusable."""


class PathOutsideVaultError(VaultError):
    def __init__(self, given: str, reason: str = "it points outside the vault") -> None:
        self.given = given
        super().__init__(
            f"refusing {given!r}: {reason}. Give a path relative to the vault root, "
            "e.g. memory/2026-11-22.md."
        )


class NoteNotFoundError(VaultError):
    def __init__(self, relpath: str) -> None:
        self.relpath = relpath
        super().__init__(f"{relpath} does not exist in the vault. Check the path with `ls`.")


class UnreadableNoteError(VaultError):
    """A file exists but cannot be used as text (binary, invalid UTF-8, too large, no access)."""

    def __init__(self, relpath: str, reason: str) -> None:
        self.relpath = relpath
        self.reason = reason
        super().__init__(f"{relpath}: {reason}")


class LineRangeError(VaultError):
    def __init__(self, relpath: str, start: int, end: int, total: int) -> None:
        super().__init__(
            f"{relpath} has {total} lines; lines {start}-{end} are out of range. "
            f"Ask for a range within 1-{max(total, 1)}."
        )


class LineRangeSyntaxError(VaultError):
    def __init__(self, spec: str, tail: str) -> None:
        super().__init__(
            f"{spec!r}: {tail!r} is not a line range. Write PATH:START or PATH:START-END "
            "with line numbers from 1, e.g. MEMORY.md:4-9."
        )


class NoteChangedError(VaultError):
    """A guarded rewrite found the file different from the version it was computed from."""

    def __init__(self, relpath: str, action: str = "the write") -> None:
        self.relpath = relpath
        super().__init__(
            f"{relpath} changed on disk during {action}; nothing was written. "
            "Run the command again to work from the current file."
        )


NOTHING_CHANGED = "Nothing was changed"


class CannotWriteError(VaultError):
    """The disk refused a write: no permission, a read-only file system, a full disk, an I/O
    error. `kept` says, truthfully, what is on disk after it (default: nothing changed)."""

    def __init__(
        self, relpath: str, reason: str, kept: str = NOTHING_CHANGED, advice: str = ""
    ) -> None:
        self.relpath = relpath
        self.reason = reason
        self.kept = kept
        advice = advice or "make it writable (or free some space) and run the command again"
        super().__init__(f"cannot write {relpath}: {reason}. {kept}; {advice}.")


class LockTimeoutError(VaultError):
    def __init__(self, what: str, path: Path, seconds: float) -> None:
        super().__init__(
            f"could not take the {what} lock ({path}) within {seconds:g} s: another vault "
            "process is busy. Wait for it to finish and try again."
        )


class EmptyEntryError(VaultError):
    def __init__(self) -> None:
        super().__init__("nothing to add: the entry is empty; give the text to remember.")


class InvalidTagError(VaultError):
    """A tag given by a user that Obsidian would not read as one (`two words`, `2024`)."""

    def __init__(self, tag: str, suggestion: str | None) -> None:
        self.tag = tag
        self.suggestion = suggestion
        advice = (
            f"Use {suggestion!r} instead."
            if suggestion
            else "Give a word with a letter in it, e.g. 'decision'."
        )
        super().__init__(
            f"{tag!r} is not a valid tag: a tag holds letters, digits, _, - and / (between "
            f"nested parts), and not only digits. {advice}"
        )


class InputTooLargeError(VaultError):
    def __init__(self, what: str, size: int, limit: int) -> None:
        super().__init__(
            f"{what} is {size:,} bytes, over the limit of {limit:,}. Split it into smaller pieces."
        )


def scope_label(scope: tuple[str, ...]) -> str:
    """How a message names a scope: `scope org/acme`, or `the root scope`."""
    return f"scope {'/'.join(scope)}" if scope else "the root scope"


class ScopeNameError(VaultError):
    """A scope name that cannot name a folder of scopes/ (see files/scopes.py)."""

    def __init__(self, given: object, reason: str) -> None:
        self.given = given
        super().__init__(
            f"{given!r} is not a scope name: {reason}. A scope is a path of names such as "
            "org/acme/agent-alpha; a name holds letters, digits and . _ - @ + (starting with a "
            "letter, a digit or _), at most 64 characters, and is none of memory, dreams, "
            "sessions, notes, scopes."
        )


class ScopeAccessError(VaultError):
    """A path of another scope than those a bound scope may see (or, for a write, owns)."""

    def __init__(
        self, given: str, owner: tuple[str, ...], viewer: tuple[str, ...], write: bool = False
    ) -> None:
        self.given = given
        self.owner = owner
        self.viewer = viewer
        if write:
            home = "/".join(("scopes", *viewer)) + "/" if viewer else "the vault outside scopes/"
            reason = (
                f"it belongs to {scope_label(owner)}, and {scope_label(viewer)} writes only its "
                f"own files (in {home})"
            )
        else:
            reason = (
                f"it belongs to {scope_label(owner)}, which {scope_label(viewer)} may not see "
                "(a scope sees its own files and those of the scopes above it)"
            )
        action = "write" if write else "see"
        super().__init__(f"refusing {given!r}: {reason}. Give a path of a file it may {action}.")
