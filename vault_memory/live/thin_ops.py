"""The watcher's side of the thin client (cli/thin.py): `vault search`, `vault context` and
`vault get` answered over the socket (op `thin`) with what the full command would print.

It answers only when the full CLI, run in the client's place, would print the same: the
request names this vault, the client's VAULT_* and TZ variables equal the watcher's, the
vault.toml files read now give the settings the watcher runs with (and no warning), and the
command logs nothing (a warning would be printed by the full CLI). Otherwise, and on any
error, it refuses (`{"ok": false}`): the client then runs the full CLI, which prints the
error or the warning itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from ..config import load_config
from ..errors import VaultError

if TYPE_CHECKING:
    from pathlib import Path

    from .shared import WatchedVault, WatchReport

log = logging.getLogger("vault_memory")

ENV_PREFIX = "VAULT_"
ENV_NAMES = ("TZ",)  # the local day: recency, today's and yesterday's logs
ENV_HANDLED = ("VAULT_PATH", "VAULT_SCOPE")  # the client resolves these itself
COMMANDS = ("search", "context", "get")


class Refused(Exception):
    """The full CLI must answer this request."""


class Answering(Protocol):
    """What a thin request needs of the watcher's queries side (serve.py `QueryServer`)."""

    root: Path
    reader: WatchedVault
    report: WatchReport
    ready: threading.Event
    search_lock: threading.Lock

    def settle(self) -> bool: ...

    def search(self, target: WatchedVault, **request: Any) -> list[Any]: ...


def request_env(environ: Any) -> dict[str, str]:
    """The environment variables whose values a thin request must share with the watcher."""
    return {
        k: v
        for k, v in environ.items()
        if (k.startswith(ENV_PREFIX) and k not in ENV_HANDLED) or k in ENV_NAMES
    }


def print_json(data: Any) -> str:
    """What cli/app.py `_print_json` prints."""
    return json.dumps(data, ensure_ascii=False, indent=None, default=str) + "\n"


class _Logged(logging.Handler):
    """Records of one thread at WARNING or above."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.seen = False

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.seen = True


@contextlib.contextmanager
def _nothing_logged() -> Iterator[None]:
    if not log.isEnabledFor(logging.WARNING):  # a warning would go unseen: cannot tell
        raise Refused("warnings are not logged here")
    handler = _Logged()
    log.addHandler(handler)
    try:
        yield
    finally:
        log.removeHandler(handler)
    if handler.seen:
        raise Refused("the command logged a warning")


def answer_thin(queries: Answering, request: dict[str, Any]) -> dict[str, Any]:
    """The reply to a thin client's request: `ok` with what to print, or a refusal.
    `queries`: the watcher's queries side answering (its reader vault, lock and readiness)."""
    try:
        return {"ok": True, **_answer(queries, request)}
    except (Refused, VaultError) as exc:
        return {"ok": False, "error": str(exc)}
    except Exception as exc:  # the full CLI reports it, and a damaged reader is reopened
        log.info("a thin request failed (%s); the client runs the command itself.", exc)
        queries.reader.close()
        return {"ok": False, "error": str(exc)}


def _answer(queries: Answering, request: dict[str, Any]) -> dict[str, Any]:
    from ..files import parse_scope

    command, fields = request.get("command"), request.get("request")
    if command not in COMMANDS or not isinstance(fields, dict):
        raise Refused(f"unknown thin command {command!r}")
    if not queries.ready.is_set():
        raise Refused("the watcher is still indexing the vault")
    root = request.get("root")
    if not isinstance(root, str) or os.path.realpath(root) != os.path.realpath(queries.root):
        raise Refused("another vault")
    if request.get("env") != request_env(os.environ):
        raise Refused("the client's environment differs from the watcher's")
    target: Any = queries.reader
    scope = fields.get("scope")
    if scope is not None:
        target = target.scope(*parse_scope(str(scope)))
    now = load_config(target.root, scope=target.scope_path)
    if now.warnings or now.as_dict() != target.config.as_dict():
        raise Refused("vault.toml changed since the watcher started")
    queries.settle()
    with _nothing_logged():
        if command == "search":
            hits = queries.search(
                target,
                query=fields.get("query", ""),
                mode=fields.get("mode", "hybrid"),
                limit=fields.get("limit") or target.config.search.limit,
                since=fields.get("since"),
                until=fields.get("until"),
                within=fields.get("within"),
                kinds=fields.get("kinds") or (),
                deep=fields.get("deep") is True,
            )
            queries.report.searches += 1
            return {
                "hits": [dataclasses.asdict(hit) for hit in hits],
                "warnings": list(getattr(hits, "warnings", [])),
            }
        if command == "context":
            from ..search import build_context

            def search(query: str, **options: Any) -> Any:
                return target.search(query, fresh=False, **options)

            with queries.search_lock:
                block = build_context(
                    target.layout, search, fields.get("budget", 2000), fields.get("query")
                )
            return {"json": print_json(block.to_dict()), "text": block.text + "\n"}
        result = target.get(str(fields.get("path", "")), fields.get("start"), fields.get("end"))
        return {"json": print_json(result.to_dict()), "text": result.text}
