"""The thin client: `vault search`, `vault context` and `vault get` answered by a running
`vault watch` (or search server) without loading click, numpy or the library.

The `vault` console script starts here. For one of those three commands with plain arguments,
it finds the vault (as `--vault`, VAULT_PATH or the nearest vault.toml upward do), sends the
parsed request over the watcher's socket (op `thin`, see live/watch.py `answer_thin`) and
prints the reply exactly as the full command prints it. The watcher answers only when its
settings, its environment (VAULT_*, TZ) and the vault's vault.toml agree with what this
process would use, and when nothing would have been logged. Anything else — help, a usage
error, an option it does not know, no watcher, a refusal, an error, a timeout, a stream that
is not UTF-8 — returns from `answer()` without printing, and the full CLI runs the command
(which prints errors as it always does). With no watcher to answer, `vault search` runs the
library here (`search_here`), still without click, where the full CLI would print nothing
else. Byte-identical output is tested in tests/cli/test_thin_client.py.

Only the standard library modules a bare interpreter has loaded already, plus json and _socket:
no typing, dataclasses, click or package modules (`python -X importtime` shows it).
"""

from __future__ import annotations

import _socket
import json
import os
import sys

SOCKET_FILE = "watch.sock"  # = live.watch_client.SOCKET_FILE (tests check the copies agree)
STATE_FILE = "watch.json"
LOCK_FILE = "watch.lock"
CACHE_DIR = ".vault"
CONFIG_FILE = "vault.toml"
MAX_SOCKET_PATH = 107
PROTOCOL = 2
CONNECT_TIMEOUT = 1.0
REPLY_TIMEOUT = 10.0

TYPE_CHECKING = False  # not typing's (see above)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

KINDS = ("memory", "daily", "note", "diary", "session")
MODES = ("hybrid", "keyword", "semantic")
# Environment the request carries (VAULT_PATH and VAULT_SCOPE are resolved here).
ENV_PREFIX = "VAULT_"
ENV_NAMES = ("TZ",)
ENV_HANDLED = ("VAULT_PATH", "VAULT_SCOPE")


class Doubt(Exception):
    """Not for the thin client: the full CLI runs the command."""


def request_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment variables whose values must match the watcher's."""
    return {
        k: v
        for k, v in environ.items()
        if (k.startswith(ENV_PREFIX) and k not in ENV_HANDLED) or k in ENV_NAMES
    }


def _take_value(args: list[str], i: int, arg: str) -> tuple[str, int]:
    """The value of option `name` at args[i] (`--name=v`, `--name v`, `-nV`, `-n V`)."""
    if arg.startswith("--") and "=" in arg:
        return arg.partition("=")[2], i
    if len(arg) > 2 and not arg.startswith("--"):
        return arg[2:], i
    if i + 1 >= len(args):
        raise Doubt
    value = args[i + 1]
    if value.startswith("-"):  # click would take it; its meaning is in doubt here
        raise Doubt
    return value, i + 1


def _int(value: str, low: int, high: int) -> int:
    if not (value.isascii() and value.isdigit()):
        raise Doubt
    number = int(value)
    if not low <= number <= high:
        raise Doubt
    return number


