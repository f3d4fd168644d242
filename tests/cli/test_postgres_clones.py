"""`vault postgres clones` on a vault whose index is its own (SQLite): no clone shares it, so
the list is empty, and removing one is one `Error:` line that changes nothing. (Against a real
server: tests/index/test_pg_clones.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def test_a_local_index_has_no_clones_to_list_or_remove(
    vault_dir: Path, run_cli: Callable[..., Any], tree_state: Callable[[Path], Any]
) -> None:
    before = tree_state(vault_dir)
    listed = run_cli("--vault", str(vault_dir), "postgres", "clones", "--json")
    assert listed.exit_code == 0 and json.loads(listed.stdout) == [], listed.output
    text = run_cli("--vault", str(vault_dir), "postgres", "clones")
    assert text.exit_code == 0 and "not on a server" in text.stdout
    removed = run_cli("--vault", str(vault_dir), "postgres", "clones", "--remove", "1", "--yes")
    errors = [line for line in removed.stderr.splitlines() if line.startswith("Error:")]
    assert removed.exit_code == 1 and len(errors) == 1 and "no clone to remove" in errors[0]
    assert tree_state(vault_dir) == before
