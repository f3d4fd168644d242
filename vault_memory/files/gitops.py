"""One git commit of exactly the files a dream wrote, never anything else.

`git commit --only -- PATHS` commits those paths as they are in the working tree and leaves
the rest of the index alone: changes the user staged stay staged and uncommitted, unstaged
changes stay unstaged. Hooks are skipped (`--no-verify`): the commit is made by a background
job, and a hook written for people (tests, prompts) must not block it. A user without a git
identity gets `vault-memory <vault-memory@localhost>` for these commits only.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..errors import VaultError

TIMEOUT = 60.0
FALLBACK_IDENTITY = ("-c", "user.name=vault-memory", "-c", "user.email=vault-memory@localhost")


class GitError(VaultError):
    def __init__(self, what: str, detail: str) -> None:
        super().__init__(
            f"git {what} failed: {detail}. The files are written; commit them "
            "by hand or set [dream] git_commit = false."
        )


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=TIMEOUT,
        )
    except FileNotFoundError:
        raise GitError(args[0], "git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(args[0], f"no answer within {TIMEOUT:g} s") from None
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitError(args[0], detail[-1] if detail else f"exit status {result.returncode}")
    return result


def in_repository(root: Path) -> bool:
    """Whether `root` is inside a git work tree (and git is installed)."""
    try:
        result = _git(root, "rev-parse", "--is-inside-work-tree", check=False)
    except GitError:
        return False
    return result.returncode == 0 and result.stdout.strip() == "true"


def ignored(root: Path, paths: Sequence[str]) -> list[str]:
    """Which of `paths` the repository's ignore rules (.gitignore, info/exclude) exclude."""
    result = _git(root, "check-ignore", "--", *paths, check=False)
    return [line for line in result.stdout.splitlines() if line] if result.returncode == 0 else []


def tracked(root: Path, path: str) -> bool:
    """Whether git tracks `path` (relative to `root`)."""
    return _git(root, "ls-files", "--error-unmatch", "--", path, check=False).returncode == 0


def commit_only(root: Path, paths: Sequence[str], message: str) -> str:
    """Commit `paths` (relative to `root`) and nothing else; return the new commit's sha.

    If git refuses (a path it ignores, a locked index, a failing config), the staging area is
    put back exactly as it was: a failed commit never leaves files staged behind it."""
    paths = list(dict.fromkeys(paths))
    index = Path(
        _git(root, "rev-parse", "--path-format=absolute", "--git-path", "index").stdout.strip()
    )
    try:
        saved: bytes | None = index.read_bytes()
    except OSError:
        saved = None
    try:
        _git(root, "add", "--", *paths)
        identity: tuple[str, ...] = ()
        if not _git(root, "config", "user.email", check=False).stdout.strip():
            identity = FALLBACK_IDENTITY
        _git(
            root,
            *identity,
            "commit",
            "--only",
            "--no-verify",
            "--quiet",
            "-m",
            message,
            "--",
            *paths,
        )
    except GitError:
        _restore_index(index, saved)
        raise
    return _git(root, "rev-parse", "HEAD").stdout.strip()


def _restore_index(index: Path, saved: bytes | None) -> None:
    import contextlib
    import os

    with contextlib.suppress(OSError):
        if saved is None:
            index.unlink()
            return
        temporary = index.with_name(index.name + ".vault-restore")
        temporary.write_bytes(saved)
        os.replace(temporary, index)
