"""Links between the vault's files, as Obsidian resolves them: what a note links to, what links
to it (with the line), and the links that lead to no file.

The index keeps each file's links as written (`links` table: line, target, heading, alias,
the line's text); they are resolved when asked (files/obsidian.py `LinkTargets`), against the
files the asker may see: the indexed notes and canvases, and every other file of the vault
(attachments, and notes Obsidian's "Excluded files" leave out of the index). So a note added
later resolves the links that named it, and a view bound to a scope resolves as if the vault
held only what it sees: a link never reveals the name or place of a file of a sibling scope
(such a link is unresolved there), and backlinks come only from files it may see.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ..files import LinkTargets, obsidian, scopes
from .backend import IndexBackend
from .rows import LinkRow

MAX_UNRESOLVED = 1000  # listed by `vault status` (the count is always complete)


@dataclass(frozen=True)
class LinkInfo:
    """One link: from `source` line `line` to `target` as written; `resolved` is the vault
    path it leads to (None: no file answers to it)."""

    source: str
    line: int
    target: str
    resolved: str | None
    subpath: str = ""
    display: str = ""
    embed: bool = False
    kind: str = "wikilink"
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def visible(viewer: scopes.Scope | None, paths: Iterable[str]) -> list[str]:
    return [p for p in paths if scopes.sees(viewer, scopes.scope_of(p))]


def targets(store: IndexBackend, viewer: scopes.Scope | None, others: Iterable[str]) -> LinkTargets:
    """Every file a link of `viewer` may lead to: the indexed files it sees and the others
    (`others`, as `indexer.scan` lists them: attachments, excluded notes)."""
    return LinkTargets([*visible(viewer, store.file_stats()), *visible(viewer, others)])


def _info(row: LinkRow, to: LinkTargets) -> LinkInfo:
    source, line, kind, target, subpath, display, embed, text = row
    return LinkInfo(
        source, line, target, to.resolve(target, source), subpath, display, embed, kind, text
    )


def outgoing(store: IndexBackend, to: LinkTargets, path: str) -> list[LinkInfo]:
    """The links of the file at `path`, in order."""
    return [_info(row, to) for row in store.links(paths=[path])]


def incoming(
    store: IndexBackend, to: LinkTargets, path: str, viewer: scopes.Scope | None
) -> list[LinkInfo]:
    """The links that lead to `path`, from the files `viewer` sees, by source and line."""
    rows = store.links(keys=[obsidian.file_key(path)])
    found = []
    for row in rows:
        if not scopes.sees(viewer, scopes.scope_of(row[0])):
            continue
        info = _info(row, to)
        if info.resolved == path:
            found.append(info)
    return found


def unresolved(store: IndexBackend, to: LinkTargets, viewer: scopes.Scope | None) -> list[LinkInfo]:
    """The links of the files `viewer` sees that lead to no file it sees."""
    found = []
    for row in store.links():
        if scopes.sees(viewer, scopes.scope_of(row[0])):
            info = _info(row, to)
            if info.resolved is None:
                found.append(info)
    return found
