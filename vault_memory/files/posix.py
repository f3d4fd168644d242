"""vault-memory runs on POSIX systems, and says so here, once.

It relies on what POSIX offers and Windows does not: `flock` on a folder (appends lock the
folder of the file, so a lock survives the `os.replace` of an atomic write), a lock file
unlinked while it is held (a watcher's clean stop, live/pidlock.py), a Unix socket (queries
to a running watcher), `fsync` of a folder (durable renames) and signals. A lock library
that also runs on Windows (filelock, portalocker) locks files, not folders, and cannot unlink
a file that is open, so it would not make the rest portable. The test suite runs on Linux;
macOS and the BSDs offer the same calls. On Windows, run vault-memory under WSL.

Every module that needs `fcntl` imports it from here: on Windows the first such import raises
`UnsupportedPlatformError` saying the above (the `vault` command prints it as one `Error:`
line).
"""

from __future__ import annotations

MESSAGE = (
    "vault-memory runs on Linux, macOS and other POSIX systems only: it locks folders with "
    "flock and answers over a Unix socket. On Windows, run it under WSL."
)


class UnsupportedPlatformError(ImportError):
    """vault-memory was imported where POSIX is missing (Windows)."""

    def __init__(self) -> None:
        super().__init__(MESSAGE)


try:
    import fcntl
except ModuleNotFoundError as exc:  # Windows
    raise UnsupportedPlatformError() from exc

__all__ = ["MESSAGE", "UnsupportedPlatformError", "fcntl"]
