"""The chat-completions client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import pytest

from vault_memory.config import LLMSettings, load_config
from vault_memory.errors import ConfigError
from vault_memory.llm import (
    MAX_REPLY_BYTES,
    LLMClient,
    LLMError,
    parse_json_reply,
    parse_retry_after,
)

from .llm_server import ScriptedLLMServer


def client(server: ScriptedLLMServer, timeout: float = 5.0, key: str | None = None) -> LLMClient:
    return LLMClient(
        LLMSettings(base_url=server.base_url, model="m1", timeout_seconds=timeout), api_key=key
    )


def test_chat_sends_the_protocol_and_returns_the_text(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_content("hello there")
    reply = client(llm_server, key="sk-test").chat([{"role": "user", "content": "hi"}])
    assert reply.text == "hello there"
    assert reply.model == "scripted-model"
    assert reply.finish_reason == "stop"
    sent = llm_server.requests[0]
    assert sent["model"] == "m1"
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert "response_format" not in sent
    assert llm_server.headers[0]["Authorization"] == "Bearer sk-test"


def test_chat_json_parses_fenced_and_bare_json(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_content('```json\n{"entries": [1, 2]}\n```')
    llm_server.reply_content('{"entries": []}')
    c = client(llm_server)
    assert c.chat_json([{"role": "user", "content": "x"}]) == {"entries": [1, 2]}
    assert c.chat_json([{"role": "user", "content": "x"}]) == {"entries": []}
    assert llm_server.requests[0]["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (lambda s: s.reply_raw(500, "model crashed"), "answered HTTP 500 (model crashed)"),
        (lambda s: s.reply_raw(200, "<html>not json</html>"), "chat-completions format"),
        (lambda s: s.reply_raw(200, '{"choices": []}'), "chat-completions format"),
        (lambda s: s.reply_content("{not json"), "not valid JSON"),
        (lambda s: s.reply_raw(200, b"x" * (MAX_REPLY_BYTES + 10)), "longer than"),
    ],
)
def test_unusable_replies_raise_llm_error(llm_server: ScriptedLLMServer, script, message) -> None:
    script(llm_server)
    with pytest.raises(LLMError, match="LLM request failed") as info:
        client(llm_server).chat_json([{"role": "user", "content": "x"}])
    assert message in str(info.value)


def test_timeout_is_an_llm_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_delay(3.0)
    with pytest.raises(LLMError, match="no answer .* within 0.3 s"):
        client(llm_server, timeout=0.3).chat([{"role": "user", "content": "x"}])


def test_unreachable_server_is_an_llm_error() -> None:
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", timeout_seconds=2)
    with pytest.raises(LLMError, match="cannot reach .*is the server running"):
        LLMClient(settings).chat([{"role": "user", "content": "x"}])


def test_from_config(vault_dir, monkeypatch: pytest.MonkeyPatch) -> None:
    assert LLMClient.from_config(load_config(vault_dir)) is None
    (vault_dir / "vault.toml").write_text(
        '[llm]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "qwen"\napi_key_env = "MY_KEY"\n'
    )
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(ConfigError, match="MY_KEY, which is not set"):
        LLMClient.from_config(load_config(vault_dir))
    monkeypatch.setenv("MY_KEY", "secret")
    made = LLMClient.from_config(load_config(vault_dir))
    assert made is not None and made.api_key == "secret" and made.model == "qwen"
    with pytest.raises(ConfigError, match="needs both base_url and model"):
        LLMClient(LLMSettings(model="x"))


def test_parse_json_reply_plain_values() -> None:
    assert parse_json_reply("[1]") == [1]
    with pytest.raises(LLMError):
        parse_json_reply("")


# -- back-pressure: 429 and 5xx are retried after a back-off ----------------------------------


def recording(
    server: ScriptedLLMServer, timeout: float = 60, **settings: Any
) -> tuple[LLMClient, list[float]]:
    """A client whose waits between retries are recorded, not slept (they still count
    against its `timeout`, the whole call's budget)."""
    made = LLMClient(
        LLMSettings(base_url=server.base_url, model="m1", timeout_seconds=timeout, **settings)
    )
    waits: list[float] = []
    made.sleep = waits.append
    return made, waits


def test_a_429_is_retried_after_what_retry_after_says(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_raw(429, "slow down", headers={"Retry-After": "7"})
    llm_server.reply_raw(503, "busy", headers={"Retry-After": "2"})
    llm_server.reply_content("finally")
    made, waits = recording(llm_server)
    assert made.chat([{"role": "user", "content": "x"}]).text == "finally"
    assert waits == [7.0, 2.0] and len(llm_server.requests) == 3


def test_retry_after_as_an_http_date(llm_server: ScriptedLLMServer) -> None:
    when = email.utils.formatdate(time.time() + 12, usegmt=True)
    llm_server.reply_raw(429, "slow down", headers={"Retry-After": when})
    llm_server.reply_content("ok")
    made, waits = recording(llm_server)
    made.chat([{"role": "user", "content": "x"}])
    assert len(waits) == 1 and 9 <= waits[0] <= 12


def test_without_retry_after_the_back_off_doubles(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_raw(502, "bad gateway", headers={})  # repeats: every try fails
    made, waits = recording(llm_server, max_retries=4)
    with pytest.raises(LLMError, match=r"answered HTTP 502 \(bad gateway\) \(5 tries\)"):
        made.chat([{"role": "user", "content": "x"}])
    assert len(llm_server.requests) == 5
    for number, wait in enumerate(waits):
        assert 0.75 * 0.5 * 2**number <= wait <= 0.5 * 2**number
    assert len(waits) == 4


def test_waits_are_capped_and_a_longer_retry_after_fails_at_once(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.reply_raw(429, "quota", headers={"Retry-After": "3600"})
    made, waits = recording(llm_server, max_retry_wait_seconds=30)
    with pytest.raises(LLMError, match="asks to retry after 3600 s, more than 30 s"):
        made.chat([{"role": "user", "content": "x"}])
    assert waits == [] and len(llm_server.requests) == 1
    llm_server.reply_raw(500, "down", headers={})
    made, waits = recording(llm_server, max_retries=8, max_retry_wait_seconds=3)
    with pytest.raises(LLMError, match="9 tries"):
        made.chat([{"role": "user", "content": "x"}])
    assert max(waits) == 3 and sum(waits) <= 0.5 + 1 + 2 + 3 * 5


def test_other_errors_and_zero_retries_are_not_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_raw(400, "bad request")
    made, waits = recording(llm_server)
    with pytest.raises(LLMError, match="HTTP 400"):
        made.chat([{"role": "user", "content": "x"}])
    llm_server.reply_raw(503, "busy", headers={"Retry-After": "1"})
    made, waits = recording(llm_server, max_retries=0)
    with pytest.raises(LLMError, match="HTTP 503"):
        made.chat([{"role": "user", "content": "x"}])
    assert waits == [] and len(llm_server.requests) == 2


def test_one_deadline_covers_every_try_and_every_wait(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_raw(503, "busy", headers={"Retry-After": "3"})  # repeats
    made, waits = recording(llm_server, timeout=4, max_retries=4)
    with pytest.raises(LLMError, match=r"HTTP 503 \(busy\); no answer within 4 s \(2 tries"):
        made.chat([{"role": "user", "content": "x"}])
    # the first wait fits in the 4 s, a second would not leave time for another try
    assert waits == [3.0] and len(llm_server.requests) == 2


def test_a_wait_longer_than_the_deadline_is_not_waited(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_raw(429, "slow down", headers={"Retry-After": "10"})
    llm_server.reply_content("too late")
    made, waits = recording(llm_server, timeout=5)
    with pytest.raises(LLMError, match="no answer within 5 s"):
        made.chat([{"role": "user", "content": "x"}])
    assert waits == [] and len(llm_server.requests) == 1


def test_the_wait_is_real(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_raw(429, "slow down", headers={"Retry-After": "1"})
    llm_server.reply_content("ok")
    started = time.monotonic()
    assert client(llm_server).chat([{"role": "user", "content": "x"}]).text == "ok"
    assert time.monotonic() - started >= 1.0


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("0", 0.0),
        ("120", 120.0),
        (" 5 ", 5.0),
        ("", None),
        (None, None),
        ("soon", None),
        ("-3", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
    ],
)
def test_parse_retry_after(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header) == seconds
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412480.0) == 30.0
