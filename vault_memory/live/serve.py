"""A watcher's queries: `vault search` (and the thin client's search, context and get)
answered over a Unix socket in `.vault/` (protocol: watch_client.py), from a reader vault of
its own, kept warm: the unit table and the query encoder are loaded once the first reconcile
is done, and brought up to date after changes while the watcher is idle.

One index serves every scope of the vault: a search bound to a scope names it in its request
and sees what the scope may see. A query first settles the pending changes (applies them
without waiting out the quiet period) so that it sees an edit made just before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import socketserver
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import VaultError
from .watch_client import PROTOCOL, remove_socket, settings_key, socket_path

if TYPE_CHECKING:
    from .shared import WatchedVault, WatchReport

log = logging.getLogger("vault_memory")


class QueryServer:
    """The queries side of a watcher (see the module docstring). `reader` is the vault that
    answers (a clone of the watched one); `ready` is set once the index holds the vault,
    `warm` once the reader is loaded."""

    def __init__(
        self,
        reader: WatchedVault,
        report: WatchReport,
        ready: threading.Event,
        warm: threading.Event,
        settle: Callable[[], bool],
        request_stop: Callable[[], None],
        stopping: Callable[[], bool],
        cache_gone: Callable[[], bool] | None,
    ) -> None:
        self.reader = reader
        self.root = reader.root
        self.report = report
        self.ready = ready
        self.warm = warm
        self.settle = settle
        self.request_stop = request_stop
        self.stopping = stopping
        #: A search server's: whether its cache was deleted (it then stops: never makes it
        #: again); None for a watcher, which makes it again.
        self.cache_gone = cache_gone
        self.settings_key = settings_key(reader.config)
        self.search_lock = threading.Lock()
        self.table_stale = False  # the index changed since the reader was prepared
        self.last_request = time.monotonic()
        self.socket: Path | None = None
        self._server: Any = None

    # -- the socket -------------------------------------------------------------------------

    def start_socket(self, cache: Path) -> None:
        path = socket_path(cache)
        remove_socket(path)  # the watcher holds the pid lock: whatever is there is stale
        queries = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                try:
                    request = json.loads(self.rfile.readline(1 << 20))
                    reply = queries.answer(request)
                except ValueError:
                    reply = {"ok": False, "error": "the request is not one line of JSON"}
                data = json.dumps(reply, ensure_ascii=False) + "\n"
                with contextlib.suppress(OSError):
                    self.wfile.write(data.encode("utf-8"))

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        old_umask = os.umask(0o177)  # the socket answers with vault content: owner only
        try:
            self._server = Server(os.fsencode(path), Handler)
        finally:
            os.umask(old_umask)
        self.socket = path
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        ).start()
        threading.Thread(target=self._warm_up, name="vault-warm-up", daemon=True).start()

    def stop_socket(self) -> None:
        """Stop answering; the socket file goes (not its path: `start_socket` may follow)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def serving(self) -> bool:
        return self._server is not None

    # -- the reader -------------------------------------------------------------------------

    def _warm_up(self) -> None:
        """Load the unit table and the query encoder once the first reconcile is done, so the
        first query through the socket is as fast as the next."""
        while not self.ready.wait(1.0):
            if self.stopping():
                return
        self.prepare_reader()
        self.warm.set()

    def prepare_reader(self) -> None:
        """Bring the search side up to date with the index now, rather than in the next query
        (the unit table is patched by the files that changed: search/table.py)."""
        with self.search_lock:
            if self.cache_gone is not None and self.cache_gone():
                return  # a search server whose cache was deleted: it stops
            try:
                self.reader.prepare_search()
            except Exception as exc:  # only a head start: the next real query will say more
                log.debug("preparing the search side failed: %s", exc)
                if not isinstance(exc, VaultError):
                    self.reader.close()

    def close_reader(self) -> None:
        with self.search_lock:  # not under the warm-up's feet: SQLite closed in use crashes
            self.reader.close()

    # -- answers ----------------------------------------------------------------------------

    def answer(self, request: Any) -> dict[str, Any]:
        """The reply to one socket request (see watch_client)."""
        self.last_request = time.monotonic()
        if not isinstance(request, dict) or request.get("protocol") != PROTOCOL:
            return {"ok": False, "error": "unknown protocol version"}
        op = request.get("op")
        if op == "ping":
            return {
                "ok": True,
                "pid": os.getpid(),
                "ready": self.ready.is_set(),  # searches are answered
                "warm": self.warm.is_set(),  # and the model and unit table are loaded
            }
        if op == "stop":  # `vault watch --stop`: as SIGTERM does
            log.info("asked to stop over the socket: stopping.")
            self.request_stop()
            return {"ok": True, "pid": os.getpid(), "stopping": True}
        if op == "settle":  # a search in another process: does the index hold every change
            # seen? Then it need not stat the vault's files (index/upkeep.py).
            return {"ok": True, "settled": self.ready.is_set() and self.settle()}
        if op == "thin":  # cli/thin.py: what `vault search|context|get` prints
            from .thin_ops import answer_thin

            return answer_thin(self, request)
        if op != "search":
            return {"ok": False, "error": f"unknown request {op!r}"}
        return self._answer_search(request)

    def _answer_search(self, request: dict[str, Any]) -> dict[str, Any]:
        if not self.ready.is_set():
            return {"ok": False, "error": "the watcher is still indexing the vault"}
        target: Any = self.reader
        scope = request.get("scope")
        if scope is not None:  # a search bound to a scope sees what the scope may see
            try:
                if not isinstance(scope, list):
                    raise VaultError("the scope of a search is a list of names")
                target = self.reader.scope(*scope)
                key = settings_key(target.config)
            except VaultError as exc:
                return {"ok": False, "error": str(exc)}
        else:
            key = self.settings_key
        if request.get("settings") != key:
            return {"ok": False, "error": "the watcher runs with other settings"}
        self.settle()
        try:
            hits = self.search(target, **request)
        except Exception as exc:  # the client then searches in-process and reports the error
            log.info("a search through the socket failed (%s); the client searches itself.", exc)
            return {"ok": False, "error": str(exc)}
        self.report.searches += 1
        return {
            "ok": True,
            "hits": [dataclasses.asdict(hit) for hit in hits],
            "warnings": list(getattr(hits, "warnings", [])),
        }

    def search(self, target: WatchedVault, **request: Any) -> list[Any]:
        """`target.search` of one request (as watch_client sends it), under the search lock."""
        with self.search_lock:
            try:
                return target.search(
                    str(request.get("query", "")),
                    limit=request.get("limit"),
                    mode=request.get("mode", "hybrid"),
                    since=request.get("since"),
                    until=request.get("until"),
                    within=request.get("within"),
                    kinds=tuple(request.get("kinds") or ()),
                    fresh=False,
                    deep=request.get("deep") is True,  # the model stays loaded for the next
                )
            except Exception as exc:
                if not isinstance(exc, VaultError):
                    self.reader.close()  # replaced or damaged files: reopen on the next query
                raise
