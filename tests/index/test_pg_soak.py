"""Many writers and many readers on one shared index server: 4 processes, each with a folder
of its own under one clone's name, index overlapping parts of one vault while they edit them, and
8 processes search for 60 s (`VAULT_PG_SOAK_SECONDS`). No process may fail, and the server's
final state must equal a single-process rebuild of the final files. Slow; keyword-only (the
model's CPU would only slow the interleaving down; vectors are covered by test_pg_store)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vault_memory import Vault

from .test_pg_store import SAMPLE, server_state, use_server

pytestmark = pytest.mark.slow

FILES = 40  # notes/soak-NN.md, edited and indexed by the writers
WRITERS, READERS = 4, 8

WRITER = r"""
import json, sys, time
from pathlib import Path
from vault_memory import Vault

root, slice_, seconds = Path(sys.argv[1]), json.loads(sys.argv[2]), float(sys.argv[3])
def final(k): return f"# Soak {k}\n\n## final\n- settled text of note {k}, shared index\n"
def draft(k, r): return f"# Soak {k}\n\n## round {r}\n- draft {r} of note {k}\n\n## more\n- {r}\n"
paths = [f"notes/soak-{k:02}.md" for k in slice_]
rounds = 0
with Vault(root) as vault:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rounds += 1
        for k in slice_[rounds % 2::2]:
            (root / f"notes/soak-{k:02}.md").write_text(draft(k, rounds), encoding="utf-8")
        vault.index(paths=paths, lock_timeout=60)
    for k in slice_:
        (root / f"notes/soak-{k:02}.md").write_text(final(k), encoding="utf-8")
    vault.index(paths=paths, lock_timeout=60)
print(json.dumps({"rounds": rounds}))
"""

READER = r"""
import json, sys, time
from pathlib import Path
from vault_memory import Vault

root, seconds = Path(sys.argv[1]), float(sys.argv[2])
queries = ["billing migration", "soak note draft", "shared index", "ERR_LEDGER_409",
           "final settled text", "Zoë product changes"]
count = 0
with Vault(root) as vault:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        hits = vault.search(queries[count % len(queries)], fresh=False)
        assert all(h.text for h in hits)
        count += 1
print(json.dumps({"searches": count}))
"""


def final_text(k: int) -> str:
    return f"# Soak {k}\n\n## final\n- settled text of note {k}, shared index\n"


def make_checkout(path: Path, dsn: str, vault_id: str) -> Path:
    shutil.copytree(SAMPLE, path, ignore=shutil.ignore_patterns(".vault"))
    for k in range(FILES):
        (path / "notes" / f"soak-{k:02}.md").write_text(
            f"# Soak {k}\n\n- first\n", encoding="utf-8"
        )
    root = use_server(path, dsn, vault_id)
    # One clone's view, written by every process: each checkout of its own would keep its own
    # view of the files (tests/index/test_pg_clones.py), and the final state to compare with a
    # single rebuild is that of one view.
    with (root / "vault.toml").open("a", encoding="utf-8") as fh:
        fh.write('clone_id = "soak"\n')
    return root


def test_four_writers_and_eight_readers_converge_with_no_error(
    pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    seconds = float(os.environ.get("VAULT_PG_SOAK_SECONDS", "60"))
    first = make_checkout(tmp_path / "seed", pg_database, "team")
    with Vault(first) as seed:
        seed.index()
    # writer i owns half the notes, overlapping its neighbours by a quarter each side
    half, quarter = FILES // 2, FILES // 4
    slices = [[(i * quarter + j) % FILES for j in range(half)] for i in range(WRITERS)]
    procs: list[tuple[str, subprocess.Popen[str]]] = []
    env = dict(os.environ)
    for i, part in enumerate(slices):
        root = make_checkout(tmp_path / f"writer-{i}", pg_database, "team")
        procs.append(
            (
                f"writer {i}",
                subprocess.Popen(
                    [sys.executable, "-c", WRITER, str(root), json.dumps(part), str(seconds)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                ),
            )
        )
    for i in range(READERS):
        root = make_checkout(tmp_path / f"reader-{i}", pg_database, "team")
        procs.append(
            (
                f"reader {i}",
                subprocess.Popen(
                    [sys.executable, "-c", READER, str(root), str(seconds)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                ),
            )
        )
    failures, done = [], {}
    for name, proc in procs:
        out, err = proc.communicate(timeout=seconds + 600)
        if proc.returncode != 0:
            failures.append(f"{name} exited {proc.returncode}: {err[-1500:]}")
        else:
            done[name] = json.loads(out.strip().splitlines()[-1])
    assert failures == []
    assert all(done[f"writer {i}"]["rounds"] >= 2 for i in range(WRITERS)), done
    assert all(done[f"reader {i}"]["searches"] >= 5 for i in range(READERS)), done
    # the truth after the run: every soak note final, the rest as in the sample vault
    single = make_checkout(tmp_path / "single", pg_database, "single")
    for k in range(FILES):
        (single / "notes" / f"soak-{k:02}.md").write_text(final_text(k), encoding="utf-8")
    with Vault(single) as vault:
        vault.index(rebuild=True)
    assert server_state(pg_database, "team") == server_state(pg_database, "single")
