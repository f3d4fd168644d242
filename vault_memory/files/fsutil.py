"""File primitives every feature writes through: confinement, safe reads, atomic guarded
rewrites and locked appends.

Rules: a read never modifies anything; a rewrite states the sha256 it was computed
from and is refused if the file changed meanwhile; appends from several processes never
interleave. A regular file with more than one hard link is neither read nor written, unless the
caller allows hard links ([security] allow_hardlinks): a hard link is a second name of the same
file, made anywhere on the disk, so no path check can tell whose file it is. Even then nothing
is written through a link: a write replaces the file, and its other names keep their bytes.
Locks are `flock` on the file's folder, so they survive the `os.replace` of the file itself and
need no lock files inside the user's vault.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    CannotWriteError,
    HardLinkedError,
    LockTimeoutError,
    NoteChangedError,
    NoteNotFoundError,
    PathOutsideVaultError,
    UnreadableNoteError,
)
from .posix import fcntl

DEFAULT_MAX_BYTES = 5_000_000
KILL_ENV = "VAULT_TEST_KILL_AT"  # test-only: see `kill_point`
APPEND_JOURNAL = ".{name}.append"  # beside the file while an append is under way
_WRITE_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT}


def kill_point(step: str) -> None:
    """Test hook for crash-consistency trials: when the environment variable
    `VAULT_TEST_KILL_AT` names `step` (or `step#N`: its N-th passage), the process ends on the
    spot with `os._exit(137)`, as a kill -9 would leave it. One dictionary look-up otherwise;
    never set outside tests."""
    wanted = os.environ.get(KILL_ENV)
    if not wanted:
        return
    name, _, nth = wanted.partition("#")
    if name != step:
        return
    _kill_counts[step] = _kill_counts.get(step, 0) + 1
    if _kill_counts[step] >= int(nth or 1):
        os._exit(137)


_kill_counts: dict[str, int] = {}


def cannot_write(path: Path | str, exc: OSError, relpath: str | None = None) -> CannotWriteError:
    """The `CannotWriteError` for an OSError met while writing `path` (permission, read-only
    file system, full disk)."""
    return CannotWriteError(relpath or str(path), exc.strerror or str(exc))


def foreign_links(st: os.stat_result, allow_hardlinks: bool) -> int:
    """The hard links of a file with this stat when they make it foreign (a regular file with
    more than one, hard links not allowed), else 0. Costs nothing: the stat is the caller's."""
    if allow_hardlinks or st.st_nlink <= 1 or not stat.S_ISREG(st.st_mode):
        return 0
    return st.st_nlink


def refuse_links(st: os.stat_result, name: str, allow_hardlinks: bool) -> None:
    """`HardLinkedError` for a file whose stat says it has foreign hard links."""
    links = foreign_links(st, allow_hardlinks)
    if links:
        raise HardLinkedError(name, links)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_lines(text: str) -> list[str]:
    """Lines as editors number them: split on "\\n" only (not on form feeds or U+2028, which
    `str.splitlines` would count), a trailing "\\r" removed, no phantom line after a final
    newline; a text with no "\\n" at all is split on "\\r" (old Mac files)."""
    if not text:
        return []
    if "\n" not in text and "\r" in text:  # classic Mac line ends: CR alone
        text = text.replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


@dataclass(frozen=True)
class TextFile:
    """A file read as text, with the hash of its exact bytes (the guard for rewrites)."""

    path: Path
    text: str
    sha256: str
    size: int
    mtime_ns: int


