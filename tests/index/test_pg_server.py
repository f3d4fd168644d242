"""The slow suite's PostgreSQL (tests/support/pg_server.py): reachable over 127.0.0.1 and its
socket, with pgvector's `vector` type, cosine distance and HNSW index (what the postgres backend
stands on; docs/postgres-design.md)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")


def test_server_has_pgvector_with_hnsw_cosine(pg_server: Any) -> None:
    with psycopg.connect(pg_server.dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        version = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        assert version is not None and tuple(map(int, version[0].split("."))) >= (0, 5, 0)
        conn.execute("DROP TABLE IF EXISTS smoke")
        conn.execute("CREATE TABLE smoke (id int PRIMARY KEY, v vector(3))")
        conn.execute("INSERT INTO smoke VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[1,1,0]')")
        conn.execute("CREATE INDEX smoke_hnsw ON smoke USING hnsw (v vector_cosine_ops)")
        conn.execute("SET enable_seqscan = off")  # the plan must use the HNSW index
        plan = "\n".join(
            r[0]
            for r in conn.execute("EXPLAIN SELECT id FROM smoke ORDER BY v <=> '[1,0.1,0]' LIMIT 2")
        )
        assert "smoke_hnsw" in plan
        ids = [
            r[0] for r in conn.execute("SELECT id FROM smoke ORDER BY v <=> '[1,0.1,0]' LIMIT 2")
        ]
        assert ids == [1, 3]
        conn.execute("DROP TABLE smoke")


def test_server_answers_on_its_socket_too(pg_server: Any) -> None:
    with psycopg.connect(pg_server.socket_dsn) as conn:
        row = conn.execute("SHOW listen_addresses").fetchone()
        assert row == ("127.0.0.1",)
        encoding = conn.execute("SHOW server_encoding").fetchone()
        assert encoding == ("UTF8",)


def test_literals_keep_the_analyzers_terms_and_weights(pg_server: Any) -> None:
    """PostgreSQL reads our tsvector literal back as exactly `terms_of`'s lexemes (where its own
    `to_tsvector('simple', …)` splits them), and `ts_rank_cd` weighs a heading term above a
    text term."""
    from vault_memory.index import terms_of
    from vault_memory.index.pgtext import tsquery_literal, tsvector_literal

    from ..support.vaults import SAMPLE_VAULT

    texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE_VAULT.rglob("*.md"))]
    texts.append("ERR-4021 foo_bar O'Brien back\\slash **bold** 41.2m " + "ledger " * 300)
    with psycopg.connect(pg_server.dsn) as conn:
        split = 0
        for text in texts:
            terms = terms_of(text)
            row = conn.execute(
                "SELECT tsvector_to_array(%s::tsvector),"
                " tsvector_to_array(to_tsvector('simple', %s))",
                (tsvector_literal([(terms, "D")]), " ".join(terms)),
            ).fetchone()
            assert row is not None
            assert sorted(row[0]) == sorted(set(terms))
            split += sorted(row[1]) != sorted(set(terms))
        assert split > 0  # why the literal: the parser would change the vocabulary
        literal = tsvector_literal([(["payment"], "A"), (["err_ledger_409", "payment"], "D")])
        heading, text = conn.execute(
            "SELECT ts_rank_cd(%s::tsvector, %s::tsquery), ts_rank_cd(%s::tsvector, %s::tsquery)",
            (literal, tsquery_literal(["payment"]), literal, tsquery_literal(["err_ledger_409"])),
        ).fetchone() or (0.0, 0.0)
        assert heading > text > 0
