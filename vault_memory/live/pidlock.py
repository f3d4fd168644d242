"""One watcher per vault: `.vault/watch.lock`, flock-ed for the watcher's life.

A watcher killed with SIGKILL leaves nothing that blocks the next one (the kernel drops the
flock). A clean stop removes the lock file while still holding the lock; whoever opened it
before then finds, once its flock succeeds, that the path names another file (or none) and
opens it anew, so two watchers never both believe they hold the lock. POSIX only (flock, and
a file unlinked while open).
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from ..errors import VaultError
from ..files import fcntl
from .watch_client import LOCK_FILE, read_state

TAKE_WAIT = 1.0  # seconds: `vault status` may hold a shared lock for a moment


class WatcherRunningError(VaultError):
    def __init__(self, pid: Any) -> None:
        self.pid = pid
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"a watcher already runs for this vault ({who}). Searches already go through it; "
            "stop it first (`Vault.stop_watcher()`) to start another."
        )


def inode(path: Path) -> int | None:
    """The inode `path` names now, or None when it names nothing."""
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


class PidLock:
    """The watcher's lock in `cache` (see the module docstring); `fd` while held."""

    def __init__(self, cache: Path) -> None:
        self.path = cache / LOCK_FILE
        self.fd: int | None = None

    def take(self) -> None:
        """Take the lock, or raise `WatcherRunningError` naming the watcher that holds it."""
        deadline = time.monotonic() + TAKE_WAIT
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() > deadline:
                    pid = (read_state(self.path.parent) or {}).get("pid")
                    raise WatcherRunningError(pid) from None
                time.sleep(0.02)
                continue
            if inode(self.path) == os.fstat(fd).st_ino:
                break
            os.close(fd)  # a watcher that stopped removed this file: lock the one there now
        self.fd = fd

    def lost(self) -> bool:
        """Whether the lock file (so `.vault/` itself) was deleted or replaced under us."""
        fd = self.fd
        return fd is not None and inode(self.path) != os.fstat(fd).st_ino

    def retake(self) -> None:
        """Let go of a lost lock and take the one the path names now (made anew)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self.take()

    def release(self) -> None:
        """Remove the lock file while still holding the lock, then let go of it."""
        if self.fd is None:
            return
        if inode(self.path) == os.fstat(self.fd).st_ino:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        os.close(self.fd)
        self.fd = None
