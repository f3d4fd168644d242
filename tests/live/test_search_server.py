"""`[search] server = "auto"` (live/watch_client.py `start_server`), with real processes: a
search starts one background server for the vault, later searches are answered by it, and it
stops by itself after `server_idle_minutes` unused or when `.vault/` is deleted; never two per
vault; off by default."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vault_memory.live import watch_client as client

from ..support.waiting import wait_until

WORKTREE = Path(__file__).resolve().parents[2]


def _configure(root: Path, **search: object) -> None:
    toml = root / "vault.toml"
    lines = [f"{key} = {value!r}".replace("'", '"') for key, value in search.items()]
    text = toml.read_text(encoding="utf-8")
    for key in search:  # the template's own `server = "off"`
        text = re.sub(rf"(?m)^{key} = .*\n", "", text)
    if "[search]" in text:
        text = text.replace("[search]", "[search]\n" + "\n".join(lines), 1)
    else:
        text += "\n[search]\n" + "\n".join(lines) + "\n"
    toml.write_text(text, encoding="utf-8")


def _vault(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(WORKTREE), "VAULT_INDEX_MODEL": "none"}
    return subprocess.run(
        [sys.executable, "-m", "vault_memory", "--vault", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _servers(root: Path) -> list[int]:
    """Pids of the search servers running for `root`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().split(") ")[-1][:1]
        except OSError:
            continue
        if b"--server-idle" in argv and os.fsencode(root) in argv and state != "Z":
            found.append(int(entry.name))
    return found


def _running(root: Path) -> bool:
    return bool(client.watcher_status(root / ".vault")["running"])


def test_a_servers_reader_never_makes_the_cache_again(
    indexed_small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interleaving behind a flaky run: `.vault/` is deleted right after the server
    checked that its cache is there, before its reader prepares (or answers a search). The
    reader opens what is there and never makes the folder, the index or the unit table again;
    the server notices by its lock and stops."""
    import shutil

    from vault_memory import Vault
    from vault_memory.live import Watcher

    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    server = Watcher(Vault(indexed_small), dream=False, quiet_ms=100, idle_minutes=10)
    server.start()
    try:
        assert server.ready.wait(60) and server.warm.wait(60)
        server.queries.close_reader()  # the next use opens the index anew
        monkeypatch.setattr(server, "cache_gone", lambda: False)  # checked just before
        shutil.rmtree(indexed_small / ".vault")
        server.queries.table_stale = True
        server.queries.prepare_reader()
        with pytest.raises(Exception, match="unable to open"):
            server.queries.search(
                server.queries.reader, query="invoice renderer fonts", mode="keyword"
            )
        assert not (indexed_small / ".vault").exists()
        monkeypatch.undo()
        assert server.cache_gone()
    finally:
        server.stop()
        server.vault.close()
    assert not (indexed_small / ".vault").exists()


@pytest.fixture
def cleanup() -> list[Path]:
    roots: list[Path] = []
    yield roots
    for root in roots:
        if (root / ".vault").is_dir():
            _vault(root, "watch", "--stop")


def test_off_by_default(indexed_small: Path) -> None:
    done = _vault(indexed_small, "search", "invoice renderer fonts")
    assert done.returncode == 0 and done.stdout
    time.sleep(0.5)  # a server, had one been started, would hold the lock by now
    assert not _running(indexed_small) and not _servers(indexed_small)


def test_a_bad_setting_is_said_before_searching(indexed_small: Path) -> None:
    _configure(indexed_small, server="always")
    done = _vault(indexed_small, "search", "invoice renderer fonts")
    assert done.returncode == 1 and done.stdout == ""
    assert "search.server is 'always'; use \"off\"" in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_a_search_starts_a_server_that_answers_and_stops_when_idle(
    indexed_small: Path, cleanup: list[Path]
) -> None:
    cleanup.append(indexed_small)
    _configure(indexed_small, server="auto", server_idle_minutes=0.1)
    first = _vault(indexed_small, "search", "invoice renderer fonts", "--json")
    assert first.returncode == 0
    wait_until(
        lambda: bool((client.ping(indexed_small / ".vault") or {}).get("warm")),
        60,
        "the search server to be ready",
    )
    assert len(_servers(indexed_small)) == 1
    state = client.read_state(indexed_small / ".vault") or {}
    assert state.get("next_dream_at") is None  # it never dreams
    second = _vault(indexed_small, "search", "invoice renderer fonts", "--json")
    assert second.stdout == first.stdout  # the same hits, answered by the server...
    thin = subprocess.run(  # ...to the thin client: no click, no numpy in the new process
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "vault_memory",
            "--vault",
            str(indexed_small),
            "search",
            "invoice renderer fonts",
            "--json",
        ],
        env={**os.environ, "PYTHONPATH": str(WORKTREE), "VAULT_INDEX_MODEL": "none"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert thin.stdout == first.stdout
    imported = {line.split("|")[-1].strip() for line in thin.stderr.splitlines()}
    assert "vault_memory.cli.thin" in imported and not imported & {"click", "numpy"}
    assert len(_servers(indexed_small)) == 1  # that search started no other
    # about six seconds without a request: it stops by itself, and leaves nothing behind
    wait_until(lambda: not _running(indexed_small), 60, "the idle server to stop")
    wait_until(lambda: not _servers(indexed_small), 10, "its process to exit")
    assert not (indexed_small / ".vault" / client.SOCKET_FILE).exists()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_never_two_servers_and_gone_with_the_cache(
    indexed_small: Path, cleanup: list[Path]
) -> None:
    cleanup.append(indexed_small)
    _configure(indexed_small, server="auto", server_idle_minutes=10)
    env = {**os.environ, "PYTHONPATH": str(WORKTREE), "VAULT_INDEX_MODEL": "none"}
    cmd = [
        sys.executable,
        "-m",
        "vault_memory",
        "--vault",
        str(indexed_small),
        "search",
        "invoice renderer fonts",
    ]
    searches = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(4)
    ]
    for proc in searches:
        assert proc.wait(120) == 0
    wait_until(lambda: _running(indexed_small), 60, "a server to hold the lock")
    time.sleep(3)  # the others, if any were started, have found the lock taken by now
    assert len(_servers(indexed_small)) == 1
    # a stale socket file (a killed server's) does not stop a new one from serving
    pid = _servers(indexed_small)[0]
    os.kill(pid, 9)
    wait_until(lambda: not _servers(indexed_small), 10, "the killed server to go")
    assert (indexed_small / ".vault" / client.SOCKET_FILE).exists()
    assert _vault(indexed_small, "search", "invoice renderer fonts").returncode == 0
    wait_until(
        lambda: bool((client.ping(indexed_small / ".vault") or {}).get("ready")),
        60,
        "a new server to answer",
    )
    # .vault/ deleted: the server stops and does not make it again
    import shutil

    def cache_removed() -> bool:  # a server still writing may add a file as it goes
        shutil.rmtree(indexed_small / ".vault", ignore_errors=True)
        return not (indexed_small / ".vault").exists()

    wait_until(cache_removed, 30, "the cache to be removed")
    wait_until(lambda: not _servers(indexed_small), 30, "the server to stop with its cache")
    assert not (indexed_small / ".vault").exists()
