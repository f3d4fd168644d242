"""One small client for any OpenAI-compatible chat-completions endpoint (Ollama, llama.cpp
server, vLLM, OpenAI), shared by `flush` and `dream`.

Standard library only: a POST to `{base_url}/chat/completions`. Every failure (no server,
timeout, HTTP error, a reply that is not the protocol, an over-long reply, JSON that does not
parse) becomes an `LLMError` whose message says what happened; callers fall back to their
offline path or refuse the change. Nothing here retries: a flush or a dream is run again later.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import json
import logging
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .config import Config, LLMSettings
from .errors import ConfigError, VaultError

log = logging.getLogger("vault_memory")

MAX_REPLY_BYTES = 2_000_000
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_BASE = 0.5  # seconds before the first retry when the server gives no Retry-After
_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n(?P<body>.*?)\n?```\s*$", re.S)


class LLMError(VaultError):
    """The model could not be reached or its reply is unusable."""

    def __init__(
        self,
        what: str,
        hint: str = "check the [llm] section of vault.toml",
        prefix: str = "LLM request failed",
    ) -> None:
        super().__init__(f"{prefix}: {what}; {hint}")
        self.what = what


@dataclass(frozen=True)
class RetryPolicy:
    """How `post_json` answers back-pressure (429, 5xx)."""

    retries: int = 4
    max_wait: float = 30.0  # seconds; a longer Retry-After is not waited for

    def delay(self, attempt: int, retry_after: str | None, now: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (0-based): what `Retry-After` says
        (delta-seconds or an HTTP date), else 0.5 s x 2^attempt with jitter, at most
        `max_wait`. Infinity when the server asks for more than `max_wait`."""
        asked = parse_retry_after(retry_after, now)
        if asked is not None:
            return asked if asked <= self.max_wait else float("inf")
        backoff = BACKOFF_BASE * (2 ** min(attempt, 30))
        return min(self.max_wait, backoff * random.uniform(0.75, 1.0))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """A `Retry-After` header in seconds from now (0 or more), or None if absent or unusable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def post_json(
    url: str,
    body: dict[str, Any],
    *,
    api_key: str | None,
    timeout: float,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    hint: str = "check the [llm] section of vault.toml",
    timeout_hint: str = "raise [llm] timeout_seconds or use a smaller model",
    prefix: str = "LLM request failed",
    budget: float | None = None,
) -> bytes:
    """POST `body` as JSON to `url` and return the raw reply, retrying 429 and 5xx answers as
    `policy` says. Every failure is an `LLMError`.

    `timeout` bounds each request. `budget`, when given, bounds the whole call: every request
    and every wait between them (as asked of `sleep`) count against it, a request gets only
    what is left of it, and a wait that would not leave time for another try ends the call
    with the last answer's error."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    data = json.dumps(body).encode()
    attempt = 0
    spent = 0.0  # seconds of the budget used: requests as measured, waits as asked
    while True:
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
        left = timeout if budget is None else min(timeout, budget - spent)
        started = time.monotonic()
        try:
            return _send_once(request, url, left, hint, timeout_hint, prefix, timeout)
        except _Retryable as exc:
            spent += time.monotonic() - started
            wait = policy.delay(attempt, exc.retry_after)
            if attempt >= policy.retries or wait == float("inf"):
                asked = parse_retry_after(exc.retry_after)
                why = exc.what
                if asked is not None and asked > policy.max_wait:
                    why += (
                        f"; it asks to retry after {asked:.0f} s, more than {policy.max_wait:g} s"
                    )
                elif attempt:
                    why += f" ({attempt + 1} tries)"
                raise LLMError(why, hint, prefix) from None
            if budget is not None and spent + wait >= budget:
                raise LLMError(
                    f"{exc.what}; no answer within {budget:g} s ({attempt + 1} "
                    f"{'try' if attempt == 0 else 'tries'}, retrying would take longer)",
                    timeout_hint,
                    prefix,
                ) from None
            log.info("%s; retrying in %.1f s", exc.what, wait)
            if wait > 0:  # `Retry-After: 0` retries at once
                sleep(wait)
            spent += wait
            attempt += 1


class _Retryable(Exception):
    def __init__(self, what: str, retry_after: str | None) -> None:
        super().__init__(what)
        self.what = what
        self.retry_after = retry_after


