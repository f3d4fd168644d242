"""Talking to a running `vault watch`: whether one runs, asking it a search over its Unix
socket, and asking it to stop.

`vault search` imports this on every call, so it stays small: no numpy, Whoosh or model. The
protocol is one JSON request line and one JSON reply line per connection; ops: `ping`,
`search`, `stop`. For a search, any failure (no watcher, a stale socket left by a killed one,
other settings, a timeout) returns None and the caller searches in-process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import VaultError
from ..files import fcntl

if TYPE_CHECKING:
    from ..config import Config

LOCK_FILE = "watch.lock"  # flock held by the watcher for its whole life
STATE_FILE = "watch.json"  # pid, start time, last event, socket path
SOCKET_FILE = "watch.sock"
MAX_SOCKET_PATH = 107  # bytes: sun_path holds 108 including the final NUL
PROTOCOL = 2  # 2: a search may name the scope it is bound to (an older watcher would not)
CONNECT_TIMEOUT = 1.0
REPLY_TIMEOUT = 10.0
MAX_LINE = 64 << 20
STOP_WAIT = 30.0  # seconds `vault watch --stop` waits for the watcher to be gone


def socket_path(cache_dir: Path) -> Path:
    """`.vault/watch.sock`, or a name in the temp folder when that path is too long for a Unix
    socket (the watcher records the one it uses in `.vault/watch.json`)."""
    default = cache_dir / SOCKET_FILE
    if len(os.fsencode(default)) <= MAX_SOCKET_PATH:
        return default
    import tempfile

    digest = hashlib.sha256(os.fsencode(cache_dir.absolute())).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"vault-watch-{os.getuid()}-{digest}.sock"


def read_state(cache_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((cache_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def lock_held(path: Path) -> bool:
    """True when some process holds the watcher's flock on `path`. Opens it read-only and
    creates nothing."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # also drops the shared lock just taken
    return False


def watcher_status(cache_dir: Path) -> dict[str, Any]:
    """Whether a watcher runs for this cache, with its pid, uptime and last event. A state file
    left by a watcher that was killed is reported as `stale`. Writes nothing."""
    state = read_state(cache_dir)
    if not lock_held(cache_dir / LOCK_FILE):
        return {"running": False, "stale": state is not None}
    state = state or {}
    started = state.get("started_at")
    return {
        "running": True,
        "pid": state.get("pid"),
        "started_at": started,
        "uptime_seconds": round(time.time() - started, 1) if started else None,
        "last_event_at": state.get("last_event_at"),
        "socket": state.get("socket"),
        "next_dream_at": state.get("next_dream_at"),
    }


def settings_key(config: Config) -> str:
    """What must match between a client and the watcher for both to rank alike: the search
    settings, the model, and whether the model is switched off in this environment."""
    from ..index import DISABLE_ENV

    return json.dumps(
        [
            config.as_dict()["search"],
            config.index.model,
            os.environ.get(DISABLE_ENV, ""),
            config.index.provider,
            config.index.base_url,
            config.index.dimensions,
        ],
        sort_keys=True,
    )


def request(cache_dir: Path, payload: dict[str, Any], timeout: float = REPLY_TIMEOUT) -> Any:
    """Send one request to the watcher; its reply, or None if there is no usable watcher."""
    path = socket_path(cache_dir)
    if path.name != SOCKET_FILE:  # the long-path case: the watcher wrote down where it listens
        state = read_state(cache_dir) or {}
        path = Path(state.get("socket") or path)
    import socket  # here: a search with no watcher never loads it (3 CPU-ms)

    line = (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8")
    chunks: list[bytes] = []
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(os.fsencode(path))
            sock.settimeout(timeout)
            sock.sendall(line)
            received = 0
            while True:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                received += len(chunk)
                if chunk.endswith(b"\n") or received > MAX_LINE:
                    break
        return json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None


def search(
    config: Config, warnings: list[str] | None = None, **query: Any
) -> list[dict[str, Any]] | None:
    """The hits (as dicts of `Hit` fields) of a search answered by the running watcher, or
    None: no watcher, it refused (other settings, still indexing) or did not answer. The
    search's warnings are added to `warnings`, when given."""
    cache_dir = config.cache_dir
    if not (cache_dir / LOCK_FILE).exists():
        return None
    payload = {"op": "search", "protocol": PROTOCOL, "settings": settings_key(config), **query}
    reply = request(cache_dir, payload)
    if not isinstance(reply, dict) or not reply.get("ok"):
        if isinstance(reply, dict):
            import logging

            logging.getLogger("vault_memory").info(
                "the watcher did not answer the search (%s); searching here.", reply.get("error")
            )
        return None
    hits = reply.get("hits")
    said = reply.get("warnings")
    if warnings is not None and isinstance(said, list) and isinstance(hits, list):
        warnings.extend(str(w) for w in said)
    return hits if isinstance(hits, list) else None


def settled(cache_dir: Path) -> bool:
    """Whether a watcher running in another process says the index holds every change it has
    seen, once it has applied what was pending (it waits at most its settle time; False while
    a large change is under way). A search may then skip its own freshness check, which stats
    every file: the watcher's state answers in a round trip whatever the vault's size."""
    if not lock_held(cache_dir / LOCK_FILE):
        return False
    if (read_state(cache_dir) or {}).get("pid") == os.getpid():
        return False  # the watcher itself: its searches settle on their own
    reply = request(cache_dir, {"op": "settle", "protocol": PROTOCOL})
    return isinstance(reply, dict) and reply.get("ok") is True and reply.get("settled") is True


SERVER_MODES = ("off", "auto")


def server_mode(config: Config) -> str:
    """`[search] server`: "off" (the default) or "auto"."""
    from ..errors import ConfigError

    mode = config.search.server.strip().lower()
    if mode not in SERVER_MODES:
        raise ConfigError(
            f'search.server is {config.search.server!r}; use "off" (the '
            'default) or "auto" (a search starts a search server).'
        )
    if config.search.server_idle_minutes <= 0:
        raise ConfigError(
            "search.server_idle_minutes must be more than 0, got "
            f"{config.search.server_idle_minutes:g}."
        )
    return mode


def start_server(config: Config) -> int | None:
    """`[search] server = "auto"`: start the vault's search server in the background (a
    `vault watch` without dreams that stops after `server_idle_minutes` without a request, or
    when `.vault/` is deleted), unless a watcher or a server already runs. Its pid, or None.
    Two searches starting one at once leave one running: the second cannot take the lock
    and exits."""
    if server_mode(config) != "auto" or lock_held(config.cache_dir / LOCK_FILE):
        return None
    import sys

    argv = [
        sys.executable,
        "-m",
        "vault_memory",
        "--vault",
        str(config.root),
        "-q",
        "watch",
        "--server-idle",
        f"{config.search.server_idle_minutes:g}",
    ]
    null = os.open(os.devnull, os.O_RDWR)
    try:  # its own session: the terminal's Ctrl-C and hang-up are not for it
        return os.posix_spawn(
            sys.executable,
            argv,
            os.environ,
            setsid=True,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, null, 0),
                (os.POSIX_SPAWN_DUP2, null, 1),
                (os.POSIX_SPAWN_DUP2, null, 2),
            ],
        )
    finally:
        os.close(null)


