"""SQLite and PostgreSQL give the same top five on the sample vault: the same units in the
same order for at least 9 of 10 queries, and the same five units for all 10. What may differ
by design: the server scales cosines over its candidates rather than over every unit, so two
close hits may trade places. Slow: the bundled model and a real server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vault_memory import Vault

from .test_pg_store import SAMPLE

pytestmark = pytest.mark.slow
pytest.importorskip("psycopg")

QUERIES = [
    "which database did we pick for billing?",
    "how does Zoë like product changes explained?",
    "Nordhavn Logistik",
    "ERR_LEDGER_409",
    "invoice renderer fonts",
    "cutover window",
    "flaky tests CI runners",
    "who approves the migration",
    "Priya birthday",
    "VAT rounding",
]


def test_top_five_agree_on_the_sample_vault(pg_database: str, tmp_path: Path) -> None:
    roots = {}
    for name in ("sqlite", "postgres"):
        roots[name] = tmp_path / name
        shutil.copytree(SAMPLE, roots[name], ignore=shutil.ignore_patterns(".vault"))
    server = {"index.backend": "postgres", "index.dsn": pg_database}
    same_order = 0
    with Vault(roots["sqlite"]) as local, Vault(roots["postgres"], server) as shared:
        local.index()
        shared.index()
        for query in QUERIES:
            tops = [
                [(h.path, h.start_line, h.end_line) for h in v.search(query, limit=5, fresh=False)]
                for v in (local, shared)
            ]
            assert len(tops[0]) == 5 and sorted(tops[0]) == sorted(tops[1]), query
            same_order += tops[0] == tops[1]
    assert same_order >= 9
