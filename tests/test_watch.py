"""`vault watch`: real watchdog events from real file operations, real SQLite and Whoosh.

After every scenario the watched index must equal a fresh `vault index --rebuild` of a copy of
the same files (paths, file hashes, and every unit's lines, heading, text and hash), and
Whoosh must hold exactly the units SQLite holds. Nothing sleeps to wait for an event: tests
poll the index state until it matches, with a timeout.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import vault_memory
from vault_memory import Vault, VaultError
from vault_memory.index.fulltext import FullText
from vault_memory.live import pidlock as pidlock_module, watch_client as client
from vault_memory.live.watch import Watcher, WatcherRunningError

WORKTREE = Path(vault_memory.__file__).resolve().parents[1]

Units = dict[str, tuple[str, list[tuple[Any, ...]]]]


# -- helpers ---------------------------------------------------------------------------------


def index_units(root: Path) -> Units:
    """path -> (file sha256, [(start, end, heading, text, unit sha256), ...]) from SQLite;
    {} while the keyword index is still catching up with SQLite."""
    db = root / ".vault" / "index.sqlite"
    if not db.exists():
        return {}
    conn = sqlite3.connect(db.absolute().as_uri() + "?mode=ro", uri=True, timeout=10)
    try:
        conn.execute("BEGIN")  # one snapshot for the three queries
        dirty = conn.execute("SELECT value FROM meta WHERE key = 'fulltext_dirty'").fetchone()
        if dirty and dirty[0] != "0":
            return {}
        units: Units = {}
        for path, sha in conn.execute("SELECT path, sha256 FROM files"):
            units[path] = (sha, [])
        for row in conn.execute(
            "SELECT f.path, c.start_line, c.end_line, c.heading, c.text, c.sha256 "
            "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.ord"
        ):
            units[row[0]][1].append(tuple(row[1:]))
        return units
    except sqlite3.OperationalError:  # the very first transaction is not committed yet
        return {}
    finally:
        conn.close()


def rebuilt_units(root: Path, scratch: Path) -> Units:
    """What `vault index --rebuild` makes of a copy of the vault's files."""
    copy = scratch / f"rebuild-{time.monotonic_ns()}"
    shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".vault"))
    with Vault(copy) as vault:
        vault.index(rebuild=True)
    try:
        return index_units(copy)
    finally:
        shutil.rmtree(copy)


def whoosh_matches_sqlite(root: Path) -> None:
    conn = sqlite3.connect(
        (root / ".vault" / "index.sqlite").absolute().as_uri() + "?mode=ro", uri=True
    )
    try:
        ids = {row[0] for row in conn.execute("SELECT id FROM chunks")}
    finally:
        conn.close()
    fulltext = FullText(root / ".vault" / "whoosh")
    try:
        with fulltext.open().searcher() as searcher:
            docs = {fields["id"] for fields in searcher.all_stored_fields()}
    finally:
        fulltext.close()
    assert docs == ids


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def assert_converges(root: Path, scratch: Path, timeout: float = 15.0) -> Units:
    expected = rebuilt_units(root, scratch)
    last: list[Units] = []

    def same() -> bool:
        last[:] = [index_units(root)]
        return last[0] == expected

    try:
        wait_until(same, timeout, "the index to equal a rebuild")
    except AssertionError:
        current = last[0] if last else {}
        diff = sorted(set(current) ^ set(expected)) or sorted(
            p for p in expected if current.get(p) != expected[p]
        )
        raise AssertionError(f"index differs from a rebuild at {diff[:10]}") from None
    whoosh_matches_sqlite(root)
    return expected


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# -- fixtures --------------------------------------------------------------------------------


