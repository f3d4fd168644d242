"""`Vault.updates`, the debounced, crash-safe update queue (capture/queue.py): submissions are
spooled and flushed in the background, a burst is one flush (and one LLM call, counted on the
real test server), dead processes' spools are drained by the next queue or the watcher, and
errors go to the log and `vault status`, never to the caller."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.capture import queue as queue_module
from vault_memory.capture.queue import (
    QueueClosedError,
    merge_versions,
    queue_status,
)
from vault_memory.errors import ConfigError

from ..support.llm_server import ScriptedLLMServer
from ..support.waiting import wait_until

DAY = "2026-11-22"


@pytest.fixture(autouse=True)
def _fixed_day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_NOW", f"{DAY}T10:00")


def configure(root: Path, queue: str = "debounce_seconds = 0.2\n", extra: str = "") -> Path:
    (root / "vault.toml").write_text(f"[queue]\n{queue}{extra}", encoding="utf-8")
    return root


def log_text(root: Path) -> str:
    path = root / "memory" / f"{DAY}.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def entries(root: Path) -> list[str]:
    return [line for line in log_text(root).splitlines() if line.startswith("- ")]


def fact(i: int) -> dict[str, str]:
    return {"role": "user", "content": f"We decided that service number {i} runs on Postgres."}


def queue_files(root: Path) -> list[str]:
    folder = root / ".vault" / "queue"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.fixture
def vault(vault_dir: Path) -> Iterator[Vault]:
    configure(vault_dir)
    with Vault(vault_dir) as opened:
        yield opened


# -- submitting and debouncing ----------------------------------------------------------------


def test_submit_spools_and_the_flush_follows_the_quiet_period(vault: Vault) -> None:
    talk = [{"role": "system", "content": "You help Maya."}, fact(1)]
    vault.updates.submit(talk, session="s1")
    spooled = [p for p in (vault.cache_dir / "queue").glob("*.jsonl")]
    assert len(spooled) == 1
    record = json.loads(spooled[0].read_text().splitlines()[0])
    assert record["messages"] == talk and record["session"] == "s1" and record["day"] == DAY
    assert entries(vault.root) == []  # not yet: the session is not quiet yet
    wait_until(lambda: vault.updates.status().pending == 0)
    assert entries(vault.root) == [
        "- User: We decided that service number 1 runs on Postgres. #decision"
    ]
    assert "## 10:00 · flush · session s1" in log_text(vault.root)


def test_a_growing_conversation_is_spooled_as_what_it_adds(vault: Vault) -> None:
    talk = [fact(0)]
    vault.updates.submit(talk, session="g")
    for i in range(1, 4):
        talk.append(fact(i))
        vault.updates.submit(talk, session="g")
    talk[0] = fact(99)  # a changed message: the whole conversation again
    vault.updates.submit(talk, session="g")
    lines = [
        json.loads(x)
        for p in (vault.cache_dir / "queue").glob("*.jsonl")
        for x in p.read_text().splitlines()
    ]
    kinds = ["add" if "add" in r else "full" for r in lines if "seq" in r]
    assert kinds == ["full", "add", "add", "add", "full"]
    assert [len(r["add"]) for r in lines if "add" in r] == [1, 1, 1]
    assert vault.updates.flush_now(timeout=10)
    assert sorted(entries(vault.root)) == sorted(
        f"- User: We decided that service number {i} runs on Postgres. #decision"
        for i in (0, 1, 2, 3, 99)
    )


@pytest.mark.slow
def test_a_burst_costs_one_llm_extraction(vault_dir: Path, llm_server: ScriptedLLMServer) -> None:
    """1,000 submissions of a growing conversation within the quiet period: one flush, one
    request to the model (counted on the real server), every entry written once."""
    llm_server.reply_json(
        {
            "entries": [
                {"text": f"Service number {i} runs on Postgres.", "category": "decision"}
                for i in range(0, 1000, 100)
            ]
        }
    )
    configure(
        vault_dir,
        "debounce_seconds = 1\nmax_delay_seconds = 120\n",
        f'[llm]\nbase_url = "{llm_server.base_url}"\nmodel = "m"\n',
    )
    with Vault(vault_dir) as vault:
        talk: list[dict[str, str]] = []
        for i in range(1000):
            talk.append(fact(i))
            vault.updates.submit(talk, session="burst")
        assert llm_server.requests == []
        wait_until(lambda: vault.updates.status().pending == 0, timeout=30)
        stats = vault.updates.status()
        assert (stats.submitted, stats.flushes, stats.failed) == (1000, 1, 0)
        assert len(llm_server.requests) == 1
        sent = llm_server.requests[0]["messages"][1]["content"]
        assert "service number 999" in sent and "service number 0 " in sent
    assert len(entries(vault_dir)) == 10
    assert queue_files(vault_dir) == []  # drained and closed: nothing left


def test_sessions_flush_apart_and_a_session_without_id_is_not_mixed(vault: Vault) -> None:
    one = [{"role": "user", "content": "I prefer tea to coffee in the mornings."}]
    two = [{"role": "user", "content": "We decided to ship the billing fix on Friday."}]
    vault.updates.submit(one)
    vault.updates.submit(two)
    vault.updates.submit(one + [fact(7)])  # the first conversation, grown
    assert vault.updates.flush_now(timeout=10)
    assert vault.updates.status().flushes == 2
    text = log_text(vault.root)
    assert text.count("· flush · session") == 2
    blocks = text.split("## ")[1:]
    by_session = {b.split("\n")[0]: b for b in blocks}
    first = next(b for b in by_session.values() if "tea" in b)
    assert "service number 7" in first and "Friday" not in first


def test_a_sliding_window_loses_nothing(vault: Vault) -> None:
    talk = [fact(i) for i in range(12)]
    for start in range(0, 9, 2):  # windows of four messages, overlapping
        vault.updates.submit(talk[start : start + 4], session="w")
    assert vault.updates.flush_now(timeout=10)
    assert len(entries(vault.root)) == 12
    assert vault.updates.status().flushes == 1


def test_merge_versions() -> None:
    a, b, c, d = ({"n": i} for i in range(4))
    assert merge_versions([], [a]) == [[a]]
    assert merge_versions([[a]], [a, b]) == [[a, b]]  # grown: the newer alone
    assert merge_versions([[a, b, c]], [b, c, d]) == [[a, b, c, d]]  # a window moved on
    assert merge_versions([[a, b]], [c]) == [[a, b, c]]  # no overlap: both, in order
    assert merge_versions([[a]], [a]) == [[a]]
    assert merge_versions(["User: hi"], "User: hi\nAssistant: hello") == [
        "User: hi\nAssistant: hello"
    ]
    assert merge_versions(["text one"], [a]) == ["text one", [a]]


def test_flush_now_close_and_vault_close(vault_dir: Path) -> None:
    configure(vault_dir, "debounce_seconds = 60\n")
    vault = Vault(vault_dir)
    vault.updates.submit([fact(1)], session="a")
    assert vault.updates.flush_now(timeout=10) and len(entries(vault_dir)) == 1
    vault.updates.submit([fact(1), fact(2)], session="a")
    assert vault.updates.close(timeout=10)
    assert len(entries(vault_dir)) == 2
    with pytest.raises(QueueClosedError):
        vault.updates.submit([fact(3)], session="a")
    vault.close()
    vault.updates.submit([fact(3)], session="b")  # a closed queue is replaced by a new one
    vault.close()  # closing the vault flushes what waits
    assert len(entries(vault_dir)) == 3
    assert queue_files(vault_dir) == []


def test_async_callers(vault: Vault) -> None:
    async def agent() -> None:
        for i in range(5):
            await vault.updates.asubmit([fact(j) for j in range(i + 1)], session="async")

    asyncio.run(agent())
    assert vault.updates.flush_now(timeout=10)
    assert len(entries(vault.root)) == 5


def test_threads_submit_at_once(vault: Vault) -> None:
    def agent(n: int) -> None:
        talk: list[dict[str, str]] = []
        for i in range(50):
            talk.append(fact(n * 100 + i))
            vault.updates.submit(list(talk), session=f"t{n}")

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert vault.updates.flush_now(timeout=30)
    assert len(entries(vault.root)) == 200
    assert vault.updates.status().submitted == 200


# -- errors never reach the caller -------------------------------------------------------------


def test_a_conversation_that_cannot_be_flushed_is_recorded(
    vault: Vault, run_cli: Any, vault_warnings: Any
) -> None:
    vault.updates.submit("   \n  ", session="empty-text")
    vault.updates.submit([fact(1)], session="bad id with spaces")
    vault.updates.submit([fact(2)], session="fine")
    assert vault.updates.flush_now(timeout=10)
    stats = vault.updates.status()
    assert (stats.failed, stats.flushes) == (2, 1)
    assert entries(vault.root) == [
        "- User: We decided that service number 2 runs on Postgres. #decision"
    ]
    failed = [
        json.loads(x) for x in (vault.cache_dir / "queue" / "failed.jsonl").read_text().splitlines()
    ]
    assert [f["session"] for f in failed] == ["empty-text", "bad id with spaces"]
    assert failed[1]["messages"] == [[fact(1)]]  # kept, not lost
    assert any("could not be flushed" in w for w in vault_warnings())
    info = vault.status()["queue"]
    assert (info["failed"], info["pending"]) == (2, 0)
    result = run_cli("--vault", str(vault.root), "status")
    assert "2 updates failed: " in result.stdout


def test_a_passing_failure_is_retried(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_memory.files import fsutil

    real = fsutil.append_entry
    calls: list[int] = []

    def full_disk_once(*args: Any, **kwargs: Any) -> int:
        if Path(args[0]).parent.name != "memory":  # the transcript (sessions/) appends too
            return real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(fsutil, "append_entry", full_disk_once)
    monkeypatch.setattr(queue_module, "RETRY_FIRST", 0.05)
    vault.updates.submit([fact(1)], session="retry")
    wait_until(lambda: vault.updates.status().pending == 0)
    assert len(calls) == 2 and len(entries(vault.root)) == 1
    stats = vault.updates.status()
    assert stats.failed == 0 and "No space left" in (stats.last_error or "")


def test_scopes(vault_dir: Path) -> None:
    """A scoped submission lands in the scope's own daily log; a bad scope name is refused in
    the caller's call, before anything is spooled."""
    from vault_memory.errors import ScopeNameError

    configure(vault_dir)
    with Vault(vault_dir) as vault:
        with pytest.raises(ScopeNameError):
            vault.updates.submit([fact(1)], session="s", scope="org/../acme")
        vault.updates.submit([fact(1)], session="s", scope="org/acme")
        vault.updates.submit([fact(2)], session="s", scope="")  # the root
        assert vault.updates.flush_now(timeout=10)
    assert len(entries(vault_dir / "scopes" / "org" / "acme")) == 1
    assert entries(vault_dir) == [
        "- User: We decided that service number 2 runs on Postgres. #decision"
    ]


