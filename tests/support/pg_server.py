"""A real PostgreSQL with pgvector for the slow suite, from the `pgserver` wheel's binaries.

The wheel ships PostgreSQL 16 with pgvector; its own `get_server` listens on a unix socket
only, so this harness runs the bundled `initdb` and `pg_ctl` itself: a fresh cluster in a
temporary folder, listening on 127.0.0.1 (a free port) and on a socket in that folder, C locale
and UTF-8 (no dependence on the machine's locale), trust authentication (nothing but this
process's tests can reach it). PostgreSQL refuses to run as root: as root the server runs as
the system user `pgserver`, created with `useradd` if missing (as the wheel itself does).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

# the same programs, user and wait as `vault postgres start` (index/pglocal.py)
from vault_memory.index.pglocal import (
    START_TIMEOUT,
    SYSTEM_USER,
    binaries as binaries,  # conftest and tests find it here
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    """A running cluster; `dsn` reaches it over TCP on 127.0.0.1, `socket_dsn` over its
    unix socket. `stop` shuts it down and deletes its folder."""

    folder: Path
    port: int
    bin: Path
    user: str | None

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def socket_dsn(self) -> str:
        return f"postgresql://postgres@/postgres?host={self.folder}&port={self.port}"

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [str(self.bin / program), *args],
            check=True,
            capture_output=True,
            text=True,
            user=self.user,
            timeout=START_TIMEOUT + 30,
            cwd=self.folder,
        )

    def start(self) -> None:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        try:
            self.resume()
        except subprocess.CalledProcessError as exc:
            log = self.folder / "server.log"
            detail = log.read_text(errors="replace")[-2000:] if log.exists() else exc.stderr
            raise RuntimeError(f"PostgreSQL did not start: {detail}") from exc

    def pause(self) -> None:
        """Shut the server down, keeping its data (`resume` starts it again)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server on its data folder (after `initdb`, or after `pause`)."""
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-w",
            "-t",
            str(START_TIMEOUT),
            "-l",
            str(self.folder / "server.log"),
            "-o",
            options,
            "start",
        )

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def start_server(bin_folder: Path) -> PostgresServer:
    """Start a fresh cluster (see the module docstring); the caller stops it."""
    user = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            subprocess.run(
                ["useradd", "-s", "/bin/false", SYSTEM_USER], check=True, capture_output=True
            )
        user = SYSTEM_USER
    # In /tmp itself: the server's user must be able to reach the folder (pytest's own
    # temporary folders are private to root), and a socket path must stay under 107 bytes.
    folder = Path(tempfile.mkdtemp(prefix="vault-pg-", dir="/tmp"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    server = PostgresServer(folder, _free_port(), bin_folder, user)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server