@pytest.fixture
def keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model: these tests are about files and events, not vectors."""
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")


@pytest.fixture
def start_watcher() -> Iterator[Callable[..., Watcher]]:
    started: list[Watcher] = []

    def start(root: Path, **options: Any) -> Watcher:
        options.setdefault("dream", False)
        options.setdefault("quiet_ms", 100)
        watcher = Watcher(Vault(root), **options)
        watcher.start()
        started.append(watcher)
        assert watcher.ready.wait(60), "the first reconcile did not finish"
        if watcher.serve:  # its first search opens the index: let it finish before a test
            assert watcher.warm.wait(60), "the warm-up search did not finish"
        return watcher

    yield start
    for watcher in started:
        watcher.stop()
        watcher.vault.close()


@pytest.fixture
def watched(
    vault_dir: Path, keyword_only: None, start_watcher: Callable[..., Watcher]
) -> tuple[Path, Watcher]:
    """An initialised vault with a few notes and a running watcher (keyword-only)."""
    write(
        vault_dir / "memory" / "2026-11-20.md",
        "# 2026-11-20\n\n## 09:15 · note\n- Standup moved to 09:45.\n",
    )
    write(vault_dir / "notes" / "renderer.md", "# Renderer\n\nUses WeasyPrint 63.1.\n")
    write(vault_dir / "notes" / "deep" / "er" / "a.md", "# A\n\n- alpha\n")
    write(vault_dir / "notes" / "deep" / "er" / "b.md", "# B\n\n- beta\n")
    watcher = start_watcher(vault_dir)
    assert set(index_units(vault_dir)) == {
        "MEMORY.md",
        "memory/2026-11-20.md",
        "notes/renderer.md",
        "notes/deep/er/a.md",
        "notes/deep/er/b.md",
    }
    return vault_dir, watcher


# -- event kinds -----------------------------------------------------------------------------


def test_create_and_modify(watched: tuple[Path, Watcher], tmp_path: Path) -> None:
    root, _ = watched
    write(root / "notes" / "new.md", "# New\n\n- ERR_LEDGER_409 from retried refunds\n")
    write(root / "memory" / "2026-11-21.md", "# 2026-11-21\n\n## 10:00 · note\n- hello\n")
    with (root / "memory" / "2026-11-20.md").open("a", encoding="utf-8") as fh:
        fh.write("- Appended by hand.\n")
    units = assert_converges(root, tmp_path)
    assert any("Appended by hand" in u[3] for u in units["memory/2026-11-20.md"][1])

    (root / "notes" / "renderer.md").write_text("# Renderer\n\nNow uses Typst.\n")
    assert_converges(root, tmp_path)


def test_delete(watched: tuple[Path, Watcher], tmp_path: Path) -> None:
    root, _ = watched
    (root / "notes" / "renderer.md").unlink()
    units = assert_converges(root, tmp_path)
    assert "notes/renderer.md" not in units


def test_rename_and_move(watched: tuple[Path, Watcher], tmp_path: Path) -> None:
    root, _ = watched
    os.rename(root / "notes" / "renderer.md", root / "notes" / "deep" / "renderer-2.md")
    units = assert_converges(root, tmp_path)
    assert "notes/deep/renderer-2.md" in units and "notes/renderer.md" not in units
    os.rename(root / "notes" / "deep" / "renderer-2.md", root / "notes" / "draft.txt")
    assert "notes/deep/renderer-2.md" not in assert_converges(root, tmp_path)


def test_atomic_save_is_a_move_onto_the_target(
    watched: tuple[Path, Watcher], tmp_path: Path
) -> None:
    root, _ = watched
    target = root / "notes" / "renderer.md"
    tmp = root / "notes" / ".renderer.md.tmp4711"
    tmp.write_text("# Renderer\n\nSaved atomically: WeasyPrint 64.\n")
    os.replace(tmp, target)
    units = assert_converges(root, tmp_path)
    assert "WeasyPrint 64" in units["notes/renderer.md"][1][-1][3]


def test_vim_style_save(watched: tuple[Path, Watcher], tmp_path: Path) -> None:
    """vim: probe file `4913`, swap file, rename the original to a backup, write anew,
    delete the backup."""
    root, watcher = watched
    folder = root / "notes"
    (folder / "4913").write_text("")
    (folder / "4913").unlink()
    (folder / ".renderer.md.swp").write_bytes(b"b0VIM 9.0\x00")
    os.rename(folder / "renderer.md", folder / "renderer.md~")
    (folder / "renderer.md").write_text("# Renderer\n\nEdited in vim.\n")
    (folder / "renderer.md~").unlink()
    (folder / ".renderer.md.swp").unlink()
    units = assert_converges(root, tmp_path)
    assert units["notes/renderer.md"][1][-1][3] == "Edited in vim."
    wait_until(lambda: watcher.report.paths >= 1, 10, "the batch to be counted")


def test_directories_created_removed_and_renamed(
    watched: tuple[Path, Watcher], tmp_path: Path
) -> None:
    root, _ = watched
    # created with files inside at once (races the watch on the new folder)
    for i in range(5):
        write(root / "projects" / "a" / "b" / f"n{i}.md", f"# N{i}\n\n- note {i}\n")
    # moved in from outside the vault: only the folder's own event arrives
    outside = tmp_path / "outside"
    write(outside / "imported" / "x.md", "# X\n\n- imported note\n")
    write(outside / "imported" / "sub" / "y.md", "# Y\n\n- imported too\n")
    os.rename(outside / "imported", root / "imported")
    units = assert_converges(root, tmp_path)
    assert {"projects/a/b/n4.md", "imported/sub/y.md"} <= set(units)

    os.rename(root / "notes" / "deep", root / "archive")  # renamed and moved up
    units = assert_converges(root, tmp_path)
    assert "archive/er/a.md" in units and "notes/deep/er/a.md" not in units

    shutil.rmtree(root / "projects")
    os.rename(root / "imported", tmp_path / "moved-out")  # leaves the vault in one event
    os.rename(root / "archive", root / ".trash")  # Obsidian's delete
    units = assert_converges(root, tmp_path)
    assert not [p for p in units if p.startswith(("projects/", "imported/", "archive/"))]


def test_vault_reached_through_a_symlink(
    vault_dir: Path, keyword_only: None, tmp_path: Path, start_watcher: Callable[..., Watcher]
) -> None:
    link = tmp_path / "link-to-vault"
    link.symlink_to(vault_dir, target_is_directory=True)
    start_watcher(link)
    write(vault_dir / "notes" / "via-link.md", "# Via link\n\n- seen through the symlink\n")
    assert "notes/via-link.md" in assert_converges(vault_dir, tmp_path)


def test_ignored_paths_are_not_even_recorded(watched: tuple[Path, Watcher], tmp_path: Path) -> None:
    root, watcher = watched
    before = watcher.report.paths
    write(root / ".git" / "notes.md", "# git internals\n")
    write(root / ".obsidian" / "workspace.md", "# layout\n")
    write(root / ".trash" / "old.md", "# trashed\n")
    write(root / "notes" / ".hidden.md", "# dotfile\n")
    write(root / "notes" / "draft.md.tmp", "temp\n")
    write(root / "notes" / ".#renderer.md", "emacs lock\n")
    write(root / "notes" / "renderer.md~", "backup\n")
    write(root / "notes" / "real.md", "# Real\n\n- the only indexable file\n")
    units = assert_converges(root, tmp_path)
    assert [p for p in units if p.startswith(".") or "/." in p or p.endswith("~")] == []
    # The batch is counted once its run returns, a moment after the index it wrote is read
    # above as equal to a rebuild: wait for the count, then check it is the one real file.
    wait_until(lambda: watcher.report.paths - before >= 1, 10, "the batch to be counted")
    assert watcher.report.paths - before == 1


@pytest.mark.parametrize(
    "count", [pytest.param(300, marks=pytest.mark.slow), pytest.param(2000, marks=pytest.mark.slow)]
)
def test_burst_of_files(watched: tuple[Path, Watcher], tmp_path: Path, count: int) -> None:
    root, watcher = watched
    started = time.monotonic()
    for i in range(count):
        write(
            root / "burst" / f"d{i % 20:02d}" / f"note-{i:04d}.md",
            f"# Note {i}\n\n- item {i} about topic {i % 37}\n",
        )
    units = assert_converges(root, tmp_path, timeout=120)
    elapsed = time.monotonic() - started
    assert sum(p.startswith("burst/") for p in units) == count
    assert watcher.report.errors == 0
    print(f"{count} files written and indexed in {elapsed:.1f} s")


@pytest.mark.slow
def test_a_burst_is_written_to_the_keyword_index_in_few_commits(
    watched: tuple[Path, Watcher], tmp_path: Path
) -> None:
    """3,000 files at once (issue 23): the index equals a rebuild, and Whoosh was committed
    once per index run the watcher made, not once per 200 files (bench/watch.py: a
    15,000-file checkout)."""
    from whoosh import index as whoosh_index

    root, _ = watched
    folder = str(root / ".vault" / "whoosh")
    before = whoosh_index.open_dir(folder, indexname="units").latest_generation()
    for i in range(3000):
        write(
            root / "burst" / f"d{i % 30:02d}" / f"note-{i:04d}.md",
            f"# Note {i}\n\n- item {i} about topic {i % 37}\n- and {i % 11}\n",
        )
    units = assert_converges(root, tmp_path, timeout=300)
    assert sum(p.startswith("burst/") for p in units) == 3000
    commits = whoosh_index.open_dir(folder, indexname="units").latest_generation() - before
    assert 0 < commits < 15  # one a run (a few runs: the burst outlasts the quiet period)


@pytest.mark.slow
def test_git_checkout_between_branches(
    vault_dir: Path, keyword_only: None, tmp_path: Path, start_watcher: Callable[..., Watcher]
) -> None:
    """A real `git checkout`: a hundred files each deleted, created and rewritten at once
    (bench/watch.py checks out 15,000)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(vault_dir), *args], check=True, env=env, capture_output=True
        )

    git("init", "-q", "-b", "main")
    for i in range(100):
        write(vault_dir / "kb" / f"page-{i:03d}.md", f"# Page {i}\n\n- main branch text {i}\n")
    git("add", "-A")
    git("commit", "-q", "-m", "main")
    git("checkout", "-q", "-b", "other")
    shutil.rmtree(vault_dir / "kb")
    for i in range(50, 150):
        write(vault_dir / "kb" / f"page-{i:03d}.md", f"# Page {i}\n\n- other branch text {i}\n")
    git("add", "-A")
    git("commit", "-q", "-m", "other")
    git("checkout", "-q", "main")
    start_watcher(vault_dir)
    git("checkout", "-q", "other")
    units = assert_converges(vault_dir, tmp_path, timeout=60)
    assert "kb/page-149.md" in units and "kb/page-000.md" not in units
    git("checkout", "-q", "main")
    units = assert_converges(vault_dir, tmp_path, timeout=60)
    assert "kb/page-000.md" in units and "kb/page-149.md" not in units


