"""Keeping `.vault/` exact: scan the files, plan the changes, apply them in batches.

Only reads the vault. One writer at a time (`.vault/write.lock`); readers never wait (SQLite
WAL, Whoosh generations). A damaged or outdated cache is rebuilt from the files with one
warning; a no-op run stats the files and writes nothing.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config, IndexSettings
from ..errors import (
    ALLOW_HARDLINKS,
    HARD_LINKS,
    CannotWriteError,
    HardLinkedError,
    UnreadableNoteError,
    VaultError,
    left_out_for_links,
)
from ..files import LinkTargets, fsutil, parse_note, scopes
from .backend import IndexBackend
from .plan import ChangePlan, DiskFile, IndexedFile, plan_changes
from .registry import index_file, open_backend
from .rows import Embedding, FileStat, NewLink, NewUnit, Property, TextToEmbed
from .store import (
    KEPT,
    CorruptIndexError,
    SchemaVersionError,
    cannot_write_index,
    disk_problem,
)
from .units import canvas_fields, make_canvas_units, make_units, note_fields

log = logging.getLogger("vault_memory")

IGNORED_DIRS = {".vault", ".git", ".obsidian", ".trash", "node_modules", "__pycache__"}
MARKDOWN_SUFFIXES = (".md", ".markdown")
CANVAS_SUFFIX = ".canvas"  # Obsidian's JSON Canvas files: their text nodes are indexed too
OBSIDIAN_SETTINGS = ".obsidian/app.json"  # where Obsidian keeps its "Excluded files"
FILE_BATCH = 200
WRITE_LOCK = "write.lock"  # in .vault/: one writer at a time
CACHE_NAME = ".vault"
EMBED_BATCH = 256  # texts per SQLite commit; fastembed itself runs batches of `batch_size`

Progress = Callable[[str, int, int], None]  # (phase, done, total)


def is_indexable(relpath: str) -> bool:
    """Markdown files outside dot-folders and the cache; editors' swap and temp files excluded."""
    *folders, name = relpath.split("/")
    if any(p.startswith(".") or p in IGNORED_DIRS for p in folders):
        return False
    return _indexable_name(name)


def _indexable_name(name: str) -> bool:
    if name.startswith((".", "#", "~$")) or name.endswith("~"):
        return False
    return name.lower().endswith((*MARKDOWN_SUFFIXES, CANVAS_SUFFIX))


_exclusions: dict[str, tuple[tuple[int, int], Any]] = {}


def obsidian_exclusions(root: Path) -> Any:
    """The compiled "Excluded files" of the vault's Obsidian settings (see
    files/obsidian.py), read again only when `.obsidian/app.json` changes; None without any."""
    path = root / OBSIDIAN_SETTINGS
    try:
        st = path.stat()
    except OSError:
        return None
    key = str(root)
    known = _exclusions.get(key)
    if known is not None and known[0] == (st.st_mtime_ns, st.st_size):
        return known[1]
    from ..files import obsidian

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    filters = obsidian.ignore_filters(text)
    compiled = obsidian.compile_filters(filters) if filters else None
    _exclusions[key] = ((st.st_mtime_ns, st.st_size), compiled)
    return compiled


def excluded_by_obsidian(relpath: str, exclusions: Any) -> bool:
    from ..files import obsidian

    return exclusions is not None and obsidian.is_excluded(relpath, exclusions)


