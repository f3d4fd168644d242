"""The slow suite's PostgreSQL (tests/pg_server.py): reachable over 127.0.0.1 and its socket,
with pgvector's `vector` type, cosine distance and HNSW index (what the postgres backend of
issue 21 stands on; docs/postgres-design.md)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")


def test_server_has_pgvector_with_hnsw_cosine(pg_server: Any) -> None:
    with psycopg.connect(pg_server.dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        version = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        assert version is not None and tuple(map(int, version[0].split("."))) >= (0, 5, 0)
        conn.execute("DROP TABLE IF EXISTS smoke")
        conn.execute("CREATE TABLE smoke (id int PRIMARY KEY, v vector(3))")
        conn.execute("INSERT INTO smoke VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[1,1,0]')")
        conn.execute("CREATE INDEX smoke_hnsw ON smoke USING hnsw (v vector_cosine_ops)")
        conn.execute("SET enable_seqscan = off")  # the plan must use the HNSW index
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT id FROM smoke ORDER BY v <=> '[1,0.1,0]' LIMIT 2"))
        assert "smoke_hnsw" in plan
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM smoke ORDER BY v <=> '[1,0.1,0]' LIMIT 2")]
        assert ids == [1, 3]
        conn.execute("DROP TABLE smoke")


def test_server_answers_on_its_socket_too(pg_server: Any) -> None:
    with psycopg.connect(pg_server.socket_dsn) as conn:
        row = conn.execute("SHOW listen_addresses").fetchone()
        assert row == ("127.0.0.1",)
        encoding = conn.execute("SHOW server_encoding").fetchone()
        assert encoding == ("UTF8",)
