"""`vault scopes`: every scope of a vault with its files on disk and its units in the index.

Reads folder listings, stats and the index's counts; never a file's text, never a write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import CONFIG_FILE, Config
from ..files import note_kind, scopes
from .indexer import scan
from .status import scope_counts


@dataclass
class ScopeInfo:
    """One scope of a vault: its files on disk and units in the index."""

    scope: scopes.Scope
    files: int = 0  # Markdown files on disk
    units: int = 0  # units in the index
    memory: bool = False  # it has a MEMORY.md
    daily_logs: int = 0
    settings: bool = False  # it has a vault.toml of its own
    bindable: bool = True  # its names are scope names (else: a folder nobody can bind to)

    @property
    def name(self) -> str:
        return scopes.scope_text(self.scope)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.name,
            "files": self.files,
            "units": self.units,
            "memory": self.memory,
            "daily_logs": self.daily_logs,
            "settings": self.settings,
            "bindable": self.bindable,
        }


def list_scopes(config: Config) -> list[ScopeInfo]:
    """The scopes of the vault of `config` (those its scope may see, when it is bound to
    one), the root first: the folders under scopes/, and any scope the index still holds."""
    root = config.root
    found: dict[scopes.Scope, ScopeInfo] = {(): ScopeInfo(())}
    for scope in scopes.find_scopes(root):
        found[scope] = ScopeInfo(scope, bindable=all(map(scopes.is_scope_name, scope)))
    for relpath in scan(root, scope=config.scope, allow_hardlinks=config.security.allow_hardlinks):
        info = found.setdefault(scopes.scope_of(relpath), ScopeInfo(scopes.scope_of(relpath)))
        info.files += 1
        kind = note_kind(relpath)
        info.memory = info.memory or kind == "memory"
        info.daily_logs += kind == "daily"
    for name, (_, units) in scope_counts(config).items():
        owner = tuple(name.split("/")) if name else ()
        found.setdefault(owner, ScopeInfo(owner)).units = units
    for scope, info in found.items():
        info.settings = bool(scope) and (root / scopes.scope_prefix(scope) / CONFIG_FILE).is_file()
    shown = [info for scope, info in found.items() if scopes.sees(config.scope, scope)]
    return sorted(shown, key=lambda info: info.scope)
