"""`Vault(path)` opens a vault and never makes half of one: a folder that is not a vault is an
error naming `Vault.init`, with nothing written; `create=True` makes a whole one first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.errors import NotAVaultError, VaultError


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("kind", ["empty folder", "other files", "missing"])
def test_a_folder_that_is_no_vault_is_refused_and_left_as_it_was(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "agent-memory"
    if kind != "missing":
        root.mkdir()
    if kind == "other files":
        (root / "notes.txt").write_text("not a vault\n", encoding="utf-8")
    before = tree(tmp_path)
    with pytest.raises(NotAVaultError, match=r"Vault\.init\(") as info:
        Vault(root)
    assert info.value.path == root
    assert info.value.problem == ("missing" if kind == "missing" else "folder")
    assert tree(tmp_path) == before  # no memory/, no .vault/, no vault.toml


def test_a_file_is_no_vault(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_text("# MEMORY\n", encoding="utf-8")
    with pytest.raises(NotAVaultError, match="is a file, not a vault folder"):
        Vault(target)
    with pytest.raises(VaultError, match="exists and is not a folder"):
        Vault(target, create=True)


@pytest.mark.parametrize("shape", ["vault.toml", "MEMORY.md", "memory/"])
def test_a_vault_of_any_shape_opens_and_create_adds_nothing_to_it(
    tmp_path: Path, shape: str
) -> None:
    root = tmp_path / "made-by-hand"
    if shape.endswith("/"):
        (root / shape).mkdir(parents=True)
    else:
        root.mkdir()
        (root / shape).write_text("", encoding="utf-8")
    before = tree(root)
    assert Vault(root).root == root
    assert Vault(root, create=True).root == root
    assert tree(root) == before


def test_create_makes_a_whole_vault_and_the_library_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the README's library example does it, in a home folder: `~` expanded, a vault
    made, an entry added and found, MEMORY.md read back."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T09:30")
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    with Vault("~/agent-memory", create=True) as vault:
        root = tmp_path / "agent-memory"
        assert vault.root == root
        assert {"vault.toml", "MEMORY.md", "memory", "dreams", ".gitignore"} <= set(
            os.listdir(root)
        )
        vault.add("Chose PostgreSQL for the billing service", tags=("decision",))
        vault.index()
        hits = vault.search("which database did we pick for billing?", limit=5)
        assert hits and hits[0].path == "memory/2026-11-22.md"
        assert vault.get("MEMORY.md", 1, 20).text.startswith("# ")
    assert Vault("~/agent-memory").root == root  # a vault now: opened as it is
