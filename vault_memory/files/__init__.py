"""The source of truth: the vault's folder layout, its Markdown parsed without ever being changed,
MEMORY.md as sections of entries, and the file primitives every write goes through (confinement,
atomic guarded rewrites, locked appends, one git commit of exactly the files written), and the
scopes a vault's files belong to (`scopes`: whose they are, who may see them).

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import fsutil, gitops, scopes
    from .entries import MAX_ENTRY_BYTES, AddReport, Manager, ManageReport, append_note
    from .fsutil import sha256_text
    from .layout import Layout, template_dir
    from .memoryfile import (
        INBOX,
        MemoryDoc,
        MemoryEntry,
        entry_lines,
        heading_key,
        parse_memory,
        plain_text,
        render_memory,
    )
    from .notes import (
        DAILY_DIR,
        DIARY_DIR,
        KINDS,
        LIST_ITEM,
        MEMORY_FILE,
        TAG_NAME,
        Note,
        date_from_name,
        format_entry,
        iter_tags,
        note_kind,
        parse_note,
    )
    from .scopes import (
        Scope,
        check_scope,
        find_scopes,
        parse_scope,
        scope_of,
        scope_text,
        sees,
        split_scope,
        visible_scopes,
    )

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "AddReport": ("entries", "AddReport"),
    "DAILY_DIR": ("notes", "DAILY_DIR"),
    "DIARY_DIR": ("notes", "DIARY_DIR"),
    "INBOX": ("memoryfile", "INBOX"),
    "KINDS": ("notes", "KINDS"),
    "LIST_ITEM": ("notes", "LIST_ITEM"),
    "Layout": ("layout", "Layout"),
    "MAX_ENTRY_BYTES": ("entries", "MAX_ENTRY_BYTES"),
    "MEMORY_FILE": ("notes", "MEMORY_FILE"),
    "ManageReport": ("entries", "ManageReport"),
    "Manager": ("entries", "Manager"),
    "MemoryDoc": ("memoryfile", "MemoryDoc"),
    "MemoryEntry": ("memoryfile", "MemoryEntry"),
    "Note": ("notes", "Note"),
    "TAG_NAME": ("notes", "TAG_NAME"),
    "append_note": ("entries", "append_note"),
    "date_from_name": ("notes", "date_from_name"),
    "entry_lines": ("memoryfile", "entry_lines"),
    "format_entry": ("notes", "format_entry"),
    "fsutil": ("fsutil", None),
    "gitops": ("gitops", None),
    "heading_key": ("memoryfile", "heading_key"),
    "iter_tags": ("notes", "iter_tags"),
    "note_kind": ("notes", "note_kind"),
    "parse_memory": ("memoryfile", "parse_memory"),
    "parse_note": ("notes", "parse_note"),
    "plain_text": ("memoryfile", "plain_text"),
    "render_memory": ("memoryfile", "render_memory"),
    "Scope": ("scopes", "Scope"),
    "check_scope": ("scopes", "check_scope"),
    "find_scopes": ("scopes", "find_scopes"),
    "parse_scope": ("scopes", "parse_scope"),
    "scope_of": ("scopes", "scope_of"),
    "scope_text": ("scopes", "scope_text"),
    "scopes": ("scopes", None),
    "sees": ("scopes", "sees"),
    "sha256_text": ("fsutil", "sha256_text"),
    "split_scope": ("scopes", "split_scope"),
    "template_dir": ("layout", "template_dir"),
    "visible_scopes": ("scopes", "visible_scopes"),
}
__all__ = [
    "AddReport",
    "DAILY_DIR",
    "DIARY_DIR",
    "INBOX",
    "KINDS",
    "LIST_ITEM",
    "Layout",
    "MAX_ENTRY_BYTES",
    "MEMORY_FILE",
    "ManageReport",
    "Manager",
    "MemoryDoc",
    "MemoryEntry",
    "Note",
    "TAG_NAME",
    "append_note",
    "date_from_name",
    "entry_lines",
    "format_entry",
    "fsutil",
    "gitops",
    "heading_key",
    "iter_tags",
    "note_kind",
    "parse_memory",
    "parse_note",
    "plain_text",
    "render_memory",
    "Scope",
    "check_scope",
    "find_scopes",
    "parse_scope",
    "scope_of",
    "scope_text",
    "scopes",
    "sees",
    "sha256_text",
    "split_scope",
    "template_dir",
    "visible_scopes",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
