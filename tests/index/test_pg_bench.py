"""bench/postgres.py end to end in the slow suite: SQLite and PostgreSQL indexed and queried in
one run, ten readers at once, figures written as JSON. 20,000 units, the size the CI's time
allows; VAULT_PG_BENCH_UNITS=100000 (or more) for the larger runs, on demand. No timing is
asserted: the figures are the bench's to report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("psycopg")

BENCH = Path(__file__).resolve().parents[2] / "bench" / "postgres.py"


def test_the_postgres_bench_runs_both_backends_and_writes_its_figures(tmp_path: Path) -> None:
    from vault_memory.index.pglocal import binaries

    if binaries() is None:
        pytest.skip("the pgserver wheel (PostgreSQL + pgvector binaries) is not installed")
    units = os.environ.get("VAULT_PG_BENCH_UNITS", "20000")
    out = tmp_path / "postgres.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--units", units, "--runs", "20", "--readers", "10"]
        + ["--root", str(tmp_path / "bench"), "--results", str(out)],
        capture_output=True,
        text=True,
        timeout=3 * 3600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    figures = json.loads(out.read_text())["figures"]
    for backend in ("SQLite", "PostgreSQL + pgvector"):
        assert figures[backend]["warm_hybrid_ms"]["p50"] > 0
        assert figures[backend]["10_readers_hybrid_ms"]["queries"] >= 10
