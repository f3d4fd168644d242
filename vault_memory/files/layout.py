"""Where a vault keeps what: its folder, settings, cache and dated files, as one frozen value.

The facade (`Vault`) makes one `Layout` from its settings and hands it down to the features
(capture, entries, context, dream): they need to know where things are, not the facade, so
none of them imports it.

The settings name a scope (`Config.scope`, see files/scopes.py): a bound layout's MEMORY.md,
daily logs and diary are the scope's (`scopes/org/acme/MEMORY.md`, …), `resolve` refuses what
the scope may not see and `resolve_own` what it may not write. An unbound layout (scope None)
is the whole vault, as it always was: its files are the root's and every path is allowed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..config import Config
from ..errors import ScopeAccessError
from . import fsutil
from .notes import DAILY_DIR, DIARY_DIR, MEMORY_FILE
from .scopes import (
    Scope,
    folder_scope,
    lexical_scopes,
    scope_of,
    scope_prefix,
    sees,
    visible_scopes,
)


def template_dir() -> Path:
    """Templates ship inside the wheel as vault_memory/templates; a source checkout keeps them
    at the top level."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "templates"
    if packaged.is_dir():
        return packaged
    return package.parent / "templates"


@cache
def _daily_template() -> str:
    return (template_dir() / "daily.md").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Layout:
    """One vault's folder and settings, and the paths of its dated files."""

    config: Config

    @property
    def root(self) -> Path:
        return self.config.root

    @property
    def cache_dir(self) -> Path:
        return self.config.cache_dir

    # -- the scope ------------------------------------------------------------------------

    @property
    def bound(self) -> bool:
        """Whether the layout is bound to a scope (else it is the whole vault)."""
        return self.config.scope is not None

    @property
    def scope(self) -> Scope:
        """The bound scope; () (the root's files) for an unbound layout."""
        return self.config.scope or ()

    @property
    def prefix(self) -> str:
        """The folder of the scope's files, vault-relative, with its final slash ("" at root)."""
        return scope_prefix(self.scope)

    @property
    def memory_relpath(self) -> str:
        return self.prefix + MEMORY_FILE

    @property
    def daily_dir(self) -> str:
        return self.prefix + DAILY_DIR

    @property
    def diary_dir(self) -> str:
        return self.prefix + DIARY_DIR

    def shared_memory(self) -> list[str]:
        """The MEMORY.md of each scope above this one, the nearest first (none unbound)."""
        if not self.bound:
            return []
        above = visible_scopes(self.scope)[:-1]
        return [scope_prefix(s) + MEMORY_FILE for s in reversed(above)]

    @property
    def allow_hardlinks(self) -> bool:
        """Whether files with several hard links are read and written ([security]
        allow_hardlinks; fsutil refuses them otherwise)."""
        return self.config.security.allow_hardlinks

    def sees(self, relpath: str) -> bool:
        return sees(self.config.scope, scope_of(relpath))

    def owns(self, relpath: str) -> bool:
        return not self.bound or scope_of(relpath) == self.scope

    def resolve(self, given: str) -> tuple[Path, str]:
        """A user-given path as (real path, vault-relative path), confined to the vault and,
        when bound, to what the scope may see: the path as written (every folder it passes
        through, `..` applied) and the file it leads to (symlinks followed) must both be of
        the scope or of one above it. `ScopeAccessError` otherwise."""
        return self._resolve(given, write=False)

    def resolve_own(self, given: str) -> tuple[Path, str]:
        """`resolve` for a file to write: the scope's own files only."""
        return self._resolve(given, write=True)

    def _resolve(self, given: str, write: bool) -> tuple[Path, str]:
        real, relpath = fsutil.resolve_in_vault(self.root, given)
        if not self.bound:
            return real, relpath
        for passed in lexical_scopes(str(given)):
            if not sees(self.scope, passed):
                raise ScopeAccessError(str(given), passed, self.scope, write)
        owner = folder_scope(relpath) if real.is_dir() else scope_of(relpath)
        if not (owner == self.scope if write else sees(self.scope, owner)):
            raise ScopeAccessError(str(given), owner, self.scope, write)
        return real, relpath

    # -- dated files ------------------------------------------------------------------------

    def daily_relpath(self, day: dt.date) -> str:
        return f"{self.daily_dir}/{day.isoformat()}.md"

    def daily_path(self, day: dt.date) -> tuple[Path, str]:
        """The day's log as (real path, vault-relative path), confined to the vault (and to
        the scope's own files)."""
        return self.resolve_own(self.daily_relpath(day))

    def diary_relpath(self, day: dt.date) -> str:
        return f"{self.diary_dir}/{day.isoformat()}.md"

    @staticmethod
    def daily_header(day: dt.date) -> str:
        """What a new daily log starts with (templates/daily.md)."""
        return _daily_template().format(date=day.isoformat())