# -- lost events: overflow and the periodic reconcile ---------------------------------------


@pytest.mark.slow
def test_inotify_queue_overflow_triggers_a_reconcile(
    watched: tuple[Path, Watcher], tmp_path: Path
) -> None:
    """A real overflow: the test holds watchdog's reader while more events than the kernel
    queues (/proc/sys/fs/inotify/max_queued_events) happen, then writes a file whose events
    are lost. Only the overflow's reconcile can find it."""
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux only")
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 200_000:
        pytest.skip(f"max_queued_events is {limit}: too many events to force an overflow")
    root, watcher = watched
    watcher.reconcile_every = None  # only the overflow may reconcile
    (emitter,) = watcher.intake.observer.emitters
    if not hasattr(emitter._inotify, "on_queue_overflow"):  # watch.py warns of it
        pytest.skip("this watchdog version does not report inotify queue overflows")
    # The lock the thread reading the kernel's queue takes before each read: watchdog 7's
    # reader (`InotifyFD`) queues what it reads without bound for another thread to
    # dispatch, so only holding its own lock stops it; before 7, the `Inotify` the
    # emitter's buffer reads from.
    reader = getattr(emitter, "_inotify_fd", None) or emitter._inotify._inotify
    a, b = root / "notes" / "renderer.md", root / "memory" / "2026-11-20.md"
    with reader._lock:  # the reader thread blocks on its next read: the kernel queue fills
        os.utime(a)  # the event the reader takes and blocks on
        for i in range(2 * limit + 4096):  # the reader may have taken a read (2048) too
            os.utime(a if i % 2 else b, ns=(i, i))  # alternating: not coalesced by the kernel
        write(root / "notes" / "lost.md", "# Lost\n\n- written while events were dropped\n")
    units = assert_converges(root, tmp_path, timeout=60)
    assert "notes/lost.md" in units
    assert watcher.report.overflows >= 1


