"""Embeddings from an OpenAI-compatible provider (`[index] provider = "openai"`), against a real
HTTP server on 127.0.0.1 (tests/support/llm_server.py) that serves the bundled model's real vectors,
and hostile replies: a server that is down, slow, erring, or answering with vectors of the
wrong number or length or with NaN. Indexing keeps the text and marks units pending; search
goes by keywords with a warning in its result; the next index fills the gap."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.config import IndexSettings
from vault_memory.errors import ConfigError
from vault_memory.index.embedder import BUNDLED_MODEL, BUNDLED_MODEL_ID
from vault_memory.index.remote import RemoteEmbedder, remote_model_id

from ..support.llm_server import ScriptedLLMServer
from ..support.vaults import copy_vault

REMOTE_ID = f"openai:{BUNDLED_MODEL}"
QUERIES = [
    "which database does billing run on?",
    "ERR_LEDGER_409",
    "when is standup?",
    "what does the invoice renderer need?",
]


@pytest.fixture
def server(loaded_embedder: Any) -> Iterator[ScriptedLLMServer]:
    """A real /v1/embeddings server on 127.0.0.1 answering with the bundled model's vectors."""
    served = ScriptedLLMServer()
    served.embedder = loaded_embedder
    served.start()
    yield served
    served.close()


def use_provider(root: Path, base_url: str, extra: str = "", timeout: float = 2) -> Path:
    (root / "vault.toml").write_text(
        f'[index]\nprovider = "openai"\nbase_url = "{base_url}"\nmodel = "{BUNDLED_MODEL}"\n'
        f"batch_size = 4\ntimeout_seconds = {timeout}\n{extra}",
        encoding="utf-8",
    )
    return root