def read_text(
    path: Path,
    relpath: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    allow_hardlinks: bool = False,
) -> TextFile:
    """Read a Markdown file as UTF-8 text, or raise `UnreadableNoteError` saying why not.

    Binary files (a NUL byte), invalid UTF-8, files over `max_bytes`, files that cannot be
    opened and (unless `allow_hardlinks`) files with more than one hard link
    (`HardLinkedError`) are refused; nothing is ever written.
    """
    name = relpath or str(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise NoteNotFoundError(name) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnreadableNoteError(name, "a symlink loop; fix or remove the link") from None
        raise UnreadableNoteError(name, f"cannot stat ({exc.strerror})") from exc
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableNoteError(name, "not a regular file")
    if st.st_size > max_bytes:
        raise UnreadableNoteError(
            name, f"{st.st_size:,} bytes is over the {max_bytes:,}-byte limit (skipped)"
        )
    try:
        with path.open("rb") as fh:
            # Judged on the file opened, not on the name: a link made after a stat of the
            # name cannot slip through.
            refuse_links(os.fstat(fh.fileno()), name, allow_hardlinks)
            data = fh.read(max_bytes + 1)
            st = os.fstat(fh.fileno())
    except FileNotFoundError:
        raise NoteNotFoundError(name) from None
    except OSError as exc:
        raise UnreadableNoteError(name, f"cannot read ({exc.strerror})") from exc
    if len(data) > max_bytes:
        raise UnreadableNoteError(name, f"grew past the {max_bytes:,}-byte limit while reading")
    if b"\x00" in data[:8192] or b"\x00" in data:
        raise UnreadableNoteError(name, "binary file (contains NUL bytes), not Markdown")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UnreadableNoteError(
            name, f"not valid UTF-8 (byte {exc.start}, line {line}); re-save it as UTF-8"
        ) from exc
    return TextFile(path, text, sha256_bytes(data), len(data), st.st_mtime_ns)


def resolve_in_vault(root: Path, given: str | os.PathLike[str]) -> tuple[Path, str]:
    """Resolve a user-supplied path against the vault root, refusing anything that leaves it.

    Refused: absolute paths, `..` that climbs out, symlinks (of the file or any folder on the
    way) that point outside the vault. Returns the real path and the vault-relative POSIX path.
    """
    raw = os.fspath(given)
    if not raw or raw.strip() == "":
        raise PathOutsideVaultError(raw, "the path is empty")
    if "\x00" in raw:
        raise PathOutsideVaultError(raw, "the path contains a NUL byte")
    if os.path.isabs(raw) or raw.startswith("~"):
        raise PathOutsideVaultError(raw, "absolute paths are not accepted")
    real_root = Path(os.path.realpath(root))
    # os.path.realpath, not Path.resolve: on a symlink loop it returns a path (whose stat then
    # fails with ELOOP and is reported as unreadable) where Path.resolve raises RuntimeError.
    candidate = Path(os.path.realpath(real_root / raw))
    if candidate != real_root and real_root not in candidate.parents:
        reason = (
            "it climbs out with '..'"
            if ".." in Path(raw).parts
            else "a symlink leads outside the vault"
        )
        raise PathOutsideVaultError(raw, reason)
    return candidate, candidate.relative_to(real_root).as_posix()


def link_problem(path: str | os.PathLike[str], real_root: Path) -> str | None:
    """Why the symlink at `path` cannot be followed inside the vault at `real_root` (its real
    path), or None when it leads to something inside it."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop"
        if exc.errno == errno.ENOENT:
            return "a dangling symlink (its target does not exist)"
        return f"a symlink that cannot be followed ({exc.strerror})"
    target = Path(os.path.realpath(path))
    if target != real_root and real_root not in target.parents:
        return "a symlink leading outside the vault"
    return None


def _flock(fd: int, timeout: float, what: str, where: Path) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            if time.monotonic() >= deadline:
                raise LockTimeoutError(what, where, timeout) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


@contextlib.contextmanager
def locked(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Exclusive inter-process lock for writing `path` (flock on its folder)."""
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        _flock(fd, timeout, "write", path.parent)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def lock_file(path: Path, what: str, timeout: float = 30.0) -> Iterator[None]:
    """Exclusive inter-process lock held on a lock file (e.g. `.vault/write.lock`)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _open_lock(path)
    except OSError as exc:
        if exc.errno in _WRITE_ERRNOS:
            raise cannot_write(path, exc) from None
        raise
    try:
        _flock(fd, timeout, what, path)
        yield
    finally:
        os.close(fd)


def _open_lock(path: Path) -> int:
    """The descriptor of the lock file `path` (in `.vault/`, ours), created if missing. A
    folder or anything else in its place is removed first: a lock file holds nothing."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except IsADirectoryError:
        import logging
        import shutil

        logging.getLogger("vault_memory").warning(
            "%s was a folder, not a lock file: removed it.", path
        )
        shutil.rmtree(path, ignore_errors=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)


def _current_sha(path: Path) -> str | None:
    try:
        return sha256_bytes(path.read_bytes())
    except FileNotFoundError:
        return None


def _new_file_mode() -> int:
    """The mode `open(path, "w")` would give a new file (0o666 less the umask); mkstemp's 0o600
    would hide new notes from the other users and tools that share the vault."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # no other way to read it; restored at once
    os.umask(mask)
    return 0o666 & ~mask


def _replace_atomically(path: Path, data: bytes, mode: int | None) -> None:
    import tempfile

    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp_name, stat.S_IMODE(mode) if mode is not None else _new_file_mode())
        kill_point("atomic.before-replace")
        os.replace(tmp_name, path)
        kill_point("atomic.after-replace")
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(
    path: Path,
    text: str,
    expected_sha256: str | None,
    relpath: str | None = None,
    allow_hardlinks: bool = False,
) -> str:
    """Replace `path` with `text` atomically, only if it still has `expected_sha256`.

    `expected_sha256=None` means the file must not exist yet. Raises `NoteChangedError` when
    the file on disk is not the version the caller read, `HardLinkedError` (nothing written)
    when it has more than one hard link and `allow_hardlinks` is False; allowed, the link is
    replaced like any file (its other names keep their bytes). Returns the new sha256.
    """
    data = text.encode("utf-8")
    name = relpath or str(path)
    path = Path(os.path.realpath(path))  # write through a symlink, never replace the link
    with locked(path):
        recover_file(path)
        with contextlib.suppress(FileNotFoundError):
            refuse_links(os.stat(path), name, allow_hardlinks)
        current = _current_sha(path)
        if current != expected_sha256:
            if expected_sha256 is None:
                raise NoteChangedError(name, "the write (it was created meanwhile)")
            raise NoteChangedError(name)
        mode = path.stat().st_mode if current is not None else None
        try:
            _replace_atomically(path, data, mode)
        except OSError as exc:
            if exc.errno in _WRITE_ERRNOS:
                raise cannot_write(path, exc, relpath) from None
            raise
    return sha256_bytes(data)


def append_entry(
    path: Path,
    text: str,
    create_with: str | None = None,
    compose: Callable[[str], str] | None = None,
    allow_hardlinks: bool = False,
) -> int:
    """Append `text` to `path` under the inter-process lock; whole lines, never interleaved.

    A file that does not end with a newline gets one first. A missing file is created
    atomically, starting with `create_with` (e.g. a daily log's header) when given.
    `compose`, when given, is called under the lock with the file's current text and returns
    the text to append instead of `text` (a choice that depends on how the file ends cannot
    race another writer). Returns the 1-based line number at which the appended text starts.

    All or nothing, even under kill -9: the bytes to append are recorded first in a journal
    beside the file (`.NAME.append`), and the next writer of the file (or `vault doctor`)
    completes an append that a killed process left cut off. If an editor replaced the file
    (an atomic save) between the open and the write, the append is made again on the new file.

    A file with more than one hard link is refused (`HardLinkedError`, nothing written) unless
    `allow_hardlinks`; allowed, it is appended to by replacing it atomically with its text and
    the entry, never by writing through the link (its other names, a backup's say, keep their
    bytes).
    """
    path = Path(os.path.realpath(path))
    try:
        with locked(path):
            recover_file(path)
            while True:
                first_line = _append_once(path, text, create_with, compose, allow_hardlinks)
                if first_line is not None:
                    return first_line
    except OSError as exc:
        if exc.errno in _WRITE_ERRNOS:
            raise cannot_write(path, exc) from None
        raise


def _append_once(
    path: Path,
    text: str,
    create_with: str | None,
    compose: Callable[[str], str] | None,
    allow_hardlinks: bool,
) -> int | None:
    """One try of `append_entry` (under the lock); None when the file was replaced meanwhile."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        if not text.endswith("\n"):
            text += "\n"
        header = create_with or ""
        if header and not header.endswith("\n"):
            header += "\n"
        _replace_atomically(path, (header + text).encode("utf-8"), None)
        return header.count("\n") + 1
    try:
        st = os.fstat(fd)  # the file opened: a link made after any earlier check shows here
        refuse_links(st, str(path), allow_hardlinks)
        existing = b""
        while chunk := os.read(fd, 1 << 20):
            existing += chunk
        if compose is not None:
            text = compose(existing.decode("utf-8", "replace"))
        if not text.endswith("\n"):
            text += "\n"
        prefix = b"\n" if existing and not existing.endswith(b"\n") else b""
        first_line = existing.count(b"\n") + 1 + len(prefix)
        data = prefix + text.encode("utf-8")
        if st.st_nlink > 1:  # allowed hard links: replaced whole, never written through
            if _inode(path) != st.st_ino:
                return None  # an editor's save replaced it meanwhile: again, on the new file
            _replace_atomically(path, existing + data, st.st_mode)
            return first_line
        journal = path.parent / APPEND_JOURNAL.format(name=path.name)
        record = {
            "size": len(existing),
            "sha256": sha256_bytes(existing),
            "data": data.decode("utf-8"),
        }
        _replace_atomically(journal, json.dumps(record).encode("utf-8"), None)
        kill_point("append.after-journal")
        half = len(data) // 2
        _write_all(fd, data[:half])
        kill_point("append.mid-write")  # a kill here leaves the append cut in two
        _write_all(fd, data[half:])
        os.fsync(fd)
        kill_point("append.after-write")
        replaced = _inode(path) != os.fstat(fd).st_ino
        os.unlink(journal)
        kill_point("append.after-commit")
    finally:
        os.close(fd)
    return None if replaced else first_line


def _write_all(fd: int, data: bytes) -> None:
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def recover_file(path: Path) -> list[str]:
    """Finish what a killed writer of `path` left (call under `locked(path)`): complete an
    append cut off half-way (its journal holds the bytes), and remove the temp files of
    rewrites that never reached their rename. Returns what was done, for `vault doctor`."""
    done: list[str] = []
    journal = path.parent / APPEND_JOURNAL.format(name=path.name)
    if journal.exists():
        done.append(_finish_append(path, journal))
    # the file's own rewrites, and the journal's (written under the same lock)
    prefixes = (f".{path.name}.", f".{journal.name}.")
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            if entry.name.startswith(prefixes) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    done.append(f"removed the temp file {entry.name} of an interrupted write")
    return done


def settle(path: Path) -> None:
    """Complete what a killed writer of `path` left (an append cut off half-way) before a
    caller reads the file to decide what to append: the next `append_entry` would complete it
    only after that decision, and an entry the killed writer had journaled would be written
    twice. Nothing to do (one stat) when no journal waits."""
    path = Path(os.path.realpath(path))
    if not (path.parent / APPEND_JOURNAL.format(name=path.name)).exists():
        return
    try:
        with locked(path):
            recover_file(path)
    except OSError as exc:
        if exc.errno in _WRITE_ERRNOS:
            raise cannot_write(path, exc) from None
        raise


def _finish_append(path: Path, journal: Path) -> str:
    try:
        record = json.loads(journal.read_bytes())
        size, before, data = int(record["size"]), record["sha256"], record["data"].encode()
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        journal.unlink(missing_ok=True)  # never completed: the append had not begun
        return f"removed the unfinished journal {journal.name}"
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        journal.unlink(missing_ok=True)
        return f"removed the journal {journal.name} of a file that is gone"
    tail = current[size:]
    if current[size : size + len(data)] == data:
        outcome = "the append was complete"
    elif sha256_bytes(current[:size]) == before and data.startswith(tail):
        st = os.stat(path)
        if st.st_nlink > 1:  # linked since the cut: completed by replacing, not through it
            _replace_atomically(path, current + data[len(tail) :], st.st_mode)
        else:
            with open(path, "ab") as fh:
                fh.write(data[len(tail) :])
                fh.flush()
                os.fsync(fh.fileno())
        outcome = f"completed an append cut off after {len(tail)} of {len(data)} bytes"
    else:
        outcome = "the file changed since; left as it is"
    journal.unlink(missing_ok=True)
    return f"{path.name}: {outcome}"


_TEMP = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")
_SKIPPED_DIRS = {".git", ".vault", ".obsidian", ".trash", "node_modules", "__pycache__"}


def recover_tree(root: Path) -> list[tuple[str, str]]:
    """`recover_file` for every file of the vault that a killed writer left something for
    (an append journal, a rewrite's temp file): (vault-relative path, what was done)."""
    done: list[tuple[str, str]] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS]
        targets = set()
        for name in files:
            if name.startswith(".") and name.endswith(".append"):
                targets.add(name[1 : -len(".append")])
            elif (match := _TEMP.match(name)) is not None:
                targets.add(match["name"])
        for name in sorted(targets):
            path = Path(folder) / name
            try:
                with locked(path, timeout=5.0):
                    actions = recover_file(path)
            except (OSError, LockTimeoutError):
                continue
            rel = path.relative_to(root).as_posix()
            done.extend((rel, action) for action in actions)
    return done
