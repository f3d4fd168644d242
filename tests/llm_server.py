"""A real HTTP server on 127.0.0.1 speaking the chat-completions protocol with scripted replies.

    server.reply_content('{"entries": []}')      # a good reply carrying this message text
    server.reply_raw(500, "boom")                # any status and body
    server.reply_delay(2.0)                      # answer only after 2 s (for timeouts)

Replies are served in order; when the script runs out the last one repeats. Every request's
JSON body is kept in `server.requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    status: int
    body: bytes
    delay: float = 0.0


def completion(content: str, model: str = "scripted-model") -> bytes:
    return json.dumps({
        "id": "chatcmpl-test", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    }).encode()


class ScriptedLLMServer:
    def __init__(self) -> None:
        self.script: deque[Scripted] = deque()
        self.last: Scripted = Scripted(200, completion("{}"))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                try:
                    server.requests.append(json.loads(body))
                except ValueError:
                    server.requests.append({"_raw": body.decode("utf-8", "replace")})
                server.headers.append(dict(self.headers))
                reply = server.script.popleft() if server.script else server.last
                server.last = reply
                if reply.delay:
                    server._stop.wait(reply.delay)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def reply_content(self, content: str, delay: float = 0.0) -> None:
        self.script.append(Scripted(200, completion(content), delay))

    def reply_json(self, value: Any) -> None:
        self.reply_content(json.dumps(value))

    def reply_raw(self, status: int, body: str | bytes, delay: float = 0.0) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.script.append(Scripted(status, data, delay))

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
