"""One small client for any OpenAI-compatible chat-completions endpoint (Ollama, llama.cpp
server, vLLM, OpenAI), shared by `flush` and `dream`.

Standard library only: a POST to `{base_url}/chat/completions`. Every failure (no server,
timeout, HTTP error, a reply that is not the protocol, an over-long reply, JSON that does not
parse) becomes an `LLMError` whose message says what happened; callers fall back to their
offline path or refuse the change. Nothing here retries: a flush or a dream is run again later.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from .config import Config, LLMSettings
from .errors import ConfigError, VaultError

MAX_REPLY_BYTES = 2_000_000
_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n(?P<body>.*?)\n?```\s*$", re.S)


class LLMError(VaultError):
    """The model could not be reached or its reply is unusable."""

    def __init__(self, what: str, hint: str = "check the [llm] section of vault.toml") -> None:
        super().__init__(f"LLM request failed: {what}; {hint}")
        self.what = what


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
                    f"export it or remove api_key_env for a local server")
        return cls(settings, api_key)

    @property
    def model(self) -> str:
        return self.settings.model

    def chat(self, messages: list[dict[str, Any]], *, json_mode: bool = False,
             temperature: float = 0.0, max_tokens: int | None = None) -> ChatReply:
        """Send `messages` and return the first choice's text."""
        body: dict[str, Any] = {"model": self.settings.model, "messages": messages,
                                "temperature": temperature, "stream": False}
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(),
                                         headers=headers, method="POST")
        raw = self._send(request)
        try:
            payload = json.loads(raw)
            choice = payload["choices"][0]
            text = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(f"{self.url} did not answer in the chat-completions format",
                           "is base_url the OpenAI-compatible /v1 endpoint?") from None
        if not isinstance(text, str):
            raise LLMError("the reply has no text content")
        return ChatReply(text=text, model=str(payload.get("model") or self.settings.model),
                         finish_reason=choice.get("finish_reason"))

    def chat_json(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        """`chat` in JSON mode, parsed. Tolerates a Markdown code fence around the JSON."""
        reply = self.chat(messages, json_mode=True, **kwargs)
        return parse_json_reply(reply.text)

    def _send(self, request: urllib.request.Request) -> bytes:
        timeout = self.settings.timeout_seconds
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read(MAX_REPLY_BYTES + 1)
        except urllib.error.HTTPError as exc:
            detail = exc.read(500).decode("utf-8", "replace").strip()
            raise LLMError(f"{self.url} answered HTTP {exc.code}"
                           + (f" ({detail})" if detail else "")) from None
        except TimeoutError:
            raise LLMError(f"no answer from {self.url} within {timeout:g} s",
                           "raise [llm] timeout_seconds or use a smaller model") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise LLMError(f"no answer from {self.url} within {timeout:g} s",
                               "raise [llm] timeout_seconds or use a smaller model") from None
            raise LLMError(f"cannot reach {self.url} ({reason})",
                           "is the server running?") from None
        except (ConnectionError, OSError) as exc:
            raise LLMError(f"connection to {self.url} failed ({exc})",
                           "is the server running?") from None
        if len(raw) > MAX_REPLY_BYTES:
            raise LLMError(f"the reply is longer than {MAX_REPLY_BYTES:,} bytes")
        return raw


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model's reply (bare, or inside one ``` fence)."""
    match = _FENCE.match(text)
    if match:
        text = match.group("body")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMError(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})",
                       "the offline path is used instead") from None
