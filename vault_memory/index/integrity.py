"""One integrity check of the derived cache, used everywhere.

Each artefact of `.vault/` carries what proves it whole, and this module is the one place
that asks:

| artefact | proof | cheap part (index, search) | full check (`vault doctor`) |
|---|---|---|---|
| `.vault/` and its lock files | their type (a folder, regular files) | yes | yes |
| `index.sqlite` | opens, has its schema and every table | yes | `PRAGMA quick_check` |
| its rows | the file and unit counts the last writer recorded | index | yes |
| vectors | every unit has one when the index says so | flag | counted |
| `whoosh/` | Whoosh's own open and read, its document count = units | fingerprint | read |
| `units-*.arrays` | an XXH3 digest per array, once per file (`<name>.ok`, arrays.py) | yes | yes |

`vault index` and a search run the cheap part and heal in place (a search rebuilds what is
damaged and goes by keywords until `vault index` adds the vectors); `vault status` reports
damage; `vault doctor` runs all of it, repairs, and with `--verify` proves the index equals
the files (`verify`).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import sqlite3
import stat
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..config import Config
from ..errors import VaultError
from ..files import fsutil, parse_note
from .arrays import check_arrays
from .backend import Capabilities, IndexBackend
from .store import CorruptIndexError, Store
from .units import make_units

if TYPE_CHECKING:
    from .fulltext import FullText

log = logging.getLogger("vault_memory")


class Index(Protocol):
    """What the checks and repairs need of `indexer.Index` (which calls them: a protocol,
    so that this module does not import it back)."""

    config: Config
    cache: Path
    capabilities: Capabilities
    store: IndexBackend
    fulltext: FullText
    model_id: str | None

    def writer_lock(self, timeout: float = 60.0) -> contextlib.AbstractContextManager[None]: ...

    def run(self, rebuild: bool = False) -> Any: ...

    def rebuild_fulltext(self) -> None: ...


LOCK_FILES = ("write.lock", "dream.lock", "flush.lock")


@dataclass
class Finding:
    """One thing found wrong: the artefact, what is wrong with it, what was (or will be)
    done about it."""

    artefact: str
    problem: str
    repair: str = ""

    def __str__(self) -> str:
        return f"{self.artefact}: {self.problem}" + (f"; {self.repair}" if self.repair else "")


def heal_cache_shape(cache: Path) -> list[Finding]:
    """Put the shape of `.vault/` right (a few stats when nothing is wrong): `.vault` that is
    a file is moved aside (it is not ours to delete), an `index.sqlite`, a lock file or
    `whoosh/` of the wrong type is removed (they are ours, and rebuilt)."""
    found: list[Finding] = []
    try:
        st = os.lstat(cache)
    except FileNotFoundError:
        return found
    except OSError:
        return found
    if not stat.S_ISDIR(st.st_mode):
        if stat.S_ISLNK(st.st_mode) and os.path.isdir(cache):
            return found  # a symlink to a folder elsewhere: the user's choice
        aside = cache.with_name(f"{cache.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
        with contextlib.suppress(FileNotFoundError):
            os.replace(cache, aside)
        found.append(
            Finding(
                cache.name,
                "is a file, not the cache folder",
                f"moved aside to {aside.name} and rebuilt",
            )
        )
        return found
    wrong: list[tuple[str, bool]] = [("index.sqlite", True), ("whoosh", False)]
    wrong += [(name, True) for name in LOCK_FILES]
    for name, regular in wrong:
        path = cache / name
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) if regular else stat.S_ISDIR(mode):
            continue
        what = "a regular file" if regular else "a folder"
        try:
            if stat.S_ISDIR(mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            found.append(
                Finding(f".vault/{name}", f"is not {what}", f"could not remove it ({exc.strerror})")
            )
            continue
        if name == "index.sqlite":
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.unlink(f"{path}{suffix}")
        found.append(Finding(f".vault/{name}", f"was not {what}", "removed it (rebuilt)"))
    return found


def check_store(store: IndexBackend, full: bool = False) -> str | None:
    """Why the SQLite index is damaged, or None. Cheap: it opens with its schema and every
    table, and its rows agree with the recorded counts; `full` adds `PRAGMA quick_check`."""
    try:
        store.open()  # schema and tables checked
        if full:
            rows = store.quick_check(5)
            if rows != ["ok"]:
                return "integrity check: " + "; ".join(rows)
        return store.count_problem()
    except CorruptIndexError as exc:
        return str(exc)
    except sqlite3.DatabaseError as exc:
        return f"{Path(store.location).name}: {exc}"


def check_vectors(store: IndexBackend, model: str | None) -> str | None:
    """Units without a vector of `model` while the index says every one has its vector."""
    if not model or store.get_meta("embeddings_complete") != "1":
        return None
    if store.get_meta("model_id") != model:
        return None
    bad = store.bad_vectors(model)
    if bad:
        return f"{bad} vectors have the wrong length"
    missing = len(store.missing_embeddings(model))
    if missing:
        return f"{missing} units have no vector although the index says all have"
    return None


def check_fulltext(index: Index, units: int) -> str | None:
    """Why the Whoosh index cannot be used, or None: it opens, reads, and holds one document
    per unit."""
    fulltext = index.fulltext
    if not fulltext.exists():
        return "it is missing" if units else None
    try:
        fulltext.check()
        with fulltext.open().searcher() as searcher:
            documents = searcher.doc_count()
    except Exception as exc:  # Whoosh raises many kinds of errors on damaged files
        fulltext.close()
        return f"it cannot be read ({type(exc).__name__}: {exc})"
    finally:
        fulltext.close()
    if documents != units:
        return f"it holds {documents} documents for {units} units"
    return None


def _vectors_problem(store: IndexBackend, model: str | None) -> str | None:
    try:
        return check_vectors(store, model)
    except sqlite3.DatabaseError:
        return None  # a store that cannot be read: said by its own check


def _fulltext_changed(store: IndexBackend, folder: Path) -> str | None:
    """The cheap check of the Whoosh index (a stat per file): its files are those the last
    writer recorded, or it is marked as interrupted."""
    from .fulltext import FullText

    try:
        if store.get_meta("fulltext_dirty", "0") != "0":
            return "it was interrupted mid-update"
        recorded = store.get_meta("fulltext_files")
    except (CorruptIndexError, sqlite3.DatabaseError):
        return None  # the store's own check reports it
    if recorded is None:
        return None
    if not folder.is_dir():
        return "it is missing"
    if recorded != FullText(folder).fingerprint() and not _copied(store, FullText(folder)):
        return "its files changed since vault-memory wrote them"
    return None


def _copied(store: IndexBackend, fulltext: Any) -> bool:
    """Whether the Whoosh files hold, by content, what the last write recorded (a copied
    vault: new mtimes, same bytes; the next index run records them again)."""
    import json

    try:
        digests = json.loads(store.get_meta("fulltext_digests") or "{}")
    except (ValueError, CorruptIndexError, sqlite3.DatabaseError):
        return False
    return isinstance(digests, dict) and bool(digests) and fulltext.same_content(digests)


def unit_tables(cache: Path) -> list[Path]:
    return sorted(cache.glob("units-*.arrays")) if cache.is_dir() else []


# -- proving the index equals the files -------------------------------------------------------


@dataclass
class Verification:
    """What `vault doctor --verify` compares: a digest of what the files say (each file's
    sha256 and its units' line spans and text hashes, the vectors they need) and the same
    digest of what the cache holds."""

    files_digest: str = ""
    cache_digest: str = ""
    files: int = 0
    units: int = 0
    embedded: int = 0
    differences: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the files whose entries differ

    @property
    def equal(self) -> bool:
        return not self.differences and self.files_digest == self.cache_digest

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "equal": self.equal}


def repair_differences(index: Index, check: Verification) -> list[Finding]:
    """Make the index equal the files where `verify` found it differs: each differing file is
    dropped from the index and read again (its vectors are kept when its text is the same),
    missing vectors are embedded, the keyword index is rebuilt from SQLite."""
    found: list[Finding] = []
    if check.paths:
        with index.writer_lock(), index.store.transaction() as conn:
            for path in check.paths:
                index.store.delete_file(conn, path)
            index.store.record_counts(conn)
        found.append(
            Finding(
                "index",
                f"{len(check.paths)} files differ from the index",
                "read them again: "
                + ", ".join(check.paths[:5])
                + (" …" if len(check.paths) > 5 else ""),
            )
        )
    if check.paths or any("no vector" in d for d in check.differences):
        with index.store.transaction() as conn:
            index.store.set_meta(conn, "embeddings_complete", 0)
        index.run()
    if any(d.startswith("the keyword index") for d in check.differences):
        with index.writer_lock():
            index.rebuild_fulltext()
        found.append(
            Finding(".vault/whoosh/", "it differs from the index", "rebuilt it from the index")
        )
    return found


def verify(index: Index, disk: Iterable[str], limit: int = 20) -> Verification:
    """Read and parse every indexable file (`disk`: what the indexer's scan finds) as the
    indexer would and compare with the index: files, their hashes, units (line spans and text
    hashes, in order), vectors present (for the configured model), and Whoosh's document
    count. Reads only."""
    config: Config = index.config
    result = Verification()
    expected: dict[str, tuple[str, list[tuple[int, int, str]]]] = {}
    for relpath in sorted(disk):
        try:
            note_file = fsutil.read_text(
                config.root / relpath,
                relpath,
                config.index.max_file_bytes,
                config.security.allow_hardlinks,
            )
        except VaultError:
            continue  # unreadable files are skipped by the indexer too
        units = make_units(parse_note(relpath, note_file.text))
        expected[relpath] = (
            note_file.sha256,
            [(u.start_line, u.end_line, u.sha256) for u in units],
        )
    store = index.store
    held: dict[str, tuple[str, list[tuple[int, int, str]]]] = {}
    try:
        for path, row in store.files().items():
            held[path] = (row.sha256, [])
        by_id = {row.id: path for path, row in store.files().items()}
        for file_id, start, end, sha in store.unit_digests():
            owner = by_id.get(file_id)
            if owner is None:
                result.differences.append(f"unit of no file (file id {file_id})")
                continue
            held[owner][1].append((start, end, sha))
        model: str | None = index.model_id
        vectors: set[str] = set()
        if model:
            vectors = store.vector_shas(model)
    except (CorruptIndexError, sqlite3.DatabaseError) as exc:
        result.differences.append(f"the index cannot be read ({exc})")
        return result
    diffs = result.differences
    for path in sorted(set(expected) | set(held)):
        want, have = expected.get(path), held.get(path)
        if want != have:
            result.paths.append(path)
        if have is None:
            diffs.append(f"{path}: on disk, not in the index")
        elif want is None:
            diffs.append(f"{path}: in the index, not on disk")
        elif want[0] != have[0]:
            diffs.append(
                f"{path}: the index holds another version (sha256 {have[0][:12]}, "
                f"the file has {want[0][:12]})"
            )
        elif want[1] != have[1]:
            diffs.append(
                f"{path}: the index holds {len(have[1])} units, the file gives "
                f"{len(want[1])} (or other line spans)"
            )
    result.files = len(expected)
    result.units = sum(len(units) for _, units in expected.values())
    if model:
        needed = {sha for _, units in expected.values() for _, _, sha in units}
        result.embedded = len(needed & vectors)
        if needed - vectors:
            diffs.append(f"{len(needed - vectors)} units have no vector from {model}")
    ft = check_fulltext(index, sum(len(units) for _, units in held.values()))
    if ft:
        diffs.append(f"the keyword index: {ft}")
    result.files_digest = _digest(
        expected,
        sorted({sha for _, units in expected.values() for _, _, sha in units}) if model else None,
    )
    result.cache_digest = _digest(
        held,
        sorted({sha for _, units in held.values() for _, _, sha in units} & vectors)
        if model
        else None,
    )
    if len(diffs) > limit:
        more = len(diffs) - limit
        del diffs[limit:]
        diffs.append(f"… and {more} more")
    return result


def _digest(
    files: dict[str, tuple[str, list[tuple[int, int, str]]]], vectors: list[str] | None
) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        sha, units = files[path]
        digest.update(f"{path}\0{sha}\0".encode("utf-8", "surrogateescape"))
        for start, end, unit in units:
            digest.update(f"{start}:{end}:{unit}\n".encode())
    for sha in vectors or ():
        digest.update(f"v:{sha}\n".encode())
    return digest.hexdigest()


# -- the doctor -------------------------------------------------------------------------------


def diagnose_and_repair(index: Index) -> list[Finding]:
    """Run every check of the cache and repair what fails: the folder's shape, the SQLite
    index (rebuilt from the files), missing vectors (embedded), the Whoosh index (rebuilt
    from SQLite), the unit tables (removed: the next search rebuilds them). Returns what was
    found, each with what was done."""
    cache = index.cache
    found = heal_cache_shape(cache)
    if found:
        index.store.close()
        index.fulltext.close()
    store = index.store
    if not store.exists():
        found.append(
            Finding(
                index.capabilities.where,
                "is missing" if index.capabilities.local_file else "holds nothing of this vault",
                "built it from the files",
            )
        )
        index.run()
        return found
    problem = check_store(store, full=True)
    if problem:
        index.store.close()
        report = index.run(rebuild=True)
        found.append(
            Finding(
                ".vault/index.sqlite",
                f"is damaged ({problem})",
                f"rebuilt it from the files ({report.units} units, "
                f"{report.embedded_units} with vectors)",
            )
        )
        return found + _check_tables(cache)
    missing = check_vectors(store, index.model_id)
    if missing:
        if index.model_id:
            store.drop_bad_vectors(index.model_id)
        with store.transaction() as conn:
            store.set_meta(conn, "embeddings_complete", 0)
        report = index.run()
        found.append(Finding("vectors", missing, f"embedded {report.units_embedded} units"))
    units = store.counts(None)["units"]
    fulltext = check_fulltext(index, units)
    if fulltext:
        with index.writer_lock():
            index.rebuild_fulltext()
        found.append(Finding(".vault/whoosh/", fulltext, "rebuilt it from the index"))
    return found + _check_tables(cache)


def _check_tables(cache: Path) -> list[Finding]:
    found = []
    for path in unit_tables(cache):
        problem = check_arrays(path)
        if problem:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            found.append(
                Finding(
                    f".vault/{path.name}",
                    f"is damaged ({problem})",
                    "removed it (the next search rebuilds it)",
                )
            )
    return found


def damage(config: Config, model: str | None = None) -> list[str]:
    """What `vault status` reports as damage, without repairing or writing anything: the
    cheap checks (`model`: the id vectors are kept under, for the vector checks), and the
    unit tables' checksums."""
    cache = config.cache_dir
    problems = []
    if cache.exists() and not cache.is_dir():
        return [".vault is a file, not the cache folder"]
    for name in ("index.sqlite", *LOCK_FILES):
        path = cache / name
        if path.exists() and not path.is_file():
            problems.append(f".vault/{name} is not a regular file")
    db = cache / "index.sqlite"
    if db.is_file():
        store = Store(db, readonly=True)
        try:
            problem = check_store(store)
            if problem:
                problems.append(f"index.sqlite: {problem}")
            else:
                problem = _fulltext_changed(store, cache / "whoosh")
                if problem:
                    problems.append(f"whoosh/: {problem}")
                problem = _vectors_problem(store, model)
                if problem:
                    problems.append(f"vectors: {problem}")
        finally:
            store.close()
    for path in unit_tables(cache):
        problem = check_arrays(path)
        if problem:
            problems.append(f"{path.name}: {problem}")
    return problems
