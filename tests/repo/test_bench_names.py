"""A bench script runs with bench/ first on sys.path: a file there named like a standard
module hides it from every other bench (bench/secrets.py hid `secrets` from huggingface_hub,
so fastembed failed to import and bench/eval_search.py measured keyword search alone)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_no_bench_script_is_named_like_a_standard_module() -> None:
    names = {path.stem for path in BENCH.glob("*.py")}
    assert names, BENCH
    assert not names & set(sys.stdlib_module_names)
