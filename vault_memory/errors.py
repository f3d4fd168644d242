"""Errors raised by the library.

Every `VaultError` is a user-facing condition: its message says what happened and what to do
next, in the library's words (its parameters and methods: `since=`, `Vault.init`), never a
command-line flag. An error whose advice names something the command line spells otherwise
carries the data to say it again: the CLI words it with its own flags and commands, in one
place (cli/errors.py), then prints `Error: ...` with exit status 1. Anything else is a bug and
keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path


class VaultError(Exception):
    """Base class of the errors a user can act on."""


class VaultNotFoundError(VaultError):
    """No folder at or above `start` holds vault.toml (`Vault.discover` without a path)."""

    def __init__(self, start: Path) -> None:
        self.start = start
        super().__init__(
            f"no vault found at or above {start} (no vault.toml). Create one with "
            "`Vault.init(path)`, or give the path of an existing vault."
        )


class NotAVaultError(VaultError):
    """A path given as a vault that is not a vault folder: `problem` is "folder" (a folder
    without vault.toml, MEMORY.md or memory/), "file" or "missing"."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem = "folder" if path.is_dir() else "file" if path.exists() else "missing"
        if self.problem == "folder":
            message = (
                f"{path} is not a vault (it holds no vault.toml, MEMORY.md or memory/). Make it "
                f"one with `Vault.init({str(path)!r})` (or open it with "
                f"`Vault({str(path)!r}, create=True)`), or give the folder of an existing vault."
            )
        elif self.problem == "file":
            message = (
                f"{path} is a file, not a vault folder. Give the folder that holds vault.toml."
            )
        else:
            message = (
                f"{path} does not exist. Give an existing vault folder, or create one with "
                f"`Vault.init({str(path)!r})`."
            )
        super().__init__(message)


class ArgumentError(VaultError):
    """An argument that cannot be used: `parameter` (as the library names it, e.g. "since"),
    the `value` given and `problem`, what is wrong with it and what to do, worded to follow
    the value ("is not a date; use YYYY-MM-DD." or ": give 1 node or more."). The CLI names
    its option instead of the parameter (`--since '2026-13-01' is not a date; ...`)."""

    def __init__(self, parameter: str, value: object, problem: str) -> None:
        self.parameter = parameter
        self.value = value
        self.problem = problem
        super().__init__(f"{parameter}={value!r}{problem}")


class DateRangeError(VaultError):
    """A `since` after `until`: no date can match."""

    def __init__(self, since: object, until: object) -> None:
        self.since = since
        self.until = until
        super().__init__(f"since {since} is after until {until}: no date can match. Swap them.")


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


#: Why a file with several hard links is left alone: a hard link is a second name of the same
#: file, made anywhere on the disk, so no path check can tell whose file it is.
HARD_LINKS = "it has {links} hard links, so it may be another scope's file or one outside the vault"
#: The one setting that lets them through (the vault's own vault.toml, or its variable).
ALLOW_HARDLINKS = (
    "set [security] allow_hardlinks = true in vault.toml if every hard link in this vault is yours"
)


def left_out_for_links(paths: list[str]) -> str:
    """The one warning for the files a read left out for their hard links (a few named)."""
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    files = "1 file" if len(paths) == 1 else f"{len(paths)} files"
    return (
        f"left out {files} with several hard links (each may be another scope's file or one "
        f"outside the vault): {shown}. `vault status` lists them; {ALLOW_HARDLINKS}."
    )


class HardLinkedError(UnreadableNoteError):
    """A file with more than one hard link, refused by a read or a write: it may be a file of
    another scope or one outside the vault ([security] allow_hardlinks lets it through)."""

    def __init__(self, relpath: str, links: int) -> None:
        self.relpath = relpath
        self.links = links
        self.reason = HARD_LINKS.format(links=links)
        VaultError.__init__(
            self,
            f"{relpath}: {self.reason}; nothing was read or written. Find its other names "
            f"with `find . -samefile {relpath}`, or {ALLOW_HARDLINKS}.",
        )


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


class CannotWriteError(VaultError):
    """The disk refused a write: no permission, a read-only file system, a full disk."""

    def __init__(self, relpath: str, reason: str) -> None:
        self.relpath = relpath
        self.reason = reason
        super().__init__(
            f"cannot write {relpath}: {reason}. Nothing was changed; make it writable (or free "
            "some space) and run the command again."
        )


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


class NoSuchPathError(VaultError):
    """`within` (the file or folder a search is confined to) names nothing in the vault."""

    def __init__(self, within: str) -> None:
        self.within = within
        super().__init__(
            f"within={within!r}: there is no such file or folder in the vault. Check the path "
            "(relative to the vault root), e.g. 'memory' or 'notes/a.md'."
        )


class SemanticUnavailableError(VaultError):
    """A semantic search without an embedding model (`reason`: why there is none)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(
            "semantic search needs the embedding model, which is not available "
            f"({reason}). Search with mode='keyword' or mode='hybrid'."
        )


class NoVectorsError(VaultError):
    """A semantic search of an index built without the model's embeddings."""

    def __init__(self) -> None:
        super().__init__(
            "the index holds no embeddings for the model yet (it was built without it). "
            "Index the vault (`Vault.index()`) to add them, or search with mode='keyword'."
        )


class SessionInScopesError(VaultError):
    """A session id found in several scopes (`scopes`: as "org/acme", "" for the root) by a
    vault bound to none: the caller binds the one it means. `transcript`: its transcripts
    (sessions/), not its daily-log entries."""

    def __init__(self, session: str, scopes: list[str], transcript: bool = False) -> None:
        self.session = session
        self.scopes = scopes
        self.transcript = transcript
        where = ", ".join(scope or "/" for scope in scopes)
        found = "has transcripts" if transcript else "was flushed"
        names = ", ".join(repr(name) for name in scopes[0].split("/") if name)
        method = "transcript" if transcript else "session"
        super().__init__(
            f"session {session!r} {found} in several scopes ({where}); pick one by binding "
            f"the vault to it, e.g. `vault.scope({names}).{method}({session!r})`."
        )


class SecretSessionIdError(VaultError):
    """A session id that looks like a secret (`found`: what kinds): it would be written into a
    heading of the daily log, so it is refused (and never echoed)."""

    def __init__(self, found: list[str]) -> None:
        self.found = found
        super().__init__(
            f"the session id looks like a secret ({', '.join(found)}); it would be written into "
            "the daily log. Use another id (or none: one is derived from the conversation)."
        )


class GitNotInstalledError(VaultError):
    """A vault created with git=True where no git is installed."""

    def __init__(self) -> None:
        super().__init__("git is not installed; install it, or create the vault with git=False.")
