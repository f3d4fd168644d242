"""`Vault.status` / `vault status`: what the cache holds and how far the files drifted from it,
without writing anything."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.index.embedder import BUNDLED_MODEL, BUNDLED_MODEL_ID
from vault_memory.index.store import SCHEMA_VERSION

Snapshot = Callable[[Path], dict[str, tuple[bytes, int, int]]]

STATUS_KEYS = {
    "vault",
    "cache",
    "cache_bytes",
    "indexed",
    "files",
    "units",
    "embedded_units",
    "model",
    "configured_model",
    "last_index_at",
    "drift",
    "problem",
    "settings",
    "settings_sources",
    "watcher",
    "skipped",
    "provider",
    "pending_embeddings",
    "embedding_error",
    "queue",
    "damaged",
    "unresolved_links",
    "unresolved",
    "flagged_units",
    "backend",
    "server",
    "dsn",
    "versions",
}


def status(root: Path) -> dict[str, Any]:
    with Vault(root) as vault:
        return vault.status()


def test_status_of_an_indexed_vault(indexed_small: Path, tree_state: Snapshot) -> None:
    before = tree_state(indexed_small)
    info = status(indexed_small)
    assert tree_state(indexed_small) == before
    assert set(info) == STATUS_KEYS
    assert info["vault"] == str(indexed_small)
    assert info["cache"] == str(indexed_small / ".vault")
    assert info["cache_bytes"] == sum(
        len(data) for path, (data, _, _) in before.items() if path.startswith(".vault/")
    )
    assert (info["indexed"], info["files"], info["units"], info["embedded_units"]) == (
        True,
        4,
        6,
        6,
    )
    assert info["model"] == BUNDLED_MODEL_ID
    assert info["configured_model"] == BUNDLED_MODEL
    assert isinstance(info["last_index_at"], float)
    assert info["drift"] == {"new": 0, "changed": 0, "deleted": 0}
    assert info["problem"] is None
    assert info["settings"]["index"]["model"] == BUNDLED_MODEL
    assert set(info["settings"]) == {
        "index",
        "search",
        "dream",
        "llm",
        "flush",
        "watch",
        "queue",
        "sessions",
        "security",
    }
    assert info["watcher"] == {"running": False, "stale": False}
    assert info["settings_sources"]["dream.schedule"] == "vault.toml"


def test_status_counts_drift_and_writes_nothing(indexed_sample: Path, tree_state: Snapshot) -> None:
    (indexed_sample / "notes" / "new-note.md").write_text("# New\n\n- fresh\n")
    (indexed_sample / "notes" / "other-new.md").write_text("- also fresh\n")
    with (indexed_sample / "MEMORY.md").open("a") as fh:
        fh.write("- An edit.\n")
    path = indexed_sample / "memory" / "2026-11-13.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # touched counts too
    (indexed_sample / "notes" / "ci-flaky-tests.md").unlink()
    (indexed_sample / ".obsidian").mkdir()
    (indexed_sample / ".obsidian" / "ignored.md").write_text("ignored\n")
    before = tree_state(indexed_sample)
    info = status(indexed_sample)
    assert info["drift"] == {"new": 2, "changed": 2, "deleted": 1}
    assert info["files"] == 25  # what the index holds, not what is on disk
    assert tree_state(indexed_sample) == before


def test_status_before_the_first_index_creates_nothing(vault_dir: Path) -> None:
    (vault_dir / "memory" / "2026-11-22.md").write_text("# 2026-11-22\n")
    info = status(vault_dir)
    assert (info["indexed"], info["files"], info["units"], info["cache_bytes"]) == (False, 0, 0, 0)
    assert info["drift"] == {"new": 2, "changed": 0, "deleted": 0}
    assert info["problem"] == "not indexed yet: run `vault index`"
    assert info["model"] is None and info["last_index_at"] is None
    assert not (vault_dir / ".vault").exists()


def test_status_with_a_writer_connection_open(indexed_small: Path) -> None:
    # A writer (here: an open read-write connection) has the -wal file: status reads through it.
    conn = sqlite3.connect(indexed_small / ".vault" / "index.sqlite")
    try:
        with conn:
            conn.execute("UPDATE meta SET value='123.5' WHERE key='last_index_at'")
        assert (indexed_small / ".vault" / "index.sqlite-wal").exists()
        info = status(indexed_small)
    finally:
        conn.close()
    assert info["last_index_at"] == 123.5 and info["problem"] is None


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (
            "garbage",
            "the index is damaged (index.sqlite: file is not a database): "
            "`vault index` will rebuild it",
        ),
        (
            "schema",
            f"the index has schema version 99, this vault-memory uses {SCHEMA_VERSION}: "
            "`vault index` will rebuild it",
        ),
    ],
)
def test_status_names_a_damaged_index(
    indexed_small: Path,
    tree_state: Snapshot,
    damage: str,
    problem: str,
) -> None:
    db = indexed_small / ".vault" / "index.sqlite"
    if damage == "garbage":
        db.write_bytes(b"not a database at all " * 500)
    else:
        conn = sqlite3.connect(db)
        with conn:
            conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
        conn.close()
    before = tree_state(indexed_small)
    info = status(indexed_small)
    assert info["problem"] == problem
    assert info["indexed"] is False
    assert tree_state(indexed_small) == before


# -- `vault status` on the command line -----------------------------------------------------


def test_cli_status_json(
    indexed_small: Path, run_cli: Callable[..., Any], tree_state: Snapshot
) -> None:
    before = tree_state(indexed_small)
    result = run_cli(
        "--vault", str(indexed_small), "status", "--json", env={"VAULT_SEARCH_LIMIT": "7"}
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert set(data) == STATUS_KEYS
    assert (data["files"], data["units"], data["embedded_units"]) == (4, 6, 6)
    assert data["drift"] == {"new": 0, "changed": 0, "deleted": 0}
    assert data["settings"]["search"]["limit"] == 7
    assert data["settings_sources"]["search.limit"] == "VAULT_SEARCH_LIMIT"
    assert tree_state(indexed_small) == before


def test_cli_status_text(indexed_small: Path, run_cli: Callable[..., Any]) -> None:
    (indexed_small / "notes" / "renderer.md").unlink()
    result = run_cli("--vault", str(indexed_small), "status")
    assert result.exit_code == 0, result.stderr
    lines = dict(
        line.split(None, 1)
        for line in result.stdout.splitlines()
        if not line.startswith(("last index", "setting"))
    )
    assert lines["vault"] == str(indexed_small)
    assert lines["files"] == "4"
    assert lines["units"] == "6 (6 embedded)"
    assert lines["model"] == BUNDLED_MODEL_ID
    assert lines["drift"] == "0 new, 0 changed, 1 deleted"
    assert "problem" not in lines


def test_cli_status_text_not_indexed(vault_dir: Path, run_cli: Callable[..., Any]) -> None:
    result = run_cli("--vault", str(vault_dir), "status")
    assert result.exit_code == 0, result.stderr
    assert "last index    never" in result.stdout
    assert "model         none (keyword search only)" in result.stdout
    assert "problem       not indexed yet: run `vault index`" in result.stdout
    assert not (vault_dir / ".vault").exists()


@pytest.mark.parametrize("as_json", [False, True])
def test_cli_status_fails_when_the_index_server_cannot_be_reached(
    vault_dir: Path, run_cli: Callable[..., Any], tree_state: Snapshot, as_json: bool
) -> None:
    """A configured index server that is not there fails `vault status` (exit 1, one
    `Error:` line naming the DSN without its password), as every other command does; the
    status itself is still printed."""
    pytest.importorskip("psycopg")
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dsn = f"postgresql://bob:s3cret@127.0.0.1:{port}/team"
    before = tree_state(vault_dir)
    result = run_cli(
        "--vault",
        str(vault_dir),
        "status",
        *(["--json"] if as_json else []),
        env={"VAULT_INDEX_BACKEND": "postgres", "VAULT_INDEX_DSN": dsn},
    )
    assert result.exit_code == 1, result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"postgresql://bob:***@127.0.0.1:{port}/team" in errors[0]
    assert "vault postgres start" in errors[0]
    assert "s3cret" not in result.stdout + result.stderr
    if as_json:
        data = json.loads(result.stdout)
        assert data["backend"] == "postgres" and data["server_error"] == errors[0][7:]
    else:
        assert "server not reached" in result.stdout
        assert "problem" not in result.stdout  # said once, as the Error line
    assert tree_state(vault_dir) == before
