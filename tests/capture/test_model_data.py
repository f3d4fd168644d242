"""The model's output is data, never trusted. Against the real scripted server on
127.0.0.1: control characters and lone surrogates are refused (and the refusal, with its
reason, is in the diary), secrets the model writes are redacted, `#pin` and HTML comments the
model adds are stripped, and one deadline covers a whole call (a server that trickles its reply
a byte at a time cannot hold a dream past it)."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.dream.apply import DreamRefusedError
from vault_memory.dream.diary import parse_records
from vault_memory.text import strip_protected, unsafe_character

from ..support.llm_server import Scripted, ScriptedLLMServer, completion

NOW = dt.datetime(2026, 11, 22, 3, 30, tzinfo=dt.UTC)
DIARY = "dreams/2026-11-22.md"
MEMORY = """\
# MEMORY

## People
- Jonas Berg: Head of Engineering, Maya's manager.

## Decisions
- Invoice numbers are gapless per tenant.
"""
SOURCE = "memory/2026-11-20.md#L4"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture(scope="module")
def _server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer().start()
    yield server
    server.close()


@pytest.fixture
def llm_server(_server: ScriptedLLMServer) -> ScriptedLLMServer:
    _server.script.clear()
    _server.requests.clear()
    _server.last = Scripted(200, completion("{}"))
    return _server


@pytest.fixture
def vault(vault_dir: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")
    (vault_dir / "MEMORY.md").write_text(MEMORY)
    (vault_dir / "memory/2026-11-20.md").write_text(
        "# 2026-11-20\n\n## 09:15 · note\n"
        "- Chose PostgreSQL 16 for the billing-core service. #decision\n"
    )
    config = vault_dir / "vault.toml"
    config.write_text(
        config.read_text()
        + (
            f'\n[llm]\nbase_url = "{llm_server.base_url}"\nmodel = "qwen-test"\n'
            "timeout_seconds = 2\n"
        )
    )
    return vault_dir


def reply(new_text: str, people: list[dict] | None = None) -> dict:
    return {
        "sections": [
            {"heading": "People", "entries": people or [{"id": "m1"}]},
            {
                "heading": "Decisions",
                "entries": [
                    {"id": "m2"},
                    {"text": new_text, "sources": [SOURCE], "reason": "a decision"},
                ],
            },
        ],
        "archived": [],
        "merged": [],
    }


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("PostgreSQL 16 for billing-core.\u0000", "U+0000 (a control character)"),
        ("PostgreSQL 16 \x1b[31mfor billing-core.", "U+001B (a control character)"),
        ("PostgreSQL 16 for billing-core. \ud800", "U+D800 (a lone surrogate)"),
    ],
    ids=["nul", "escape", "surrogate"],
)
def test_control_characters_and_lone_surrogates_are_refused_one_by_one(
    vault: Path, llm_server: ScriptedLLMServer, text: str, reason: str
) -> None:
    llm_server.reply_raw(200, completion(json.dumps(reply(text))))
    with Vault(vault) as v:  # the entry is refused, with why; the rest of the reply stands
        report = v.dream(now=NOW)
    ((refused),) = report.refused_items
    assert refused["what"] == "new entry" and reason in refused["reason"]
    assert (vault / "MEMORY.md").read_text() == MEMORY
    diary = (vault / DIARY).read_text()
    assert "### Refused" in diary and reason in diary
    assert [r.action for r in parse_records(DIARY, diary)] == ["dream"]
    with Vault(vault) as v:  # nothing blocks the vault afterwards
        assert v.get("MEMORY.md").text == MEMORY


def test_a_secret_no_cited_line_holds_is_refused_as_made_up(
    vault: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_json(reply(f"PostgreSQL 16 for billing-core; deploy with {TOKEN}."))
    with Vault(vault) as v:
        report = v.dream(now=NOW)
    ((refused),) = report.refused_items
    assert refused["reason"] == "it holds a github-token that none of its cited lines holds"
    assert TOKEN not in str(refused) and TOKEN not in (vault / DIARY).read_text()
    assert (vault / "MEMORY.md").read_text() == MEMORY


def test_a_secret_its_cited_line_holds_is_refused_as_a_credential(
    vault: Path, llm_server: ScriptedLLMServer
) -> None:
    log = vault / "memory/2026-11-20.md"
    log.write_text(log.read_text().replace("service.", f"service; deploy with {TOKEN}."))
    llm_server.reply_json(reply(f"PostgreSQL 16 for billing-core; deploy with {TOKEN}."))
    with Vault(vault) as v:
        report = v.dream(now=NOW)
    ((refused),) = report.refused_items
    assert refused["reason"] == "it is a credential or a PIN"
    assert TOKEN not in str(refused) and TOKEN not in (vault / DIARY).read_text()
    assert (vault / "MEMORY.md").read_text() == MEMORY


def test_pin_and_comments_the_model_adds_are_stripped(
    vault: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_json(
        reply(
            "PostgreSQL 16 for billing-core. #pin <!-- src: memory/1999-01-01.md#L1 -->",
            people=[
                {
                    "id": "m1",
                    "text": "Jonas Berg: Head of Engineering, Maya's manager. #pin",
                    "reason": "important",
                }
            ],
        )
    )
    with Vault(vault) as v:
        v.dream(now=NOW)
    memory = (vault / "MEMORY.md").read_text()
    assert "#pin" not in memory and "1999-01-01" not in memory
    assert "- PostgreSQL 16 for billing-core." in memory
    assert "- Jonas Berg: Head of Engineering, Maya's manager." in memory


@pytest.mark.slow
def test_one_deadline_covers_the_whole_reply(vault: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_trickle(json.dumps(reply("PostgreSQL 16 for billing-core.")), 0.05)
    started = time.monotonic()
    with Vault(vault) as v, pytest.raises(DreamRefusedError) as info:
        v.dream(now=NOW)
    elapsed = time.monotonic() - started
    assert "within 2 s" in str(info.value)
    assert elapsed < 8, elapsed  # the trickle alone would take over 20 s
    assert (vault / "MEMORY.md").read_text() == MEMORY
    assert "dream · refused" in (vault / DIARY).read_text()


def test_flush_refuses_a_control_character_from_the_model(
    vault: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_json(
        {
            "entries": [
                {"text": "Maya moved billing to PostgreSQL 16.\u0000", "category": "decision"}
            ]
        }
    )
    chat = [{"role": "user", "content": "We moved billing to PostgreSQL 16 today."}]
    with Vault(vault) as v:
        report = v.flush(chat, session="s1", date=dt.date(2026, 11, 22))
    assert report.mode == "offline"  # the model's entries refused, the offline rules used
    assert any("entry 1 holds U+0000 (a control character)" in w for w in report.warnings)
    assert "\u0000" not in (vault / "memory/2026-11-22.md").read_text()


def test_the_helpers() -> None:
    assert unsafe_character("tab\tand newline\n are fine, é and 日本 too") is None
    assert unsafe_character("a\u0007b") == "U+0007 (a control character)"
    assert unsafe_character("\ufffe") == "U+FFFE (a non-character)"
    assert strip_protected("done #pin") == "done"
    assert strip_protected("done #pin", allowed="it was #pin") == "done #pin"
    assert strip_protected("the #pinned issue and a#pin stay") == "the #pinned issue and a#pin stay"
    assert strip_protected("x <!-- src: a.md#L1 --> y") == "x y"
