"""Vaults the tests build from: the checkout's sample_vault/, the small vault's files, a copy
that keeps an index up to date, and bench scripts loaded by their path."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]

SAMPLE_VAULT = REPO / "sample_vault"

SMALL_VAULT_FILES = {
    "MEMORY.md": "# MEMORY\n\n## Decisions\n- Billing runs on PostgreSQL 16. #pin\n",
    "memory/2026-11-20.md": (
        "# 2026-11-20\n\n## 09:15 · note\n- Standup moved to 09:45 on Thursdays.\n"
        "- Jonas approved the cutover plan. #important\n"
    ),
    "memory/2026-11-21.md": (
        "# 2026-11-21\n\n## 14:03 · flush · session 7f3a\n"
        "- ERR_LEDGER_409 comes from retried refunds.\n- Call the dentist on Friday. #todo\n"
    ),
    "notes/renderer.md": (
        "# Renderer\n\nThe invoice renderer uses WeasyPrint 63.1 and needs fonts-noto-core.\n"
    ),
}


def load_script(path: Path, name: str) -> ModuleType:
    """A bench script (not a package module) loaded by its path under `name`, its folder on
    `sys.path` as when it runs (for bench/_harness.py)."""
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def copy_vault(source: Path, target: Path) -> Path:
    """Copy a vault, `.vault/` included, keeping mtimes: an indexed copy is still up to date.
    The checkout's sample_vault/ is copied without its `.vault/`: the README's first command
    leaves one there, and tests build from the sample's Markdown alone."""
    ignore = shutil.ignore_patterns(".vault") if source.resolve() == SAMPLE_VAULT else None
    shutil.copytree(source, target, symlinks=True, ignore=ignore)
    return target


def indexed_logs(vault_dir: Path, logs: dict[str, str]) -> Any:
    """The vault at `vault_dir` with `logs` (day -> text) written as its daily logs, indexed."""
    from vault_memory import Vault

    for day, text in logs.items():
        (vault_dir / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.index()
    return vault
