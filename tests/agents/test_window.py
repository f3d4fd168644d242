"""ConversationWindow: a token budget that is never exceeded, and nothing dropped unrecorded."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.agents.window import MESSAGE_OVERHEAD, ConversationWindow
from vault_memory.errors import VaultError
from vault_memory.search.tokens import load_counter
from vault_memory.sessions import content_text

from ..support.llm_server import ScriptedLLMServer

FACTS = [
    "My name is Zoë and I run the billing team at Kontor Nord.",
    "I prefer short answers with the code first.",
    "We decided to move the invoice renderer from wkhtmltopdf to Playwright.",
    "Remember that the ledger API rejects duplicate idempotency keys with ERR_LEDGER_409.",
    "I will send the migration plan to Jonas by Friday.",
    "Actually the release is on Thursday, not Wednesday.",
    "My dentist appointment moved to the 3rd of December.",
    "Our staging database is PostgreSQL 16 on the small cluster.",
]


def conversation(n: int, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        fact = FACTS[i % len(FACTS)]
        filler = " ".join(
            rng.choice(["really", "so", "the", "plan", "looks", "fine", "ok"])
            for _ in range(rng.randint(0, 60))
        )
        out.append({"role": "user", "content": f"{fact} {filler}".strip()})
        out.append({"role": "assistant", "content": f"Noted ({i}). {filler[:80]}".strip()})
    return out


def daily_text(root: Path) -> str:
    return "\n".join(p.read_text("utf-8") for p in sorted((root / "memory").glob("*.md")))


@pytest.mark.parametrize(
    "budget",
    [
        64,
        100,
        pytest.param(250, marks=pytest.mark.slow),
        pytest.param(600, marks=pytest.mark.slow),
        2000,
    ],
)
def test_the_window_never_exceeds_its_budget(vault_dir: Path, budget: int) -> None:
    counter = load_counter()
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=budget, session=f"b{budget}")
        window.add({"role": "system", "content": "You are terse."})
        for message in conversation(24, seed=budget):
            window.add(message)
            total = sum(counter.count(content_text(m)) + MESSAGE_OVERHEAD for m in window.messages)
            assert total <= budget
            assert window.tokens() <= budget
            assert window.messages[0]["content"] == "You are terse."
            assert window.messages[-1]["content"].startswith(message["content"][:20])


def test_what_leaves_the_window_is_flushed_and_summarised(vault_dir: Path) -> None:
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=300, session="s-drop")
        dropped = window.extend(conversation(16))
        assert dropped, "the conversation should not fit in 300 tokens"
        text = daily_text(vault_dir)
        assert "session s-drop" in text
        for message in dropped:
            if message["role"] == "user":
                first = message["content"].split(".")[0]
                assert first in text, f"dropped but not flushed: {first!r}"
        assert window.summary.startswith("- ")
        assert window.messages[0]["content"].startswith("Earlier in this conversation")
        window.close()
        text = daily_text(vault_dir)
        for message in conversation(16):
            if message["role"] == "user":
                assert message["content"].split(".")[0] in text


def test_flushing_is_idempotent_across_close(vault_dir: Path) -> None:
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=200, session="s-idem")
        window.extend(conversation(10))
        window.close()
        before = daily_text(vault_dir)
        window.close()
        assert daily_text(vault_dir) == before


def test_a_tool_result_leaves_with_its_call(vault_dir: Path) -> None:
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=200, session="s-tool")
        window.add({"role": "user", "content": "What is the weather in Oslo?"})
        window.add(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            }
        )
        window.add({"role": "tool", "tool_call_id": "c1", "content": "4°C, rain " * 10})
        for message in conversation(8):
            window.add(message)
        roles = [m["role"] for m in window.messages]
        assert roles[0] != "tool" and roles[:2] != ["system", "tool"]
        for i, m in enumerate(window.messages):
            if m["role"] == "tool":
                assert window.messages[i - 1].get("tool_calls")


def test_a_message_larger_than_the_window_is_cut_but_saved_whole(vault_dir: Path) -> None:
    long = "I prefer dark roast coffee. " + "The quarterly numbers look fine. " * 200
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=120, session="s-big")
        window.add({"role": "user", "content": long})
        assert window.tokens() <= 120
        assert "cut to fit the context window" in window.messages[-1]["content"]
        assert "I prefer dark roast coffee" in daily_text(vault_dir)


def test_bad_settings_and_messages_are_clear_errors(vault_dir: Path) -> None:
    with Vault(vault_dir) as vault:
        with pytest.raises(VaultError, match="at least 64 tokens"):
            ConversationWindow(vault, max_tokens=10)
        window = ConversationWindow(vault, max_tokens=100)
        with pytest.raises(VaultError, match='a message is a dict with a "role"'):
            window.add("hello")  # type: ignore[arg-type]
        with pytest.raises(VaultError, match="system messages alone take more than half"):
            window.add({"role": "system", "content": "rule " * 200})


def test_the_summary_can_come_from_a_model(vault_dir: Path, llm_server: ScriptedLLMServer) -> None:
    (vault_dir / "vault.toml").write_text(
        f'[llm]\nbase_url = "{llm_server.base_url}"\nmodel = "m"\ntimeout_seconds = 5\n'
    )
    llm_server.reply_json({"summary": ["Zoë runs billing; prefers short answers."]})
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=200, session="s-llm", use_llm=True)
        window.extend(conversation(10))
    assert "Zoë runs billing; prefers short answers." in window.summary
    prompts = [r["messages"][0]["content"] for r in llm_server.requests if "messages" in r]
    assert any("Messages leaving the context window" in p for p in prompts)


def test_an_unusable_model_summary_falls_back_offline(
    vault_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    (vault_dir / "vault.toml").write_text(
        f'[llm]\nbase_url = "{llm_server.base_url}"\nmodel = "m"\ntimeout_seconds = 5\n'
    )
    llm_server.reply_raw(500, "boom")
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=200, session="s-fallback", use_llm=True)
        window.extend(conversation(10))
    assert window.summary.startswith("- ")
    assert any("summarised offline" in w for w in window.warnings)


@pytest.mark.parametrize(
    "seed", [0, 1, *(pytest.param(s, marks=pytest.mark.slow) for s in range(2, 6))]
)
def test_random_conversations_stay_within_budget(vault_dir: Path, seed: int) -> None:
    rng = random.Random(seed)
    budget = rng.choice([64, 80, 128, 333, 1000])
    words = [
        "plan",
        "deploy",
        "ledger",
        "invoice",
        "Zoë",
        "prefers",
        "short",
        "answers",
        "decided",
        "Friday",
        "Postgres",
    ]
    with Vault(vault_dir) as vault:
        window = ConversationWindow(
            vault, max_tokens=budget, session=f"r{seed}", summary_tokens=rng.choice([None, 10, 30])
        )
        for i in range(30):
            size = rng.choice([1, 5, 20, 80, 400])
            text = " ".join(rng.choice(words) for _ in range(size)) + "."
            role = rng.choice(["user", "assistant"])
            if rng.random() < 0.15:
                window.add(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"c{i}",
                                "type": "function",
                                "function": {"name": "lookup", "arguments": "{}"},
                            }
                        ],
                    }
                )
                window.add({"role": "tool", "tool_call_id": f"c{i}", "content": text})
            else:
                window.add({"role": role, "content": text})
            assert window.tokens() <= budget, (seed, i)
        assert window.stats().tokens <= budget


def test_a_cut_message_is_not_flushed_again_when_it_leaves(vault_dir: Path) -> None:
    """It was flushed whole when it was cut; its cut copy must not reach flush when it leaves
    (flush's dedupe would hide a partial entry only when the cut falls between sentences)."""
    from vault_memory.agents.window import TRUNCATED

    long = "I prefer dark roast coffee from Kaffebrenneriet. " + "Quarterly numbers are fine. " * 80
    with Vault(vault_dir) as vault:
        flushed: list[list[dict]] = []
        real = vault.flush

        def spy(messages: list[dict], **kwargs: object):  # type: ignore[no-untyped-def]
            flushed.append(messages)
            return real(messages, **kwargs)

        vault.flush = spy  # type: ignore[method-assign]
        window = ConversationWindow(vault, max_tokens=120, session="s-cut")
        window.add({"role": "user", "content": long})
        window.extend(conversation(6))  # pushes the cut message out of the window
        assert window.dropped >= 1
    sent = [m["content"] for batch in flushed for m in batch]
    assert long in sent
    assert not any(TRUNCATED in (c or "") for c in sent)
    assert daily_text(vault_dir).count("dark roast coffee") == 1


def test_a_window_flushing_many_times_a_minute_leaves_one_heading(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T06:14")  # the minute cannot roll over
    with Vault(vault_dir) as vault:
        window = ConversationWindow(vault, max_tokens=100, session="win-1")
        for i in range(16):
            window.add({"role": "user", "content": f"I prefer build step {i} on runner R{i}."})
            window.add({"role": "assistant", "content": "Noted."})
        window.close()
        [block] = vault.session("win-1").blocks
    lines = (vault_dir / "memory" / "2026-11-22.md").read_text("utf-8").split("\n")
    assert [line for line in lines if line.startswith("#")] == [
        "# 2026-11-22",
        "## 06:14 · flush · session win-1",
    ]
    expected = [f"- User: I prefer build step {i} on runner R{i}. #preference" for i in range(16)]
    assert lines[block.heading_line : block.end_line] == expected
    assert window.flushed_entries == 16
