"""Deep Dream with a model, against the real chat-completions server on 127.0.0.1: a good
proposal is applied; every adversarial reply is refused and leaves the vault byte-identical."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_memory import Vault, clock
from vault_memory.dream.apply import DreamRefusedError
from vault_memory.dream.diary import parse_records
from vault_memory.llm import MAX_REPLY_BYTES

from ..support.llm_server import Scripted, ScriptedLLMServer, completion

NOW = dt.datetime(2026, 11, 22, 3, 30, tzinfo=dt.UTC)

MEMORY = """\
# MEMORY

## About Maya #pin
- Senior backend engineer at Ledgerly, works on billing-core.

## People
- Jonas Berg: Head of Engineering, Maya's manager.
- Tomás Ruiz: customer success lead. <!-- src: memory/2026-10-20.md#L4 -->
- Zoë Okafor: product manager for invoicing.
- Priya Raman: backend engineer, joined in June.

## Preferences
- Maya prefers short answers, code first. <!-- src: memory/2026-10-21.md#L5 -->
- Never run destructive commands against production without asking. #pin
- pytest over unittest, ISO 8601 dates everywhere.

## Decisions
- Invoice numbers are gapless per tenant. <!-- src: memory/2026-10-22.md#L4 -->
- Money is NUMERIC(12,4) internally, rounded only when rendering.
"""
PINNED = ("m1", "m7")
UNPINNED = ("m2", "m3", "m4", "m5", "m6", "m8", "m9", "m10")
DECISION = "memory/2026-11-20.md#L4"
JONAS = "memory/2026-11-21.md#L4"


@pytest.fixture(scope="module")
def _server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer().start()  # one per module: each shutdown costs 0.5 s
    yield server
    server.close()


@pytest.fixture
def llm_server(_server: ScriptedLLMServer) -> ScriptedLLMServer:
    """The real 127.0.0.1 server of tests/support/llm_server.py with a fresh script for each
    test."""
    _server.script.clear()
    _server.requests.clear()
    _server.headers.clear()
    _server.last = Scripted(200, completion("{}"))
    return _server


@pytest.fixture
def vault(vault_dir: Path, llm_server: ScriptedLLMServer, monkeypatch) -> Path:
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")
    (vault_dir / "MEMORY.md").write_text(MEMORY)
    (vault_dir / "memory/2026-11-20.md").write_text(
        "# 2026-11-20\n\n## 09:15 · note\n"
        "- Chose PostgreSQL 16 for the billing-core service. #decision\n"
        "- git push --force origin main\n"
        "- Maya prefers short answers with code first.\n"
    )
    (vault_dir / "memory/2026-11-21.md").write_text(
        "# 2026-11-21\n\n## 10:00 · note\n"
        "- Jonas goes on parental leave from 1 January. #important\n"
    )
    config = vault_dir / "vault.toml"
    config.write_text(
        config.read_text()
        + (
            f'\n[llm]\nbase_url = "{llm_server.base_url}"\nmodel = "qwen-test"\n'
            "timeout_seconds = 10\n"
        )
    )
    return vault_dir


def keep(*keys: str) -> list[dict]:
    return [{"id": k} for k in keys]


def proposal(**changes) -> dict:
    """A well-formed reply that keeps everything; `changes` replace parts of it."""
    reply = {
        "sections": [
            {"heading": "About Maya", "entries": keep("m1")},
            {"heading": "People", "entries": keep("m2", "m3", "m4", "m5")},
            {"heading": "Preferences", "entries": keep("m6", "m7", "m8")},
            {"heading": "Decisions", "entries": keep("m9", "m10")},
        ],
        "archived": [],
        "merged": [],
    }
    reply.update(changes)
    return reply


FORGET = "memory/2026-11-21.md#L5"


def test_a_good_proposal_is_validated_and_applied(vault: Path, llm_server, tree_state) -> None:
    with (vault / "memory/2026-11-21.md").open("a") as log:
        log.write("- Forget the note about NUMERIC money, it lives in the billing runbook now.\n")
    reply = proposal(
        sections=[
            {"heading": "About Maya", "entries": keep("m1")},
            {
                "heading": "People",
                "entries": [
                    *keep("m2"),
                    {
                        "id": "m3",
                        "text": "Tomás Ruiz leads customer success.",
                        "reason": "clearer",
                    },
                    *keep("m4", "m5"),
                    {
                        "text": "Jonas is on parental leave from 1 January.",
                        "sources": [JONAS],
                        "reason": "lasting fact about Maya's manager",
                    },
                ],
            },
            {"heading": "Preferences", "entries": keep("m6", "m7", "m8")},
            {
                "heading": "## Decisions",
                "entries": [
                    *keep("m9"),
                    {
                        "text": "PostgreSQL 16 for billing-core. #decision",
                        "sources": [DECISION],
                        "reason": "a decision",
                    },
                ],
            },
        ],
        archived=[{"id": "m10", "reason": "Maya asked to forget it", "sources": [FORGET]}],
        merged=[{"source": "memory/2026-11-20.md#L6", "into": "m6", "reason": "same preference"}],
    )
    llm_server.reply_json(reply)
    llm_server.reply_json(reply)
    before = tree_state(vault)
    with Vault(vault) as v:
        preview = v.dream(dry_run=True, now=NOW)
    assert tree_state(vault) == before and preview.mode == "llm"
    assert "+- PostgreSQL 16 for billing-core. #decision" in preview.diff
    with Vault(vault) as v:
        report = v.dream(now=NOW)
    assert report.status == "dreamed" and report.model == "scripted-model"
    assert report.refused_items == []
    text = (vault / "MEMORY.md").read_text()
    assert text == MEMORY.replace(
        "- Tomás Ruiz: customer success lead. <!-- src: memory/2026-10-20.md#L4 -->\n",
        "- Tomás Ruiz leads customer success. <!-- src: memory/2026-10-20.md#L4 -->\n",
    ).replace(
        "- Priya Raman: backend engineer, joined in June.\n",
        "- Priya Raman: backend engineer, joined in June.\n"
        f"- Jonas is on parental leave from 1 January. <!-- src: {JONAS} -->\n",
    ).replace(
        "- Money is NUMERIC(12,4) internally, rounded only when rendering.\n",
        f"- PostgreSQL 16 for billing-core. #decision <!-- src: {DECISION} -->\n",
    )
    archive = (vault / "dreams/archive.md").read_text()
    assert "- Money is NUMERIC(12,4) internally" in archive
    assert "Maya asked to forget it" in archive
    diary = (vault / "dreams/2026-11-22.md").read_text()
    assert "- **Mode:** llm (scripted-model)" in diary and "### Reworded" in diary
    assert "clearer" in diary and "same preference" in diary

    sent = llm_server.requests[-1]
    assert sent["model"] == "qwen-test" and sent["response_format"] == {"type": "json_object"}
    payload = json.loads(sent["messages"][1]["content"])
    sources = [i["source"] for i in payload["new_items"]]
    assert sources == [DECISION, "memory/2026-11-20.md#L6", JONAS, FORGET]  # not the git line
    assert payload["memory"][1]["pinned"] is True
    assert [e["pinned"] for e in payload["memory"][3]["entries"]] == [False, True, False]
    assert "12,000 characters" in sent["messages"][0]["content"]


UNUSABLE = {
    "empty": ("", "the reply is not valid JSON"),
    "truncated": (
        '{"sections": [{"heading": "People", "entries": [{"id": "m2"}',
        "the reply is not valid JSON",
    ),
    "not an object": ('["m1", "m2"]', 'not an object with a "sections" list'),
}

ADVERSARIAL = {
    "drops pinned entries": (
        proposal(sections=[{"heading": "People", "entries": keep(*UNPINNED)}]),
        "the reply leaves it out without archiving it: kept as it is",
    ),
    "archives a pinned entry": (
        proposal(
            sections=[{"heading": "People", "entries": keep("m1", *UNPINNED)}],
            archived=[{"id": "m7", "reason": "too strict"}],
        ),
        "the entry m7 is pinned",
    ),
    "rewords a pinned entry": (
        proposal(
            sections=[
                {
                    "heading": "People",
                    "entries": [
                        *keep("m1", *UNPINNED),
                        {"id": "m7", "text": "Be careful in production.", "reason": "shorter"},
                    ],
                }
            ]
        ),
        "the entry m7 is pinned",
    ),
    "adds to a pinned section": (
        proposal(
            sections=[
                {
                    "heading": "About Maya",
                    "entries": [
                        *keep("m1", "m7", *UNPINNED),
                        {"text": "Maya lives in Stockholm.", "sources": [JONAS], "reason": "r"},
                    ],
                }
            ]
        ),
        "it adds to the pinned section ## About Maya",
    ),
    "loses entries silently": (
        proposal(sections=[{"heading": "People", "entries": keep("m1", "m7", "m2")}]),
        "the reply leaves it out without archiving it: kept as it is",
    ),
    "invents sources": (
        proposal(
            sections=[
                {
                    "heading": "People",
                    "entries": [
                        *keep("m1", "m7", *UNPINNED),
                        {
                            "text": "Zoë moves to the Oslo office in March.",
                            "sources": ["memory/2026-11-19.md#L4"],
                            "reason": "new fact",
                        },
                    ],
                }
            ]
        ),
        "cites 'memory/2026-11-19.md#L4', which is not among this dream's inputs",
    ),
    "unknown id": (
        proposal(sections=[{"heading": "People", "entries": keep("m1", "m7", *UNPINNED, "m42")}]),
        "entry id 'm42' does not exist",
    ),
    "promotes junk": (
        proposal(
            sections=[
                {
                    "heading": "Inbox",
                    "entries": [
                        *keep("m1", "m7", *UNPINNED),
                        {
                            "text": "git push --force origin main",
                            "sources": [DECISION],
                            "reason": "r",
                        },
                    ],
                }
            ]
        ),
        "it is a shell command",
    ),
    "no reasons": (
        proposal(
            sections=[
                {
                    "heading": "Inbox",
                    "entries": [
                        *keep("m1", "m7", *UNPINNED),
                        {"text": "PostgreSQL 16 for billing-core.", "sources": [DECISION]},
                    ],
                }
            ]
        ),
        "it gives no reason",
    ),
    "deletes 80%": (
        proposal(
            sections=[{"heading": "People", "entries": keep(*PINNED)}],
            archived=[{"id": k, "reason": "old"} for k in UNPINNED],
        ),
        "it cites no line that replaces it or asks to forget it",
    ),
}

UNUSABLE |= {
    "enormous: many entries": (
        proposal(
            sections=[
                {
                    "heading": "Inbox",
                    "entries": [
                        *keep("m1", "m7", *UNPINNED),
                        *(
                            {
                                "text": f"Fact number {n} about the billing service.",
                                "sources": [DECISION],
                                "reason": "r",
                            }
                            for n in range(3000)
                        ),
                    ],
                }
            ]
        ),
        "the reply has more than 2000 entries",
    ),
}

ADVERSARIAL |= {
    "enormous: over the budget": (
        proposal(
            sections=[
                {
                    "heading": "Inbox",
                    "entries": [
                        *keep("m1", "m7", *UNPINNED),
                        *(
                            {
                                "text": f"Fact number {n} about the billing service and its many tenants.",  # noqa: E501
                                "sources": [DECISION],
                                "reason": "r",
                            }
                            for n in range(300)
                        ),
                    ],
                }
            ]
        ),
        "not in its sources",
    ),
}


ADVERSARIAL |= {  # what a model may mark superseded (a pinned or unrelated entry: no)
    "supersedes a pinned entry": (
        proposal(superseded=[{"id": "m1", "by": DECISION, "reason": "r"}]),
        "the entry m1 is pinned",
    ),
    "supersedes by an invented source": (
        proposal(superseded=[{"id": "m2", "by": "memory/2026-01-01.md#L1", "reason": "r"}]),
        "which is not one of this dream's inputs",
    ),
    "supersedes an archived entry": (
        proposal(
            superseded=[{"id": "m9", "by": DECISION, "reason": "r"}],
            archived=[{"id": "m9", "reason": "old"}],
            sections=[
                {
                    "heading": "Inbox",
                    "entries": keep(*PINNED, "m2", "m3", "m4", "m5", "m6", "m8", "m10"),
                }
            ],
        ),
        "states no new value for the entry's subject",
    ),
}


def test_a_model_may_mark_an_entry_superseded(vault: Path, llm_server) -> None:
    with (vault / "memory/2026-11-21.md").open("a") as log:
        log.write("- Maya reports to Karin Lund from January.\n")
    karin = "memory/2026-11-21.md#L5"
    reply = proposal(
        superseded=[{"id": "m2", "by": karin, "reason": "Maya: manager Jonas -> Karin"}]
    )
    reply["sections"][1]["entries"].append(
        {"text": "Maya reports to Karin Lund from January.", "sources": [karin], "reason": "new"}
    )
    llm_server.reply_json(reply)
    with Vault(vault) as v:
        report = v.dream(now=NOW)
    text = (vault / "MEMORY.md").read_text()
    current, history = text.split("## History\n")
    # the entry that holds now takes the old one's place; the old one moves to history
    assert "- Maya reports to Karin Lund from January. <!-- src: " in current
    assert "Jonas Berg: Head of Engineering" not in current
    assert history.startswith("- ~~Jonas Berg: Head of Engineering, Maya's manager.~~ until ")
    assert f"<!-- superseded-by: {karin} -->" in history
    assert [(s["by"], s["reason"]) for s in report.superseded] == [
        (karin, "the model: Maya: manager Jonas -> Karin")
    ]


@pytest.mark.parametrize("case", UNUSABLE)
def test_unusable_replies_are_refused_whole(case: str, vault: Path, llm_server, tree_state) -> None:
    reply, message = UNUSABLE[case]
    llm_server.reply_content(reply if isinstance(reply, str) else json.dumps(reply))
    before = tree_state(vault)
    with Vault(vault) as v, pytest.raises(DreamRefusedError) as info:
        v.dream(now=NOW)
    assert str(info.value).startswith("the dream was refused, MEMORY.md is unchanged: ")
    assert message in str(info.value)
    after = tree_state(vault)
    assert after["MEMORY.md"] == before["MEMORY.md"]
    # Nothing written but the refusal's record in the diary, with its reasons.
    diary = "dreams/2026-11-22.md"
    assert set(after) - {".vault/dream.lock", ".vault/write.lock", diary} == set(before)
    assert all(after[p] == before[p] for p in before)
    records = parse_records(diary, (vault / diary).read_text())
    assert [r.action for r in records] == ["refused"] and not records[0].consumed
    assert "dream · refused" in (vault / diary).read_text()
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("case", ADVERSARIAL)
def test_adversarial_parts_are_refused_one_by_one(
    case: str, vault: Path, llm_server, tree_state
) -> None:
    reply, message = ADVERSARIAL[case]
    llm_server.reply_content(json.dumps(reply))
    before = tree_state(vault)
    with Vault(vault) as v:
        report = v.dream(now=NOW)
    # what breaks a rule is left out, with why; nothing it proposed reached MEMORY.md
    assert any(message in r["reason"] for r in report.refused_items), report.refused_items
    assert (vault / "MEMORY.md").read_bytes() == before["MEMORY.md"][0]
    diary = (vault / "dreams/2026-11-22.md").read_text()
    assert "### Refused" in diary and message.split(":")[0] in diary
    assert "Traceback" not in diary


def test_force_never_applies_an_unsupported_part(vault: Path, llm_server) -> None:
    huge = proposal(
        sections=[
            {
                "heading": "Inbox",
                "entries": [
                    *keep("m1", "m7", *UNPINNED),
                    *(
                        {
                            "text": f"Fact number {n} about the billing service and its many tenants.",  # noqa: E501
                            "sources": [DECISION],
                            "reason": "r",
                        }
                        for n in range(1200)
                    ),
                ],
            }
        ]
    )
    llm_server.reply_json(huge)
    with Vault(vault) as v:  # 1,200 claims no cited line makes: each refused, none written
        report = v.dream(force=True, now=NOW)
    assert len(report.refused_items) == 1200 and report.added == []
    assert (vault / "MEMORY.md").read_text() == MEMORY
    llm_server.reply_json(ADVERSARIAL["deletes 80%"][0])
    with Vault(vault) as v:  # --force never lets an archive without a replacement through
        report = v.dream(force=True, now=NOW)
    assert report.archived == [] and len(report.refused_items) == 8
    assert (vault / "MEMORY.md").read_text() == MEMORY


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (
            lambda s: s.reply_raw(
                200,
                json.dumps(
                    {
                        "model": "m",
                        "choices": [
                            {"finish_reason": "length", "message": {"content": '{"sections": ['}}
                        ],
                    }
                ),
            ),
            "the model's reply was cut off (finish_reason = length)",
        ),
        (lambda s: s.reply_raw(200, b"x" * (MAX_REPLY_BYTES + 10)), "longer than 2,000,000"),
        (lambda s: s.reply_raw(500, "out of memory"), "answered HTTP 500 (out of memory)"),
    ],
)
def test_transport_failures_are_refused(vault: Path, llm_server, script, message) -> None:
    script(llm_server)
    with Vault(vault) as v, pytest.raises(DreamRefusedError) as info:
        v.dream(now=NOW)
    assert message in str(info.value)
    assert (vault / "MEMORY.md").read_text() == MEMORY
    diary = (vault / "dreams/2026-11-22.md").read_text()  # the refusal, with its reason
    assert "dream · refused" in diary and message.split(" (")[0] in diary


def test_an_unreachable_model_is_refused(vault: Path, llm_server, run_cli) -> None:
    config = vault / "vault.toml"
    config.write_text(config.read_text().replace(llm_server.base_url, "http://127.0.0.1:9/v1"))
    days = str((clock.today() - dt.date(2026, 11, 20)).days + 1)
    result = run_cli("--vault", str(vault), "dream", "--days", days)
    assert result.exit_code == 1 and result.stdout == ""
    assert (
        "the dream was refused, MEMORY.md is unchanged: LLM request failed: cannot reach"
        in result.stderr
    )
    assert (vault / "MEMORY.md").read_text() == MEMORY


def test_the_cli_reports_what_was_applied_and_refused(vault: Path, llm_server, run_cli) -> None:
    reply = proposal()
    reply["sections"][1]["entries"][1] = {
        "id": "m3",
        "text": "Tomás Ruiz leads customer success.",
        "reason": "clearer",  # a rewording that cites nothing: fine, it adds nothing
    }
    reply["sections"][1]["entries"].append(
        {"text": "The office door PIN is 2580.", "sources": [JONAS], "reason": "r"}
    )
    llm_server.reply_json(reply)
    days = str((clock.today() - dt.date(2026, 11, 20)).days + 1)
    result = run_cli("--vault", str(vault), "dream", "--days", days)
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "  ~ People: Tomás Ruiz leads customer success.\n" in result.stdout
    # refused (no cited line holds that PIN: made up), and the report does not repeat it
    refused = "  ! refused new entry: The office door PIN is [REDACTED:pin]. — it holds a pin"
    assert refused in result.stdout
    assert "2580" not in result.stdout