def parse_search(args: list[str]) -> dict[str, Any]:
    """`vault search` as its QueryCommand reads it: a word starting with one "-" that is not
    `-n`/`-h` belongs to the query."""
    kinds: list[str] = []
    request: dict[str, Any] = {
        "limit": None,
        "mode": "hybrid",
        "since": None,
        "until": None,
        "within": None,
        "kinds": kinds,
        "json": False,
        "explain": False,
        "deep": False,
        "scope": None,
    }
    words = []
    rest = False
    i = 0
    values = {
        "--limit": "limit",
        "--mode": "mode",
        "--since": "since",
        "--until": "until",
        "--in": "within",
        "--kind": "kinds",
        "--scope": "scope",
    }
    while i < len(args):
        arg = args[i]
        if rest:
            words.append(arg)
        elif arg == "--":
            rest = True
        elif arg.startswith("--"):
            name = arg.partition("=")[0]
            if name in ("--json", "--explain", "--deep") and "=" not in arg:
                request[name[2:]] = True
            elif name in values:
                value, i = _take_value(args, i, arg)
                key = values[name]
                if key == "kinds":
                    if value not in KINDS:
                        raise Doubt
                    kinds.append(value)
                elif key == "limit":
                    request["limit"] = _int(value, 1, 1000)
                elif key == "mode" and value not in MODES:
                    raise Doubt
                else:
                    request[key] = value
            else:
                raise Doubt
        elif arg == "-n" or (arg.startswith("-n") and arg[2:].isdigit()):
            value, i = _take_value(args, i, arg)
            request["limit"] = _int(value, 1, 1000)
        elif arg == "-h":
            raise Doubt
        else:
            words.append(arg)
        i += 1
    if not words:
        raise Doubt
    request["query"] = " ".join(words)
    return request


