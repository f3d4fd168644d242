"""A library query runs OpenBLAS on one thread, as the CLI does, and gives the caller's setting
back (search/searcher.py `one_blas_thread`; bench/search.py measures why)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = r"""
import json, sys
import numpy
from threadpoolctl import threadpool_info
from vault_memory import Vault
from vault_memory.search import searcher

def blas():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

seen = {"before": blas()}
inner = searcher.Searcher._search

def spy(self, *args, **kwargs):
    seen["during"] = blas()
    return inner(self, *args, **kwargs)

searcher.Searcher._search = spy
with Vault(sys.argv[1]) as vault:
    hits = vault.search("release checklist", limit=3, fresh=False)
seen["after"] = blas()
seen["hits"] = len(hits)
print(json.dumps(seen))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: OpenBLAS runs one thread anyway")
def test_a_library_query_runs_one_blas_thread_and_restores_the_caller_s(
    indexed_sample: Path,
) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(indexed_sample)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["hits"] > 0
    if not seen["before"]:
        pytest.skip("numpy is not linked to a BLAS threadpoolctl knows")
    assert max(seen["before"]) > 1  # the default: one thread per core
    assert seen["during"] == [1] * len(seen["before"])
    assert seen["after"] == seen["before"]