class _Deadline:
    """One deadline for a whole request: connecting, sending, the headers and every byte of
    the reply. A socket timeout alone is per read, so a server that trickles its reply a byte
    at a time could hold a call for ever; at the deadline the socket is shut down."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.timers: list[threading.Timer] = []

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def arm(self, sock: socket.socket) -> None:
        def cut() -> None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

        timer = threading.Timer(max(0.0, self.at - time.monotonic()), cut)
        timer.daemon = True
        timer.start()
        self.timers.append(timer)

    def cancel(self) -> None:
        for timer in self.timers:
            timer.cancel()

    def opener(self) -> urllib.request.OpenerDirector:
        deadline = self

        class Connection(http.client.HTTPConnection):
            def connect(self) -> None:
                super().connect()
                deadline.arm(self.sock)

        class SecureConnection(http.client.HTTPSConnection):
            def connect(self) -> None:
                super().connect()
                deadline.arm(self.sock)

        class Handler(urllib.request.HTTPHandler):
            def http_open(self, req: Any) -> Any:
                return self.do_open(Connection, req)

        class SecureHandler(urllib.request.HTTPSHandler):
            def https_open(self, req: Any) -> Any:
                return self.do_open(SecureConnection, req)

        return urllib.request.build_opener(Handler, SecureHandler)


def _send_once(
    request: urllib.request.Request,
    url: str,
    timeout: float,
    hint: str,
    timeout_hint: str,
    prefix: str,
    said: float | None = None,
) -> bytes:
    """One request within `timeout` seconds; `said`: the timeout a message names (the
    whole call's, when this request has only what is left of it)."""
    timeout = max(timeout, 0.001)
    shown = timeout if said is None else said
    deadline = _Deadline(timeout)
    try:
        with deadline.opener().open(request, timeout=timeout) as response:
            raw = b""
            while len(raw) <= MAX_REPLY_BYTES:
                chunk = response.read1(65536)
                if not chunk:
                    break
                raw += chunk
        if deadline.passed:
            raise TimeoutError
    except urllib.error.HTTPError as exc:
        with exc:
            detail = exc.read(500).decode("utf-8", "replace").strip()
            what = f"{url} answered HTTP {exc.code}" + (f" ({detail})" if detail else "")
            if exc.code in RETRY_STATUSES:
                raise _Retryable(what, exc.headers.get("Retry-After")) from None
        raise LLMError(what, hint, prefix) from None
    except TimeoutError:
        raise LLMError(f"no answer from {url} within {shown:g} s", timeout_hint, prefix) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise LLMError(
                f"no answer from {url} within {shown:g} s", timeout_hint, prefix
            ) from None
        raise LLMError(f"cannot reach {url} ({reason})", "is the server running?", prefix) from None
    except (ConnectionError, OSError) as exc:
        if deadline.passed:
            raise LLMError(
                f"no answer from {url} within {shown:g} s", timeout_hint, prefix
            ) from None
        raise LLMError(
            f"connection to {url} failed ({exc})", "is the server running?", prefix
        ) from None
    except http.client.HTTPException as exc:
        if deadline.passed:
            raise LLMError(
                f"no answer from {url} within {shown:g} s", timeout_hint, prefix
            ) from None
        raise LLMError(
            f"{url} broke the HTTP protocol ({type(exc).__name__})",
            "is base_url the OpenAI-compatible /v1 endpoint?",
            prefix,
        ) from None
    finally:
        deadline.cancel()
    if len(raw) > MAX_REPLY_BYTES:
        raise LLMError(f"the reply is longer than {MAX_REPLY_BYTES:,} bytes", hint, prefix)
    return raw


@dataclass(frozen=True)
class ChatReply:
    text: str
    model: str
    finish_reason: str | None = None


class LLMClient:
    """A chat-completions client; `from_config` returns None when no model is configured."""

    def __init__(self, settings: LLMSettings, api_key: str | None = None) -> None:
        if not settings.base_url or not settings.model:
            raise ConfigError("[llm] needs both base_url and model to use a model")
        self.settings = settings
        self.api_key = api_key
        self.url = settings.base_url.rstrip("/") + "/chat/completions"
        self.policy = RetryPolicy(max(0, settings.max_retries), settings.max_retry_wait_seconds)
        self.sleep: Callable[[float], None] = time.sleep  # the waits between retries

    @classmethod
    def from_config(cls, config: Config) -> LLMClient | None:
        settings = config.llm
        if not settings.base_url or not settings.model:
            return None
        api_key = None
        if settings.api_key_env:
            api_key = os.environ.get(settings.api_key_env)
            if not api_key:
                raise ConfigError(
                    f"[llm] api_key_env names {settings.api_key_env}, which is not set; "
                    f"export it or remove api_key_env for a local server"
                )
        return cls(settings, api_key)

    @property
    def model(self) -> str:
        return self.settings.model

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        json_mode: bool = False,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> ChatReply:
        """Send `messages` and return the first choice's text."""
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": temperature,
            "stream": False,
        }
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        # One deadline for the whole call, retries and their waits included: a flush or a
        # dream waits at most `timeout_seconds` for a model, however busy it is.
        raw = post_json(
            self.url,
            body,
            api_key=self.api_key,
            timeout=self.settings.timeout_seconds,
            policy=self.policy,
            sleep=self.sleep,
            budget=self.settings.timeout_seconds,
        )
        try:
            payload = json.loads(raw)
            choice = payload["choices"][0]
            text = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(
                f"{self.url} did not answer in the chat-completions format",
                "is base_url the OpenAI-compatible /v1 endpoint?",
            ) from None
        if not isinstance(text, str):
            raise LLMError("the reply has no text content")
        return ChatReply(
            text=text,
            model=str(payload.get("model") or self.settings.model),
            finish_reason=choice.get("finish_reason"),
        )

    def chat_json(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        """`chat` in JSON mode, parsed. Tolerates a Markdown code fence around the JSON."""
        reply = self.chat(messages, json_mode=True, **kwargs)
        return parse_json_reply(reply.text)


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model's reply (bare, or inside one ``` fence)."""
    match = _FENCE.match(text)
    if match:
        text = match.group("body")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMError(
            f"the reply is not valid JSON ({exc.msg} at char {exc.pos})",
            "the offline path is used instead",
        ) from None