@contextlib.contextmanager
def db(root: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect((root / ".vault" / "index.sqlite").as_uri() + "?mode=ro", uri=True)
    try:
        yield conn
    finally:
        conn.close()


def models_stored(root: Path) -> dict[str, int]:
    with db(root) as conn:
        return dict(conn.execute("SELECT model, COUNT(*) FROM embeddings GROUP BY model"))


def where(hits: list[Any]) -> list[tuple[str, int]]:
    return [(h.path, h.start_line) for h in hits]


def test_a_provider_indexes_and_searches_like_the_bundled_model(
    small_vault: Path, _small_template: Path, server: ScriptedLLMServer, tmp_path: Path
) -> None:
    indexed_small = copy_vault(_small_template, tmp_path / "bundled")
    use_provider(small_vault, server.base_url)
    with Vault(small_vault) as vault:
        report = vault.index()
        assert report.model == REMOTE_ID and report.pending_units == 0
        assert report.units_embedded == report.embedded_units == report.units > 0
        remote = {q: where(vault.search(q, fresh=False)) for q in QUERIES}
        assert all(not vault.search(q, fresh=False).warnings for q in QUERIES)
    # The same vectors as in-process (served by the same model): the same hits.
    with Vault(indexed_small) as bundled:
        assert remote == {q: where(bundled.search(q, fresh=False)) for q in QUERIES}
    assert models_stored(small_vault) == {REMOTE_ID: report.units}
    sent = [r for r in server.embedding_requests if len(r["input"]) > 1]
    assert sent and all(len(r["input"]) <= 4 and r["model"] == BUNDLED_MODEL for r in sent)
    assert all(r["encoding_format"] == "float" and "dimensions" not in r for r in sent)
    assert server.requests == []  # the chat endpoint is not involved


def test_the_fingerprint_names_provider_model_and_dimensions() -> None:
    assert remote_model_id(IndexSettings(provider="openai", model="nomic")) == "openai:nomic"
    assert (
        remote_model_id(IndexSettings(provider="openai", model="m", dimensions=256))
        == "openai:m:256d"
    )
    assert REMOTE_ID != BUNDLED_MODEL_ID


def test_dimensions_are_asked_for_and_kept_apart(
    small_vault: Path, server: ScriptedLLMServer
) -> None:
    use_provider(small_vault, server.base_url, "dimensions = 128\n")
    with Vault(small_vault) as vault:
        report = vault.index()
        assert report.model == f"{REMOTE_ID}:128d" and report.pending_units == 0
        assert vault.search("billing database", fresh=False)
        assert vault.status()["settings"]["index"]["dimensions"] == 128
    assert server.embedding_requests[0]["dimensions"] == 128
    with db(small_vault) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='dims'").fetchone()[0] == "128"
        assert {len(v) for (v,) in conn.execute("SELECT vector FROM embeddings")} == {128 * 4}


def test_switching_models_reembeds_only_what_it_must(
    indexed_small: Path, server: ScriptedLLMServer
) -> None:
    before = models_stored(indexed_small)
    assert list(before) == [BUNDLED_MODEL_ID]
    units = before[BUNDLED_MODEL_ID]
    use_provider(indexed_small, server.base_url)
    with Vault(indexed_small) as vault:
        assert vault.index().units_embedded == units  # a new model: every text once
    assert models_stored(indexed_small) == {BUNDLED_MODEL_ID: units, REMOTE_ID: units}
    (indexed_small / "vault.toml").write_text("")  # back to the bundled model
    asked = len(server.embedding_requests)
    with Vault(indexed_small) as vault:
        report = vault.index()
        assert (report.units_embedded, report.model) == (0, BUNDLED_MODEL_ID)
        assert vault.search("billing database", fresh=False)
        with db(indexed_small) as conn:
            assert (
                conn.execute("SELECT value FROM meta WHERE key='model_id'").fetchone()[0]
                == BUNDLED_MODEL_ID
            )
    assert len(server.embedding_requests) == asked
    # Back again to the provider, with one new note: only that note's text is sent.
    (indexed_small / "notes" / "new.md").write_text("# New\n\nThe cutover is on Sunday.\n")
    use_provider(indexed_small, server.base_url)
    with Vault(indexed_small) as vault:
        report = vault.index()
    assert report.units_embedded == 1 and report.model == REMOTE_ID
    assert [t for r in server.embedding_requests[asked:] for t in r["input"]] == [
        "The cutover is on Sunday."
    ]


def test_a_search_never_mixes_two_models(indexed_small: Path, server: ScriptedLLMServer) -> None:
    """Pending vectors of a new model are never scored beside the old model's."""
    server.embed_raw(500, "down", times=10)  # the first batch fails: the new model has none
    use_provider(indexed_small, server.base_url)
    with Vault(indexed_small) as vault:
        report = vault.index()
        assert report.pending_units == report.units and report.embedded_units == 0
        hits = vault.search("which database does billing run on?", fresh=False)
        assert hits and all(h.scores["vector"] == 0 for h in hits)
        assert "keywords only" in hits.warnings[0]


# -- a provider that fails --------------------------------------------------------------------

# Each failure answers every try: under load a try can outlast the 1 s timeout, and the retry
# must meet the same failure, not a good answer left over for it.
TRIES = 10
HOSTILE = {
    "down": lambda s: None,
    "http-500": lambda s: s.embed_raw(500, "model crashed", times=TRIES),
    "not-json": lambda s: s.embed_raw(200, "<html>gateway</html>", times=TRIES),
    "wrong-shape": lambda s: s.embed_raw(200, '{"embeddings": []}', times=TRIES),
    "too-few-vectors": lambda s: [s.embed_vectors([[0.1] * 384]) for _ in range(TRIES)],
    "wrong-length": lambda s: [s.embed_vectors([[0.1] * 17] * 4) for _ in range(TRIES)],
    "not-numbers": lambda s: [s.embed_vectors([["a"] * 384] * 4) for _ in range(TRIES)],
    "timeout": lambda s: s.embed_real(delay=4.0),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_failing_provider_leaves_units_pending_and_search_keyword_only(
    small_vault: Path,
    server: ScriptedLLMServer,
    kind: str,
    run_cli: Any,
    vault_warnings: Any,
) -> None:
    base = "http://127.0.0.1:9/v1" if kind == "down" else server.base_url
    use_provider(small_vault, base, timeout=1)
    HOSTILE[kind](server)
    with Vault(small_vault) as vault:
        report = vault.index()  # no exception
        assert report.units > 0 and report.pending_units == report.units - report.embedded_units
        assert report.pending_units > 0
        assert any("embedding provider failed" in w for w in report.warnings)
        assert vault.status()["pending_embeddings"] == report.pending_units
        hits = vault.search("ERR_LEDGER_409", fresh=False)
        assert [h.path for h in hits][:1] == ["memory/2026-11-21.md"]
        assert len(hits.warnings) == 1 and "searched by keywords only" in hits.warnings[0]
    assert any("searched by keywords only" in w for w in vault_warnings())
    result = run_cli("--vault", str(small_vault), "search", "ERR_LEDGER_409", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["results"] and "keywords only" in data["warning"]
    status = run_cli("--vault", str(small_vault), "status")
    assert "units wait for their vectors" in status.stdout
    # The provider is back: the next index fills the gap and search is hybrid again.
    if kind == "down":
        use_provider(small_vault, server.base_url)
    server.embed_script.clear()
    with Vault(small_vault) as vault:
        report = vault.index()
        assert report.pending_units == 0 and report.embedded_units == report.units
        hits = vault.search("which database does billing run on?", fresh=False)
        assert hits.warnings == [] and hits[0].scores["vector"] > 0


def test_nan_vectors_leave_only_their_units_pending(
    small_vault: Path, server: ScriptedLLMServer
) -> None:
    use_provider(small_vault, server.base_url)
    with Vault(small_vault) as vault:
        units = vault.index().units
    (small_vault / "notes" / "two.md").write_text("# Two\n\nFirst odd line.\n")
    (small_vault / "notes" / "three.md").write_text("# Three\n\nSecond odd line.\n")
    # Two new texts: NaN for the first vector (JSON parsers accept it), numbers for the second.
    server.embed_raw(
        200,
        '{"data": [{"index": 0, "embedding": [NaN' + ", 0.1" * 383 + "]},"
        ' {"index": 1, "embedding": [0.2' + ", 0.1" * 383 + "]}]}",
    )
    with Vault(small_vault) as vault:
        report = vault.index()
        assert (report.units, report.pending_units, report.units_embedded) == (units + 2, 1, 1)
        assert "unusable vectors" in report.warnings[0]
        assert vault.search("billing", fresh=False).warnings
        report = vault.index()  # the server answers properly again
        assert report.pending_units == 0 and report.units_embedded == 1
        assert vault.search("billing", fresh=False).warnings == []


def test_a_query_the_provider_cannot_embed_is_searched_by_keywords(
    small_vault: Path, server: ScriptedLLMServer
) -> None:
    use_provider(small_vault, server.base_url)
    with Vault(small_vault) as vault:
        vault.index()
        server.embed_raw(503, "overloaded")  # a query is not retried: it would keep waiting
        hits = vault.search("ERR_LEDGER_409", fresh=False)
        assert hits[0].path == "memory/2026-11-21.md" and hits[0].scores["vector"] == 0
        assert "searched by keywords only" in hits.warnings[0]
        assert "HTTP 503" in hits.warnings[0]
        # After a failure the provider is left alone for a while: no request, no wait.
        asked = len(server.embedding_requests)
        assert vault.search("standup", fresh=False).warnings
        assert len(server.embedding_requests) == asked


def test_vectors_of_another_length_under_the_same_name_are_refused(
    small_vault: Path, server: ScriptedLLMServer
) -> None:
    use_provider(small_vault, server.base_url)
    with Vault(small_vault) as vault:
        vault.index()
    (small_vault / "notes" / "more.md").write_text("# More\n\nA line about the cutover.\n")
    server.embed_vectors([[0.5] * 512])  # the server now runs another model under the name
    with Vault(small_vault) as vault:
        report = vault.index()
    assert report.pending_units == 1
    assert "512-dimensional vectors, the index holds 384" in report.warnings[0]


def test_the_api_key_is_sent_and_a_missing_one_is_a_warning(
    small_vault: Path,
    server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    vault_warnings: Any,
) -> None:
    use_provider(small_vault, server.base_url, 'api_key_env = "EMBED_KEY"\n')
    monkeypatch.delenv("EMBED_KEY", raising=False)
    with Vault(small_vault) as vault:
        report = vault.index()
    assert report.model is None and report.embedded_units == 0
    assert any("EMBED_KEY, which is not set" in w for w in vault_warnings())
    monkeypatch.setenv("EMBED_KEY", "sk-embed")
    with Vault(small_vault) as vault:
        assert vault.index().embedded_units > 0
    assert server.embedding_headers[0]["Authorization"] == "Bearer sk-embed"


def test_settings_are_checked(small_vault: Path) -> None:
    (small_vault / "vault.toml").write_text('[index]\nprovider = "cohere"\n')
    with Vault(small_vault) as vault, pytest.raises(ConfigError, match='use "fastembed"'):
        vault.index()
    with pytest.raises(ConfigError, match="needs index.base_url"):
        RemoteEmbedder(IndexSettings(provider="openai"))


def test_retry_after_is_honoured_for_embeddings(server: ScriptedLLMServer) -> None:
    embedder = RemoteEmbedder(
        IndexSettings(provider="openai", base_url=server.base_url, model=BUNDLED_MODEL)
    )
    waits: list[float] = []
    embedder.sleep = waits.append
    server.embed_raw(429, "slow down", headers={"Retry-After": "3"})
    vectors = embedder.embed(["Billing runs on PostgreSQL."])
    assert waits == [3.0] and vectors.shape == (1, 384)
    assert len(server.embedding_requests) == 2