def test_bad_settings(vault_dir: Path) -> None:
    configure(vault_dir, "debounce_seconds = -1\n")
    with Vault(vault_dir) as vault, pytest.raises(ConfigError, match="debounce_seconds"):
        vault.updates  # noqa: B018


# -- what dead processes leave ------------------------------------------------------------------


def spool_of_a_dead_process(root: Path, owner: str, lines: list[Any], torn: bool = False) -> None:
    folder = root / ".vault" / "queue"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{owner}.lock").write_text("")  # nobody holds it: the process is gone
    data = "".join(json.dumps(line) + "\n" for line in lines)
    if torn:
        data += '{"seq": 99, "session": "torn", "messages": [{"role": "us'
    (folder / f"{owner}.0.jsonl").write_text(data)


def test_the_next_queue_drains_what_a_dead_process_left(vault_dir: Path) -> None:
    configure(vault_dir)
    base = {"day": DAY, "scope": None, "t": 0}
    spool_of_a_dead_process(
        vault_dir,
        "4242-dead",
        [
            {**base, "seq": 1, "session": "a", "messages": [fact(1)]},
            {**base, "seq": 2, "session": "a", "base": 1, "add": [fact(2)]},
            {**base, "seq": 3, "session": "b", "messages": [fact(30)]},
            {"done": [3]},  # flushed before the process died (not in the log: proves it is skipped)
            {**base, "seq": 4, "session": "a", "base": 2, "add": [fact(3)]},
        ],
        torn=True,
    )
    assert queue_status(vault_dir / ".vault")["abandoned"] == 1
    with Vault(vault_dir) as vault:
        vault.updates  # noqa: B018 - its worker looks for dead processes' spools at once
        wait_until(lambda: not (vault.cache_dir / "queue" / "4242-dead.0.jsonl").exists())
        assert vault.updates.status().reclaimed == 3
    assert sorted(entries(vault_dir)) == sorted(
        f"- User: We decided that service number {i} runs on Postgres. #decision" for i in (1, 2, 3)
    )
    assert queue_files(vault_dir) == []


