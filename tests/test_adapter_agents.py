"""The Agents SDK session adapter against the real `openai-agents` package: the `Session`
protocol as the SDK's own session tests exercise it (add, get with and without a limit, pop,
clear, sessions apart), the same answers as the SDK's SQLiteSession for the same operations,
items of every shape back as they were given, a Runner holding a conversation over a real
HTTP model server, and the items as a session transcript of the vault."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled  # noqa: E402
from agents.memory import Session, SessionSettings  # noqa: E402

from vault_memory import Vault  # noqa: E402
from vault_memory.adapters.agents_session import VaultSession  # noqa: E402

from .llm_server import ScriptedLLMServer  # noqa: E402

SECRET = "sk-proj-Xk4P9vQ2mR7tL1wZ8yN3bC6dF0gH5jK2sA9eU4iO7pT1qW6r"


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_it_is_an_agents_sdk_session(vault_dir: Path) -> None:
    session = VaultSession("support-42", vault_dir)
    assert isinstance(session, Session)
    assert session.session_id == "support-42"


def test_add_get_pop_clear(vault_dir: Path) -> None:
    session = VaultSession("direct", vault_dir)
    assert run(session.pop_item()) is None
    assert run(session.get_items()) == []
    items = [
        {"role": "user", "content": "Message 1"},
        {"role": "assistant", "content": "Response 1"},
        {"role": "user", "content": "Message 2"},
        {"role": "assistant", "content": "Response 2"},
        {"role": "user", "content": "Message 3"},
        {"role": "assistant", "content": "Response 3"},
    ]
    run(session.add_items(items[:2]))
    run(session.add_items(items[2:]))
    assert run(session.get_items()) == items
    assert run(session.get_items(limit=2)) == items[-2:]
    assert run(session.get_items(limit=4)) == items[-4:]
    assert run(session.get_items(limit=10)) == items
    assert run(session.get_items(limit=0)) == []
    assert run(session.pop_item()) == items[-1]
    assert run(session.get_items()) == items[:-1]
    assert run(session.pop_item()) == items[-2]
    run(session.add_items([{"role": "user", "content": "Message 1"}]))  # the same words again
    assert run(session.get_items(limit=1)) == [{"role": "user", "content": "Message 1"}]
    assert len(run(session.get_items())) == 5
    run(session.clear_session())
    assert run(session.get_items()) == []
    assert run(session.pop_item()) is None
    run(session.add_items([{"role": "user", "content": "After clearing"}]))
    assert run(session.get_items()) == [{"role": "user", "content": "After clearing"}]


def test_settings_limit_and_sessions_apart(vault_dir: Path) -> None:
    one = VaultSession("session_1", vault_dir)
    two = VaultSession("session_2", vault_dir, session_settings=SessionSettings(limit=1))
    run(one.add_items([{"role": "user", "content": "Session 1 message"}]))
    run(two.add_items([{"role": "user", "content": "S2 m1"}, {"role": "user", "content": "S2 m2"}]))
    assert run(two.get_items()) == [{"role": "user", "content": "S2 m2"}]  # its settings' limit
    assert len(run(two.get_items(limit=5))) == 2  # an explicit limit wins
    assert run(two.pop_item()) == {"role": "user", "content": "S2 m2"}
    assert run(one.get_items()) == [{"role": "user", "content": "Session 1 message"}]
    scoped = VaultSession("session_1", vault_dir, scope=("org", "acme"))
    assert run(scoped.get_items()) == []  # a scope's sessions are its own


def test_same_answers_as_the_sdks_sqlite_session(vault_dir: Path, tmp_path: Path) -> None:
    ours = VaultSession("diff", vault_dir)
    theirs = SQLiteSession("diff", tmp_path / "sdk.db")
    script: list[tuple[str, Any]] = [
        ("add", [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]),
        ("get", None),
        ("add", [{"role": "user", "content": "Hi"}]),
        ("get", 2),
        ("pop", None),
        ("pop", None),
        ("get", None),
        ("add", [{"role": "system", "content": "Be brief."}]),
        ("get", 1),
        ("clear", None),
        ("get", None),
        ("pop", None),
    ]
    for action, argument in script:
        answers = []
        for session in (ours, theirs):
            if action == "add":
                answers.append(run(session.add_items(argument)))
            elif action == "get":
                answers.append(run(session.get_items(argument)))
            elif action == "pop":
                answers.append(run(session.pop_item()))
            else:
                answers.append(run(session.clear_session()))
        assert answers[0] == answers[1], (action, argument)
    theirs.close()


RESPONSES_ITEMS: list[dict[str, Any]] = [
    {"role": "developer", "content": "Answer in German."},
    {"role": "user", "content": [{"type": "input_text", "text": "Wie wird das Wetter in Oslo?"}]},
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Call the weather tool."}],
        "encrypted_content": "gAAAAABo-opaque",
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "weather",
        "arguments": '{"city": "Oslo"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "Sonnig, 18 °C"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "In Oslo ist es sonnig. ☀", "annotations": []}],
    },
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"query": "Oslo"}},
]


def test_items_of_every_shape_come_back_as_given(vault_dir: Path) -> None:
    session = VaultSession("shapes", vault_dir)
    run(session.add_items(RESPONSES_ITEMS))
    assert run(VaultSession("shapes", vault_dir).get_items()) == RESPONSES_ITEMS
    assert run(session.pop_item()) == RESPONSES_ITEMS[-1]
    # the transcript reads as the conversation
    found = Vault(vault_dir).transcript("shapes")
    assert [m.turn.role for m in found.messages] == [
        "system",
        "user",
        "assistant",
        "assistant",
        "tool",
        "assistant",
    ]
    assert found.messages[1].turn.text == "Wie wird das Wetter in Oslo?"
    assert [c.name for c in found.messages[3].turn.tool_calls] == ["weather"]
    assert found.messages[4].turn.text == "Sonnig, 18 °C"
    assert found.messages[5].turn.text == "In Oslo ist es sonnig. ☀"
    assert [m.parent for m in found.messages] == [None, 1, 2, 3, 4, 5]
    text = (vault_dir / found.path).read_text(encoding="utf-8")
    assert text.count("In Oslo ist es sonnig") == 1  # kept once: the item's form holds no copy


def test_secrets_are_redacted_and_ids_kept(vault_dir: Path) -> None:
    session = VaultSession("secret", vault_dir)
    run(
        session.add_items(
            [
                {"role": "user", "content": f"my key is {SECRET}"},
                {
                    "type": "function_call",
                    "call_id": "c9",
                    "name": "login",
                    "arguments": json.dumps({"key": SECRET}),
                },
            ]
        )
    )
    items = run(session.get_items())
    assert items[0] == {"role": "user", "content": "my key is [REDACTED:openai-key]"}
    assert items[1]["call_id"] == "c9" and SECRET not in items[1]["arguments"]
    assert SECRET not in "".join(p.read_text() for p in (vault_dir / "sessions").glob("*.md"))


def test_the_session_continues_in_the_vault(vault_dir: Path, run_cli: Any) -> None:
    session = VaultSession("cli-42", vault_dir)
    run(
        session.add_items(
            [
                {"role": "user", "content": "We picked PostgreSQL."},
                {"role": "assistant", "content": "Noted."},
            ]
        )
    )
    result = run_cli("--vault", str(vault_dir), "sessions", "continue", "cli-42", "--json")
    assert result.exit_code == 0, result.stderr
    assert [m["content"] for m in json.loads(result.stdout)["messages"]] == [
        "We picked PostgreSQL.",
        "Noted.",
    ]


def test_a_bad_session_id_is_one_clear_error(vault_dir: Path) -> None:
    from vault_memory.errors import VaultError

    with pytest.raises(VaultError, match="session id"):
        VaultSession("has spaces and / slashes", vault_dir)


def _tool_call_reply(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-tool",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_w1",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def test_a_runner_holds_a_conversation_in_it(
    vault_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    from agents import OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    set_tracing_disabled(True)

    @function_tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    client = AsyncOpenAI(base_url=llm_server.base_url, api_key="test-key", max_retries=0)
    model = OpenAIChatCompletionsModel(model="scripted-model", openai_client=client)
    agent = Agent(name="helper", instructions="Be brief.", model=model, tools=[weather])
    session = VaultSession("runner", vault_dir)

    llm_server.reply_raw(200, json.dumps(_tool_call_reply("weather", {"city": "Oslo"})))
    llm_server.reply_content("It is sunny in Oslo.")
    first = run(Runner.run(agent, "How is the weather in Oslo?", session=session))
    assert first.final_output == "It is sunny in Oslo."
    llm_server.reply_content("You asked about Oslo.")
    second = run(Runner.run(agent, "Which city did I ask about?", session=session))
    assert second.final_output == "You asked about Oslo."
    sent = llm_server.requests[-1]["messages"]
    said = [(m["role"], m.get("content")) for m in sent]
    assert ("user", "How is the weather in Oslo?") in said
    assert ("assistant", "It is sunny in Oslo.") in said
    assert ("tool", "Sunny in Oslo") in said  # the tool's output, resent from the transcript
    assert said[-1] == ("user", "Which city did I ask about?")
    found = Vault(vault_dir).transcript("runner")
    assert [m.turn.role for m in found.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]


def test_an_item_that_is_no_object_is_refused(vault_dir: Path) -> None:
    from vault_memory.errors import VaultError

    with pytest.raises(VaultError, match="a session item is a JSON object"):
        run(VaultSession("odd", vault_dir).add_items(["just text"]))
