"""A search's index run over the few files changed since the last index leaves the keyword
index (Whoosh, read only by search operators: search/select.py) for later: the files it lags
behind by are recorded with their units in one SQLite transaction, and a search with operators,
the next `vault index` (or the watcher's run) and the doctor bring it up first. Plain searches
score from the unit table and never need it (indexer.py `run(defer_fulltext=True)`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.files import fsutil
from vault_memory.index.fulltext import FullTextWriter


def _edit(root: Path) -> None:
    path = root / "notes" / "renderer.md"
    path.write_text(
        path.read_text(encoding="utf-8")
        + "\n- QUOKKA_77 renders the Cyrillic invoices. #decision\n",
        encoding="utf-8",
    )


def _whoosh_finds(vault: Vault, word: str) -> int:
    from whoosh.query import Term

    return len(vault.cache.fulltext.unit_ids(Term("text", word)))


def _operators(vault: Vault) -> list[dict[str, Any]]:
    return [h.to_dict() for h in vault.search("path:notes quokka_77", mode="keyword", fresh=False)]


def test_a_searchs_run_defers_whoosh_and_operators_bring_it_up(indexed_small: Path) -> None:
    _edit(indexed_small)
    with Vault(indexed_small) as vault:
        hits = vault.search("QUOKKA_77", mode="keyword")
        assert hits and "QUOKKA_77" in hits[0].text  # from the unit table
        assert vault.cache.fulltext_pending() == ["notes/renderer.md"]
        assert _whoosh_finds(vault, "quokka_77") == 0  # not written by the search's run
        found = _operators(vault)
        assert found and "QUOKKA_77" in found[0]["text"]
        assert vault.cache.fulltext_pending() == []
        vault.cache.rebuild_fulltext()  # what a whole rebuild of Whoosh answers
        assert _operators(vault) == found


@pytest.mark.parametrize("by", ["index", "doctor", "verify"])
def test_the_next_run_or_the_doctor_brings_it_up(indexed_small: Path, by: str) -> None:
    _edit(indexed_small)
    with Vault(indexed_small) as vault:
        vault.search("QUOKKA_77", mode="keyword")
        assert vault.cache.fulltext_pending()
        if by == "index":
            vault.index()
        elif by == "doctor":
            assert vault.doctor().healthy  # deferred is not damaged: nothing rebuilt
        else:
            assert vault.cache.verify().differences == []
        assert vault.cache.fulltext_pending() == []
        assert _whoosh_finds(vault, "quokka_77") == 1


def test_a_watchers_or_indexs_run_never_defers(indexed_small: Path) -> None:
    _edit(indexed_small)
    with Vault(indexed_small) as vault:
        vault.index(paths=["notes/renderer.md"])
        assert vault.cache.fulltext_pending() == []
        assert _whoosh_finds(vault, "quokka_77") == 1


@pytest.mark.parametrize("where", ["before the commit", "after the commit"])
def test_a_catch_up_killed_midway_is_done_again(
    indexed_small: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed before Whoosh commits, or after it but before the pending files are cleared:
    they stay recorded, and the next catch-up does it again (no document twice)."""
    _edit(indexed_small)

    class Killed(BaseException):
        pass

    def kill(*args: object) -> None:
        raise Killed

    with Vault(indexed_small) as vault:
        vault.search("QUOKKA_77", mode="keyword")
        with monkeypatch.context() as mp:
            if where == "before the commit":
                mp.setattr(FullTextWriter, "commit", kill)
            else:
                real = fsutil.kill_point
                mp.setattr(
                    fsutil,
                    "kill_point",
                    lambda step: (
                        kill() if step == ("index.after-fulltext-catch-up") else real(step)
                    ),
                )
            with pytest.raises(Killed):
                vault.cache.catch_up_fulltext()
    with Vault(indexed_small) as vault:
        assert vault.cache.fulltext_pending() == ["notes/renderer.md"]
        found = _operators(vault)
        assert found and "QUOKKA_77" in found[0]["text"]
        assert vault.cache.verify().differences == []  # one document per unit
