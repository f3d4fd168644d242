"""A full disk, an I/O error, a file-size limit, with the errors injected (the real thing, on
a small tmpfs, is in bench/hostile_cases/disk.py): every write is all or nothing, the one
error says truthfully what was kept, nothing is left behind, and the index keeps what it held
(its vectors too) when the disk refuses a write."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.errors import CannotWriteError, VaultError
from vault_memory.files import fsutil

from ..cli.test_cli_basic import error_of

DISK_ERRORS = [errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EROFS]


def temps(folder: Path) -> list[str]:
    return sorted(
        p.name for p in folder.rglob("*") if p.name.endswith((".tmp", ".append", ".partial"))
    )


@pytest.fixture
def fail_writes(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """From the `after`-th `os.write` on: the first one writes half its bytes, then each
    raises `code` (a disk that fills part-way through an append)."""

    def arm(code: int, after: int = 1) -> None:
        real = os.write
        calls = {"n": 0}

        def write(fd: int, data: bytes) -> int:
            calls["n"] += 1
            if calls["n"] < after:
                return real(fd, data)
            if calls["n"] == after and len(data) > 1:
                return real(fd, data[: len(data) // 2])
            raise OSError(code, os.strerror(code))

        monkeypatch.setattr(os, "write", write)

    return arm


@pytest.mark.parametrize("code", DISK_ERRORS)
def test_an_append_the_disk_refuses_half_way_is_taken_back(
    tmp_path: Path, fail_writes: Callable[..., None], code: int
) -> None:
    log = tmp_path / "2026-11-22.md"
    log.write_text("# 2026-11-22\n\n## 09:00 · note\n- kept\n", encoding="utf-8")
    before = log.read_bytes()
    fail_writes(code)
    with pytest.raises(CannotWriteError) as caught:
        fsutil.append_entry(log, "\n## 10:00 · note\n- " + "long entry " * 500 + "\n")
    assert log.read_bytes() == before
    assert temps(tmp_path) == []
    message = str(caught.value)
    assert str(log) in message and "Nothing was changed" in message
    assert os.strerror(code) in message


def test_when_even_taking_back_fails_the_journal_completes_the_append(
    tmp_path: Path, fail_writes: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.md"
    log.write_text("- first\n", encoding="utf-8")
    entry = "- " + "second " * 400 + "\n"
    fail_writes(errno.EIO)

    def cannot_truncate(fd: int, size: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "ftruncate", cannot_truncate)
    with pytest.raises(CannotWriteError) as caught:
        fsutil.append_entry(log, entry)
    assert "keeps the rest" in str(caught.value) and "vault doctor" in str(caught.value)
    monkeypatch.undo()
    done = fsutil.recover_tree(tmp_path)  # what `vault doctor` does
    assert log.read_text(encoding="utf-8") == "- first\n" + entry
    assert any("completed an append" in action for _, action in done)
    assert temps(tmp_path) == []


def test_a_journal_of_an_earlier_version_is_still_completed(tmp_path: Path) -> None:
    """Journals written before they hashed only the bytes before the append (the whole file)."""
    log = tmp_path / "log.md"
    log.write_bytes(b"- first\n- sec")
    journal = tmp_path / ".log.md.append"
    record = {"size": 8, "sha256": fsutil.sha256_bytes(b"- first\n"), "data": "- second\n"}
    journal.write_text(json.dumps(record), encoding="utf-8")
    fsutil.recover_tree(tmp_path)
    assert log.read_bytes() == b"- first\n- second\n" and not journal.exists()


@pytest.mark.parametrize("code", [errno.EIO, errno.ENOSPC])
def test_a_rewrite_the_disk_refuses_leaves_the_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    note = tmp_path / "MEMORY.md"
    note.write_text("old\n", encoding="utf-8")

    def fsync(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(CannotWriteError, match="Nothing was changed"):
        fsutil.write_atomic(note, "new\n", fsutil.sha256_bytes(b"old\n"), "MEMORY.md")
    assert note.read_text(encoding="utf-8") == "old\n" and temps(tmp_path) == []


def test_a_folder_seen_clean_is_listed_again_once_a_temp_file_appears(tmp_path: Path) -> None:
    """Appends do not list a folder they saw without temp files again (thousands of
    transcripts), yet a temp file a killed writer leaves is still removed by the next one."""
    log = tmp_path / "log.md"
    fsutil.append_entry(log, "- one\n")
    fsutil.append_entry(log, "- two\n")
    (tmp_path / ".log.md.abcd1234.tmp").write_text("half a rewrite")
    fsutil.append_entry(log, "- three\n")
    assert temps(tmp_path) == [] and log.read_text() == "- one\n- two\n- three\n"


# -- export -o ------------------------------------------------------------------------------


def test_an_output_file_is_complete_or_absent(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("an earlier export\n")
    with pytest.raises(RuntimeError), fsutil.output_file(target) as out:
        out.write("half")
        raise RuntimeError("the export failed midway")
    assert target.read_text() == "an earlier export\n" and temps(tmp_path) == []
    with fsutil.output_file(target) as out:
        out.write("complete\n")
    assert target.read_text() == "complete\n" and temps(tmp_path) == []


def test_an_output_file_whose_folder_is_moved_leaves_nothing_anywhere(tmp_path: Path) -> None:
    folder, moved = tmp_path / "out", tmp_path / "moved"
    folder.mkdir()
    with (
        pytest.raises(fsutil.FolderMovedError, match="moved or removed"),
        fsutil.output_file(folder / "memory.jsonl") as out,
    ):
        out.write("some records\n")
        folder.rename(moved)
        out.write("more records\n")
    assert list(moved.iterdir()) == [] and not folder.exists()


def test_an_output_file_in_no_folder_is_one_clear_error(tmp_path: Path) -> None:
    with (
        pytest.raises(VaultError, match="there is no folder"),
        fsutil.output_file(tmp_path / "missing" / "out.jsonl"),
    ):
        pass


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_cli_export_to_a_full_disk(
    run_cli: Any, vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    target = tmp_path / "export.jsonl"

    def fsync(fd: int) -> None:  # buffered writes reach the disk here (a tmpfs: at write)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", fsync)
    error = error_of(run_cli("export", "-o", str(target), cwd=vault_dir))
    assert error.startswith(f"cannot write {target}: {os.strerror(code)}")
    assert "Nothing was written to export.jsonl" in error
    assert not target.exists() and temps(tmp_path) == []


# -- commands -------------------------------------------------------------------------------


@pytest.mark.parametrize("code", DISK_ERRORS)
def test_cli_add_on_a_full_disk_changes_nothing(
    run_cli: Any,
    vault_dir: Path,
    tree_state: Any,
    fail_writes: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    code: int,
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T10:00")
    assert run_cli("add", "first", cwd=vault_dir).exit_code == 0
    before = tree_state(vault_dir / "memory")
    fail_writes(code)
    error = error_of(run_cli("add", "second " * 300, cwd=vault_dir))
    assert error.startswith("cannot write ") and "memory/2026-11-22.md" in error
    assert "Nothing was changed" in error
    assert tree_state(vault_dir / "memory") == before


def chatgpt_export(path: Path, count: int) -> Path:
    chats = []
    for n in range(count):
        message = {
            "author": {"role": "user"},
            "content": {"content_type": "text", "parts": [f"I prefer tool {n} for project {n}."]},
            "create_time": 1757066400 + n * 60,
        }
        node = {"id": "u", "message": message, "parent": None, "children": []}
        chats.append({"title": f"T{n}", "mapping": {"u": node}, "current_node": "u", "id": f"{n}"})
    path.write_text(json.dumps(chats), encoding="utf-8")
    return path


def test_an_import_the_disk_stops_says_what_it_kept(
    run_cli: Any, vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = chatgpt_export(tmp_path / "conversations.json", 5)
    real = fsutil.append_entry
    calls = {"n": 0}

    def append(path: Path, *args: Any, **kwargs: Any) -> int:
        if path.parent.name == "memory":
            calls["n"] += 1
            if calls["n"] == 3:
                raise fsutil.cannot_write(path, OSError(errno.ENOSPC, "No space left on device"))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(fsutil, "append_entry", append)
    error = error_of(run_cli("import", str(source), cwd=vault_dir))
    assert "No space left on device" in error
    assert "the 2 entries written before it are kept (2 conversations imported whole)" in error
    assert "run the same import again" in error
    monkeypatch.setattr(fsutil, "append_entry", real)
    result = run_cli("import", str(source), "--json", cwd=vault_dir)
    assert result.exit_code == 0 and json.loads(result.stdout)["imported"] == 3


# -- the index ------------------------------------------------------------------------------


def sqlite_error(name: str, message: str) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorname = name  # type: ignore[attr-defined]
    return exc


def test_disk_errors_of_sqlite_are_told_from_damage() -> None:
    from vault_memory.index.store import disk_problem

    assert disk_problem(sqlite_error("SQLITE_FULL", "database or disk is full"))
    assert disk_problem(sqlite_error("SQLITE_IOERR_WRITE", "disk I/O error"))
    assert disk_problem(sqlite_error("SQLITE_READONLY", "attempt to write a readonly database"))
    assert disk_problem(sqlite_error("SQLITE_CORRUPT", "database disk image is malformed")) is None
    assert disk_problem(sqlite_error("SQLITE_NOTADB", "file is not a database")) is None
    assert disk_problem(sqlite_error("SQLITE_READONLY_DBMOVED", "moved")) is None


def test_a_full_disk_during_vault_index_keeps_the_index_and_its_vectors(
    indexed_small: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (indexed_small / "notes" / "late.md").write_text("# Late\n\nThe ledger cutover moved.\n")
    db = indexed_small / ".vault" / "index.sqlite"
    size = db.stat().st_size
    from vault_memory.index.store import Store

    def transaction(self: Store) -> Any:
        raise sqlite_error("SQLITE_FULL", "database or disk is full")

    with monkeypatch.context() as patch:
        patch.setattr(Store, "transaction", transaction)
        error = error_of(run_cli("index", cwd=indexed_small))
    assert error.startswith("cannot write .vault/index.sqlite: the disk is full.")
    assert "The index keeps what it held before" in error
    assert db.stat().st_size >= size  # not reset
    with Vault(indexed_small) as vault:
        hits = vault.search("which database did we choose", mode="hybrid")
        assert hits and any(hit.scores.get("vector", 0) > 0 for hit in hits)


# -- damage and special files -----------------------------------------------------------------


def _cut(path: Path) -> None:
    with path.open("r+b") as fh:
        fh.truncate(path.stat().st_size // 2)


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _pipe(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "cut in half": _cut,
    "random bytes": lambda p: p.write_bytes(os.urandom(p.stat().st_size)),
    "emptied": lambda p: p.write_bytes(b""),
    "a folder": _folder,
    "a named pipe": _pipe,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_doctor_names_and_repairs_a_damaged_index(
    indexed_small: Path, run_cli: Any, damage: str
) -> None:
    DAMAGE[damage](indexed_small / ".vault" / "index.sqlite")
    result = run_cli("doctor", "--json", cwd=indexed_small)
    assert result.exit_code == 0, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert any(f["artefact"] == ".vault/index.sqlite" and f["repair"] for f in findings)
    status = json.loads(run_cli("status", "--json", cwd=indexed_small).stdout)
    assert not status["damaged"] and not status["problem"] and status["files"] > 0


def test_status_and_doctor_report_special_files_and_never_open_them(
    indexed_small: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    memory = indexed_small / "memory"
    os.mkfifo(memory / "2026-12-01.md")
    (memory / "2026-12-02.md").mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(indexed_small / "talk.md"))
    server.close()
    special = {"memory/2026-12-01.md": "named pipe", "memory/2026-12-02.md": "folder"}
    special["talk.md"] = "socket"
    status = json.loads(run_cli("status", "--json", cwd=indexed_small).stdout)
    doctor = json.loads(run_cli("doctor", "--json", cwd=indexed_small).stdout)
    human = (
        run_cli("status", cwd=indexed_small).stdout + run_cli("doctor", cwd=indexed_small).stdout
    )
    found = {f["artefact"]: f for f in doctor["findings"]}
    for path, kind in special.items():
        assert kind in status["skipped"][path] and "not a regular file" in status["skipped"][path]
        assert kind in found[path]["problem"] and path in found[path]["repair"]
        assert path in human
    monkeypatch.setenv("VAULT_NOW", "2026-12-01T10:00")
    error = error_of(run_cli("add", "an entry", cwd=indexed_small))
    assert error == ("memory/2026-12-01.md: a named pipe (FIFO), not a regular file: never opened")
