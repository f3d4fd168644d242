"""Where a vault keeps what: its folder, settings, cache and dated files, as one frozen value.

The facade (`Vault`) makes one `Layout` from its settings and hands it down to the features
(capture, entries, context, dream): they need to know where things are, not the facade, so
none of them imports it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..config import Config
from . import fsutil
from .notes import DAILY_DIR, DIARY_DIR


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

    def daily_relpath(self, day: dt.date) -> str:
        return f"{DAILY_DIR}/{day.isoformat()}.md"

    def daily_path(self, day: dt.date) -> tuple[Path, str]:
        """The day's log as (real path, vault-relative path), confined to the vault."""
        return fsutil.resolve_in_vault(self.root, self.daily_relpath(day))

    def diary_relpath(self, day: dt.date) -> str:
        return f"{DIARY_DIR}/{day.isoformat()}.md"

    @staticmethod
    def daily_header(day: dt.date) -> str:
        """What a new daily log starts with (templates/daily.md)."""
        return _daily_template().format(date=day.isoformat())
