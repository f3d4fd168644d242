"""A copied or restored vault (`cp -r`, `cp -a`, rsync's whole-second times, a git checkout of
a committed cache) opens without rebuilding what is still valid: the keyword index is checked
by content, the unit table by its stamp and checksums, the notes by their hashes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.index.integrity import fulltext_changed
from vault_memory.search.table import UnitTable


def cp_r(source: Path, target: Path) -> None:
    subprocess.run(["cp", "-r", str(source), str(target)], check=True)


def cp_a(source: Path, target: Path) -> None:
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)


def whole_seconds(source: Path, target: Path) -> None:
    """What `rsync -a` leaves where it keeps times to the second only."""
    cp_a(source, target)
    for path in [target, *target.rglob("*")]:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns // 10**9 * 10**9))


def git_checkout(source: Path, target: Path) -> None:
    """The vault committed with its cache, then cloned: every file gets the time of the
    checkout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    quiet: dict[str, Any] = {"check": True, "capture_output": True, "env": env}
    subprocess.run(["git", "init", "-q", str(source)], **quiet)
    subprocess.run(["git", "-C", str(source), "add", "-f", "-A", "."], **quiet)
    subprocess.run(["git", "-C", str(source), "commit", "-q", "-m", "vault"], **quiet)
    subprocess.run(["git", "clone", "-q", str(source), str(target)], **quiet)


@pytest.mark.parametrize(
    "copy",
    [cp_r, cp_a, whole_seconds, git_checkout],
    ids=["cp -r", "cp -a", "rsync (whole seconds)", "git checkout"],
)
def test_a_copied_vault_opens_without_rebuilding(
    indexed_small: Path,
    tmp_path: Path,
    copy: Callable[[Path, Path], None],
    vault_warnings: Callable[[], list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with Vault(indexed_small) as vault:
        vault.search("renderer fonts")  # the unit tables saved too
        vault.search("renderer fonts", mode="keyword")
    target = tmp_path / "copy"
    copy(indexed_small, target)
    builds: list[int] = []
    build = UnitTable.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        UnitTable,
        "build",
        classmethod(
            lambda cls, rows, *a, **k: builds.append(len(rows)) or build(cls, rows, *a, **k)
        ),
    )
    assert fulltext_changed(Vault(target).cache.store, target / ".vault" / "whoosh") is None
    with Vault(target) as vault:
        report = vault.index()
        assert report.rebuilt is None, report.rebuilt
        assert report.new == report.modified == report.deleted == 0
        hits = vault.search("which fonts does the renderer need", mode="keyword")
        assert hits and "fonts-noto-core" in hits[0].text
        assert vault.search("fonts for the invoice renderer")
    assert builds == []
    assert not [w for w in vault_warnings() if "rebuild" in w], vault_warnings()
    with Vault(target) as vault:  # recorded again: the next run is a stat, not a read
        assert vault.cache.fulltext_needs_rebuild() is None
        assert vault.cache.store.get_meta("fulltext_files") == vault.cache.fulltext.fingerprint()


def test_a_copy_whose_keyword_index_differs_is_rebuilt(indexed_small: Path, tmp_path: Path) -> None:
    """Same names and sizes, new times, other bytes: damage, not a copy."""
    target = tmp_path / "copy"
    cp_r(indexed_small, target)
    segment = max((target / ".vault" / "whoosh").glob("*.seg"), key=lambda p: p.stat().st_size)
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0xFF
    segment.write_bytes(bytes(data))
    assert fulltext_changed(Vault(target).cache.store, target / ".vault" / "whoosh")
    with Vault(target) as vault:
        report = vault.index()
        assert report.rebuilt and "keyword index" in report.rebuilt
        assert vault.search("renderer fonts", mode="keyword")