def test_a_live_process_spool_is_left_alone(vault_dir: Path) -> None:
    configure(vault_dir)
    spool_of_a_dead_process(
        vault_dir,
        "4243-alive",
        [{"day": DAY, "scope": None, "t": 0, "seq": 1, "session": "a", "messages": [fact(1)]}],
    )
    fd = os.open(vault_dir / ".vault" / "queue" / "4243-alive.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as its living owner does
    try:
        with Vault(vault_dir) as vault:
            vault.updates.submit([fact(2)], session="mine")
            assert vault.updates.flush_now(timeout=10)
            vault.updates.reclaim()
            assert vault.updates.flush_now(timeout=10)
            assert queue_status(vault.cache_dir)["processes"] == 2
        assert len(entries(vault_dir)) == 1
        assert "4243-alive.0.jsonl" in queue_files(vault_dir)
    finally:
        os.close(fd)
    with Vault(vault_dir) as vault:  # its owner is gone now
        vault.updates  # noqa: B018
        wait_until(lambda: "4243-alive.0.jsonl" not in queue_files(vault_dir))
    assert len(entries(vault_dir)) == 2


def test_the_watcher_drains_abandoned_queues(vault_dir: Path) -> None:
    from vault_memory.live import Watcher

    configure(vault_dir)
    spool_of_a_dead_process(
        vault_dir,
        "4244-dead",
        [{"day": DAY, "scope": None, "t": 0, "seq": 1, "session": "w", "messages": [fact(5)]}],
    )
    with Vault(vault_dir) as vault, Watcher(vault, dream=False, serve=False):
        wait_until(lambda: len(entries(vault_dir)) == 1)
        wait_until(lambda: "4244-dead.0.jsonl" not in queue_files(vault_dir))


def test_the_spool_is_removed_once_flushed_and_kept_small(vault_dir: Path) -> None:
    configure(vault_dir, "debounce_seconds = 0\nmax_spool_mb = 0.02\n")
    with Vault(vault_dir) as vault:
        talk: list[dict[str, str]] = []
        for i in range(200):
            talk.append(fact(i))
            vault.updates.submit(list(talk) if i % 7 == 0 else talk, session="big")
            if i % 50 == 49:
                assert vault.updates.flush_now(timeout=10)
        sizes = [p.stat().st_size for p in (vault.cache_dir / "queue").glob("*.jsonl")]
        assert sum(sizes) < 60_000
    assert len(entries(vault_dir)) == 200
