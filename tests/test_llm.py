"""The chat-completions client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import pytest

from vault_memory.config import LLMSettings, load_config
from vault_memory.errors import ConfigError
from vault_memory.llm import MAX_REPLY_BYTES, LLMClient, LLMError, parse_json_reply

from .llm_server import ScriptedLLMServer


def client(server: ScriptedLLMServer, timeout: float = 5.0, key: str | None = None) -> LLMClient:
    return LLMClient(LLMSettings(base_url=server.base_url, model="m1", timeout_seconds=timeout),
                     api_key=key)


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
        '[llm]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "qwen"\napi_key_env = "MY_KEY"\n')
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