def test_overflow_hook_and_periodic_reconcile_find_unseen_changes(
    vault_dir: Path,
    keyword_only: None,
    tmp_path: Path,
    start_watcher: Callable[..., Watcher],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watcher = start_watcher(vault_dir, reconcile_minutes=0)
    monkeypatch.setattr(watcher, "record", lambda paths: None)  # events get lost from here
    write(vault_dir / "notes" / "unseen.md", "# Unseen\n\n- no event reached the watcher\n")
    watcher.overflowed()  # what the emitter calls on IN_Q_OVERFLOW
    assert "notes/unseen.md" in assert_converges(vault_dir, tmp_path)
    assert watcher.report.overflows == 1

    watcher.reconcile_every = 0.3  # the timer: reconciles without any event or overflow
    watcher.reconcile()
    reconciles = watcher.report.reconciles
    wait_until(lambda: watcher.report.reconciles > reconciles, 10, "the reconcile")
    write(vault_dir / "notes" / "unseen-2.md", "# Unseen 2\n\n- found by the timer\n")
    assert "notes/unseen-2.md" in assert_converges(vault_dir, tmp_path)


def test_deleting_the_cache_while_watching_is_safe(
    watched: tuple[Path, Watcher], tmp_path: Path
) -> None:
    root, watcher = watched
    shutil.rmtree(root / ".vault")
    write(root / "notes" / "after.md", "# After\n\n- KESTREL_3 written after the deletion\n")
    assert "notes/after.md" in assert_converges(root, tmp_path)
    wait_until(watcher.ready.is_set, 10, "the watcher to serve again")
    info = Vault(root).status()["watcher"]
    assert info["running"] and info["pid"] == os.getpid()
    with Vault(root) as here:
        assert here.search("KESTREL_3", via_watcher=True)[0].path == "notes/after.md"
    assert watcher.report.searches == 1
    assert "was deleted: rebuilding it" in (root / ".vault" / "logs" / "watch.log").read_text()


def test_a_rebuild_by_another_process_while_watching(
    watched: tuple[Path, Watcher], tmp_path: Path
) -> None:
    """`vault index --rebuild` replaces index.sqlite: the watcher must write to the new one,
    not to the file it had open."""
    root, watcher = watched
    with Vault(root) as other:
        other.index(rebuild=True)
    write(root / "notes" / "after.md", "# After\n\n- OSPREY_5 written after the rebuild\n")
    assert "notes/after.md" in assert_converges(root, tmp_path)
    wait_until(watcher.ready.is_set, 10, "the watcher to serve again")
    with Vault(root) as here:
        assert here.search("OSPREY_5", via_watcher=True)[0].path == "notes/after.md"
    assert watcher.report.searches == 1


# -- one watcher, status, locks --------------------------------------------------------------


def test_one_watcher_per_vault_and_status(
    watched: tuple[Path, Watcher], run_cli: Callable[..., Any]
) -> None:
    root, watcher = watched
    with pytest.raises(WatcherRunningError) as caught:
        Watcher(Vault(root), dream=False).start()
    assert str(caught.value) == (
        f"a watcher already runs for this vault (pid {os.getpid()}). Searches already go "
        "through it; stop it first (`Vault.stop_watcher()`) to start another."
    )
    write(root / "notes" / "event.md", "# Event\n")
    wait_until(lambda: "notes/event.md" in index_units(root), 10, "the event")
    # the state file is rewritten after each batch: the event shows up there a moment later
    wait_until(
        lambda: Vault(root).status()["watcher"]["last_event_at"] is not None,
        10,
        "the last event in the status",
    )
    info = Vault(root).status()["watcher"]
    assert info["running"] is True and info["pid"] == os.getpid()
    assert 0 <= info["uptime_seconds"] < 600
    assert info["last_event_at"] and abs(info["last_event_at"] - time.time()) < 60
    # .vault/watch.sock, or a name in the temp folder when that path is too long for a socket
    assert info["socket"] == str(client.socket_path(root / ".vault"))
    result = run_cli("--vault", str(root), "status")
    assert result.exit_code == 0
    assert f"watcher       running (pid {os.getpid()}, up 0h" in result.output
    assert "last event" in result.output
    logging.getLogger("vault_memory").setLevel(logging.INFO)  # the in-process CLI lowered it
    watcher.stop()
    assert "stopped watching" in (root / ".vault" / "logs" / "watch.log").read_text()
    assert Vault(root).status()["watcher"] == {"running": False, "stale": False}
    assert not (root / ".vault" / "watch.sock").exists()
    assert not (root / ".vault" / "watch.json").exists()
    assert "watcher       not running" in run_cli("--vault", str(root), "status").output


def test_a_clean_stop_removes_the_lock_file(watched: tuple[Path, Watcher]) -> None:
    """Issue 14: `.vault/watch.lock` was left behind by a clean stop."""
    root, watcher = watched
    lock = root / ".vault" / "watch.lock"
    assert client.lock_held(lock)
    watcher.stop()
    assert not lock.exists()
    assert not [p.name for p in (root / ".vault").iterdir() if p.name.startswith("watch")]
    assert Vault(root).status()["watcher"] == {"running": False, "stale": False}
    with Vault(root) as here:  # no lock file: the search does not even try the socket
        assert here.search("WeasyPrint", via_watcher=True)[0].path == "notes/renderer.md"
    again = Watcher(Vault(root), dream=False, serve=False)
    again.start()
    try:
        assert client.lock_held(lock)
        assert os.stat(lock).st_ino == os.fstat(again.pid_lock.fd).st_ino  # type: ignore[arg-type]
    finally:
        again.stop()
        again.vault.close()
    assert not lock.exists()


def _stops_between_open_and_flock(
    monkeypatch: pytest.MonkeyPatch, lock: Path, then: Callable[[], None] = lambda: None
) -> list[int]:
    """The holder of `lock` stops cleanly (unlinks the file while locked, then closes it) just
    after the next watcher opened the file and before its flock: the race a clean stop's
    unlink opens. `then` runs right after (e.g. a third watcher takes the new file)."""
    holder = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    calls: list[int] = []

    def flock(fd: int, operation: int) -> None:
        if not calls:
            os.unlink(lock)
            os.close(holder)
            then()
        calls.append(fd)
        fcntl.flock(fd, operation)

    monkeypatch.setattr(
        pidlock_module,
        "fcntl",
        SimpleNamespace(flock=flock, LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB),
    )
    return calls


def test_the_lock_is_taken_anew_when_its_holder_removed_the_file(
    vault_dir: Path, keyword_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 14: a flock that succeeds on a file a stopping watcher has just unlinked locks
    nothing anyone else can see: the watcher must lock the file the path names now."""
    lock = vault_dir / ".vault" / "watch.lock"
    lock.parent.mkdir()
    calls = _stops_between_open_and_flock(monkeypatch, lock)
    watcher = Watcher(Vault(vault_dir), dream=False, serve=False)
    watcher.pid_lock.take()  # alone: a started watcher's worker would heal it later
    assert watcher.pid_lock.fd is not None
    try:
        assert len(calls) == 2  # the unlinked file, then the new one
        assert os.stat(lock).st_ino == os.fstat(watcher.pid_lock.fd).st_ino
        assert client.lock_held(lock)
    finally:
        os.close(watcher.pid_lock.fd)


def test_a_watcher_that_took_the_new_file_meanwhile_keeps_the_vault(
    vault_dir: Path, keyword_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same race with a third watcher that created and locked the new file first: the
    second one must refuse to start rather than run beside it."""
    lock = vault_dir / ".vault" / "watch.lock"
    lock.parent.mkdir()
    third: list[int] = []

    def third_takes_it() -> None:
        third.append(os.open(lock, os.O_RDWR | os.O_CREAT, 0o644))
        fcntl.flock(third[0], fcntl.LOCK_EX | fcntl.LOCK_NB)

    _stops_between_open_and_flock(monkeypatch, lock, third_takes_it)
    try:
        with pytest.raises(WatcherRunningError):
            Watcher(Vault(vault_dir), dream=False, serve=False).start()
        assert os.stat(lock).st_ino == os.fstat(third[0]).st_ino
    finally:
        os.close(third[0])


def test_an_unexpected_error_stops_the_watcher_and_says_where_to_look(
    vault_dir: Path, keyword_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = Watcher(Vault(vault_dir), dream=False)

    def broken() -> bool:
        raise RuntimeError("boom")

    monkeypatch.setattr(watcher, "_check_cache", broken)
    with pytest.raises(VaultError) as caught:
        watcher.run()
    log_file = vault_dir / ".vault" / "logs" / "watch.log"
    assert str(caught.value) == (f"the watcher stopped after an unexpected error; see {log_file}.")
    assert "RuntimeError: boom" in log_file.read_text()
    assert Vault(vault_dir).status()["watcher"] == {"running": False, "stale": False}


def test_settings_are_checked(vault_dir: Path, keyword_only: None) -> None:
    from vault_memory.errors import ConfigError

    with pytest.raises(ConfigError, match="watch.quiet_ms must be between 0 and 600000"):
        Watcher(Vault(vault_dir), quiet_ms=-1)
    with pytest.raises(ConfigError, match="watch.reconcile_minutes must be 0"):
        Watcher(Vault(vault_dir), reconcile_minutes=-1)


# -- searches through the socket -------------------------------------------------------------

QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("which database did we pick for billing?", {}),
    ("ERR_LEDGER_409", {"limit": 3}),
    ("standup", {"since": "2026-11-01", "kinds": ("daily",), "limit": 5}),
    ("invoice renderer fonts", {"within": "notes", "mode": "keyword"}),
    ("how does Zoë like product changes explained?", {"mode": "semantic", "limit": 4}),
    ("tag:#decision -path:notes/ database", {"limit": 4}),  # search operators (issue 22)
]


def test_socket_search_returns_the_in_process_hits(
    indexed_sample: Path, start_watcher: Callable[..., Watcher], run_cli: Callable[..., Any]
) -> None:
    """With the bundled model: the watcher's hits equal in-process hits, and `vault search
    --json` prints the same bytes either way."""
    watcher = start_watcher(indexed_sample)
    with Vault(indexed_sample) as here:
        for query, options in QUERIES:
            answered = watcher.report.searches
            through = here.search(query, via_watcher=True, **options)
            assert watcher.report.searches == answered + 1
            assert through == here.search(query, **options)
            assert through
    args = ["--vault", str(indexed_sample), "search", "ERR_LEDGER_409", "--json", "-n", "3"]
    via_socket = run_cli(*args)
    assert watcher.report.searches == len(QUERIES) + 1
    watcher.stop()
    in_process = run_cli(*args)
    assert via_socket.exit_code == in_process.exit_code == 0
    assert via_socket.stdout == in_process.stdout
    assert json.loads(via_socket.stdout)["results"]


def test_socket_search_sees_an_edit_at_once(watched: tuple[Path, Watcher]) -> None:
    """A query flushes the pending changes instead of waiting out the quiet period."""
    root, watcher = watched
    watcher.quiet = 30.0  # only the query can apply the change in time
    watcher.max_delay = 60.0
    with (root / "memory" / "2026-11-20.md").open("a", encoding="utf-8") as fh:
        fh.write("- QUOKKA_77 arrived.\n")
    wait_until(lambda: bool(watcher.changes.paths), 10, "the event to be recorded")
    with Vault(root) as here:
        hits = here.search("QUOKKA_77", via_watcher=True, fresh=False)
    assert hits[0].path == "memory/2026-11-20.md" and "QUOKKA_77" in hits[0].text
    assert watcher.report.searches == 1


def test_the_search_side_is_brought_up_to_date_after_an_edit(
    watched: tuple[Path, Watcher],
) -> None:
    """After a change, the watcher rebuilds the unit table while idle, so the next query
    through the socket does not; and it logs no search hits of its own doing so."""
    root, watcher = watched
    searcher = watcher.queries.reader._searcher
    hits_log = root / ".vault" / "hits.jsonl"
    before = hits_log.read_bytes() if hits_log.exists() else b""
    table = searcher._table
    with (root / "memory" / "2026-11-20.md").open("a", encoding="utf-8") as fh:
        fh.write("- WOMBAT_12 arrived.\n")
    wait_until(
        lambda: searcher._table is not table and not watcher.queries.table_stale,
        10,
        "the unit table to be rebuilt",
    )
    rebuilt = searcher._table
    assert searcher.table(None) is rebuilt  # current: the query will not build it again
    with Vault(root) as here:
        hits = here.search("WOMBAT_12", via_watcher=True, fresh=False)
    assert "WOMBAT_12" in hits[0].text and searcher._table is rebuilt
    after = hits_log.read_bytes() if hits_log.exists() else b""
    assert after.count(b"\n") == before.count(b"\n") + 1  # only the real query's hits


def test_search_falls_back_without_a_usable_watcher(
    watched: tuple[Path, Watcher], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, watcher = watched
    # other settings in this environment: the watcher would rank differently
    monkeypatch.setenv("VAULT_SEARCH_HALF_LIFE_DAYS", "7")
    with Vault(root) as here:
        expected = here.search("standup")
        assert here.search("standup", via_watcher=True) == expected
    assert watcher.report.searches == 0
    monkeypatch.delenv("VAULT_SEARCH_HALF_LIFE_DAYS")
    with Vault(root) as here:
        expected = here.search("WeasyPrint")
        assert here.search("WeasyPrint", via_watcher=True) == expected
    assert watcher.report.searches == 1
    # a watcher killed with SIGKILL leaves its lock file and socket behind
    watcher.stop()
    (root / ".vault" / "watch.lock").touch()
    sock = root / ".vault" / "watch.sock"
    import socket as socketlib

    stale = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    stale.bind(str(sock))
    stale.close()  # bound, never listening: connecting is refused
    assert sock.exists() and (root / ".vault" / "watch.lock").exists()
    with Vault(root) as here:
        assert here.search("WeasyPrint", via_watcher=True) == expected
    assert client.request(root / ".vault", {"op": "ping", "protocol": 1}) is None


def test_long_vault_path_puts_the_socket_in_the_temp_folder(
    tmp_path: Path, keyword_only: None, start_watcher: Callable[..., Watcher]
) -> None:
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    root = Vault.init(deep / "vault").root
    write(root / "notes" / "a.md", "# A\n\n- PELICAN_9 lives here\n")
    watcher = start_watcher(root)
    assert watcher.socket is not None and watcher.socket.parent != root / ".vault"
    assert len(os.fsencode(watcher.socket)) <= client.MAX_SOCKET_PATH
    assert json.loads((root / ".vault" / "watch.json").read_text())["socket"] == str(watcher.socket)
    with Vault(root) as here:
        assert here.search("PELICAN_9", via_watcher=True)[0].path == "notes/a.md"
    assert watcher.report.searches == 1
    watcher.stop()
    assert not watcher.socket.exists()


# -- the process: signals, SIGKILL mid-batch, restart ----------------------------------------


def _spawn_watcher(root: Path, *extra: str) -> subprocess.Popen[str]:
    """`vault watch` in its own process. A quiet period of 1 s makes a burst one batch."""
    env = {**os.environ, "PYTHONPATH": str(WORKTREE), "VAULT_INDEX_MODEL": "none"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vault_memory",
            "--vault",
            str(root),
            "watch",
            "--no-dream",
            "--quiet-ms",
            "1000",
            *extra,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_ready(root: Path, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    def ready() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the watcher exited: {proc.communicate()}")
        reply = client.ping(root / ".vault")
        return bool(reply and reply["ready"])

    wait_until(ready, timeout, "the watcher to be ready")


def _file_count(root: Path) -> int:
    """Files committed to SQLite so far. Not `index_units`, which reads {} while the keyword
    index catches up: a SIGKILL often lands in that window (most of a batch's time)."""
    db = root / ".vault" / "index.sqlite"
    if not db.exists():
        return 0
    conn = sqlite3.connect(db.absolute().as_uri() + "?mode=ro", uri=True, timeout=10)
    try:
        return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
    except sqlite3.OperationalError:  # the very first transaction is not committed yet
        return 0
    finally:
        conn.close()


def _burst(root: Path, count: int) -> None:
    for i in range(count):
        write(root / "burst" / f"d{i % 10}" / f"n{i:04d}.md", f"# N{i}\n\n- burst item {i}\n")


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


@pytest.mark.slow
def test_sigkill_mid_batch_then_restart_converges(
    vault_dir: Path,
    keyword_only: None,
    tmp_path: Path,
    processes: list[subprocess.Popen[str]],
    run_cli: Callable[..., Any],
) -> None:
    first = _spawn_watcher(vault_dir)
    processes.append(first)
    _wait_ready(vault_dir, first)
    initial = _file_count(vault_dir)
    count = 700
    _burst(vault_dir, count)
    wait_until(lambda: _file_count(vault_dir) > initial, 60, "the first committed step")
    first.kill()  # SIGKILL: no clean-up at all
    first.wait()
    killed_at = _file_count(vault_dir)
    assert initial < killed_at < initial + count  # it really was mid-batch
    info = Vault(vault_dir).status()["watcher"]
    assert info == {"running": False, "stale": True}
    stopping = run_cli("--vault", str(vault_dir), "watch", "--stop")
    assert stopping.exit_code == 0 and stopping.stdout == (
        f"no watcher runs for {vault_dir} (a killed one left its state file); nothing to stop\n"
    )

    second = _spawn_watcher(vault_dir)
    processes.append(second)
    _wait_ready(vault_dir, second)
    assert_converges(vault_dir, tmp_path, timeout=60)
    with Vault(vault_dir) as here:
        hits = here.search("burst item 699", via_watcher=True, mode="keyword")
    assert hits[0].path == "burst/d9/n0699.md"
    second.send_signal(signal.SIGTERM)
    _, err = second.communicate(timeout=30)
    assert second.returncode == 0, err
    assert "stopped:" in err
    assert not (vault_dir / ".vault" / "watch.sock").exists()
    assert Vault(vault_dir).status()["watcher"] == {"running": False, "stale": False}


@pytest.mark.slow
def test_sigterm_mid_batch_stops_cleanly(
    vault_dir: Path, keyword_only: None, tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    proc = _spawn_watcher(vault_dir, "-v")
    processes.append(proc)
    _wait_ready(vault_dir, proc)
    initial = _file_count(vault_dir)
    _burst(vault_dir, 1200)
    wait_until(lambda: _file_count(vault_dir) > initial, 60, "the first committed step")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "watching" in err and "stopped:" in err
    log_text = (vault_dir / ".vault" / "logs" / "watch.log").read_text()
    assert "received SIGTERM: stopping." in log_text
    assert not (vault_dir / ".vault" / "watch.sock").exists()
    assert not (vault_dir / ".vault" / "watch.json").exists()
    # the locks are free: an index run takes the writer lock and finishes the job
    with Vault(vault_dir) as vault:
        vault.index(lock_timeout=1.0)
    assert_converges(vault_dir, tmp_path, timeout=5)


@pytest.mark.slow
def test_sigkill_while_embedding_then_restart_embeds_everything(
    vault_dir: Path, tmp_path: Path, processes: list[subprocess.Popen[str]], loaded_embedder: Any
) -> None:
    """With the model: killed between two embedding commits, the next watcher finishes
    embedding even though no file changed since."""
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    env.pop("VAULT_INDEX_MODEL", None)
    cmd = [sys.executable, "-m", "vault_memory", "--vault", str(vault_dir), "watch", "--no-dream"]
    first = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    processes.append(first)
    _wait_ready(vault_dir, first, timeout=120)
    _burst(vault_dir, 600)
    db = vault_dir / ".vault" / "index.sqlite"

    def embedded() -> int:
        conn = sqlite3.connect(db.absolute().as_uri() + "?mode=ro", uri=True)
        try:
            return conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        finally:
            conn.close()

    start = embedded()
    wait_until(lambda: embedded() > start, 120, "the first embedding commit")
    first.kill()
    first.wait()
    second = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    processes.append(second)
    _wait_ready(vault_dir, second, timeout=300)
    with Vault(vault_dir) as vault:
        info = vault.status()
    assert info["units"] == info["embedded_units"] > 600
    second.send_signal(signal.SIGINT)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 0, err


@pytest.mark.slow
def test_vault_watch_stop(
    vault_dir: Path,
    keyword_only: None,
    processes: list[subprocess.Popen[str]],
    run_cli: Callable[..., Any],
) -> None:
    """Issue 14: there was no way to stop a watcher but `kill PID`. `vault watch --stop` asks
    it over its socket and waits until it is gone; the watcher's lines agree in number."""
    proc = _spawn_watcher(vault_dir)
    processes.append(proc)
    _wait_ready(vault_dir, proc)
    write(vault_dir / "memory" / "2026-11-20.md", "# 2026-11-20\n\n- HERON_4 landed.\n")
    wait_until(lambda: "memory/2026-11-20.md" in index_units(vault_dir), 30, "the batch")
    with Vault(vault_dir) as here:
        assert here.search("HERON_4", via_watcher=True, fresh=False)[0].path == (
            "memory/2026-11-20.md"
        )
    result = run_cli("--vault", str(vault_dir), "watch", "--stop")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        f"stopped the watcher of {vault_dir} (pid {proc.pid}; asked over its socket) in "
    )
    assert not client.lock_held(vault_dir / ".vault" / "watch.lock")  # it waited for that
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert err.endswith("stopped: 1 batch (1 path), 1 reconcile, 1 search answered\n"), err
    log_text = (vault_dir / ".vault" / "logs" / "watch.log").read_text()
    assert "asked to stop over the socket: stopping." in log_text
    assert "1 changed path: 1 new, 0 modified, 0 moved, 0 deleted (0 units embedded)" in log_text
    assert not [p.name for p in (vault_dir / ".vault").iterdir() if p.name.startswith("watch")]

    again = run_cli("--vault", str(vault_dir), "watch", "--stop")
    assert again.exit_code == 0
    assert again.stdout == f"no watcher runs for {vault_dir}; nothing to stop\n"
    as_json = run_cli("--vault", str(vault_dir), "watch", "--stop", "--json")
    assert as_json.exit_code == 0 and json.loads(as_json.stdout) == {
        "vault": str(vault_dir),
        "running": False,
        "stopped": False,
        "pid": None,
        "via": None,
        "seconds": 0.0,
        "stale": False,
    }


def test_vault_watch_stop_signals_a_watcher_that_does_not_answer(
    vault_dir: Path,
    keyword_only: None,
    processes: list[subprocess.Popen[str]],
    run_cli: Callable[..., Any],
) -> None:
    """Without its socket (removed here; a watcher of an older version refuses the request)
    the pid of the state file gets SIGTERM, since the lock shows that it runs."""
    proc = _spawn_watcher(vault_dir)
    processes.append(proc)
    _wait_ready(vault_dir, proc)
    (vault_dir / ".vault" / "watch.sock").unlink()
    result = run_cli("--vault", str(vault_dir), "watch", "--stop", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["running"], report["stopped"], report["pid"], report["via"]) == (
        True,
        True,
        proc.pid,
        "SIGTERM",
    )
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "stopped: 0 batches (0 paths), 1 reconcile, 0 searches" in err
    log_text = (vault_dir / ".vault" / "logs" / "watch.log").read_text()
    assert "received SIGTERM: stopping." in log_text
    assert not (vault_dir / ".vault" / "watch.lock").exists()


def test_stop_watcher_gives_up_waiting_after_its_timeout(watched: tuple[Path, Watcher]) -> None:
    """A watcher inside a program (`Watcher.start()`, not `run()`) only records the request:
    the program decides. The caller is told it still runs, and what to do."""
    root, watcher = watched
    with pytest.raises(VaultError) as caught:
        Vault(root).stop_watcher(timeout=0.2)
    assert str(caught.value) == (
        f"the watcher (pid {os.getpid()}) was asked to stop but still runs after 0.2 s: it lets "
        "a running dream or batch finish first. Ask it again (`Vault.stop_watcher()`) to wait "
        f"longer, or end it at once with `kill -9 {os.getpid()}` (safe: the next start "
        "compares the files with the index)."
    )
    assert watcher.stop_requested and client.lock_held(root / ".vault" / "watch.lock")


# -- the command line ------------------------------------------------------------------------


def test_cli_watch_usage(run_cli: Callable[..., Any], vault_dir: Path) -> None:
    result = run_cli("--vault", str(vault_dir), "watch", "--quiet-ms", "-5")
    assert result.exit_code == 2
    assert "Invalid value for '--quiet-ms'" in result.stderr
    help_text = run_cli("watch", "--help").output
    assert "Example:" in help_text and "vault watch --no-dream" in help_text
    assert "vault watch --stop" in help_text
    result = run_cli("--vault", str(vault_dir), "watch", "--json")
    assert result.exit_code == 2 and "--json goes with --stop" in result.stderr
    result = run_cli("--vault", str(vault_dir), "watch", "--stop", "--quiet-ms", "5")
    assert result.exit_code == 2 and "--stop takes no --no-dream or --quiet-ms" in result.stderr


def test_watch_runs_until_stopped_from_another_thread(
    vault_dir: Path, keyword_only: None, tmp_path: Path
) -> None:
    """`Vault.watch` blocks; outside the main thread it installs no signal handlers and
    stops when asked."""
    seen: list[Watcher] = []
    done = threading.Event()
    reports: list[Any] = []

    def run() -> None:
        with Vault(vault_dir) as vault:
            reports.append(vault.watch(dream=False, quiet_ms=50, on_ready=seen.append))
        done.set()

    thread = threading.Thread(target=run)
    thread.start()
    wait_until(lambda: bool(seen) and seen[0].ready.is_set(), 30, "the watcher")
    write(vault_dir / "notes" / "t.md", "# T\n\n- from a thread\n")
    assert "notes/t.md" in assert_converges(vault_dir, tmp_path)
    seen[0].request_stop()
    assert done.wait(30)
    thread.join()
    assert reports[0].batches >= 1 and reports[0].stopped_at
