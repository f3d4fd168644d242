"""`vault postgres start|stop|status`: the embedded PostgreSQL with pgvector in a folder of its
own, its DSN on stdout, a vault indexed against it, stopped and started again with its data.
Slow: runs the pgserver wheel's PostgreSQL."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from vault_memory import Vault
from vault_memory.cli import cli
from vault_memory.index import pglocal

from .test_pg_store import checkout

pytestmark = pytest.mark.slow


@pytest.fixture
def folder() -> Iterator[Path]:
    if pglocal.binaries() is None:
        pytest.skip("the pgserver wheel (PostgreSQL + pgvector binaries) is not installed")
    # in /tmp itself: as root the server's own user must reach it, and a socket path is short
    place = Path(tempfile.mkdtemp(prefix="vault-pg-cli-", dir="/tmp")) / "server"
    place.parent.chmod(0o755)
    try:
        yield place
    finally:
        pglocal.LocalServer(place).stop()
        shutil.rmtree(place.parent, ignore_errors=True)


def test_start_status_stop_and_start_again(folder: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    before = runner.invoke(cli, ["postgres", "status", "--dir", str(folder)])
    assert before.exit_code == 3 and "not set up" in before.output

    started = runner.invoke(cli, ["postgres", "start", "--dir", str(folder)])
    assert started.exit_code == 0, started.output + started.stderr
    dsn = started.stdout.strip()
    assert dsn.startswith("postgresql://postgres@127.0.0.1:") and "\n" not in dsn
    assert 'backend = "postgres"' in started.stderr

    again = runner.invoke(cli, ["postgres", "start", "--dir", str(folder)])
    assert again.exit_code == 0 and again.stdout.strip() == dsn
    assert "already running" in again.stderr
    info = json.loads(
        runner.invoke(cli, ["postgres", "status", "--dir", str(folder), "--json"]).stdout
    )
    assert info["running"] and info["dsn"] == dsn and info["pid"] > 0

    root = checkout(tmp_path, "v")
    settings = {"index.backend": "postgres", "index.dsn": dsn, "index.model": "none"}
    with Vault(root, settings) as vault:
        assert vault.index().files == 25

    stopped = runner.invoke(cli, ["postgres", "stop", "--dir", str(folder)])
    assert stopped.exit_code == 0 and "stopped" in stopped.output
    down = runner.invoke(cli, ["postgres", "status", "--dir", str(folder)])
    assert down.exit_code == 3 and "not running" in down.output
    assert "no server runs" in runner.invoke(cli, ["postgres", "stop", "--dir", str(folder)]).output

    # started again: the same port, so the same DSN, and the index is still there
    assert runner.invoke(cli, ["postgres", "start", "--dir", str(folder)]).stdout.strip() == dsn
    with Vault(root, settings) as vault:
        report = vault.index()
        assert report.files == 25 and vault.status()["files"] == 25
