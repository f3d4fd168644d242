"""What a search after an edit asks the SQLite store: the files' marks (computed
over arrays, equal to their definition) and the count check (counted once while no
connection writes, counted again after any write)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.index.store import Store


def test_file_marks_are_the_hash_and_the_index_time(indexed_small: Path) -> None:
    store = Store(indexed_small / ".vault" / "index.sqlite")
    try:
        with store.transaction() as conn:  # a digest of capitals and a short one too
            conn.execute(
                "UPDATE files SET sha256 = upper(sha256) WHERE id = (SELECT min(id) FROM files)"
            )
            conn.execute("UPDATE files SET sha256 = '9f' WHERE id = (SELECT max(id) FROM files)")
        want = {}
        for file_id, micros, sha in store.conn.execute(
            "SELECT id, CAST(indexed_at * 1000000 AS INTEGER), sha256 FROM files"
        ):
            want[file_id] = (int(sha[:15].ljust(15, "0"), 16) << 1) ^ micros
        assert len(want) > 3 and store.file_marks() == want
    finally:
        store.close()


def test_units_are_counted_once_while_nothing_writes(
    indexed_small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted: list[int] = []
    real = Store._count_problem

    def counting(self: Store) -> Any:
        counted.append(1)
        return real(self)

    monkeypatch.setattr(Store, "_count_problem", counting)
    (indexed_small / "notes" / "new.md").write_text("# New\n\n- A new note.\n", encoding="utf-8")
    with Vault(indexed_small) as vault:
        vault.search("a new note")  # the freshness check counts; its index run does not
        assert len(counted) == 1
        store = vault.cache.store
        assert store.count_problem() is None and len(counted) == 2  # the run wrote since
        assert store.count_problem() is None and len(counted) == 2
        with sqlite3.connect(indexed_small / ".vault" / "index.sqlite") as other:
            other.execute("DELETE FROM chunks WHERE id = (SELECT max(id) FROM chunks)")
        assert "units" in (store.count_problem() or "") and len(counted) == 3


def test_a_connection_keeps_more_pages_than_sqlites_default(indexed_small: Path) -> None:
    """A search after an edit reads each page of the vectors it looks up once (SQLite's
    default cache of 2 MB let the same 1.6 KB vector rows be read two and three times)."""
    from vault_memory.index.store import CACHE_KB

    store = Store(indexed_small / ".vault" / "index.sqlite")
    try:
        assert store.conn.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KB
        assert CACHE_KB * 1024 > 2_048_000 * 8
    finally:
        store.close()
