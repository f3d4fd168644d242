"""index/pgschema.py on a real PostgreSQL: numbered migrations recorded in the database,
applied once, all or nothing, and a newer database refused without a change."""

from __future__ import annotations

import struct
import threading
from typing import Any

import pytest

from vault_memory.errors import VaultError
from vault_memory.index import pgschema

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")


def _tables(conn: Any) -> set[str]:
    return {
        r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    }


def test_migrate_records_each_step_once(pg_database: str) -> None:
    with psycopg.connect(pg_database) as conn:
        assert pgschema.applied(conn) == []
        assert pgschema.migrate(conn) == [v for v, _, _ in pgschema.MIGRATIONS]
        assert pgschema.applied(conn) == [v for v, _, _ in pgschema.MIGRATIONS]
        assert {
            "meta",
            "files",
            "units",
            "embeddings",
            "properties",
            "names",
            "links",
            "skipped",
            "schema_migrations",
        } <= _tables(conn)
        assert pgschema.migrate(conn) == []  # up to date: nothing applied again
        row = conn.execute("SELECT extname FROM pg_extension WHERE extname = 'vector'").fetchone()
        assert row == ("vector",)


def test_processes_migrating_together_apply_each_step_once(pg_database: str) -> None:
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with psycopg.connect(pg_database) as conn:
                results.append(pgschema.migrate(conn))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert sorted(results, key=len) == [[], [], [], [v for v, _, _ in pgschema.MIGRATIONS]]


def test_a_newer_database_is_refused_unchanged(pg_database: str) -> None:
    with psycopg.connect(pg_database) as conn:
        pgschema.migrate(conn)
        conn.execute(
            "INSERT INTO schema_migrations (version, name) VALUES (%s, 'future')",
            (pgschema.LATEST + 1,),
        )
        conn.commit()
        before = _tables(conn)
        with pytest.raises(VaultError, match="upgrade vault-memory"):
            pgschema.migrate(conn)
        assert _tables(conn) == before
        assert pgschema.applied(conn)[-1] == pgschema.LATEST + 1


def test_a_failing_step_leaves_the_database_as_it_was(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = (*pgschema.MIGRATIONS, (pgschema.LATEST + 1, "broken", "CREATE TABLE files ()"))
    monkeypatch.setattr(pgschema, "MIGRATIONS", broken)
    monkeypatch.setattr(pgschema, "LATEST", pgschema.LATEST + 1)
    with psycopg.connect(pg_database) as conn:
        with pytest.raises(psycopg.errors.DuplicateTable):
            pgschema.migrate(conn)
        assert pgschema.applied(conn) == []
        assert _tables(conn) == set()


def _bytes_match(conn: Any) -> tuple[int, int, int]:
    """(vectors, their bytes kept, bytes equal to `vector_send` of their vector)."""
    return conn.execute(
        "SELECT (SELECT count(*) FROM embeddings), (SELECT count(*) FROM vector_bytes),"
        " (SELECT count(*) FROM embeddings e JOIN vector_bytes b USING (vault, sha256, model)"
        " WHERE b.bytes = vector_send(e.embedding))"
    ).fetchone()


def test_vector_bytes_are_filled_for_an_existing_index_and_kept_by_every_write(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tuple(m for m in pgschema.MIGRATIONS if m[0] < 6)
    with psycopg.connect(pg_database) as conn:
        monkeypatch.setattr(pgschema, "MIGRATIONS", before)
        monkeypatch.setattr(pgschema, "LATEST", 5)
        pgschema.migrate(conn)  # an index made before the bytes were kept
        for n in range(3):
            conn.execute(
                "INSERT INTO embeddings VALUES ('v', %s, 'm', %s::vector)",
                (f"sha{n}", f"[{n}, 0.5, -1.25]"),
            )
        monkeypatch.undo()
        assert pgschema.migrate(conn) == [6]
        assert _bytes_match(conn) == (3, 3, 3)
        # a vector written again (as `add_embeddings` does), one added, one moved, some gone
        conn.execute(
            "INSERT INTO embeddings VALUES ('v', 'sha0', 'm', '[9, 9, 9]') ON CONFLICT"
            " (vault, sha256, model) DO UPDATE SET embedding = excluded.embedding"
        )
        conn.execute("INSERT INTO embeddings VALUES ('v', 'sha3', 'm', '[1, 2, 3]')")
        conn.execute("UPDATE embeddings SET model = 'other' WHERE sha256 = 'sha3'")
        assert _bytes_match(conn) == (4, 4, 4)
        conn.execute("DELETE FROM embeddings WHERE sha256 IN ('sha1', 'sha3')")
        assert _bytes_match(conn) == (2, 2, 2)
        sent = conn.execute("SELECT bytes FROM vector_bytes WHERE sha256 = 'sha0'").fetchone()[0]
        assert bytes(sent) == struct.pack(">hh3f", 3, 0, 9.0, 9.0, 9.0)
