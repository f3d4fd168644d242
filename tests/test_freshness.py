"""The freshness check of a search (index/upkeep.py `SearchUpkeep.freshen`): with a watcher
running in another process, its state answers (it applies what is pending, then says so) and
no file is stat'ed; without one, every file is stat'ed, so an in-place edit is seen whatever
the directories' mtimes say."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.index.indexer import Index
from vault_memory.live import Watcher, watch_client


@pytest.fixture
def stats(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a search stat'ed the vault's files."""
    calls: list[int] = []
    stale_paths = Index.stale_paths

    def counted(self: Index, *args: Any, **kwargs: Any) -> list[str]:
        calls.append(1)
        return stale_paths(self, *args, **kwargs)

    monkeypatch.setattr(Index, "stale_paths", counted)
    return calls


@pytest.fixture
def watcher(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Watcher]:
    """A keyword-only watcher, seen by the searches of this test as another process's."""
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    (vault_dir / "notes").mkdir(exist_ok=True)
    (vault_dir / "notes" / "renderer.md").write_text(
        "# Renderer\n\nUses WeasyPrint 63.1.\n", encoding="utf-8"
    )
    running = Watcher(Vault(vault_dir), dream=False, quiet_ms=100)
    running.start()
    assert running.ready.wait(60) and running.warm.wait(60)
    real_pid = os.getpid()
    monkeypatch.setattr(watch_client.os, "getpid", lambda: real_pid + 1)
    yield running
    running.stop()
    running.vault.close()


def test_a_running_watcher_answers_the_freshness_check(
    watcher: Watcher, vault_dir: Path, stats: list[int]
) -> None:
    watcher.quiet = 30.0  # only the search's settle request can apply the edit in time
    watcher.max_delay = 60.0
    with (vault_dir / "notes" / "renderer.md").open("r+", encoding="utf-8") as fh:
        fh.seek(0, os.SEEK_END)  # in place: the folder's mtime does not change
        fh.write("- QUOKKA_77 needs fonts-noto-core.\n")
    deadline = time.monotonic() + 10
    while not watcher.changes.paths and time.monotonic() < deadline:
        time.sleep(0.01)
    with Vault(vault_dir) as here:
        hits = here.search("QUOKKA_77", mode="keyword")
    assert hits and "QUOKKA_77" in hits[0].text
    assert stats == []  # the watcher's state, not a stat of every file


def test_without_a_watcher_an_in_place_edit_is_seen(indexed_small: Path, stats: list[int]) -> None:
    folder = indexed_small / "notes"
    before = folder.stat().st_mtime_ns
    with Vault(indexed_small) as vault:
        vault.search("renderer", mode="keyword")
        path = folder / "renderer.md"
        with path.open("r+", encoding="utf-8") as fh:  # same size, same second: only the
            text = fh.read()  # file's own mtime_ns tells
            fh.seek(0)
            fh.write(text.replace("WeasyPrint 63.1", "WeasyPrint 99.9"))
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))
        hits = vault.search("WeasyPrint 99.9", mode="keyword")
    assert folder.stat().st_mtime_ns == before
    assert "99.9" in hits[0].text and len(stats) == 2


def _rewrite_in_the_same_tick(path: Path, old: str, new: str) -> None:
    """Rewrite `path` in place with the same size and give it back its mtime: what a rewrite
    within the file system's timestamp tick of the last index leaves (coarse clocks: FAT,
    HFS+, NFS, kernels that stamp files by the jiffy)."""
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_mtime_ns, path.stat().st_size) == (st.st_mtime_ns, st.st_size)


@pytest.mark.parametrize("by", ["search", "index"])
def test_a_racy_rewrite_is_compared_by_content(indexed_small: Path, by: str) -> None:
    """git's racy rule: a file whose mtime is not older than the index run that read it may
    change again without its stat changing, so it is compared by content until a later run
    has read it. The file's mtime is put ahead of the clock to stand for "the same tick"."""
    path = indexed_small / "notes" / "renderer.md"
    ahead = time.time_ns() + 3600 * 10**9
    os.utime(path, ns=(ahead, ahead))
    with Vault(indexed_small) as vault:
        vault.index()  # read (same bytes, new stat) in a run that began before its mtime
        assert vault._index.racy_paths() == {"notes/renderer.md"}
        assert vault._index.stale_paths() == ["notes/renderer.md"]
        assert vault.index().modified == 0  # the same content: unchanged, still racy
        _rewrite_in_the_same_tick(path, "WeasyPrint 63.1", "WeasyPrint 99.9")
        if by == "search":
            hits = vault.search("WeasyPrint 99.9", mode="keyword")
            assert hits and "99.9" in hits[0].text
        else:
            assert vault.index().modified == 1
        assert vault.search("63.1", mode="keyword", fresh=False) == []


def test_a_file_older_than_the_run_is_not_racy(indexed_small: Path) -> None:
    path = indexed_small / "notes" / "renderer.md"
    with Vault(indexed_small) as vault:
        ahead = time.time_ns() + 3600 * 10**9
        os.utime(path, ns=(ahead, ahead))
        vault.index()
        assert vault._index.racy_paths() == {"notes/renderer.md"}
        past = time.time_ns() - 3600 * 10**9
        os.utime(path, ns=(past, past))
        vault.index()  # read again, now older than the run: no longer racy
        assert vault._index.racy_paths() == set()
        assert vault._index.stale_paths() == []


def test_status_counts_a_racy_rewrite_as_changed(indexed_small: Path) -> None:
    """`vault status` reads a racy file's content (its stat cannot tell): a same-size rewrite
    within the tick is drift; the same bytes are not."""
    path = indexed_small / "notes" / "renderer.md"
    ahead = time.time_ns() + 3600 * 10**9
    os.utime(path, ns=(ahead, ahead))
    with Vault(indexed_small) as vault:
        vault.index()
        assert vault._index.racy_paths() == {"notes/renderer.md"}
        assert vault.status()["drift"]["changed"] == 0  # racy, but the same bytes
        _rewrite_in_the_same_tick(path, "WeasyPrint 63.1", "WeasyPrint 99.9")
        assert vault.status()["drift"]["changed"] == 1