def parse_location(spec: str) -> tuple[str, int | None, int | None]:
    """vault.parse_location (tests check the copies agree); a malformed range is the full
    CLI's error to print."""
    import re

    match = re.match(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$", spec)
    if not match:
        path, colon, tail = spec.rpartition(":")
        if colon and path and not any(c in tail for c in "./\\"):
            raise Doubt
        return spec, None, None
    start = int(match["start"])
    end = int(match["end"]) if match["end"] else start
    return match["path"], start, end


def parse_plain(args: list[str], command: str) -> dict[str, Any]:
    """`vault context` and `vault get`: plain click commands."""
    request: dict[str, Any] = {"json": False, "scope": None}
    if command == "context":
        request.update(budget=2000, query=None)
        values = {"--budget": "budget", "--query": "query", "--scope": "scope"}
    else:
        values = {"--scope": "scope"}
    positional = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--json":
            request["json"] = True
        elif arg.startswith("-"):
            name = arg.partition("=")[0]
            if name not in values or not arg.startswith("--"):
                raise Doubt
            value, i = _take_value(args, i, arg)
            key = values[name]
            request[key] = _int(value, 1, 1_000_000) if key == "budget" else value
        else:
            positional.append(arg)
        i += 1
    if command == "get":
        if len(positional) != 1:
            raise Doubt
        request["path"], request["start"], request["end"] = parse_location(positional[0])
    elif positional:
        raise Doubt
    return request


def parse(
    argv: list[str], environ: Mapping[str, str]
) -> tuple[str, str | None, bool, dict[str, Any]]:
    """(command, vault path or None, quiet, request) for the argument shapes answered here;
    `Doubt` for any other."""
    vault: str | None = None
    quiet = False
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg in ("-q", "--quiet"):
            quiet = True
        elif arg == "--vault" or arg.startswith("--vault="):
            vault, i = _take_value(argv, i, arg)
        else:
            raise Doubt  # -v, --help, --version, ...
        i += 1
    if i >= len(argv):
        raise Doubt
    command, args = argv[i], argv[i + 1 :]
    if command == "search":
        request = parse_search(args)
    elif command in ("context", "get"):
        request = parse_plain(args, command)
    else:
        raise Doubt
    if request["scope"] is None and environ.get("VAULT_SCOPE"):
        request["scope"] = environ["VAULT_SCOPE"]
    if vault is None and environ.get("VAULT_PATH"):
        vault = environ["VAULT_PATH"]
    return command, vault, quiet, request


def find_root(explicit: str | None) -> str:
    """config.find_vault_root, without its errors (those are the full CLI's to print)."""
    if explicit:
        path = os.path.expanduser(explicit)
        if not os.path.isdir(path):
            raise Doubt
        if not (
            os.path.isfile(os.path.join(path, CONFIG_FILE))
            or os.path.isfile(os.path.join(path, "MEMORY.md"))
            or os.path.isdir(os.path.join(path, "memory"))
        ):
            raise Doubt
        return os.path.realpath(path)
    folder = os.path.realpath(os.getcwd())
    while True:
        if os.path.isfile(os.path.join(folder, CONFIG_FILE)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            raise Doubt
        folder = parent


def socket_of(root: str) -> str:
    cache = os.path.join(root, CACHE_DIR)
    if not os.path.exists(os.path.join(cache, LOCK_FILE)):
        raise Doubt  # no watcher has run here
    path = os.path.join(cache, SOCKET_FILE)
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    with open(os.path.join(cache, STATE_FILE), encoding="utf-8") as f:
        state = json.load(f)
    if not isinstance(state, dict) or not isinstance(state.get("socket"), str):
        raise Doubt
    return state["socket"]


def ask(path: str, payload: dict[str, Any]) -> dict[str, Any]:
    line = (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8")
    chunks: list[bytes] = []
    # _socket, not socket: socket.py's start-up is a tenth of a bare interpreter's
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(os.fsencode(path))
        sock.settimeout(REPLY_TIMEOUT)
        sock.sendall(line)
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                break
    finally:
        sock.close()
    reply = json.loads(b"".join(chunks))
    if not isinstance(reply, dict) or not reply.get("ok"):
        raise Doubt
    return reply


# click.style(fg="cyan") and click.style(dim=True); stripped as click.echo strips them when
# stdout is not a terminal.
CYAN, DIM, RESET = "\x1b[36m", "\x1b[2m", "\x1b[0m"


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\033\[[;?0-9]*[a-zA-Z]", "", text)


def hit_dict(hit: dict[str, Any]) -> dict[str, Any]:
    """searcher.Hit.to_dict of a hit sent as its fields."""
    return {
        "path": hit["path"],
        "start_line": hit["start_line"],
        "end_line": hit["end_line"],
        "heading": hit["heading"],
        "text": hit["text"],
        "score": round(hit["score"], 4),
        "scores": {k: round(v, 4) for k, v in hit["scores"].items()},
        "date": hit["date"],
        "kind": hit["kind"],
        "flags": list(hit["flags"]),
    }


def render_search(request: dict[str, Any], reply: dict[str, Any], quiet: bool) -> tuple[str, str]:
    """(stdout, stderr) of cli/search.py `search` for the hits of `reply`."""
    hits, warnings = reply["hits"], reply["warnings"]
    err = "" if quiet else "".join(f"Warning: {w}\n" for w in warnings)
    if request["json"]:
        found: dict[str, Any] = {
            "query": request["query"],
            "mode": request["mode"],
            "results": [hit_dict(h) for h in hits],
        }
        if warnings:
            found["warning"] = " ".join(warnings)
        return json.dumps(found, ensure_ascii=False, indent=None, default=str) + "\n", err
    if not hits:
        return "", err + "no results\n"
    out = []
    for hit in hits:
        start, end = hit["start_line"], hit["end_line"]
        span = f"{start}" if start == end else f"{start}-{end}"
        out.append(f"{CYAN}{hit['path']}:{span}{RESET}")
        out.append(f"  {hit['heading']}" if hit["heading"] else "")
        weak = ", weak match" if "weak" in hit["flags"] else ""
        out.append(f"{DIM}  ({hit['score']:.3f}{weak}){RESET}\n")
        for line in hit["text"].split("\n"):
            out.append(f"    {line}\n")
        if request["explain"]:
            parts = ", ".join(f"{k}={v:.3f}" for k, v in hit["scores"].items())
            out.append(f"{DIM}    [{parts}]{RESET}\n")
    return "".join(out), err


def search_here(root: str, quiet: bool, request: dict[str, Any]) -> dict[str, Any]:
    """`vault search` with no watcher to answer it, run here as the full CLI runs it (the
    library, OpenBLAS on one thread, no optimised model session, warnings logged as
    `Warning: ...`) but without importing click (0.01 CPU-s, a tenth of a keyword search).
    Only where the full CLI would print nothing else: stderr not a terminal (no progress
    bars), an index already there, no search server to start. Any error: `Doubt`, having
    printed nothing (the full CLI runs the search again and prints the error)."""
    if sys.stderr.isatty() or not os.path.isfile(os.path.join(root, CACHE_DIR, "index.sqlite")):
        raise Doubt
    import logging

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as app.main
    from ..index import settings

    settings.optimize_query_session = False
    from ..vault import Vault

    logged: list[str] = []

    class Buffered(logging.Handler):  # app._setup_logging's StderrHandler, kept until the end
        def emit(self, record: logging.LogRecord) -> None:
            label = {logging.WARNING: "Warning", logging.ERROR: "Error"}.get(record.levelno)
            message = record.getMessage()
            logged.append(f"{label}: {message}\n" if label else f"{message}\n")

    logger = logging.getLogger("vault_memory")
    handler = Buffered()
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.ERROR if quiet else logging.WARNING)
    vault = Vault(root)
    try:
        view = vault
        view.config  # noqa: B018 - its warnings are logged first, as pass_vault does
        if request["scope"] is not None:
            from ..files import parse_scope

            view = vault.scope(*parse_scope(request["scope"]))
            view.config  # noqa: B018
        if view.config.search.server.strip().lower() != "off":
            raise Doubt  # the full CLI starts the server
        hits = view.search(
            request["query"],
            limit=request["limit"],
            mode=request["mode"],
            since=request["since"],
            until=request["until"],
            within=request["within"],
            kinds=tuple(request["kinds"]),
            via_watcher=True,
            deep=request["deep"],
        )
        import dataclasses

        found = [dataclasses.asdict(hit) for hit in hits]
        warnings = list(getattr(hits, "warnings", []))
    except Exception:
        raise Doubt from None
    finally:
        vault.close()
        logger.removeHandler(handler)
    return {"hits": found, "warnings": warnings, "logged": "".join(logged)}


def answer(argv: list[str], environ: Mapping[str, str]) -> int:
    """Answer the command through a running watcher and return its exit status, or raise
    `Doubt` (having printed nothing) for the full CLI to run it."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        if encoding not in ("utf-8", "utf8"):
            raise Doubt
    command, vault, quiet, request = parse(argv, environ)
    root = find_root(vault)
    payload = {
        "op": "thin",
        "protocol": PROTOCOL,
        "command": command,
        "root": root,
        "env": request_env(environ),
        "request": request,
    }
    try:
        reply = ask(socket_of(root), payload)
    except Exception:
        if command != "search":
            raise
        reply = search_here(root, quiet, request)  # no watcher: the library, without click
        quiet = True  # its warnings were logged (and are printed) as the CLI logs them
    if command == "search":
        out, err = render_search(request, reply, quiet)
        err = reply.get("logged", "") + err
    else:
        out, err = reply["json"] if request["json"] else reply["text"], ""
    if "\x1b" in out and not sys.stdout.isatty():
        out = _strip_ansi(out)
    if "\x1b" in err and not sys.stderr.isatty():
        err = _strip_ansi(err)
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    sys.stdout.write(out)
    sys.stdout.flush()
    return 0


def main() -> None:
    """The `vault` console script: the thin client when a watcher answers, else the full CLI."""
    if os.name != "posix":  # Windows: said in one line, before any module that needs POSIX
        try:
            from ..files import posix  # noqa: F401 - raises UnsupportedPlatformError, saying why
        except ImportError as exc:
            sys.stderr.write(f"Error: {exc}\n")
            sys.exit(1)
    argv = sys.argv[1:]
    if (
        argv
        and argv[0] in ("search", "context", "get", "--vault", "-q", "--quiet")
        or any(a.startswith("--vault=") for a in argv[:1])
    ):
        import gc

        # Answered here, the process ends in os._exit: no cycle of it needs collecting, and
        # the collector's passes over what a cold search imports cost 4% of its CPU.
        gc.disable()
        try:
            code = answer(argv, os.environ)
        except KeyboardInterrupt:
            sys.stderr.write("Aborted!\n")
            code = 1
        except BrokenPipeError:
            code = 1
        except Exception:  # Doubt, OSError, a reply of another shape: the full CLI decides
            code = None
        if code is not None:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
        gc.enable()  # the full CLI runs commands of any length
    from . import full_main

    full_main()
