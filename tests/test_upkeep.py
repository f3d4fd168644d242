"""The freshen-and-heal policy of a search (index/upkeep.py), called on its own with a real
index of a small keyword-only vault and plain callables for what lies above the index."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.config import load_config
from vault_memory.errors import NoVectorsError, SemanticUnavailableError
from vault_memory.index import Index, SearchUpkeep, UpkeepState


@pytest.fixture
def resets() -> list[int]:
    """One entry each time the policy dropped the searcher's unit table."""
    return []


@pytest.fixture
def upkeep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, resets: list[int]) -> SearchUpkeep:
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T09:30")
    Vault.init(tmp_path / "v")
    with Vault(tmp_path / "v") as vault:
        vault.add("Chose PostgreSQL for the billing service")
    return SearchUpkeep(
        Index(load_config(tmp_path / "v")),
        None,
        20,
        None,
        UpkeepState(),
        UpkeepState(),
        lambda: False,
        lambda: resets.append(1),
    )


def test_a_first_search_indexes_the_vault_then_only_what_changed(upkeep: SearchUpkeep) -> None:
    upkeep.freshen()  # no index yet: made whole
    assert upkeep.index.store.exists() and upkeep.owner_state.counts_checked is False
    upkeep.freshen()
    assert upkeep.owner_state.counts_checked  # once, then the files' stats only
    note = upkeep.index.config.root / "notes" / "new.md"
    note.parent.mkdir()
    note.write_text("# New\n\nQUOKKA_77\n", encoding="utf-8")
    assert upkeep.index.stale_paths(None) == ["notes/new.md"]
    upkeep.freshen()
    # (the file may stay listed as stale: written within the index's file-time tick, it is
    # looked at again by the next run, git's "racy" rule; it is indexed all the same)
    with Vault(upkeep.index.config.root) as vault:
        hits = vault.search("QUOKKA_77", mode="keyword", fresh=False)
    assert [hit.path for hit in hits] == ["notes/new.md"]


def test_too_many_changed_files_are_left_to_the_next_index(
    upkeep: SearchUpkeep, caplog: pytest.LogCaptureFixture
) -> None:
    upkeep.freshen()
    upkeep.freshness_max_files = 1
    for name in ("a", "b"):
        (upkeep.index.config.root / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, "vault_memory"):
        upkeep.freshen()
    assert "2 files changed since the last index" in caplog.text
    assert len(upkeep.index.stale_paths(None)) == 2


def test_damage_found_by_a_query_is_healed_and_the_query_runs_by_keywords(
    upkeep: SearchUpkeep, resets: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    upkeep.freshen()
    modes: list[str] = []

    def search(mode: str) -> str:
        modes.append(mode)
        if len(modes) == 1:
            raise sqlite3.DatabaseError("database disk image is malformed")
        return "hits"

    with caplog.at_level(logging.WARNING, "vault_memory"):
        assert upkeep.healing(search, "hybrid") == "hits"
    assert modes == ["hybrid", "keyword"]
    assert "the index is damaged (database disk image is malformed)" in caplog.text
    assert resets == [1, 1]  # the searcher's table dropped before and after the rebuild
    assert upkeep.state.warned_no_vectors  # no second warning of missing vectors


def test_a_reader_that_does_not_heal_and_other_errors_raise(upkeep: SearchUpkeep) -> None:
    def broken(mode: str) -> str:
        raise sqlite3.DatabaseError("malformed")

    upkeep.heals = False
    with pytest.raises(sqlite3.DatabaseError):
        upkeep.healing(broken, "hybrid")

    def failing(mode: str) -> str:
        raise KeyError(mode)

    upkeep.heals = True
    with pytest.raises(KeyError):
        upkeep.healing(failing, "hybrid")


def test_a_semantic_search_without_the_model_is_refused(upkeep: SearchUpkeep) -> None:
    with pytest.raises(SemanticUnavailableError, match="embeddings are turned off"):
        upkeep.check_mode("semantic", lambda: False)
    upkeep.check_mode("keyword", lambda: False)
    upkeep.check_mode("hybrid", lambda: False)  # keywords only: the model is turned off


def test_a_semantic_search_of_an_index_without_vectors_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    Vault.init(tmp_path / "v")
    index = Index(load_config(tmp_path / "v"))
    upkeep = SearchUpkeep(
        index, None, 20, None, UpkeepState(), UpkeepState(), lambda: False, lambda: None
    )
    if index.query_embedder() is None:
        pytest.skip("the bundled model is not available here")
    with pytest.raises(NoVectorsError):
        upkeep.check_mode("semantic", lambda: False)
    with caplog.at_level(logging.WARNING, "vault_memory"):
        upkeep.check_mode("hybrid", lambda: False)
        upkeep.check_mode("hybrid", lambda: False)
    assert caplog.text.count("the index holds no embeddings yet") == 1