def scan(
    root: Path,
    under: str = "",
    skipped: dict[str, str] | None = None,
    scope: scopes.Scope | None = None,
    others: set[str] | None = None,
    allow_hardlinks: bool = False,
    hard_linked: dict[str, int] | None = None,
) -> dict[str, os.stat_result]:
    """Indexable files under `root` (or only under its folder `under`) with their stat;
    symlinked folders are not entered, and file symlinks that loop, dangle or lead outside the
    vault are skipped (with the reason in `skipped`, when given). With `scope`, only the
    folders of files that scope may see are entered (the others are not even listed). Files
    Obsidian's "Excluded files" name are left out; they and every other file that is not
    indexed (attachments: images, PDFs) are added to `others`, when given (link targets).
    Unless `allow_hardlinks`, files with more than one hard link are skipped too (they may be
    another scope's or outside the vault: fsutil.foreign_links), each with its number of links
    in `hard_linked`, when given; the stat that finds them is the one every file gets anyway.

    os.scandir rather than os.walk and pathlib: the no-op `vault index` of a large vault is
    mostly this loop, and a directory entry knows its type without another system call."""
    found: dict[str, os.stat_result] = {}
    real_root = Path(os.path.realpath(root))
    exclusions = obsidian_exclusions(root)
    pending = [(str(root / under), f"{under}/")] if under else [(str(root), "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if skipped is not None and _indexable_name(name) and not name.startswith("."):
                        skipped[prefix + name] = fsutil.FOLDER_NAMED_LIKE_A_NOTE
                    if (
                        not name.startswith(".")
                        and name not in IGNORED_DIRS
                        and (
                            scope is None or scopes.sees(scope, scopes.folder_scope(prefix + name))
                        )
                    ):
                        pending.append((entry.path, f"{prefix}{name}/"))
                    continue
                if not _indexable_name(name) or (
                    exclusions is not None and excluded_by_obsidian(prefix + name, exclusions)
                ):
                    if others is not None and not name.startswith("."):
                        others.add(prefix + name)
                    continue
                if not _utf8(name):
                    if skipped is not None:
                        skipped[_shown(prefix + name)] = (
                            "its name is not valid UTF-8; rename it to index it"
                        )
                    continue
                if entry.is_symlink():
                    problem = fsutil.link_problem(entry.path, real_root) or _scope_problem(
                        entry.path, real_root, prefix + name
                    )
                    if problem is not None:
                        if skipped is not None:
                            skipped[prefix + name] = problem
                        continue
                    st = entry.stat()
                    if not stat.S_ISREG(st.st_mode):
                        if skipped is not None:
                            skipped[prefix + name] = f"a symlink to {fsutil.not_a_file(st.st_mode)}"
                        continue
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                else:  # a pipe, a socket, a device: reported, never opened
                    if skipped is not None:
                        mode = entry.stat(follow_symlinks=False).st_mode
                        skipped[prefix + name] = fsutil.not_a_file(mode)
                    continue
            except OSError:
                continue
            links = fsutil.foreign_links(st, allow_hardlinks)
            if links:
                _skip_linked(prefix + name, links, skipped, hard_linked)
                continue
            found[prefix + name] = st
    return found


def _skip_linked(
    relpath: str, links: int, skipped: dict[str, str] | None, hard_linked: dict[str, int] | None
) -> None:
    if skipped is not None:
        skipped[relpath] = f"{HARD_LINKS.format(links=links)}; {ALLOW_HARDLINKS}"
    if hard_linked is not None:
        hard_linked[relpath] = links


def _utf8(name: str) -> bool:
    """Whether a file name (as os.scandir decodes it, undecodable bytes as surrogates) is
    valid UTF-8: the index, the JSON output and the terminal all need it."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(relpath: str) -> str:
    """A path that may hold undecodable bytes, printable: those bytes as \\xNN."""
    return os.fsencode(relpath).decode("utf-8", "backslashreplace")


def _scope_problem(path: str | os.PathLike[str], real_root: Path, relpath: str) -> str | None:
    """Why the symlink at `path` (vault-relative `relpath`) must not be indexed under its own
    path: it leads into a scope its own scope may not see (files/scopes.py), so indexing it
    there would show that scope's text to the wrong agents."""
    target = Path(os.path.realpath(path)).relative_to(real_root).as_posix()
    return scopes.link_problem(relpath, target)


def _stat_in_vault(
    root: Path,
    real_root: Path,
    relpath: str,
    allow_hardlinks: bool = False,
    hard_linked: dict[str, int] | None = None,
) -> os.stat_result | None:
    """The stat of `relpath` if `scan` would find it: a regular file inside the vault, not
    reached through a symlinked folder, and if itself a symlink, one that stays inside (and
    inside the scopes its own scope sees), with one hard link unless `allow_hardlinks` (the
    others are put in `hard_linked`, when given)."""
    parts = relpath.split("/")
    if "" in parts or os.path.isabs(relpath) or not _utf8(relpath):
        return None
    path = root
    try:
        for part in parts[:-1]:
            path = path / part
            if path.is_symlink():
                return None
        path = path / parts[-1]
        if path.is_symlink() and (
            fsutil.link_problem(path, real_root) is not None
            or _scope_problem(path, real_root, relpath) is not None
        ):
            return None
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    links = fsutil.foreign_links(st, allow_hardlinks)
    if links:
        _skip_linked(relpath, links, None, hard_linked)
        return None
    return st


def fs_clock_ns(folder: Path) -> int | None:
    """The file system's clock now (the mtime a file written now gets, in ns), or None when
    `folder` cannot be written: a file made and removed in it."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=".clock.", dir=folder)
    except OSError:
        return None
    try:
        os.write(fd, b"\0")
        return os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def model_id_for(name: str) -> str | None:
    from .embedder import BUNDLED_MODEL, BUNDLED_MODEL_ID

    if name.strip().lower() in {"", "none"}:
        return None
    return BUNDLED_MODEL_ID if name.strip().lower() == BUNDLED_MODEL.lower() else name.strip()


def fingerprint(settings: IndexSettings) -> str | None:
    """The id the index keeps vectors under for these settings (None: no embeddings): the
    bundled model's, a fastembed model's name, or `openai:MODEL[:Nd]` for a provider."""
    provider = settings.provider.strip().lower()
    if provider in {"", "fastembed"} and settings.dimensions >= 0:  # remote.py (http) unused
        return model_id_for(settings.model)
    from .remote import check_provider, remote_model_id

    if check_provider(settings) == "openai":
        if settings.model.strip().lower() in {"", "none"}:
            return None
        return remote_model_id(settings)
    return model_id_for(settings.model)


_embedders: dict[tuple[str, int | None], Any] = {}
_embedders_lock = threading.Lock()


def shared_embedder(model: str, threads: int | None = None) -> Any:
    """The loaded embedder for (`model`, `threads`), loaded once per process: every `Index`
    (one per vault, the watcher's, the tests') shares it. Raises `ModelUnavailable`."""
    from .embedder import load_embedder, model_disabled

    key = (model.strip().lower(), threads or None)
    disabled = model_disabled()
    with _embedders_lock:
        if key not in _embedders or disabled:  # load_embedder raises the disabled error
            _embedders[key] = load_embedder(model, threads=threads)
        return _embedders[key]


_query_encoders: dict[tuple[str, int | None], Any] = {}


def prefetch_query_encoder(model: str, threads: int | None = None) -> None:
    """Start loading the query encoder in a background thread. onnxruntime builds its session
    (0.3 s) without holding the GIL, so a cold search imports Whoosh, maps the unit table and
    runs the keyword search meanwhile; `shared_query_encoder` then waits for the result."""
    from .embedder import model_disabled

    if model_disabled():
        return
    if (model.strip().lower(), threads or None) in _query_encoders:
        return

    # Two threads importing numpy at once can fail ("partially initialized module"):
    # the caller's thread imports it first.
    import numpy  # noqa: F401

    def load() -> None:
        with contextlib.suppress(Exception):  # the caller's own load reports the failure
            shared_query_encoder(model, threads)

    threading.Thread(target=load, name="vault-query-encoder").start()  # see QueryEncoder


def shared_query_encoder(model: str, threads: int | None = None) -> Any:
    """A light query-only encoder for the bundled model (see `QueryEncoder`), once per
    process; None for other models or when it cannot run. Raises `ModelUnavailable`."""
    from .embedder import load_query_encoder, model_disabled

    if model_disabled():
        return None
    key = (model.strip().lower(), threads or None)
    with _embedders_lock:
        if key not in _query_encoders:
            _query_encoders[key] = load_query_encoder(model, threads)
        return _query_encoders[key]


FEW_TEXTS = 64  # texts a run over a few files embeds with the query encoder (`_few_texts_embedder`)


class _OneAtATime:
    """An embedder of documents made of a query encoder: one text at a time."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.dims = encoder.dims
        self.model_id = encoder.model_id

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> Any:
        import numpy as np

        rows = [self.encoder.embed_query(text) for text in texts]
        return np.stack(rows) if rows else np.zeros((0, self.dims), dtype=np.float32)


@dataclass
class IndexReport:
    new: int = 0
    modified: int = 0
    moved: int = 0
    deleted: int = 0
    unchanged: int = 0
    unreadable: int = 0
    skipped_links: int = 0  # symlinks that loop, dangle or lead outside; pipes, devices, sockets
    files: int = 0
    units: int = 0
    units_embedded: int = 0
    embedded_units: int = 0
    pending_units: int = 0  # units left without a vector by a failing provider
    model: str | None = None
    rebuilt: str | None = None  # why the cache was rebuilt, if it was
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Index:
    """The derived cache of one vault."""

    def __init__(self, config: Config, creates_cache: bool = True) -> None:
        """creates_cache=False: the SQLite index is opened, never created (see
        `Vault.cache_writes`)."""
        self.config = config
        self.root = config.root
        self.cache = config.cache_dir
        self.store: IndexBackend = open_backend(config, create=creates_cache)
        #: What the backend can do (backend.py): asked instead of its name.
        self.capabilities = self.store.capabilities
        from .fulltext import FullText

        self.fulltext = FullText(self.cache / "whoosh")
        self.model_id = fingerprint(config.index)
        self.remote = config.index.provider.strip().lower() == "openai"
        self._embedder: Any = None
        self._spare_cores = False  # run(spare_cores=...)
        self._embedder_failed: str | None = None
        self._embed_problem: str | None = None  # why the last run left units without vectors
        self._embed_repairs = True
        self._store_rebuilt = False
        self._began_ns: int | None = None  # the file system's clock as the last plan began
        self._stats_memo: tuple[Any, dict[str, FileStat]] | None = None
        #: The files said (on stderr) to be left out for their hard links: each said once.
        self.said_linked: set[str] = set()
        # The keyword index writer's memo of texts analysed for SQLite (`_terms_of`)
        self._known_terms: dict[str, list[str]] | None = None

    # -- model ------------------------------------------------------------------------------

    def embedder(self, texts: int = 0) -> Any:
        """The loaded embedder, or None (keyword-only) after one warning. `texts`: how many
        the caller is about to embed; a run that may use spare cores (`run(spare_cores=True)`)
        and embeds `BULK_TEXTS` or more loads it with `spare_threads()` when `index.threads`
        is left to the measured default (the embedder is then kept for this index's later
        runs)."""
        if self._embedder is None and self._embedder_failed is None and self.model_id:
            from .embedder import (
                BULK_TEXTS,
                DEFAULT_THREADS,
                ModelUnavailable,
                model_disabled,
                spare_threads,
            )

            if self.remote:
                from .remote import RemoteEmbedder

                try:
                    if model_disabled():  # the switch tests and users rely on: no model at all
                        raise ModelUnavailable(
                            self.model_id,
                            "disabled by VAULT_MODEL_DISABLED",
                            "Unset it to use semantic search.",
                        )
                    self._embedder = RemoteEmbedder.from_settings(self.config.index)
                except VaultError as exc:
                    self._embedder_failed = str(exc)
                    log.warning("%s Indexing and searching by keywords only.", exc)
                return self._embedder
            threads = self.config.index.threads or None
            if threads is None and texts >= BULK_TEXTS and self._spare_cores:
                threads = spare_threads()
            try:
                self._embedder = shared_embedder(
                    self.config.index.model, None if threads == DEFAULT_THREADS else threads
                )
            except ModelUnavailable as exc:
                self._embedder_failed = str(exc)
                log.warning("%s Indexing and searching by keywords only.", exc)
        return self._embedder

    def has_vectors(self) -> bool:
        """Whether the index holds this model's vectors (or is empty: nothing to embed)."""
        store = self.store
        if not store.exists():
            return False
        if store.get_meta("model_id") == self.model_id:
            return True
        return not store.has_units()

    def pending_vectors(self) -> tuple[int, str]:
        """Units a provider's failure left without their vector in the last run, and why
        (0 and "" when none: searches may use the vectors)."""
        store = self.store
        if not store.exists():
            return 0, ""
        pending = int(store.get_meta("embeddings_pending", "0") or 0)
        if pending and store.get_meta("embeddings_pending_model") != self.model_id:
            return 0, ""  # recorded for another model (settings changed since)
        return pending, store.get_meta("embeddings_error", "") or ""

    def prefetch_query_embedder(self) -> None:
        """Begin loading what `query_embedder` returns, in the background."""
        if self.remote:
            return
        if self.model_id and self._embedder_failed is None and self._embedder is None:
            prefetch_query_encoder(self.config.index.model, self.config.index.threads or None)

    def query_embedder(self) -> Any:
        """What embeds a search query: the light encoder for the bundled model (a cold CLI
        search never imports fastembed), else the full embedder; None (keyword-only) after
        one warning."""
        if not self.model_id or self._embedder_failed is not None:
            return None
        if self._embedder is not None or self.remote:
            return self.embedder()
        from .embedder import ModelUnavailable

        try:
            encoder = shared_query_encoder(
                self.config.index.model, self.config.index.threads or None
            )
        except ModelUnavailable as exc:
            self._embedder_failed = str(exc)
            log.warning("%s Searching by keywords only.", exc)
            return None
        return encoder if encoder is not None else self.embedder()

    # -- opening and healing ----------------------------------------------------------------

    def _reset(self) -> None:
        self._store_rebuilt = True
        self.store.reset()
        self.fulltext.reset()

    def _open_for_writing(self, rebuild: bool, whole: bool = True) -> str | None:
        """Open the store, rebuilding when asked or when damaged/outdated. Returns the reason.
        `whole=False` (a run over a few paths: a search's, the watcher's) leaves out SQLite's
        quick_check, a read of the whole file (0.6 s at 100,000 units); damage the run meets
        still makes it rebuild (`run`)."""
        self._check_writable()
        if rebuild:
            self._reset()
            reason: str | None = "requested with --rebuild"
        elif not self.store.exists():
            reason = None
            self.fulltext.reset()  # a Whoosh index without its SQLite twin cannot be trusted
        else:
            reason = None
            try:
                ok = self.store.quick_check()[0] if whole else "ok"
                if ok != "ok":
                    raise CorruptIndexError(f"integrity check: {ok}")
                lost = self.store.count_problem()
                if lost:
                    raise CorruptIndexError(lost)
            except (CorruptIndexError, sqlite3.DatabaseError) as exc:
                if disk_problem(exc):  # a full disk is no damage: rebuilding would lose it all
                    raise cannot_write_index(index_file(self.config), exc) from None
                reason = f"the index is damaged ({exc})"
                if isinstance(exc, SchemaVersionError):
                    reason = str(exc)
                log.warning("%s: rebuilding it from the files.", reason)
                self._reset()
        self.store.open()  # creates the schema
        return reason

    def _check_writable(self) -> None:
        """`CannotWriteError` when `.vault/` cannot be written (a read-only cache still
        answers searches; see Store)."""
        from .store import writable

        cache = self.cache
        if not self.capabilities.local_file:  # a server: .vault/ holds only this machine's part
            if cache.is_dir() and not os.access(cache, os.W_OK | os.X_OK):
                raise CannotWriteError(CACHE_NAME, f"the cache folder {cache} is read-only")
            return
        db = index_file(self.config)
        if self.store.write_problem:  # the disk refused a write: full, or an I/O error
            raise CannotWriteError(f"{CACHE_NAME}/{db.name}", self.store.write_problem, KEPT)
        if (
            self.store.fell_back
            or (cache.is_dir() and not os.access(cache, os.W_OK | os.X_OK))
            or (db.is_file() and not writable(db))
        ):
            raise CannotWriteError(
                f"{CACHE_NAME}/{db.name}",
                f"the cache folder {cache} is read-only (the index can be searched but not "
                "updated)",
            )

    def fulltext_needs_rebuild(self) -> str | None:
        dirty = self.store.get_meta("fulltext_dirty", "0")
        if dirty == "behind":  # PgStore: another machine changed the server since
            return "the index server changed since this machine's keyword index was written"
        if dirty != "0":
            return "the keyword index was interrupted mid-update"
        recorded = self.store.get_meta("fulltext_files")
        if recorded and recorded == self.fulltext.fingerprint():
            return None  # exactly the files the last write left: a stat, not a read
        if not self.fulltext.exists():
            return "the keyword index is missing" if self.store.counts(None)["units"] else None
        if recorded is not None and self._fulltext_copied():
            return None
        if recorded is not None:
            return "the keyword index files changed since vault-memory wrote them"
        try:
            self.fulltext.check()
        except Exception as exc:  # Whoosh raises many kinds of errors on damaged segments
            self.fulltext.close()
            return f"the keyword index is damaged ({type(exc).__name__}: {exc})"
        return None

    def _fulltext_copied(self) -> bool:
        """Whether the keyword index files, whose mtimes are not those recorded, hold what the
        last write left, by content (a copied or restored vault: `cp -r`, `rsync`, a git
        checkout); if so they are recorded again as they are, and nothing is rebuilt."""
        import json

        try:
            digests = json.loads(self.store.get_meta("fulltext_digests") or "{}")
        except ValueError:
            return False
        if not isinstance(digests, dict) or not digests or not self.fulltext.same_content(digests):
            return False
        log.info("the keyword index was copied (new file times, same content): kept.")
        with self.store.transaction() as conn:
            self.record_fulltext(conn)
        return True

    def record_fulltext(self, conn: sqlite3.Connection) -> None:
        """Record the keyword index files as the last write left them: their stat
        (`fingerprint`, checked by every run) and their digests (checked after a copy)."""
        import json

        try:
            known = json.loads(self.store.get_meta("fulltext_digests") or "{}")
        except ValueError:
            known = {}
        self.store.set_meta(conn, "fulltext_files", self.fulltext.fingerprint())
        self.store.set_meta(
            conn,
            "fulltext_digests",
            json.dumps(
                self.fulltext.digests(known if isinstance(known, dict) else {}), sort_keys=True
            ),
        )

    def rebuild_fulltext(self) -> None:
        """Re-create the Whoosh index from the units in SQLite (no embedding needed)."""
        from .fulltext import documents

        self.fulltext.rebuild(documents(self.store.fulltext_rows(), self.store.properties_of))
        with self.store.transaction() as conn:
            self.store.set_meta(conn, "fulltext_dirty", 0)
            self.store.set_meta(conn, "fulltext_pending", "[]")
            self.record_fulltext(conn)

    def fulltext_pending(self) -> list[str]:
        """The files whose units the keyword index does not hold as SQLite does yet: written
        by runs that deferred it (`run(defer_fulltext=True)`)."""
        import json

        if self.capabilities.shared or not self.store.exists():
            return []  # never deferred: what one machine lags behind by is not the server's
        try:
            found = json.loads(self.store.get_meta("fulltext_pending") or "[]")
        except ValueError:
            return []
        return found if isinstance(found, list) else []

    def catch_up_fulltext(self, lock_timeout: float = 10.0) -> None:
        """Bring the keyword index up to SQLite for the files runs deferred (one writer, one
        commit), before something reads it: a search with operators, the doctor."""
        if not self.fulltext_pending():
            return
        with self.writer_lock(lock_timeout):
            self._catch_up_fulltext()

    def _catch_up_fulltext(self) -> None:
        """`catch_up_fulltext` under the writer lock. Killed midway, the pending files stay
        recorded (done again: removing and adding a file's documents is idempotent)."""
        from .fulltext import documents

        pending = self.fulltext_pending()
        if not pending:
            return
        writer = self.fulltext.writer()
        try:
            writer.remove(pending)
            writer.add(documents(self.store.fulltext_rows(pending), self.store.properties_of))
            writer.commit()
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        fsutil.kill_point("index.after-fulltext-catch-up")
        with self.store.transaction() as conn:
            self.store.set_meta(conn, "fulltext_dirty", 0)
            self.store.set_meta(conn, "fulltext_pending", "[]")
            self.record_fulltext(conn)

    # -- the run ----------------------------------------------------------------------------

    def writer_lock(self, timeout: float = 60.0) -> contextlib.AbstractContextManager[None]:
        return fsutil.lock_file(self.cache / WRITE_LOCK, "index writer", timeout)

    def run(
        self,
        rebuild: bool = False,
        paths: Iterable[str] | None = None,
        progress: Progress | None = None,
        lock_timeout: float = 60.0,
        embed_repairs: bool = True,
        defer_fulltext: bool = False,
        spare_cores: bool = False,
    ) -> IndexReport:
        """Bring the cache in line with the files (all of them, or only `paths`).

        `embed_repairs=False` (a search healing the cache): when the index had to be rebuilt
        from the files, its vectors are left for the next `vault index`, and searches go by
        keywords meanwhile. `defer_fulltext=True` (a search's run over a few files): the
        keyword index (Whoosh, which only search operators read) is not written; the files
        it lags behind by are recorded with their units, and brought in by the next run
        that does not defer, by a search with operators, or by the doctor
        (`catch_up_fulltext`). `spare_cores=True` (a run its caller makes once, not the
        watcher's): a bulk embedding may take a second onnxruntime thread while the machine
        is idle (`embedder`)."""
        from .integrity import heal_cache_shape

        started = time.perf_counter()
        for finding in heal_cache_shape(self.cache):
            log.warning("%s", finding)
            self.store.close()
        self._embed_repairs = embed_repairs
        self._spare_cores = spare_cores
        self._defer_fulltext = defer_fulltext and paths is not None and not self.capabilities.shared
        self._store_rebuilt = False
        with self.writer_lock(lock_timeout):
            try:
                report = self._run(rebuild, paths, progress)
            except OSError as exc:
                if exc.errno not in fsutil.WRITE_ERRNOS:
                    raise
                self.store.close()  # what the run wrote of SQLite is rolled back
                where = Path(exc.filename).name if exc.filename else "whoosh/"
                reason = exc.strerror or str(exc)
                raise CannotWriteError(f"{CACHE_NAME}/{where}", reason, KEPT) from None
            except sqlite3.DatabaseError as exc:
                if disk_problem(exc):  # the disk's fault, not damage: keep the index
                    self.store.close()
                    raise cannot_write_index(index_file(self.config), exc) from None
                if self.store.readonly:
                    raise CannotWriteError(f"{CACHE_NAME}/index.sqlite", str(exc)) from None
                log.warning("the index is damaged (%s): rebuilding it from the files.", exc)
                self.store.close()
                report = self._run(True, None, progress)
                report.rebuilt = f"the index is damaged ({exc})"
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def _run(
        self, rebuild: bool, paths: Iterable[str] | None, progress: Progress | None
    ) -> IndexReport:
        report = IndexReport(model=self.model_id)
        report.rebuilt = self._open_for_writing(rebuild, whole=paths is None)
        self._words_anew()
        self._units_anew()
        self._vectors_anew()
        store = self.store
        stored_model = store.get_meta("model_id")
        if stored_model and self.model_id and stored_model != self.model_id:
            log.warning(
                "embedding model changed (%s -> %s): embedding the units that have no vector "
                "from it yet.",
                stored_model,
                self.model_id,
            )
            report.rebuilt = report.rebuilt or "the embedding model changed"
        ft_reason = None if rebuild else self.fulltext_needs_rebuild()
        if ft_reason:
            log.warning("%s: rebuilding it from the index.", ft_reason)
            self.rebuild_fulltext()
            report.rebuilt = report.rebuilt or ft_reason
        elif not self._defer_fulltext:
            self._catch_up_fulltext()

        skipped: dict[str, str] = {}
        linked: dict[str, int] = {}
        plan, texts = self.plan(paths, skipped, linked)
        self._record_hard_linked(linked, texts.pop(_CHECKED))
        counts = plan.counts()
        for key in ("new", "modified", "moved", "deleted", "unchanged", "unreadable"):
            setattr(report, key, counts[key])
        held: dict[str, Unreadable | None] = dict.fromkeys(texts.pop(_GONE_HELD, ()))
        for path in plan.unreadable:
            held[path] = texts.pop(path)
            report.warnings.append(held[path].warning)  # type: ignore[union-attr]
        report.skipped_links = len(set(skipped) | set(linked))
        report.warnings += [
            f"skipped {path}: {why}" for path, why in sorted(skipped.items()) if path not in linked
        ]
        for message in report.warnings:
            log.warning(message)
        if linked:  # one line for them all (a backup made of links may be thousands)
            report.warnings.append(left_out_for_links(sorted(linked)))
            self.say_left_out(linked)
        self._hold_skipped(plan, held)
        # When every unit had its vector before this run, the units that may lack one are
        # those of the files it stores: looked up alone, not by a pass over every unit.
        self._embed_only: list[str] | None = None
        self._few = paths is not None
        if (
            paths is not None
            and stored_model == self.model_id
            and store.get_meta("embeddings_complete") == "1"
        ):
            self._embed_only = [*plan.new, *plan.modified, *(new for _, new in plan.moved)]
            self._embed_gone = store.shas_of(
                [*plan.deleted, *plan.modified, *(old for old, _ in plan.moved)]
            )
        self._record_racy(texts, plan, applied=False)
        if not plan.is_noop:
            self._apply(plan, texts, progress)
        self._record_racy(texts, plan, applied=True)
        if self._store_rebuilt and not self._embed_repairs:
            return self._totals(report)
        fsutil.kill_point("index.before-embed")
        if self.model_id and (
            not plan.is_noop
            or stored_model != self.model_id
            or store.get_meta("embeddings_complete") != "1"
        ):
            report.units_embedded = self._embed_missing(progress)
        elif self.model_id and paths is None:
            # The cheap check of a whole run (index/integrity.py): units without a vector
            # although the flag says every one has its vector (damage, or a kill of an older
            # version) are embedded, never left for good.
            bad = store.drop_bad_vectors(self.model_id)
            if bad:
                log.warning(
                    "%d vectors had the wrong length (damage): embedding their units again.", bad
                )
            totals = store.counts(self.model_id)
            if totals["embedded_units"] < totals["units"]:
                log.warning(
                    "%d units have no vector although the index says all have: embedding them.",
                    totals["units"] - totals["embedded_units"],
                )
                report.units_embedded = self._embed_missing(progress)
        return self._totals(report)

    def _totals(self, report: IndexReport) -> IndexReport:
        store = self.store
        recorded = {
            key: value
            for key in ("files_count", "units_count", "embeddings_complete", "model_id")
            if (value := store.get_meta(key)) is not None
        }
        if (
            getattr(self, "_few", False)
            and self.model_id
            and recorded.get("embeddings_complete") == "1"
            and recorded.get("model_id") == self.model_id
            and "units_count" in recorded
        ):
            # A run over a few files that left every unit with its vector: the counts its
            # transactions recorded, not a join over every unit (0.3 s at 100,000 units).
            units = int(recorded["units_count"])
            totals = {
                "files": int(recorded["files_count"]),
                "units": units,
                "embedded_units": units,
            }
        else:
            totals = store.counts(self.model_id)
        report.files, report.units = totals["files"], totals["units"]
        report.embedded_units = totals["embedded_units"]
        if self._embedder_failed:
            report.model = None
            report.warnings.append(self._embedder_failed)
        if self._embed_problem:
            report.warnings.append(self._embed_problem)
            report.pending_units = int(store.get_meta("embeddings_pending", "0") or 0)
        return report

    def plan(
        self,
        paths: Iterable[str] | None = None,
        skipped: dict[str, str] | None = None,
        hard_linked: dict[str, int] | None = None,
    ) -> tuple[ChangePlan, dict[str, Any]]:
        """Scan (all files, or `paths`), hash what changed, and plan. Reads only.

        Returns the plan and, for files that were read, their text (or, for unreadable
        files, the warning to show). Symlinks and hard-linked files a full scan skips are put
        in `skipped`; the hard-linked files of any run in `hard_linked`: they are not read,
        and an indexed one is planned as deleted (its units leave the index)."""
        known = self._file_stats()
        held = self.store.skipped()
        racy = self.racy_paths()
        self._began_ns = fs_clock_ns(self.cache)  # before any stat: see `racy_paths`
        allow = self.config.security.allow_hardlinks
        linked = {} if hard_linked is None else hard_linked
        scope: set[str] | None = None
        if paths is None:
            stats = scan(self.root, skipped=skipped, allow_hardlinks=allow, hard_linked=linked)
        else:
            paths = list(paths)
            exclusions = obsidian_exclusions(self.root)
            scope = {
                p for p in paths if is_indexable(p) and not excluded_by_obsidian(p, exclusions)
            }
            folders = [p for p in paths if p not in scope]
            if folders:  # a folder stands for the files under it, on disk and in the index
                scope.update(self._files_under(folders, known))
            real_root = Path(os.path.realpath(self.root))
            stats = {}
            for relpath in scope:
                st = _stat_in_vault(self.root, real_root, relpath, allow, linked)
                if st is not None:
                    stats[relpath] = st
        # Files whose stat matches the index are unchanged and cannot take part in a move:
        # settled here without building plan objects, as on a no-op run that is every file.
        unchanged: list[str] = []
        still_held: list[str] = []
        disk: dict[str, DiskFile] = {}
        texts: dict[str, Any] = {}
        limit = self.config.index.max_file_bytes
        for relpath, st in stats.items():
            row = known.get(relpath)
            if (
                row is not None
                and row[0] == st.st_mtime_ns
                and row[1] == st.st_size
                and relpath not in racy
            ):
                unchanged.append(relpath)
                continue
            was = held.get(relpath)
            if was is not None and was[:2] == (st.st_mtime_ns, st.st_size):
                still_held.append(relpath)  # reported when it changed; not again
                continue
            try:
                note_file = fsutil.read_text(self.root / relpath, relpath, limit, allow)
                if _is_canvas(relpath):
                    _check_canvas(relpath, note_file.text)
                entry = DiskFile(note_file.mtime_ns, note_file.size, note_file.sha256)
                texts[relpath] = note_file
            except VaultError as exc:  # unreadable, or vanished between scan and read
                if isinstance(exc, HardLinkedError):  # linked since the scan: as one it found
                    linked[relpath] = exc.links
                    continue
                if not isinstance(exc, UnreadableNoteError):
                    continue
                entry = DiskFile(st.st_mtime_ns, st.st_size, unreadable=str(exc))
                # Held until the file changes only for what is in its bytes (encoding, NUL
                # bytes, size, not a canvas); a failing read (permissions, I/O) is tried again.
                texts[relpath] = Unreadable(
                    f"skipped {exc}",
                    st.st_mtime_ns,
                    st.st_size,
                    exc.reason,
                    lasting=not isinstance(exc.__cause__, OSError),
                )
            disk[relpath] = entry
        settled = set(unchanged) | set(still_held)
        # A run over a few paths plans only those (`plan_changes` keeps the scope's paths).
        candidates = known if scope is None else {p: known[p] for p in scope if p in known}
        indexed = {p: IndexedFile(*row) for p, row in candidates.items() if p not in settled}
        plan = plan_changes(disk, indexed, scope, racy)
        plan.unchanged = sorted(plan.unchanged + [p for p in unchanged + still_held if p in known])
        plan.held = sorted(still_held)
        # Skipped files that are gone (or readable now, below) are forgotten.
        texts[_GONE_HELD] = [p for p in held if p not in stats and (scope is None or p in scope)]
        texts[_CHECKED] = None if scope is None else sorted(scope)
        return plan, texts

    def hard_linked(self) -> dict[str, int]:
        """The files the index leaves out for their hard links (path -> links), as its runs
        last found them: what a search says it did not read, without a stat. Empty when hard
        links are allowed or nothing is indexed yet."""
        import json

        if self.config.security.allow_hardlinks:
            return {}
        # asked right after a search: on a server, answered from the meta rows that search's
        # statement read (no statement of its own per query)
        with self.store.search_reads():
            if not self.store.exists():
                return {}
            try:
                found = json.loads(self.store.get_meta("hard_linked") or "{}")
            except ValueError:
                return {}
        return found if isinstance(found, dict) else {}

    def say_left_out(self, paths: Iterable[str]) -> None:
        """Warn that `paths` were left out for their hard links: one line, for the files not
        said yet by this index's runs and searches (a search after the run that found them
        says nothing more, a watcher's reconcile says only what is new)."""
        new = sorted(set(paths) - self.said_linked)
        if new:
            self.said_linked.update(new)
            log.warning("%s", left_out_for_links(new))

    def _record_hard_linked(self, linked: dict[str, int], checked: list[str] | None) -> None:
        """Record what a run found hard-linked: all of it after a whole run (`checked` None),
        else the verdicts on the `checked` paths, the others as they were."""
        import json

        before = self.hard_linked()
        if checked is None:
            now = dict(linked)
        else:
            done = set(checked)
            now = {p: n for p, n in before.items() if p not in done} | linked
        if now != before:
            with self.store.transaction() as conn:
                self.store.set_meta(conn, "hard_linked", json.dumps(now, sort_keys=True))

    def _hold_skipped(self, plan: ChangePlan, held: dict[str, Unreadable | None]) -> None:
        """Record the files that could not be read (until they change, they are neither read
        nor reported again, and `vault status` lists them with the reason), and forget those
        that are gone or readable again."""
        readable = [*plan.new, *plan.modified, *plan.touched, *(new for _, new in plan.moved)]
        gone = [p for p, why in held.items() if why is None]
        gone += [p for p in readable if p not in held]
        if not held and not gone:
            return
        with self.store.transaction() as conn:
            self.store.forget_skipped(conn, gone)
            for path, why in held.items():
                if why is not None and why.lasting:
                    self.store.set_skipped(conn, path, why.mtime_ns, why.size, why.reason)

    def _files_under(self, folders: list[str], known: dict[str, Any]) -> set[str]:
        """The indexable paths under each folder: found on disk (hard-linked ones too, for
        the run to record), or indexed (a folder that was deleted or moved away)."""
        found: set[str] = set()
        indexed = sorted(known)
        allow = self.config.security.allow_hardlinks
        for folder in folders:
            folder = folder.strip("/")
            if not folder or not is_indexable(f"{folder}/x.md") or ".." in folder.split("/"):
                continue
            if (self.root / folder).is_dir():
                linked: dict[str, int] = {}
                found.update(scan(self.root, folder, allow_hardlinks=allow, hard_linked=linked))
                found.update(linked)
            prefix = f"{folder}/"
            start = bisect.bisect_left(indexed, prefix)
            for path in itertools.islice(indexed, start, None):
                if not path.startswith(prefix):
                    break
                found.add(path)
        return found

    def _analyzed_otherwise(self) -> list[str] | None:
        """The files whose words the keyword analyzer of this version gives otherwise than
        the one that indexed them; None once the index records this version."""
        from .words import ANALYZER, terms_of

        if self.store.get_meta("analyzer") == str(ANALYZER):
            return None
        return self.store.analyzed_otherwise(lambda text: " ".join(terms_of(text)))

    def _words_anew(self) -> None:
        """After an upgrade that changed how text becomes words (index/words.py), the files
        whose words differ are indexed again in this run (vectors kept); recorded once."""
        from .words import ANALYZER

        paths = self._analyzed_otherwise()
        if paths is None:
            return
        if paths:
            log.warning(
                "keyword search now folds accents, splits Chinese, Japanese and "
                "Korean into character pairs and reads emoji as words: indexing the "
                "words of %d %s again.",
                len(paths),
                "file" if len(paths) == 1 else "files",
            )
        with self.store.transaction() as conn:
            self.store.forget_content(conn, paths)
            self.store.set_meta(conn, "analyzer", ANALYZER)

    def _vectors_anew(self) -> None:
        """After the upgrade that gives the bundled model emoji as words
        (`embedder.PICTOGRAPHS`), its vectors of texts holding one are made again: the files
        holding them are read again in this run, the other vectors kept. Checked once."""
        from .embedder import BUNDLED_MODEL_ID, PICTOGRAPHS
        from .words import has_pictograph

        if self.store.get_meta("pictographs") == str(PICTOGRAPHS):
            return
        shas = self.store.texts_holding(has_pictograph)
        paths = self.store.files_with_units(has_pictograph) if shas else []
        if paths and self.model_id == BUNDLED_MODEL_ID:
            log.warning(
                "semantic search now reads emoji as the words they stand for: "
                "embedding %d %s of %d %s again.",
                len(shas),
                "text" if len(shas) == 1 else "texts",
                len(paths),
                "file" if len(paths) == 1 else "files",
            )
        with self.store.transaction() as conn:
            self.store.drop_vectors(conn, BUNDLED_MODEL_ID, shas)
            self.store.forget_content(conn, paths)
            self.store.set_meta(conn, "pictographs", PICTOGRAPHS)

    def _units_anew(self) -> None:
        """After an upgrade that cuts units otherwise (index/units.py), the files whose units
        change are read again: in this run (a run over a few paths: the next search's, as
        their stat no longer matches), the vectors of unchanged texts kept. Checked once, by
        the first run of any kind (not by a search's freshness check, which writes nothing)."""
        from .units import UNITS, chunked_otherwise

        if self.store.get_meta("units") == str(UNITS):
            return
        paths = self.store.files_with_units(chunked_otherwise)
        if paths:
            log.warning(
                "units are cut otherwise since this version (a chat message is a unit of "
                "its own, a fragment joins the message that completes it; a photo caption "
                "joins the turn that shows it): indexing %d files again.",
                len(paths),
            )
        with self.store.transaction() as conn:
            self.store.forget_content(conn, paths)
            self.store.set_meta(conn, "units", UNITS)

    def _file_stats(self) -> dict[str, FileStat]:
        """`store.file_stats()`, read once for a search's freshness check and its run while
        nothing changed the SQLite index between (no commit by another connection: its
        `data_version`; none by ours: `total_changes`). Callers do not change it."""
        store = self.store
        key = store.changes_key()
        if key is None:  # no cheap counter of commits: read anew
            return dict(store.file_stats())
        memo = self._stats_memo
        if memo is not None and memo[0] == key:
            return memo[1]
        stats = store.file_stats()
        self._stats_memo = (key, stats)
        return stats

    def racy_paths(self) -> set[str]:
        """The files whose recorded mtime was not older than the index run that read them
        (git's "racy" rule): a same-size rewrite within that file-time tick leaves the stat
        as recorded, so they are compared by content until a run reads them again after
        their mtime (`_record_racy`)."""
        return racy_files(self.store)

    def _record_racy(self, texts: dict[str, Any], plan: ChangePlan, applied: bool) -> None:
        """The racy files: those a run read whose mtime is not older than the moment it
        began (on the file system's clock, taken before any stat), and those of earlier runs
        it did not read again. Added before the run stores what it read, removed after (a
        run killed in between leaves them racy: compared by content once more)."""
        import json

        began = self._began_ns
        if began is None:
            return
        before = self.racy_paths()
        read = {p: f for p, f in texts.items() if isinstance(f, fsutil.TextFile)}
        now = before | {p for p, f in read.items() if f.mtime_ns >= began}
        if applied:
            gone = {*plan.deleted, *(old for old, _ in plan.moved)}
            now = {p for p in before if p not in read and p not in gone} | {
                p for p, f in read.items() if f.mtime_ns >= began
            }
        if now != before:
            with self.store.transaction() as conn:
                self.store.set_meta(conn, "racy_files", json.dumps(sorted(now)))

    def stale_paths(self, scope: scopes.Scope | None = None) -> list[str]:
        """Paths whose stat differs from the index, plus indexed paths gone from disk (of
        the files `scope` may see, when given), plus the files whose words an upgrade's
        analyzer gives otherwise. Stats only; reads no file and writes nothing."""
        known = self._file_stats()
        held = self.store.skipped()
        linked: dict[str, int] = {}
        allow = self.config.security.allow_hardlinks
        disk = scan(self.root, scope=scope, allow_hardlinks=allow, hard_linked=linked)
        recorded = self.hard_linked()
        if scope is not None:
            known = {p: row for p, row in known.items() if scopes.sees(scope, scopes.scope_of(p))}
            recorded = {p: n for p, n in recorded.items() if scopes.sees(scope, scopes.scope_of(p))}
        racy = self.racy_paths()
        stale = [
            p
            for p, st in disk.items()
            if (p not in known or (st.st_mtime_ns, st.st_size) != known[p][:2] or p in racy)
            and (p not in held or (st.st_mtime_ns, st.st_size) != held[p][:2])
        ]
        stale += [p for p in known if p not in disk]
        # Files linked (or unlinked) since the index last looked: a run records them.
        stale += sorted(set(linked).symmetric_difference(recorded) - set(stale))
        again = set(self._analyzed_otherwise() or ()) - set(stale)
        return stale + [p for p in known if p in again]

    def _apply(self, plan: ChangePlan, texts: dict[str, Any], progress: Progress | None) -> None:
        from .fulltext import documents

        store = self.store
        unreadable = set(plan.unreadable)
        to_parse = [p for p in plan.new + plan.modified if p not in unreadable]
        to_parse += [new for _, new in plan.moved]
        removals = list(plan.deleted) + [old for old, _ in plan.moved]
        touched = plan.touched
        total = len(to_parse) + len(removals) + len(touched)
        done = 0
        batches = [to_parse[i : i + FILE_BATCH] for i in range(0, len(to_parse), FILE_BATCH)] or [
            []
        ]
        # SQLite commits every FILE_BATCH files; the keyword index gets them all through one
        # writer and one commit at the end (FullTextWriter). Until then `fulltext_dirty` says
        # Whoosh lags behind: a run killed meanwhile has it rebuilt from SQLite. A run stopped
        # between batches (the watcher stopping, an error) commits what Whoosh was given: the
        # same files as SQLite's committed batches.
        if self._defer_fulltext:
            self._apply_deferred(plan, to_parse, removals, texts)
            return
        writer = self.fulltext.writer()
        whole = True  # Whoosh's writer holds exactly the batches SQLite committed
        try:
            for number, batch in enumerate(batches):
                self._known_terms = writer.known_terms  # each unit's text analysed once
                with store.transaction() as conn:
                    store.set_meta(conn, "fulltext_dirty", 1)
                    first = number == 0
                    self._store_changes(
                        conn, removals if first else [], touched if first else [], batch, texts
                    )
                whole = False
                fsutil.kill_point("index.after-units")
                writer.remove(batch + (removals if number == 0 else []))
                writer.add(documents(store.fulltext_rows(batch), store.properties_of))
                writer.known_terms.clear()
                self._known_terms = None
                whole = True
                done += len(batch) + (len(removals) + len(touched) if number == 0 else 0)
                if progress:
                    progress("files", done, total)
        except BaseException:
            self._known_terms = None
            if not whole:
                writer.cancel()  # Whoosh stays marked dirty: rebuilt from SQLite next time
                raise
            with contextlib.suppress(Exception):  # else it stays dirty, as above
                self._commit_fulltext(writer)
            raise
        self._commit_fulltext(writer)

    def _apply_deferred(
        self, plan: ChangePlan, to_parse: list[str], removals: list[str], texts: dict[str, Any]
    ) -> None:
        """`_apply` for a search's run over a few files: SQLite in one transaction, with the
        files the keyword index now lags behind by (`fulltext_pending`); Whoosh untouched."""
        import json

        store = self.store
        pending = sorted({*self.fulltext_pending(), *to_parse, *removals})
        with store.transaction() as conn:
            store.set_meta(conn, "fulltext_pending", json.dumps(pending))
            self._store_changes(conn, removals, plan.touched, to_parse, texts)
        fsutil.kill_point("index.after-units")

    def _store_changes(
        self,
        conn: Any,
        removals: list[str],
        touched: list[str],
        parsed: list[str],
        texts: dict[str, Any],
    ) -> None:
        """One transaction's share of a run in SQLite: files gone, files whose stamps alone
        changed, files parsed anew, then the counts and the run's time."""
        store = self.store
        for path in removals:
            store.delete_file(conn, path)
        for path in touched:
            st = (self.root / path).stat()
            store.touch_file(conn, path, st.st_mtime_ns, st.st_size)
        for path in parsed:
            self._store_file(conn, path, texts[path])
        if parsed and self.model_id:
            # The intent, committed with the units: they need vectors. Set until the last
            # vector is stored, so a run killed before that (while the model loads, say) is
            # completed by the next one, never left as it is.
            store.set_meta(conn, "embeddings_complete", 0)
        store.record_counts(conn)
        store.set_meta(conn, "last_index_at", time.time())

    def _commit_fulltext(self, writer: Any) -> None:
        """Commit the keyword index's writer and record that Whoosh holds what SQLite does."""
        writer.commit()
        fsutil.kill_point("index.after-fulltext")
        with self.store.transaction() as conn:
            self.store.set_meta(conn, "fulltext_dirty", 0)
            self.record_fulltext(conn)

    def _terms_of(self, text: str) -> list[str]:
        """`terms_of(text)`, kept for the keyword index writer of this batch if there is one
        (it would analyse the same text again)."""
        from .words import terms_of

        terms = terms_of(text)
        if self._known_terms is not None:
            self._known_terms[text] = terms
        return terms

    def _store_file(
        self, conn: sqlite3.Connection, relpath: str, note_file: fsutil.TextFile
    ) -> None:
        from .words import terms_of

        note = parse_note(relpath, "" if _is_canvas(relpath) else note_file.text)
        if note.frontmatter_error:
            log.warning("%s: %s", relpath, note.frontmatter_error)
        if _is_canvas(relpath):
            from ..files import obsidian, parse_canvas

            canvas = parse_canvas(relpath, note_file.text)  # checked while planning
            units = make_canvas_units(canvas, obsidian.note_stem(relpath))
            fields = canvas_fields(canvas, units)
        else:
            units = make_units(note)
            fields = note_fields(note)
        date = note.date.isoformat() if note.date else None
        scope = scopes.scope_text(scopes.scope_of(relpath))
        self.store.replace_file(
            conn,
            relpath,
            note.kind,
            note_file.mtime_ns,
            note_file.size,
            note_file.sha256,
            date,
            note.title,
            sorted(note.tags),
            [
                NewUnit(
                    u.start_line,
                    u.end_line,
                    u.heading,
                    u.text,
                    u.sha256,
                    u.salience,
                    " ".join(u.tags),
                    " ".join(self._terms_of(u.text)),
                )
                for u in units
            ],
            scope=scope,
            note_tags=fields.tags,
            properties=[Property(name, value) for name, value in fields.properties],
            names=[" ".join(terms_of(name)) for name in fields.names],
            links=[
                NewLink(
                    link.line,
                    link.kind,
                    link.target,
                    link.subpath,
                    link.display,
                    link.embed,
                    obsidian_link_key(link.target),
                    link.text,
                )
                for link in fields.links
            ],
        )

    def _few_texts_embedder(self) -> Any:
        """For the few texts of a run over a few files (a search's, the watcher's): the light
        query encoder of the bundled model when the full embedder is not loaded yet, one text
        at a time (fastembed's pipeline without its padding: the same vectors to float
        rounding, tests/index/test_embedder.py), so a search after an edit does not import fastembed
        (a second) and build a second session of the model; None otherwise."""
        if self._embedder is not None or self.remote or self._embedder_failed is not None:
            return None
        from .embedder import QueryEncoder

        encoder = self.query_embedder()
        return _OneAtATime(encoder) if isinstance(encoder, QueryEncoder) else None

    def _embed_missing(self, progress: Progress | None) -> int:
        """Embed units whose text has no vector for the current model yet. A provider that
        fails (or answers with unusable vectors) leaves those units pending: their text is
        indexed, searches go by keywords only, and the next run tries again."""
        store = self.store
        self._embed_problem = None
        only, self._embed_only = getattr(self, "_embed_only", None), None
        missing: list[TextToEmbed] | None = None
        embedder: Any = None
        if only is not None and self.model_id:
            missing = store.missing_embeddings_of(self.model_id, only)
            if len(missing) <= FEW_TEXTS:
                embedder = self._few_texts_embedder()
        if missing is None and self.model_id and self._embedder is None and self._spare_cores:
            missing = store.missing_embeddings(self.model_id)  # how many: a bulk run's threads
        embedder = embedder or (self.embedder(len(missing or ())) if self.model_id else None)
        if embedder is None or not self.model_id:
            if store.get_meta("embeddings_complete") != "0":
                with store.transaction() as conn:
                    store.set_meta(conn, "embeddings_complete", 0)
            return 0
        import numpy as np  # not before: a keyword-only run need not import it (40 ms)

        if missing is None:
            missing = store.missing_embeddings(self.model_id)
        if missing and store.get_meta("embeddings_complete") != "0":
            # Until the last vector is stored: a run killed mid-way must not leave the next
            # no-op run believing every unit has its vector.
            with store.transaction() as conn:
                store.set_meta(conn, "embeddings_complete", 0)
        stored_model = store.get_meta("model_id")
        expected = store.get_meta("dims") if stored_model == self.model_id else None
        done = stored = 0
        failure: str | None = None
        for start in range(0, len(missing), EMBED_BATCH):
            chunk = missing[start : start + EMBED_BATCH]
            try:
                vectors = embedder.embed(
                    [text for _, text in chunk], batch_size=self.config.index.batch_size
                )
            except Exception as exc:
                from .remote import EmbeddingProviderError  # (HTTP, TLS: not for a search)

                if not isinstance(exc, EmbeddingProviderError):
                    raise
                failure = str(exc)
                break
            if expected and vectors.shape[1] != int(expected):
                failure = (
                    f"embedding provider failed: {self.model_id} now returns "
                    f"{vectors.shape[1]}-dimensional vectors, the index holds {expected}. Set "
                    "index.dimensions, or run `vault index --rebuild` after changing models"
                )
                break
            usable = np.isfinite(vectors).all(axis=1)
            rows = [
                Embedding(sha, vec.tobytes())
                for (sha, _), vec, ok in zip(chunk, vectors, usable, strict=True)
                if ok
            ]
            if len(rows) < len(chunk):
                failure = failure or (
                    f"embedding provider failed: {self.model_id} returned unusable vectors "
                    "(not finite, or all zeros)"
                )
            with store.transaction() as conn:
                store.add_embeddings(conn, self.model_id, rows)
            fsutil.kill_point("index.mid-embed")
            done += len(chunk)
            stored += len(rows)
            if progress:
                progress("embedding", done, len(missing))
        if failure is not None:
            pending = len(missing) - stored
            self._embed_problem = (
                f"{failure}: {pending} units keep their text and wait for their vectors; "
                "searches use keywords only until `vault index` adds them."
            )
            log.warning("%s", self._embed_problem)
            with store.transaction() as conn:
                store.set_meta(conn, "embeddings_complete", 0)
                store.set_meta(conn, "embeddings_pending", pending)
                store.set_meta(conn, "embeddings_pending_model", self.model_id)
                store.set_meta(conn, "embeddings_error", failure)
                store.set_meta(conn, "last_index_at", time.time())
            return stored
        with store.transaction() as conn:
            store.set_meta(conn, "model_id", self.model_id)
            store.set_meta(conn, "dims", embedder.dims)
            store.set_meta(conn, "embeddings_complete", 1)
            store.set_meta(conn, "embeddings_pending", 0)
            store.set_meta(conn, "embeddings_error", "")
            store.set_meta(conn, "last_index_at", time.time())
            # The previous model's vectors stay: switching back re-embeds only new texts.
            keep = [stored_model] if stored_model and stored_model != self.model_id else []
            if only is None:
                store.prune_embeddings(conn, self.model_id, keep)
            else:  # a run over a few files: the vectors only their old units had
                store.prune_embeddings_of(conn, getattr(self, "_embed_gone", ()))
        return stored

    def link_targets(self, viewer: scopes.Scope | None) -> LinkTargets:
        """Every file a link of `viewer` may lead to, the vault as it is on disk now (index/
        links.py): the indexed files it sees, attachments and excluded notes."""
        from . import links

        others: set[str] = set()
        scan(
            self.root,
            scope=viewer,
            others=others,
            allow_hardlinks=self.config.security.allow_hardlinks,
        )
        return links.targets(self.store, viewer, others)

    def doctor(self) -> list[Any]:
        """Every check of the cache, and the repair of what fails (index/integrity.py)."""
        from .integrity import diagnose_and_repair, empty_file

        if self.store.exists() and not empty_file(self.store):
            # what runs deferred is not damage; a store that cannot be read is the checks' to
            # report and repair
            with contextlib.suppress(VaultError, sqlite3.DatabaseError, CorruptIndexError):
                self.catch_up_fulltext()
            self.store.close()
        return diagnose_and_repair(self)

    def verify(self) -> Any:
        """Whether the index equals the files (index/integrity.py `verify`). Reads only."""
        from .integrity import verify

        with contextlib.suppress(VaultError, sqlite3.DatabaseError, CorruptIndexError):
            self.catch_up_fulltext()  # what runs deferred is not a difference
        return verify(self, scan(self.root, allow_hardlinks=self.config.security.allow_hardlinks))

    def repair_differences(self, check: Any) -> list[Any]:
        """Make the index equal the files where `verify` found a difference."""
        from .integrity import repair_differences

        return repair_differences(self, check)

    def close(self) -> None:
        self.store.close()
        self.fulltext.close()


_GONE_HELD = "\x00gone"  # in the texts `plan` returns: skipped files no longer on disk
_CHECKED = "\x00checked"  # and the paths a run over a few paths looked at (None: every one)


@dataclass(frozen=True)
class Unreadable:
    """A file that could not be read as it is now: the warning, its stat and why."""

    warning: str
    mtime_ns: int
    size: int
    reason: str
    lasting: bool = True  # in the file's bytes: not read again until they change


def _is_canvas(relpath: str) -> bool:
    return relpath.lower().endswith(CANVAS_SUFFIX)


def obsidian_link_key(target: str) -> str:
    from ..files import obsidian

    return obsidian.link_key(target)


def _check_canvas(relpath: str, text: str) -> None:
    from ..files import CanvasError, parse_canvas

    try:
        parse_canvas(relpath, text)
    except CanvasError as exc:
        raise UnreadableNoteError(relpath, f"not a JSON Canvas file ({exc})") from None


def racy_files(store: Any) -> set[str]:
    """The racy files a store records (`Index.racy_paths`); none when unreadable."""
    import json

    try:
        found = json.loads(store.get_meta("racy_files") or "[]")
    except ValueError:
        return set()
    return set(found) if isinstance(found, list) else set()
