"""A PostgreSQL server with pgvector on this machine, for trying the shared index:
`vault postgres start|stop|status`.

The `pgserver` wheel (the `postgres` extra) ships PostgreSQL 16 with pgvector; this module
runs its `initdb` and `pg_ctl` in a folder outside any vault (the user's data folder by
default), listening on 127.0.0.1 at one port kept with the data, and on a unix socket in the
folder. Trust authentication on 127.0.0.1: anyone on this machine can connect, so it is a
server for one machine and for trying; a team runs the docker compose file or a cluster of
its own (docs: PostgreSQL). PostgreSQL refuses to run as root: as root the server runs as the
system user `pgserver` (created with `useradd` if missing, as the wheel itself does) and its
default folder is under /var/lib, which that user can reach.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import VaultError

SYSTEM_USER = "pgserver"
START_TIMEOUT = 60  # seconds pg_ctl waits for the server to accept connections
DEFAULT_PORT = 5433  # next to a system PostgreSQL's 5432, so both may run
PORT_FILE = "port"


class LocalServerError(VaultError):
    """The embedded PostgreSQL cannot be set up, started or stopped."""


def binaries() -> Path | None:
    """The folder of the bundled PostgreSQL programs, or None when `pgserver` is not
    installed. Found without importing `pgserver` (its import warns about XDG_RUNTIME_DIR)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return folder if (folder / "pg_ctl").exists() else None


def default_folder() -> Path:
    """Where `vault postgres start` keeps its cluster unless told: the user's data folder
    (`$XDG_DATA_HOME/vault-memory/postgres`); as root /var/lib/vault-memory/postgres."""
    if os.geteuid() == 0:
        return Path("/var/lib/vault-memory/postgres")
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "vault-memory" / "postgres"


def _system_user() -> str | None:
    """The user the server runs as: None (this one), or `pgserver` when this is root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "-s", "/bin/false", SYSTEM_USER], check=True, capture_output=True
        )
    return SYSTEM_USER


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _any_free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalServer:
    """The cluster in `folder` (`data/` inside, `server.log` beside it)."""

    folder: Path

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    @property
    def port(self) -> int | None:
        try:
            return int((self.folder / PORT_FILE).read_text().strip())
        except (OSError, ValueError):
            return None

    @property
    def dsn(self) -> str | None:
        port = self.port
        return None if port is None else f"postgresql://postgres@127.0.0.1:{port}/postgres"

    @property
    def initialised(self) -> bool:
        return (self.data / "PG_VERSION").exists()

    def _bin(self) -> Path:
        found = binaries()
        if found is None:
            raise LocalServerError(
                "the embedded PostgreSQL comes with the postgres extra: "
                "pip install 'vault-memory[postgres]' (Linux and macOS), or run the docker "
                "compose file or a server of your own and set [index] dsn."
            )
        return found

    def _run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self._bin() / program), *args],
            check=check,
            capture_output=True,
            text=True,
            user=_system_user(),
            timeout=START_TIMEOUT + 30,
            cwd=self.folder,
        )

    def running(self) -> bool:
        """Whether the cluster's postmaster runs (`pg_ctl status`)."""
        if not self.initialised:
            return False
        return self._run("pg_ctl", "status", "-D", str(self.data), check=False).returncode == 0

    def pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _prepare(self, port: int | None) -> None:
        """Make the folder, the cluster (first start) and choose the port (kept after)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        user = _system_user()
        if user is not None:
            entry = pwd.getpwnam(user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        if not self.initialised:
            self._run(
                "initdb",
                *("-D", str(self.data), "-U", "postgres", "--auth=trust"),
                *("-E", "UTF8", "--locale=C"),
            )
        if port is None:
            port = self.port or (DEFAULT_PORT if _port_free(DEFAULT_PORT) else _any_free_port())
        (self.folder / PORT_FILE).write_text(f"{port}\n")

    def start(self, port: int | None = None) -> bool:
        """Start the server (initialised on first use); False when it was running already."""
        if self.running():
            return False
        try:
            self._prepare(port)
            options = f"-h 127.0.0.1 -p {self.port} -k {self.folder}"
            self._run(
                "pg_ctl",
                *("-D", str(self.data), "-w", "-t", str(START_TIMEOUT)),
                *("-l", str(self.log), "-o", options, "start"),
            )
        except subprocess.CalledProcessError as exc:
            raise LocalServerError(
                f"PostgreSQL did not start in {self.folder}: {self._why(exc)}"
            ) from exc
        except OSError as exc:
            raise LocalServerError(f"cannot set up PostgreSQL in {self.folder}: {exc}") from exc
        return True

    def stop(self) -> bool:
        """Stop the server (its data kept); False when it was not running."""
        if not self.running():
            return False
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        except subprocess.CalledProcessError as exc:
            raise LocalServerError(
                f"PostgreSQL in {self.folder} did not stop: {self._why(exc)}"
            ) from exc
        return True

    def _why(self, exc: subprocess.CalledProcessError) -> str:
        """The last line the server or the program said (its log first)."""
        text = ""
        if self.log.exists():
            text = self.log.read_text(errors="replace")
        text = text or (exc.stderr or "") or (exc.stdout or "")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return (lines[-1] if lines else f"exit status {exc.returncode}") + f" (log: {self.log})"
