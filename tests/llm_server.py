"""A real HTTP server on 127.0.0.1 speaking the chat-completions protocol with scripted replies.

    server.reply_content('{"entries": []}')      # a good reply carrying this message text
    server.reply_raw(500, "boom")                # any status and body
    server.reply_delay(2.0)                      # answer only after 2 s (for timeouts)
    server.reply_trickle('{"entries": []}', 0.1) # one byte every 0.1 s (a total deadline)
    server.reply_raw(429, "slow down", headers={"Retry-After": "2"})

A 429 or 5xx reply says `Retry-After: 0` unless the test gives its own headers, so a test of a
failing model does not wait out the client's back-off (it retries at once, then fails).

`/v1/embeddings` answers with real vectors: those of `server.embedder` (the bundled model, set
by the `embedding_server` fixture) for every input, unless a scripted reply is queued with
`embed_raw` / `embed_vectors` (hostile replies: wrong lengths, NaN, errors, delays). Its
requests are kept in `server.embedding_requests`, apart from the chat requests.

Replies are served in order; when the script runs out the last one repeats. Every request's
JSON body is kept in `server.requests`. `server.responder = fn` answers every chat request
with `fn(request)` instead (a model that reads what it is asked).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    status: int
    body: bytes
    delay: float = 0.0
    headers: dict[str, str] | None = None
    trickle: float = 0.0  # seconds between the body's bytes (a server that never quite stops)


def _default_headers(status: int) -> dict[str, str]:
    return {"Retry-After": "0"} if status == 429 or status >= 500 else {}


def embedding_reply(vectors: list[Any], model: str = "served-model") -> bytes:
    """The /v1/embeddings reply for `vectors` (lists of floats, or any JSON value)."""
    return json.dumps(
        {
            "object": "list",
            "model": model,
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
    ).encode()


def completion(content: str, model: str = "scripted-model") -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
        }
    ).encode()


class ScriptedLLMServer:
    def __init__(self) -> None:
        self.script: deque[Scripted] = deque()
        self.last: Scripted = Scripted(200, completion("{}"))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.embed_script: deque[Scripted] = deque()
        self.embedding_requests: list[dict[str, Any]] = []
        self.embedding_headers: list[dict[str, str]] = []
        self.embedder: Any = None  # what computes real vectors for /v1/embeddings
        # request -> the reply's message text: answers every chat request when set (a model
        # that reads what it is asked, for benches that send many different requests)
        self.responder: Callable[[dict[str, Any]], str] | None = None
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                try:
                    request = json.loads(body)
                except ValueError:
                    request = {"_raw": body.decode("utf-8", "replace")}
                if self.path.rstrip("/").endswith("/embeddings"):
                    server.embedding_requests.append(request)
                    server.embedding_headers.append(dict(self.headers))
                    reply = server._embedding_reply(request)
                elif server.responder is not None:  # a model that answers each request
                    server.requests.append(request)
                    server.headers.append(dict(self.headers))
                    reply = Scripted(200, completion(server.responder(request)))
                else:
                    server.requests.append(request)
                    server.headers.append(dict(self.headers))
                    reply = server.script.popleft() if server.script else server.last
                    server.last = reply
                if reply.delay:
                    server._stop.wait(reply.delay)
                headers = _default_headers(reply.status) if reply.headers is None else reply.headers
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if reply.trickle:
                        for i in range(len(reply.body)):
                            if server._stop.wait(reply.trickle):
                                break
                            self.wfile.write(reply.body[i : i + 1])
                            self.wfile.flush()
                    else:
                        self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def reply_content(self, content: str, delay: float = 0.0) -> None:
        self.script.append(Scripted(200, completion(content), delay))

    def reply_trickle(self, content: str, seconds_per_byte: float) -> None:
        self.script.append(Scripted(200, completion(content), trickle=seconds_per_byte))

    def reply_json(self, value: Any) -> None:
        self.reply_content(json.dumps(value))

    def reply_raw(
        self,
        status: int,
        body: str | bytes,
        delay: float = 0.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.script.append(Scripted(status, data, delay, headers))

    # -- /v1/embeddings ---------------------------------------------------------------------

    def embed_raw(
        self,
        status: int,
        body: str | bytes,
        delay: float = 0.0,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` embeddings requests with this status and body."""
        data = body.encode() if isinstance(body, str) else body
        for _ in range(times):
            self.embed_script.append(Scripted(status, data, delay, headers))

    def embed_vectors(self, vectors: list[Any], delay: float = 0.0) -> None:
        """Answer the next embeddings request with these vectors (200)."""
        self.embed_script.append(Scripted(200, embedding_reply(vectors), delay))

    def embed_real(self, delay: float = 0.0) -> None:
        """Answer the next embeddings request with real vectors, after `delay` seconds."""
        self.embed_script.append(Scripted(200, b"", delay, {"X-Real": "1"}))

    def _embedding_reply(self, request: dict[str, Any]) -> Scripted:
        scripted = self.embed_script.popleft() if self.embed_script else None
        if scripted is not None and not (scripted.headers or {}).get("X-Real"):
            return scripted
        delay = scripted.delay if scripted else 0.0
        texts = request.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if self.embedder is None or not isinstance(texts, list):
            return Scripted(400, b'{"error": "no input"}', delay)
        vectors = [[float(x) for x in row] for row in self.embedder.embed(texts)]
        dims = request.get("dimensions")
        if isinstance(dims, int) and 0 < dims < len(vectors[0]) if vectors else False:
            vectors = [row[:dims] for row in vectors]  # as OpenAI's shortened embeddings
        return Scripted(200, embedding_reply(vectors, str(request.get("model"))), delay, {})

    def reply_delay(self, seconds: float, content: str = "{}") -> None:
        self.reply_content(content, delay=seconds)

    def start(self) -> ScriptedLLMServer:
        self.thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def wait_requests(self, n: int, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.requests) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {n} requests, got {len(self.requests)}")
            time.sleep(0.01)
