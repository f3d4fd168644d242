"""`[index] backend = "postgres"` in vault.toml and nothing on the command line: every command
a user runs (index, status, search, context, doctor, watch, mcp) and the library use the
PostgreSQL server; `.vault/` never gets an index file of its own. A server that is not there
is one `Error:` line naming the DSN without its password and how to start one.
Slow: a real server (tests/support/pg_server.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import vault_memory
from vault_memory import Vault

from .test_pg_store import checkout

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")

WORKTREE = Path(vault_memory.__file__).resolve().parents[1]
DSN_VARIABLE = "VAULT_TEST_TEAM_DSN"
UNIQUE = "Zanzibar-7 cutover lives only on the server"


def configured(root: Path, vault_id: str = "team") -> Path:
    """vault.toml names the backend and the variable holding the DSN; nothing else does."""
    with (root / "vault.toml").open("a", encoding="utf-8") as fh:
        fh.write(
            f'\n[index]\nbackend = "postgres"\ndsn_env = "{DSN_VARIABLE}"\n'
            f'vault_id = "{vault_id}"\n'
        )
    return root


def environment(dsn: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    kept = {k: os.environ[k] for k in ("VAULT_NOW",) if k in os.environ}
    return (
        env | kept | {DSN_VARIABLE: dsn, "VAULT_INDEX_MODEL": "none", "PYTHONPATH": str(WORKTREE)}
    )


def vault_cli(root: Path, dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vault_memory", "--vault", str(root), *args],
        capture_output=True,
        text=True,
        env=environment(dsn),
        timeout=120,
    )


def server_paths(dsn: str, vault_id: str = "team") -> set[str]:
    """The paths the server's index holds for `vault_id` (any clone)."""
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass('files')").fetchone()[0] is None:
            return set()
        return {
            r[0]
            for r in conn.execute("SELECT DISTINCT path FROM files WHERE vault=%s", (vault_id,))
        }


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout} s")
        time.sleep(0.1)


def no_local_index(root: Path) -> bool:
    return not (root / ".vault" / "index.sqlite").exists()


def test_every_command_uses_the_configured_server(pg_database: str, tmp_path: Path) -> None:
    root = configured(checkout(tmp_path, "v"))
    dsn = pg_database

    indexed = vault_cli(root, dsn, "index")
    assert indexed.returncode == 0, indexed.stderr
    assert len(server_paths(dsn)) == 25 and no_local_index(root)

    plain = vault_cli(root, dsn, "status")
    assert plain.returncode == 0, plain.stderr
    backend = next(line for line in plain.stdout.splitlines() if line.startswith("backend"))
    assert "postgres at postgresql://postgres@127.0.0.1" in backend
    assert "PostgreSQL 16" in backend and "pgvector 0." in backend and "vault id team" in backend
    assert "files         25" in plain.stdout
    info = json.loads(vault_cli(root, dsn, "status", "--json").stdout)
    assert info["backend"] == "postgres" and info["files"] == 25 and info["units"] > 100
    assert set(info["versions"]) == {"postgresql", "pgvector"}
    assert info["drift"] == {"new": 0, "changed": 0, "deleted": 0}

    # a line the files do not hold yet: the watcher puts it on the server
    watcher = subprocess.Popen(
        [sys.executable, "-m", "vault_memory", "--vault", str(root), "watch", "--no-dream"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(dsn),
    )
    try:
        wait_until(lambda: (root / ".vault" / "watch.lock").exists(), 60, "the watcher started")
        (root / "notes" / "zanzibar.md").write_text(f"# Zanzibar\n\n{UNIQUE}.\n", encoding="utf-8")
        wait_until(
            lambda: "notes/zanzibar.md" in server_paths(dsn), 60, "the watcher indexed the note"
        )
    finally:
        watcher.send_signal(signal.SIGTERM)
        _, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 0 and "Traceback" not in err, err

    found = vault_cli(root, dsn, "search", "Zanzibar-7 cutover", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "notes/zanzibar.md"
    context = vault_cli(root, dsn, "context", "--query", "Zanzibar-7 cutover")
    assert context.returncode == 0 and UNIQUE in context.stdout, context.stderr
    doctor = vault_cli(root, dsn, "doctor", "--verify")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "index equals the files (26 files" in doctor.stdout

    import anyio

    async def mcp_search() -> Any:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "vault_memory", "--vault", str(root), "mcp"],
            env=environment(dsn),
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=60) as session,
        ):
            await session.initialize()
            deadline = anyio.current_time() + 60
            while True:  # the first answers may say the index is being brought up to date
                result = await session.call_tool("search_memory", {"query": "Zanzibar-7"})
                answer = json.loads(result.content[0].text)
                if "index" not in answer or anyio.current_time() > deadline:
                    return answer
                await anyio.sleep(0.1)

    answer = anyio.run(mcp_search)
    assert "index" not in answer, answer  # the server's index is there: no "building" note
    assert answer["results"][0]["path"] == "notes/zanzibar.md"

    os.environ[DSN_VARIABLE] = dsn
    try:
        with Vault(root) as vault:
            assert vault.status()["backend"] == "postgres"
            assert vault.search("Zanzibar-7 cutover", fresh=False)[0].path == "notes/zanzibar.md"
    finally:
        del os.environ[DSN_VARIABLE]
    assert no_local_index(root), "a command opened an index of its own in .vault/"


def test_a_server_that_is_not_there_is_one_error_line(pg_server: Any, tmp_path: Path) -> None:
    import socket

    root = configured(checkout(tmp_path, "v"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dsn = f"postgresql://bob:s3cret@127.0.0.1:{port}/team"
    for command in (["index"], ["search", "billing"], ["doctor"]):
        done = vault_cli(root, dsn, *command)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"postgresql://bob:***@127.0.0.1:{port}/team" in errors[0]
        assert "vault postgres start" in errors[0] and "s3cret" not in done.stderr
    status = vault_cli(root, dsn, "status")
    assert status.returncode == 1 and "s3cret" not in status.stdout + status.stderr
    assert "server not reached" in status.stdout and "vault postgres start" in status.stderr
