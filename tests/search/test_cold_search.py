"""What a cold `vault search` process and a library query do not pay for (the
figures are in bench/perf_query.py): imports a search does not use, checksums already checked,
an optimised model session one query never uses, threads of onnxruntime's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vault_memory.index import arrays, embedder as emb

REPO = Path(__file__).resolve().parents[2]


def _imported(*args: str, cwd: Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "vault_memory.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }


def test_a_cold_search_imports_only_what_it_uses(indexed_small: Path) -> None:
    for mode in ("hybrid", "keyword"):
        imported = _imported("search", "release checklist", "--mode", mode, cwd=indexed_small)
        # stderr is not a terminal: the thin client searches here, without click
        assert "vault_memory.cli.thin" in imported and "vault_memory.search" in imported
        # click, HTTP and TLS for an embedding provider, the other commands' modules
        assert not imported & {
            "click",
            "vault_memory.llm",
            "vault_memory.index.remote",
            "vault_memory.cli.files",
            "vault_memory.cli.agents",
            "vault_memory.cli.index",
            "vault_memory.capture",
        }, mode
    # through click (here: help), the search command's module alone
    imported = _imported("search", "--help", cwd=indexed_small)
    assert "vault_memory.cli.search" in imported and "vault_memory.cli.agents" not in imported
    imported = _imported("status", cwd=indexed_small)  # other commands load them all
    assert "vault_memory.cli.agents" in imported


def test_a_cold_ascii_query_does_without_tokenizers(indexed_small: Path) -> None:
    """index/wordpiece.py tokenizes ASCII queries; other text goes to tokenizers."""
    imported = _imported("search", "release checklist", cwd=indexed_small)
    assert "onnxruntime" in imported and "vault_memory.index.wordpiece" in imported
    assert "tokenizers" not in imported
    imported = _imported("search", "Zoë's release checklist", cwd=indexed_small)
    assert "tokenizers" in imported


def test_unit_table_sums_are_checked_once_per_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "units-x.arrays"
    data = {"a": np.arange(1000, dtype=np.float32), "b": np.ones((3, 4), dtype=np.int64)}
    arrays.write_arrays(path, {"v": 1}, dict(data))
    sums = []
    real_digest = arrays.data_checksum

    def counting(buffer: memoryview) -> int:
        sums.append(1)
        return real_digest(buffer)

    monkeypatch.setattr(arrays, "data_checksum", counting)
    found = arrays.read_arrays(path, {"v": 1})  # this process wrote it: its sums are known
    assert found is not None and np.array_equal(found["a"], data["a"]) and sums == []
    del found
    assert arrays.check_arrays(path) is None and len(sums) == 2  # doctor: every sum
    # a byte changed in place (the file's ctime moves with it): checked again, found damaged
    with open(path, "r+b") as fh:
        fh.seek(-40, os.SEEK_END)
        fh.write(b"\x07")
    sums.clear()
    assert arrays.read_arrays(path, {"v": 1}) is None and sums
    # a file copied in (another inode): checked on its first read, then trusted
    arrays.write_arrays(tmp_path / "fresh.arrays", {"v": 1}, dict(data))
    shutil.copyfile(tmp_path / "fresh.arrays", path)
    sums.clear()
    assert arrays.read_arrays(path, {"v": 1}) is not None and len(sums) == 2
    sums.clear()
    assert arrays.read_arrays(path, {"v": 1}) is not None and sums == []


def test_the_model_hash_is_checked_once_per_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    onnx = tmp_path / "model.onnx"
    shutil.copyfile(emb.bundled_onnx_path(), onnx)
    hashed = []
    real_digest = emb.hashlib.file_digest

    def counting(fh: object, name: str) -> object:
        hashed.append(1)
        return real_digest(fh, name)  # type: ignore[arg-type]

    monkeypatch.setattr(emb.hashlib, "file_digest", counting)
    emb.verify_sha256(onnx)
    emb.verify_sha256(onnx)
    assert len(hashed) == 1
    with onnx.open("r+b") as fh:  # damaged in place: hashed again, and refused
        fh.seek(1_000_000)
        byte = fh.read(1)
        fh.seek(1_000_000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(emb.ModelUnavailable, match="has sha256"):
        emb.verify_sha256(onnx)
    with pytest.raises(emb.ModelUnavailable, match="has sha256"):
        emb.verify_sha256(onnx)
    assert len(hashed) == 3


def test_one_query_does_not_build_the_optimised_session(loaded_embedder: object) -> None:
    encoder = emb.QueryEncoder()
    encoder.embed_query("first question")
    assert not encoder.optimizing  # a one-query process never pays its 0.3 s
    encoder.embed_query("second question")
    assert encoder.optimizing and encoder.optimized.wait(60)


LIBRARY_CHILD = r"""
import json, os, sys, threading, time
import numpy  # the caller's numpy, its BLAS threads started
def tasks():
    return len(os.listdir("/proc/self/task"))
before = tasks()
from vault_memory import Vault
with Vault(sys.argv[1]) as vault:
    hits = vault.search("release checklist", limit=3)
    for thread in threading.enumerate():  # the encoder's loader, if still finishing
        if thread is not threading.current_thread():
            thread.join(30)
    print(json.dumps({"hits": len(hits), "before": before, "after": tasks(),
                      "python": threading.active_count(),
                      "optimising": any(t.name == "vault-query-encoder-opt"
                                        for t in threading.enumerate())}))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_library_query_leaves_no_threads_behind(indexed_small: Path) -> None:
    """onnxruntime embeds the query on the calling thread (one intra-op thread: no pool of its
    own), and one query starts no optimised-session build."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    }
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY_CHILD, str(indexed_small)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["hits"] > 0 and not seen["optimising"] and seen["python"] == 1
    assert seen["after"] == seen["before"], seen
