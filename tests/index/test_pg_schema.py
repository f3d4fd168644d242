"""index/pgschema.py on a real PostgreSQL: numbered migrations recorded in the database,
applied once, all or nothing, and a newer database refused without a change."""

from __future__ import annotations

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
