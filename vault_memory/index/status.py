"""`vault status`: what the cache holds and how far the files have drifted from it, for
either index backend. Reads the files' stats (and a racy or moved file's content), never
writes."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import VaultError
from ..files import fsutil, scopes
from .backend import IndexBackend
from .indexer import fingerprint, racy_files, scan
from .registry import capabilities_of, index_file, open_backend
from .rows import FileStat, ScopeCount, SkippedFile
from .store import CorruptIndexError, SchemaVersionError, Store


def _index_totals(info: dict[str, Any], store: IndexBackend, shown: Sequence[str] | None) -> None:
    """What `status` says of any index backend: its counts, model and last run."""
    model = store.get_meta("model_id") or None
    info.update(store.counts(model, shown))
    info["flagged_units"] = store.flagged_count(shown)
    info["indexed"] = True
    info["model"] = model
    last = store.get_meta("last_index_at")
    info["last_index_at"] = float(last) if last else None
    info["pending_embeddings"] = int(store.get_meta("embeddings_pending", "0") or 0)
    info["embedding_error"] = store.get_meta("embeddings_error") or None


def _index_held(
    info: dict[str, Any],
    store: IndexBackend,
    shown: Sequence[str] | None,
    viewer: scopes.Scope | None,
    others: set[str],
) -> tuple[dict[str, FileStat], dict[str, SkippedFile]]:
    """What `status` reads of any index backend: its totals, the unresolved links and the
    viewer's own counts into `info`; returns the files it holds (those the viewer sees) and
    the files it set aside as unreadable."""
    from . import links

    _index_totals(info, store, shown)
    indexed = store.file_stats()
    held = store.skipped()
    lost = links.unresolved(store, links.targets(store, viewer, others), viewer)
    info["unresolved_links"] = len(lost)
    info["unresolved"] = [link.to_dict() for link in lost[: links.MAX_UNRESOLVED]]
    if viewer is not None:
        indexed = {p: row for p, row in indexed.items() if scopes.sees(viewer, scopes.scope_of(p))}
        own = store.scope_counts().get(scopes.scope_text(viewer), (0, 0))
        info["scope"].update(files=own[0], units=own[1])
    return indexed, held


def _changed(
    root: Path,
    disk: dict[str, os.stat_result],
    indexed: dict[str, FileStat],
    racy: set[str],
    by_content: bool,
) -> int:
    """How many files the index holds whose content changed: a stat other than recorded
    (`by_content`: and a content other than recorded: another machine's checkout has other
    mtimes) or, for a racy file (same stat, rewritten within the file-time tick of the run
    that read it), a content other than recorded. Reads only those files."""
    changed = 0
    for path, st in disk.items():
        row = indexed.get(path)
        if row is None:
            continue
        moved = (st.st_mtime_ns, st.st_size) != (row.mtime_ns, row.size)
        if not (moved and by_content) and not (path in racy and not moved):
            changed += moved
            continue
        try:
            text = (root / path).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            changed += 1
            continue
        changed += fsutil.sha256_text(text) != row.sha256
    return changed


def _set_aside_skipped(
    info: dict[str, Any], disk: dict[str, os.stat_result], held: dict[str, SkippedFile]
) -> list[str]:
    """A file that could not be read, unchanged since, is skipped (with the reason), not
    drift: moved from `disk` to `info["skipped"]`; returns those paths."""
    moved = [
        path
        for path, st in disk.items()
        if path in held and (held[path].mtime_ns, held[path].size) == (st.st_mtime_ns, st.st_size)
    ]
    for path in moved:
        info["skipped"][path] = held[path].reason
        del disk[path]
    return moved


def status(config: Config) -> dict[str, Any]:
    """What the cache holds and how far the files have drifted from it. Writes nothing.

    Settings bound to a scope (`config.scope`) count only what that scope may see, and add
    `scope`: its name, the scopes it sees and its own files and units."""
    cache = config.cache_dir
    db = index_file(config)
    info: dict[str, Any] = {
        "vault": str(config.root),
        "cache": str(cache),
        "cache_bytes": cache_size(cache) if cache.is_dir() else 0,
        "indexed": False,
        "files": 0,
        "units": 0,
        "embedded_units": 0,
        "flagged_units": 0,  # units that read as an instruction to a model (files/injection)
        "model": None,
        "configured_model": config.index.model,
        "provider": config.index.provider,
        "pending_embeddings": 0,
        "embedding_error": None,
        "last_index_at": None,
        "drift": None,
        "problem": None,
        "damaged": [],
        "skipped": {},
        "unresolved_links": 0,  # links that lead to no file (Obsidian's "unresolved")
        "unresolved": [],  # the first of them (index/links.py)
    }
    _name_backend(config, info)
    viewer = config.scope
    others: set[str] = set()
    disk = scan(
        config.root,
        skipped=info["skipped"],  # hard-linked files too, with the reason and the setting
        scope=viewer,
        others=others,
        allow_hardlinks=config.security.allow_hardlinks,
    )
    shown: list[str] | None = None
    if viewer is not None:
        shown = [scopes.scope_text(s) for s in scopes.visible_scopes(viewer)]
        info["scope"] = {"name": shown[-1], "sees": shown, "files": 0, "units": 0}
    if not capabilities_of(config).local_file:
        return _server_status(config, info, disk, shown, viewer, others)
    if cache.exists() and not cache.is_dir() or db.exists() and not db.is_file():
        what = ".vault is a file" if not cache.is_dir() else ".vault/index.sqlite is not a file"
        info["problem"] = f"damaged: {what}. `vault doctor` (or `vault index`) repairs it"
        info["damaged"] = [what]
        return info
    if not db.exists():
        info["drift"] = {"new": len(disk), "changed": 0, "deleted": 0}
        info["problem"] = "not indexed yet: run `vault index`"
        return info
    store = Store(db, readonly=True)
    try:
        indexed, held = _index_held(info, store, shown, viewer, others)
        racy = racy_files(store)
    except (CorruptIndexError, sqlite3.DatabaseError) as exc:
        damage = f"the index is damaged ({exc})"
        if isinstance(exc, SchemaVersionError):
            damage = str(exc)
        info["problem"] = f"{damage}: `vault index` will rebuild it"
        info["damaged"] = [damage]
        return info
    finally:
        store.close()
    for path in _set_aside_skipped(info, disk, held):
        indexed.pop(path, None)

    from .integrity import damage as find_damage

    try:
        model = fingerprint(config.index)
    except VaultError:
        model = None  # a provider that is not set up: said elsewhere in the status
    damaged = find_damage(config, model)
    if damaged:
        info["damaged"] = damaged
        info["problem"] = (
            f"damaged: {'; '.join(damaged)}. `vault doctor` repairs it "
            "(`vault index` and searches heal it too)"
        )
    info["drift"] = {
        "new": sum(1 for p in disk if p not in indexed),
        "changed": _changed(config.root, disk, indexed, racy, by_content=False),
        "deleted": sum(1 for p in indexed if p not in disk),
    }
    return info


def _server_status(
    config: Config,
    info: dict[str, Any],
    disk: dict[str, os.stat_result],
    shown: list[str] | None,
    viewer: scopes.Scope | None,
    others: set[str],
) -> dict[str, Any]:
    """`status` of an index on a server: what it holds against the files here (drift as for
    SQLite; by content where machines share the index); a server that cannot be reached is
    the problem shown."""
    store = open_backend(config, readonly=True)
    info["server"] = store.location
    try:
        info["versions"] = store.versions()
        if not store.exists():
            info["drift"] = {"new": len(disk), "changed": 0, "deleted": 0}
            info["problem"] = "not indexed yet on the server: run `vault index`"
            return info
        indexed, held = _index_held(info, store, shown, viewer, others)
        racy = racy_files(store)
    except VaultError as exc:  # the server cannot be reached: say so, change nothing
        info["problem"] = info["server_error"] = str(exc)  # the command fails (exit 1)
        return info
    finally:
        store.close()
    _set_aside_skipped(info, disk, held)
    info["drift"] = {
        "new": sum(1 for p in disk if p not in indexed),
        "changed": _changed(config.root, disk, indexed, racy, store.capabilities.shared),
        "deleted": sum(1 for p in indexed if p not in disk),
    }
    return info


def _name_backend(config: Config, info: dict[str, Any]) -> None:
    """Which backend holds the index, and where: the settings name it, nothing is opened
    (the server's software versions are read by `_server_status` when it answers)."""
    info["backend"] = capabilities_of(config).name
    info["server"] = None
    info["dsn"] = None
    info["versions"] = {}
    if capabilities_of(config).local_file:
        info["versions"] = {"sqlite": sqlite3.sqlite_version}
        return
    from .pgconnect import shown_dsn
    from .pgstore import dsn_of

    settings = config.index
    info["vault_id"] = settings.vault_id or config.root.name
    try:
        info["dsn"] = shown_dsn(dsn_of(settings.dsn, settings.dsn_env))
    except VaultError:
        info["dsn"] = None  # not set: opening the backend says so as the problem


def scope_counts(config: Config) -> dict[str, ScopeCount]:
    """scope ("org/acme", "" for the root) -> its files and units in the index; empty when
    there is no usable index. Writes nothing."""
    if capabilities_of(config).local_file and not index_file(config).exists():
        return {}
    store = open_backend(config, readonly=True)
    try:
        return store.scope_counts()
    except (CorruptIndexError, sqlite3.DatabaseError):
        return {}
    finally:
        store.close()


def cache_size(folder: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(dirpath, name))
    return total