def ping(cache_dir: Path, timeout: float = 2.0) -> dict[str, Any] | None:
    reply = request(cache_dir, {"op": "ping", "protocol": PROTOCOL}, timeout)
    return reply if isinstance(reply, dict) and reply.get("ok") else None


def remove_socket(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


@dataclass
class StopReport:
    """What `stop_watcher` did."""

    running: bool  # a watcher ran when asked
    stopped: bool = False  # it has stopped since
    pid: int | None = None
    via: str | None = None  # "socket", "SIGTERM", or None when it stopped by itself meanwhile
    seconds: float = 0.0
    stale: bool = False  # none ran, but a killed one left its state file

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class WatcherStillRunningError(VaultError):
    def __init__(self, pid: int | None, seconds: float) -> None:
        self.pid = pid
        self.seconds = seconds
        who = f"pid {pid}" if pid else "its process"
        super().__init__(
            f"the watcher ({who}) was asked to stop but still runs after {seconds:g} s: it "
            "lets a running dream or batch finish first. Ask it again (`Vault.stop_watcher()`) "
            f"to wait longer, or end it at once with `kill -9 {pid or '<pid>'}` (safe: the "
            "next start compares the files with the index)."
        )


class WatcherNotAnsweringError(VaultError):
    """A watcher that holds the lock but neither answers on its socket nor has written its pid
    yet (it may be starting)."""

    def __init__(self) -> None:
        super().__init__(
            "a watcher holds .vault/watch.lock but does not answer on its socket and has not "
            "written its pid yet (it may be starting). Ask it to stop again in a moment."
        )


def stop_watcher(cache_dir: Path, timeout: float = STOP_WAIT) -> StopReport:
    """Ask the watcher of this cache to stop, over its socket (or, if it does not answer, by
    SIGTERM to the pid its state file names while it holds the lock), and wait until it has
    released its lock, at most `timeout` seconds (`WatcherStillRunningError` after that)."""
    started = time.monotonic()
    lock = cache_dir / LOCK_FILE
    if not lock_held(lock):
        return StopReport(running=False, stale=read_state(cache_dir) is not None)
    pid = (read_state(cache_dir) or {}).get("pid")
    pid = pid if isinstance(pid, int) and pid > 0 else None
    reply = request(cache_dir, {"op": "stop", "protocol": PROTOCOL}, CONNECT_TIMEOUT)
    via: str | None = "socket"
    if isinstance(reply, dict) and reply.get("ok"):
        pid = reply.get("pid", pid)
    elif not lock_held(lock):  # it stopped by itself meanwhile
        via = None
    else:  # no socket (a watcher without one, or of an older version): the signal
        _terminate(pid)
        via = "SIGTERM"
    while lock_held(lock):
        if time.monotonic() - started > timeout:
            raise WatcherStillRunningError(pid, timeout)
        time.sleep(0.05)
    return StopReport(True, True, pid, via, round(time.monotonic() - started, 2))


def _terminate(pid: int | None) -> None:
    if pid == os.getpid():
        raise VaultError(
            "the watcher runs in this process without a socket; call its `request_stop()`."
        )
    if pid is None:
        raise WatcherNotAnsweringError()
    try:
        import signal

        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # gone already: the wait sees the lock released
    except PermissionError:
        raise VaultError(
            f"the watcher runs as another user (pid {pid}); stop it as that user."
        ) from None
