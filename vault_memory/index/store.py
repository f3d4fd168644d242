"""`.vault/index.sqlite`: files, units, embeddings and bookkeeping: the SQLite `IndexBackend`.

WAL mode, so readers never wait for the writer. Embeddings are keyed by (unit text sha256,
model id): a moved file or shifted lines re-embed nothing. The units' table is named `chunks`
on disk (and `flags.chunk_id`): renaming it would force every index to be rebuilt.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CannotWriteError, VaultError
from ..files import is_instruction
from .backend import Capabilities
from .rows import (
    ChangedRows,
    Embedding,
    FileRow,
    FileStat,
    FulltextRow,
    LinkRow,
    NewLink,
    NewUnit,
    Property,
    ScopeCount,
    SkippedFile,
    StoredUnit,
    TableRows,
    TextToEmbed,
    UnitDigest,
    UnitRow,
    make_rows,
)

# 2: chunks.terms (the analyzed text, for query-time BM25); 3: files.scope; 4: Obsidian's fields
# (files.note_tags, properties, names, links) and the files skipped until they change (skipped)
SCHEMA_VERSION = 4

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    date TEXT,
    title TEXT,
    tags TEXT NOT NULL DEFAULT '',
    indexed_at REAL NOT NULL,
    scope TEXT NOT NULL DEFAULT '',
    note_tags TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS files_scope ON files(scope);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT NOT NULL,
    text TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    date TEXT,
    kind TEXT NOT NULL,
    salience REAL NOT NULL DEFAULT 1.0,
    tags TEXT NOT NULL DEFAULT '',
    terms TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE INDEX IF NOT EXISTS chunks_sha ON chunks(sha256);
CREATE TABLE IF NOT EXISTS properties (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS properties_file ON properties(file_id);
CREATE TABLE IF NOT EXISTS names (
    key TEXT NOT NULL,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS names_key ON names(key);
CREATE INDEX IF NOT EXISTS names_file ON names(file_id);
CREATE TABLE IF NOT EXISTS links (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    subpath TEXT NOT NULL DEFAULT '',
    display TEXT NOT NULL DEFAULT '',
    embed INTEGER NOT NULL DEFAULT 0,
    key TEXT NOT NULL,
    text TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS links_file ON links(file_id);
CREATE INDEX IF NOT EXISTS links_key ON links(key);
CREATE TABLE IF NOT EXISTS skipped (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    sha256 TEXT NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (sha256, model)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS flags (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    flags TEXT NOT NULL
);
"""
# `flags` holds a row for each unit judged at index time to read as an instruction
# to a model (files/injection.py). It was added without a version bump: an index written
# before it gets the table on open and its units judged once (`FLAGS_META` then says so).
FLAGS_META = "flags_judged"
CACHE_KB = 32768  # the page cache of each connection (PRAGMA cache_size), at most


def _flag_units(
    conn: sqlite3.Connection, where: str, args: list[Any], judged: dict[str, bool] | None = None
) -> None:
    """Judge the units matching `where` (over `chunks c`) and record those that read as an
    instruction to a model. `judged`: verdicts already known by text (the units a file held
    before it was indexed again: an edit judges only the texts it changed)."""
    rows = conn.execute(f"SELECT c.id, c.text FROM chunks c WHERE {where}", args).fetchall()
    known = judged or {}
    conn.executemany(
        "INSERT OR REPLACE INTO flags (chunk_id, flags) VALUES (?, 'instruction')",
        [(cid,) for cid, text in rows if (known[text] if text in known else is_instruction(text))],
    )


def _judge_old_units(conn: sqlite3.Connection) -> None:
    """Once per index: judge the units an index written before `flags` holds."""
    if conn.execute("SELECT 1 FROM meta WHERE key=?", (FLAGS_META,)).fetchone():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not conn.execute("SELECT 1 FROM meta WHERE key=?", (FLAGS_META,)).fetchone():
            _flag_units(conn, "1", [])
            conn.execute("INSERT INTO meta VALUES (?, '1')", (FLAGS_META,))
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


class CorruptIndexError(Exception):
    """The SQLite file is not a usable index (truncated, garbage, wrong schema)."""


#: SQLite's result codes that come from the disk, not from damage to the file: a full disk
#: (or a file over the size limit), an I/O error, a read-only file system. Rebuilding would
#: not help (and would throw away the vectors the index holds).
_DISK_CODES = {
    "SQLITE_FULL": "the disk is full",
    "SQLITE_IOERR": "an I/O error",
    "SQLITE_READONLY": "the file system is read-only",
}
#: What a failed write leaves of the index, said by every error about it.
KEPT = "The index keeps what it held before: search answers from it, with its vectors"


def disk_problem(exc: BaseException) -> str | None:
    """Why `exc` (an error of sqlite3, or one raised from it) is the disk's fault, not the
    index's: "the disk is full", "an I/O error", ...; None for anything else."""
    while exc is not None:
        name = getattr(exc, "sqlite_errorname", None)
        if name == "SQLITE_READONLY_DBMOVED":
            return None  # the file was deleted or moved under the writer: made anew
        if isinstance(name, str):
            for code, reason in _DISK_CODES.items():
                if name == code or name.startswith(code + "_"):
                    return reason
            return None
        exc = exc.__cause__  # type: ignore[assignment]
    return None


def cannot_write_index(path: Path, exc: BaseException) -> VaultError:
    """The one-line error of a write of the index that the disk refused."""
    reason = disk_problem(exc) or str(exc)
    return CannotWriteError(f".vault/{path.name}", reason, KEPT)


class SchemaVersionError(CorruptIndexError):
    """The index was written by a vault-memory with another schema."""


UNIT_COLUMNS = (
    "c.id, f.path, c.start_line, c.end_line, c.heading, c.text, c.sha256, c.date, c.kind, "
    "c.salience, c.tags"
)


REQUIRED_TABLES = ("meta", "files", "chunks", "embeddings")


def _check_tables(conn: sqlite3.Connection, name: str) -> None:
    """An existing index (it has a schema version) must still have every table: a dropped
    `chunks` would otherwise be re-created empty and look like a vault with no text."""
    found = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [t for t in REQUIRED_TABLES if t not in found]
    if missing:
        conn.close()
        raise CorruptIndexError(f"{name}: the table {', '.join(missing)} is missing")


def _wal_empty(path: Path) -> bool:
    """Whether the database's -wal holds no frames (missing, or empty: what a writer that met
    a full disk leaves), so that everything is in the file itself."""
    try:
        return os.path.getsize(f"{path}-wal") == 0
    except OSError:
        return True


def writable(path: Path) -> bool:
    """Whether this process may write the SQLite file `path` and create its -wal/-shm."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)


class Store:
    """The index in `.vault/index.sqlite`, this machine's own (see the module docstring)."""

    capabilities = Capabilities(
        name="sqlite",
        where=".vault/index.sqlite",
        local_file=True,
        shared=False,
        change_counter=True,
        patches_unit_table=True,
        serves_candidates=False,
    )
    stale = False  # a search's reads see one state: nothing to search again for

    def __init__(self, path: Path, readonly: bool = False, create: bool = True) -> None:
        self.path = path
        self.readonly = readonly
        #: False: the file (and its folder) is never created here, only opened (a search
        #: server's reader: `.vault/` deleted under it stays deleted; the writer makes it).
        self.create = create
        self.fell_back = False  # opened read-only because the cache cannot be written
        self.write_problem: str | None = None  # why, when the disk said so (full, I/O error)
        self._conn: sqlite3.Connection | None = None
        # (connection, data_version, total_changes) when `count_problem` counted, its answer
        self._counted: tuple[tuple[Any, int, int], str | None] | None = None

    @property
    def location(self) -> str:
        return str(self.path)

    def versions(self) -> dict[str, str]:
        return {"sqlite": sqlite3.sqlite_version}

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self._conn = self._open()
            except CannotWriteError as exc:
                if not self.path.is_file():
                    raise
                # A full disk (or an I/O error writing -wal/-shm): the index as it is still
                # answers searches, opened read-only; a writer is refused with the reason.
                self.readonly = self.fell_back = True
                self.write_problem = exc.reason
                self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        if not self.readonly and self.path.exists() and not writable(self.path):
            # A read-only cache still answers searches: opened as immutable (nothing can
            # write it, so nothing can change under the reader); writes are refused.
            self.readonly = True
            self.fell_back = True
        try:
            if self.readonly:
                # A read-only connection to a WAL database creates -wal/-shm files it cannot
                # remove; when no writer has the index open (no -wal), read it as immutable so
                # that `vault status` leaves .vault/ exactly as it was.
                idle = _wal_empty(self.path)
                uri = self.path.absolute().as_uri() + "?mode=ro" + ("&immutable=1" if idle else "")
                conn = sqlite3.connect(uri, uri=True, timeout=5, check_same_thread=False)
            elif not self.create:  # opened read-write, never made: fails when it is gone
                uri = self.path.absolute().as_uri() + "?mode=rw"
                conn = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA foreign_keys = ON")
            # 32 MB of pages kept (SQLite's default: 2 MB): a search after an edit reads the
            # same vectors (1.6 KB rows, 12 pages a lookup) and file rows several times over;
            # the process read 29 MB through 6,300 read calls with the default, 14 MB with this.
            conn.execute(f"PRAGMA cache_size = -{CACHE_KB}")
            if not self.readonly:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute(SCHEMA.split(";")[0])  # meta first: an old schema is not extended
            version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if version is not None and version[0] != str(SCHEMA_VERSION):
                conn.close()
                raise SchemaVersionError(
                    f"the index has schema version {version[0]}, "
                    f"this vault-memory uses {SCHEMA_VERSION}"
                )
            if version is not None:
                _check_tables(conn, self.path.name)
            if not self.readonly:
                conn.executescript(SCHEMA)
        except (SchemaVersionError, CorruptIndexError):
            raise
        except sqlite3.DatabaseError as exc:
            if disk_problem(exc) and not self.readonly:
                raise cannot_write_index(self.path, exc) from None
            raise CorruptIndexError(f"{self.path.name}: {exc}") from exc
        if version is None and not self.readonly:
            conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            conn.commit()
        if not self.readonly:
            _judge_old_units(conn)
        return conn

    def open(self) -> None:
        """Open the database now, creating its schema: damage shows here rather than later."""
        self.conn  # noqa: B018

    def exists(self) -> bool:
        """Whether the index was written here (the file is there)."""
        return self.path.exists()

    def reset(self) -> None:
        """Throw the index away (a rebuild): the file and its WAL."""
        self.close()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def search_reads(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to arrange: each read asks the file (a server's store answers meta reads
        from the previous search's statement)."""
        return contextlib.nullcontext()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    # -- meta -------------------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def state_stamp(self) -> dict[str, Any]:
        """What identifies the indexed state for caches derived from it: the last committed
        index run, the newest unit, and a counter of vector writes."""
        with self._read_snapshot() as conn:
            last = conn.execute("SELECT value FROM meta WHERE key='last_index_at'").fetchone()
            # Two statements: a bare count(*) is SQLite's count of an index's cells (0.02
            # ms at 100,000 units once `count_problem` read its pages: the units are not
            # counted twice), with max(id) beside it a step of the engine per row (5 ms).
            units = (
                conn.execute("SELECT max(id) FROM chunks").fetchone()[0],
                conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
            )
            vectors = conn.execute("SELECT value FROM meta WHERE key='vectors_added'").fetchone()
        return {
            "last_index_at": last[0] if last else None,
            "units": list(units),
            "vectors": vectors[0] if vectors else None,
        }

    def set_meta(self, conn: sqlite3.Connection, key: str, value: Any) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))

    def record_counts(self, conn: sqlite3.Connection) -> None:
        """Record how many files and units the index holds (in the writer's transaction), so
        that rows lost by damage are noticed (`count_problem`)."""
        files = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        units = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        self.set_meta(conn, "files_count", files)
        self.set_meta(conn, "units_count", units)

    def count_problem(self) -> str | None:
        """Why the rows disagree with the counts the last writer recorded (None: they agree,
        or no count was recorded yet). Counted once while no connection writes: a search
        that checked before its index run does not count 100,000 units again for the run."""
        seen = self.changes_key()
        if self._counted is not None and self._counted[0] == seen:
            return self._counted[1]
        found = self._count_problem()
        self._counted = (seen, found)
        return found

    def _count_problem(self) -> str | None:
        with self._read_snapshot() as conn:
            rows = dict(
                conn.execute(
                    "SELECT key, value FROM meta WHERE key IN ('files_count', 'units_count')"
                )
            )
            if not rows:
                return None
            files = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
            units = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        for what, have in (("files", files), ("units", units)):
            want = rows.get(f"{what}_count")
            if want is not None and str(have) != want:
                return f"it holds {have} {what} where the last index recorded {want}"
        return None

    # -- files and units --------------------------------------------------------------------

    def files(self) -> dict[str, FileRow]:
        rows = self.conn.execute("SELECT id, path, kind, mtime_ns, size, sha256 FROM files")
        return {row.path: row for row in make_rows(FileRow, rows)}

    def file_stats(self) -> dict[str, FileStat]:
        """path -> the stat and digest of every indexed file: what planning compares."""
        new = tuple.__new__  # a row by C code: 10,000 files are read for every no-op run
        rows = self.conn.execute("SELECT path, mtime_ns, size, sha256 FROM files")
        return {r[0]: new(FileStat, (r[1], r[2], r[3])) for r in rows}

    def delete_file(self, conn: sqlite3.Connection, path: str) -> None:
        conn.execute("DELETE FROM files WHERE path=?", (path,))

    def analyzed_otherwise(self, analyze: Callable[[str], str]) -> list[str]:
        """The files whose stored words `analyze` would give otherwise (`words.analyzed_otherwise`
        over every unit and name key)."""
        from .words import analyzed_otherwise

        return analyzed_otherwise(
            self.conn.execute(
                "SELECT f.path, c.text, c.terms FROM chunks c JOIN files f ON f.id = c.file_id"
            ),
            self.conn.execute("SELECT f.path, n.key FROM names n JOIN files f ON f.id = n.file_id"),
            analyze,
        )

    def files_with_units(self, match: Callable[[str], bool]) -> list[str]:
        """The files holding a unit whose text `match`es (an upgrade's `chunked_otherwise`)."""
        return sorted(
            {
                path
                for path, text in self.conn.execute(
                    "SELECT f.path, c.text FROM chunks c JOIN files f ON f.id = c.file_id"
                )
                if match(text)
            }
        )

    def texts_holding(self, match: Callable[[str], bool]) -> list[str]:
        """The digests of the unit texts that `match` (an upgrade's `words.has_pictograph`)."""
        return sorted(
            {
                sha
                for sha, text in self.conn.execute("SELECT sha256, text FROM chunks")
                if match(text)
            }
        )

    def drop_vectors(self, conn: sqlite3.Connection, model: str, shas: Iterable[str]) -> None:
        """Forget `model`'s vectors of the texts `shas`: the next run embeds them again."""
        wanted = list(shas)
        for first in range(0, len(wanted), 500):
            part = wanted[first : first + 500]
            conn.execute(
                f"DELETE FROM embeddings WHERE model=? AND sha256 IN ({','.join('?' * len(part))})",
                (model, *part),
            )

    def forget_content(self, conn: sqlite3.Connection, paths: Iterable[str]) -> None:
        """Make the next index run read `paths` again and store them anew (their stat and
        digest no longer match any file; their units' vectors are kept, by digest)."""
        conn.executemany(
            "UPDATE files SET mtime_ns=-1, sha256='' WHERE path=?", [(p,) for p in paths]
        )

    def touch_file(self, conn: sqlite3.Connection, path: str, mtime_ns: int, size: int) -> None:
        conn.execute("UPDATE files SET mtime_ns=?, size=? WHERE path=?", (mtime_ns, size, path))

    def replace_file(
        self,
        conn: sqlite3.Connection,
        path: str,
        kind: str,
        mtime_ns: int,
        size: int,
        sha256: str,
        date: str | None,
        title: str,
        tags: Iterable[str],
        units: Iterable[NewUnit],
        scope: str = "",
        note_tags: Iterable[str] = (),
        properties: Iterable[Property] = (),
        names: Iterable[str] = (),
        links: Iterable[NewLink] = (),
    ) -> None:
        """Insert or replace a file and all its units; `scope` is the file's scope as
        "org/acme" ("" for the root). Obsidian's fields: the tags every unit carries, the
        properties, the names' keys (their analyzed terms) and the links."""
        judged = {
            text: flagged is not None
            for text, flagged in conn.execute(
                "SELECT c.text, g.chunk_id FROM files f JOIN chunks c ON c.file_id = f.id"
                " LEFT JOIN flags g ON g.chunk_id = c.id WHERE f.path = ?",
                (path,),
            )
        }
        conn.execute("DELETE FROM files WHERE path=?", (path,))
        conn.execute("DELETE FROM skipped WHERE path=?", (path,))
        cur = conn.execute(
            "INSERT INTO files (path, kind, mtime_ns, size, sha256, date, title, tags, indexed_at,"
            " scope, note_tags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                path,
                kind,
                mtime_ns,
                size,
                sha256,
                date,
                title,
                " ".join(tags),
                time.time(),
                scope,
                " ".join(note_tags),
            ),
        )
        file_id = cur.lastrowid
        conn.executemany(
            "INSERT INTO properties (file_id, name, value) VALUES (?, ?, ?)",
            [(file_id, name, value) for name, value in properties],
        )
        conn.executemany(
            "INSERT INTO names (key, file_id) VALUES (?, ?)",
            [(key, file_id) for key in dict.fromkeys(names) if key],
        )
        conn.executemany(
            "INSERT INTO links (file_id, line, kind, target, subpath, display, embed, key, text)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(file_id, *link) for link in links],
        )
        conn.executemany(
            "INSERT INTO chunks (file_id, ord, start_line, end_line, heading, text, sha256, date,"
            " kind, salience, tags, terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (file_id, i, start, end, heading, text, sha, date, kind, salience, utags, terms)
                for i, (start, end, heading, text, sha, salience, utags, terms) in enumerate(units)
            ],
        )
        _flag_units(conn, "c.file_id = ?", [file_id], judged)

    # -- files skipped until they change --------------------------------------------------

    def skipped(self) -> dict[str, SkippedFile]:
        """path -> stat and reason of the files that could not be read as they are now
        (invalid UTF-8, binary, too large, not a canvas): not read again, nor reported
        again, until their stat changes."""
        rows = self.conn.execute("SELECT path, mtime_ns, size, reason FROM skipped")
        return {r[0]: SkippedFile(r[1], r[2], r[3]) for r in rows}

    def set_skipped(
        self, conn: sqlite3.Connection, path: str, mtime_ns: int, size: int, reason: str
    ) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO skipped VALUES (?, ?, ?, ?)", (path, mtime_ns, size, reason)
        )

    def forget_skipped(self, conn: sqlite3.Connection, paths: Iterable[str]) -> None:
        conn.executemany("DELETE FROM skipped WHERE path=?", [(p,) for p in paths])

    # -- Obsidian's fields -------------------------------------------------------------------

    def fulltext_rows(self, paths: Iterable[str] | None = None) -> Iterator[FulltextRow]:
        """What the keyword index holds of each unit (of the files at `paths`, or all)."""
        query = (
            "SELECT c.id, f.id, f.path, c.text, c.heading, c.date, c.kind, c.tags,"
            " f.note_tags, f.scope FROM chunks c JOIN files f ON f.id = c.file_id"
        )
        new = tuple.__new__
        if paths is None:
            for r in self.conn.execute(query + " ORDER BY c.id"):
                yield new(FulltextRow, r)
            return
        for path in paths:
            for r in self.conn.execute(query + " WHERE f.path = ? ORDER BY c.ord", (path,)):
                yield new(FulltextRow, r)

    def properties_of(self, file_ids: Iterable[int]) -> dict[int, list[Property]]:
        found: dict[int, list[Property]] = {}
        wanted = sorted(set(file_ids))
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            for file_id, name, value in self.conn.execute(
                f"SELECT file_id, name, value FROM properties WHERE file_id IN "
                f"({','.join('?' * len(batch))}) ORDER BY rowid",
                batch,
            ):
                found.setdefault(file_id, []).append(Property(name, value))
        return found

    def named_files(self, keys: Iterable[str]) -> dict[str, list[int]]:
        """key -> the ids of the files with a name whose analyzed terms are `key`."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, list[int]] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            for key, file_id in self.conn.execute(
                f"SELECT key, file_id FROM names WHERE key IN ({','.join('?' * len(batch))})",
                batch,
            ):
                found.setdefault(key, []).append(file_id)
        return found

    def has_names(self) -> bool:
        return self.conn.execute("SELECT 1 FROM names LIMIT 1").fetchone() is not None

    LINK_COLUMNS = "f.path, l.line, l.kind, l.target, l.subpath, l.display, l.embed, l.text"

    def links(
        self, paths: Iterable[str] | None = None, keys: Iterable[str] | None = None
    ) -> list[LinkRow]:
        """Links of the files at `paths`, or those whose key is one of `keys`, or all; in
        source order."""
        base = f"SELECT {self.LINK_COLUMNS} FROM links l JOIN files f ON f.id = l.file_id"
        order = " ORDER BY f.path, l.line, l.rowid"
        if paths is None and keys is None:
            rows = list(self.conn.execute(base + order))
        else:
            column, values = (
                ("f.path", list(paths)) if paths is not None else ("l.key", list(keys or ()))
            )
            rows = []
            for start in range(0, len(values), 500):
                batch = values[start : start + 500]
                rows += self.conn.execute(
                    f"{base} WHERE {column} IN ({','.join('?' * len(batch))})", batch
                )
            rows.sort(key=lambda r: (r[0], r[1]))
        return [LinkRow(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7]) for r in rows]

    def units_by_id(self, ids: Iterable[int]) -> dict[int, StoredUnit]:
        wanted = list(ids)
        found: dict[int, StoredUnit] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            for r in self.conn.execute(
                f"SELECT {UNIT_COLUMNS} FROM chunks c JOIN files f ON f.id=c.file_id "
                f"WHERE c.id IN ({marks})",
                batch,
            ):
                found[r[0]] = StoredUnit(*r)
        return found

    def flagged_ids(self, ids: Iterable[int]) -> set[int] | None:
        """Which of the units `ids` read as an instruction to a model, as judged when they
        were indexed; None for an index opened read-only that predates the judgement."""
        wanted = list(ids)
        if self.get_meta(FLAGS_META) is None:
            return None
        found: set[int] = set()
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            found.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT chunk_id FROM flags WHERE chunk_id IN ({marks})", batch
                )
            )
        return found

    def flagged_count(self, scopes: Sequence[str] | None = None) -> int:
        """Units flagged as instructions (of those `scopes` only, when given); 0 for an index
        that predates the judgement."""
        if self.get_meta(FLAGS_META) is None:
            return 0
        sql = "SELECT COUNT(*) FROM flags g"
        args: list[Any] = []
        if scopes is not None:
            sql += (
                " JOIN chunks c ON c.id = g.chunk_id JOIN files f ON f.id = c.file_id"
                f" WHERE f.scope IN ({','.join('?' * len(scopes))})"
            )
            args = list(scopes)
        return int(self.conn.execute(sql, args).fetchone()[0])

    # -- embeddings -------------------------------------------------------------------------

    def missing_embeddings(self, model: str) -> list[TextToEmbed]:
        """(sha256, text) of units with no vector for `model`, one per distinct text, shortest
        first: a batch is padded to its longest text, so batches of similar lengths embed
        faster (bench/index.py)."""
        return make_rows(
            TextToEmbed,
            self.conn.execute(
                "SELECT c.sha256, MIN(c.text) AS text FROM chunks c LEFT JOIN embeddings e "
                "ON e.sha256=c.sha256 AND e.model=? WHERE e.sha256 IS NULL GROUP BY c.sha256 "
                "ORDER BY LENGTH(text), c.sha256",
                (model,),
            ),
        )

    def missing_embeddings_of(self, model: str, paths: Sequence[str]) -> list[TextToEmbed]:
        """`missing_embeddings` of the units of `paths` only (a few files just indexed)."""
        found: dict[str, str] = {}
        for first in range(0, len(paths), 500):
            part = list(paths[first : first + 500])
            found.update(
                self.conn.execute(
                    "SELECT c.sha256, MIN(c.text) FROM chunks c JOIN files f ON f.id = c.file_id"
                    " LEFT JOIN embeddings e ON e.sha256 = c.sha256 AND e.model = ?"
                    f" WHERE e.sha256 IS NULL AND f.path IN ({','.join('?' * len(part))})"
                    " GROUP BY c.sha256",
                    (model, *part),
                )
            )
        return sorted(make_rows(TextToEmbed, found.items()), key=lambda t: (len(t.text), t.sha256))

    def shas_of(self, paths: Sequence[str]) -> set[str]:
        """The text hashes of the units of `paths` (before a run replaces or deletes them)."""
        found: set[str] = set()
        for first in range(0, len(paths), 500):
            part = list(paths[first : first + 500])
            found.update(
                r[0]
                for r in self.conn.execute(
                    "SELECT c.sha256 FROM chunks c JOIN files f ON f.id = c.file_id"
                    f" WHERE f.path IN ({','.join('?' * len(part))})",
                    part,
                )
            )
        return found

    def prune_embeddings_of(self, conn: sqlite3.Connection, shas: Iterable[str]) -> int:
        """`prune_embeddings` of the texts `shas` only: their vectors (of any model) when no
        unit has that text any more."""
        wanted = list(shas)
        removed = 0
        for first in range(0, len(wanted), 500):
            part = wanted[first : first + 500]
            removed += conn.execute(
                f"DELETE FROM embeddings WHERE sha256 IN ({','.join('?' * len(part))})"
                " AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.sha256 = embeddings.sha256)",
                part,
            ).rowcount
        return removed

    def add_embeddings(
        self, conn: sqlite3.Connection, model: str, rows: Iterable[Embedding]
    ) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO embeddings (sha256, model, vector) VALUES (?, ?, ?)",
            [(sha, model, blob) for sha, blob in rows],
        )
        conn.execute(
            "INSERT INTO meta VALUES ('vectors_added', '1') ON CONFLICT(key) DO UPDATE"
            " SET value = CAST(value AS INTEGER) + 1"
        )

    def bad_vectors(self, model: str) -> int:
        """How many vectors of `model` have not the byte length its dimensions give (damage)."""
        dims = self.get_meta("dims")
        if not dims or not dims.isdigit():
            return 0
        return int(
            self.conn.execute(
                "SELECT COUNT(*) FROM embeddings WHERE model=? AND length(vector) != ?",
                (model, int(dims) * 4),
            ).fetchone()[0]
        )

    def drop_bad_vectors(self, model: str) -> int:
        """Delete the vectors `bad_vectors` counts (their units are embedded again)."""
        bad = self.bad_vectors(model)
        if bad:
            dims = int(self.get_meta("dims") or 0)
            with self.transaction() as conn:
                conn.execute(
                    "DELETE FROM embeddings WHERE model=? AND length(vector) != ?",
                    (model, dims * 4),
                )
                self.set_meta(conn, "embeddings_complete", 0)
        return bad

    def prune_embeddings(
        self, conn: sqlite3.Connection, model: str, keep: Iterable[str] = ()
    ) -> int:
        """Drop vectors of other models (but those in `keep`) and of texts no unit has any
        more."""
        models = [model, *keep]
        marks = ",".join("?" * len(models))
        cur = conn.execute(
            f"DELETE FROM embeddings WHERE model NOT IN ({marks})"
            " OR sha256 NOT IN (SELECT sha256 FROM chunks)",
            models,
        )
        return cur.rowcount

    def unit_rows(self, model: str | None) -> list[UnitRow]:
        """Every unit, by scope and then in file order, with its vector of `model`."""
        with self._read_snapshot() as conn:
            by_sha: dict[str, bytes] = {}
            if model:
                by_sha = dict(
                    conn.execute("SELECT sha256, vector FROM embeddings WHERE model=?", (model,))
                )
            rows = conn.execute(
                "SELECT c.id, c.file_id, c.heading, c.date, c.salience, c.sha256,"
                " c.end_line - c.start_line + 1, c.terms, c.text, f.scope FROM chunks c"
                " JOIN files f ON f.id = c.file_id ORDER BY f.scope, c.file_id, c.ord"
            )
            new = tuple.__new__  # a row by C code: 100,000 are read when a table is built
            vector = by_sha.get
            return [
                new(
                    UnitRow, (uid, fid, heading, date, salience, vector(sha), n, terms, text, scope)
                )
                for uid, fid, heading, date, salience, sha, n, terms, text, scope in rows
            ]

    def file_marks(self) -> dict[int, int]:
        """file id -> a mark of the file as indexed, which changes whenever the file is indexed
        again: its content hash and the microsecond it was indexed (the unit table keeps them
        so that it can patch itself by the files that changed since: search/table.py)."""
        with self._read_snapshot() as conn:
            return self._file_marks(conn)

    @staticmethod
    def _file_marks(conn: sqlite3.Connection) -> dict[int, int]:
        # Three strings from SQLite and arithmetic over arrays, not a tuple and an int(, 16)
        # per file: 1.5 ms at 10,000 files, not 15 (a search after an edit asks it).
        import numpy as np

        ids, micros, shas = conn.execute(
            "SELECT group_concat(id), group_concat(CAST(indexed_at * 1000000 AS INTEGER)),"
            " group_concat(substr(sha256 || '000000000000000', 1, 15), '') FROM files"
        ).fetchone()
        if not ids:
            return {}
        digits = np.frombuffer(shas.encode("ascii"), dtype=np.uint8).reshape(-1, 15)
        value = np.zeros(256, dtype=np.int64)  # hex digit -> its value
        for i, c in enumerate(b"0123456789abcdef"):
            value[c] = value[ord(chr(c).upper())] = i
        sha = value[digits] @ (16 ** np.arange(14, -1, -1, dtype=np.int64))
        marks = (sha << 1) ^ np.asarray(micros.split(","), dtype=np.int64)
        return dict(zip(map(int, ids.split(",")), marks.tolist(), strict=True))

    def changed_unit_rows(
        self,
        model: str | None,
        dims: int,
        marks: dict[int, int],
        unvectored: dict[int, int],
        most: int,
    ) -> ChangedRows | None:
        """What changed since a unit table made when the files had `marks`, in one snapshot:
        (the marks now, the ids of the files whose units changed: edited, added, gone, or
        with units that got their vector since (of `unvectored`: file id -> units without
        a valid vector then), and the units of those files now as `unit_rows` gives them).
        None when more than `most` files changed (building the table whole is cheaper)."""
        with self._read_snapshot() as conn:
            now = self._file_marks(conn)
            changed = {i for i, mark in marks.items() if now.get(i) != mark}
            changed.update(i for i in now if i not in marks)
            if len(changed) > most:
                return None
            waiting = [i for i in unvectored if i not in changed] if model else []
            for first in range(0, len(waiting), 500):
                part = waiting[first : first + 500]
                for file_id, missing in conn.execute(
                    "SELECT c.file_id, count(e.vector IS NULL OR length(e.vector) != ?"
                    " OR NULL) FROM chunks c LEFT JOIN embeddings e ON e.sha256 = c.sha256"
                    f" AND e.model = ? WHERE c.file_id IN ({','.join('?' * len(part))})"
                    " GROUP BY c.file_id",
                    (dims * 4, model, *part),
                ):
                    if missing != unvectored[file_id]:
                        changed.add(file_id)
            if len(changed) > most:
                return None
            present = sorted(i for i in changed if i in now)
            rows: list[UnitRow] = []
            for first in range(0, len(present), 500):
                part = present[first : first + 500]
                rows += make_rows(
                    UnitRow,
                    conn.execute(
                        "SELECT c.id, c.file_id, c.heading, c.date, c.salience, e.vector,"
                        " c.end_line - c.start_line + 1, c.terms, c.text, f.scope FROM chunks c"
                        " JOIN files f ON f.id = c.file_id LEFT JOIN embeddings e"
                        " ON e.sha256 = c.sha256 AND e.model = ?"
                        f" WHERE c.file_id IN ({','.join('?' * len(part))})"
                        " ORDER BY c.file_id, c.ord",
                        (model or "", *part),
                    ),
                )
            rows.sort(key=lambda r: (r.scope, r.file_id))  # stable: by scope, file, then unit
            return ChangedRows(now, sorted(changed), rows)

    def unit_rows_and_marks(self, model: str | None) -> TableRows:
        """`unit_rows` and `file_marks` of one state of the index."""
        with self._read_snapshot():
            return TableRows(self.unit_rows(model), self.file_marks())

    @contextmanager
    def _read_snapshot(self) -> Iterator[sqlite3.Connection]:
        """Several SELECTs that see one state of the database, even while a writer commits."""
        conn = self.conn
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.rollback()

    # -- what search, the indexer and the integrity checks ask besides ---------

    def data_version(self) -> int:
        """A number that changes when another connection commits (cheap: no table read)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def changes_key(self) -> tuple[Any, int, int]:
        """What changes whenever the index may have: a commit by another connection (its
        `data_version`) or by ours (`total_changes`); a memo of what was read holds while
        this is the same."""
        conn = self.conn
        return (conn, self.data_version(), conn.total_changes)

    def has_units(self) -> bool:
        return self.conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None

    def unit_ids_where(
        self,
        since: str | None = None,
        until: str | None = None,
        kinds: Sequence[str] = (),
        hidden_kinds: Sequence[str] = (),
        within: str | None = None,
    ) -> list[int]:
        """Ids of the units dated in [since, until] (ISO days), of `kinds`, not of
        `hidden_kinds`, in the file or folder `within` (conditions left out when empty)."""
        clauses: list[str] = []
        params: list[Any] = []
        if since:
            clauses.append("c.date >= ?")
            params.append(since)
        if until:
            clauses.append("c.date <= ?")
            params.append(until)
        if kinds:
            clauses.append(f"c.kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        if hidden_kinds:
            clauses.append(f"c.kind NOT IN ({','.join('?' * len(hidden_kinds))})")
            params.extend(hidden_kinds)
        if within:
            clauses.append("(f.path = ? OR substr(f.path, 1, ?) = ?)")
            prefix = within.rstrip("/") + "/"
            params.extend([within.rstrip("/"), len(prefix), prefix])
        where = " AND ".join(clauses) or "1"
        return [
            r[0]
            for r in self.conn.execute(
                f"SELECT c.id FROM chunks c JOIN files f ON f.id=c.file_id WHERE {where}", params
            )
        ]

    def unit_ids_of_kinds(self, kinds: Sequence[str]) -> list[int]:
        """Ids of the units of files of `kinds` (the file's kind, indexed)."""
        marks = ",".join("?" * len(kinds))
        return [
            r[0]
            for r in self.conn.execute(
                f"SELECT c.id FROM files f JOIN chunks c ON c.file_id = f.id "
                f"WHERE f.kind IN ({marks})",
                list(kinds),
            )
        ]

    def quick_check(self, most: int = 1) -> list[str]:
        """The database's own integrity check: ["ok"] or up to `most` problems."""
        return [str(r[0]) for r in self.conn.execute(f"PRAGMA quick_check({int(most)})")]

    def unit_digests(self) -> Iterator[UnitDigest]:
        """Every unit's place and text digest, by file and order."""
        for r in self.conn.execute(
            "SELECT file_id, start_line, end_line, sha256 FROM chunks ORDER BY file_id, ord"
        ):
            yield tuple.__new__(UnitDigest, r)

    def vector_shas(self, model: str) -> set[str]:
        """The text hashes that have a vector of `model`."""
        return {
            r[0] for r in self.conn.execute("SELECT sha256 FROM embeddings WHERE model=?", (model,))
        }

    def scope_counts(self) -> dict[str, ScopeCount]:
        """scope ("" for the root) -> what the index holds of it."""
        with self._read_snapshot() as conn:
            files = dict(conn.execute("SELECT scope, COUNT(*) FROM files GROUP BY scope"))
            units = dict(
                conn.execute(
                    "SELECT f.scope, COUNT(*) FROM chunks c JOIN files f ON f.id = c.file_id"
                    " GROUP BY f.scope"
                )
            )
        return {scope: ScopeCount(count, units.get(scope, 0)) for scope, count in files.items()}

    def counts(self, model: str | None, scopes: Sequence[str] | None = None) -> dict[str, int]:
        """Files, units and embedded units of the index (of those `scopes` only, when given)."""
        conn = self.conn
        if scopes is None:
            files = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
            units = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            where: tuple[str, list[Any]] = ("1", [])
        else:
            where = (f"f.scope IN ({','.join('?' * len(scopes))})", list(scopes))
            files = conn.execute(
                f"SELECT COUNT(*) FROM files f WHERE {where[0]}", where[1]
            ).fetchone()[0]
            units = conn.execute(
                f"SELECT COUNT(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE {where[0]}",
                where[1],
            ).fetchone()[0]
        embedded = 0
        if model:
            embedded = conn.execute(
                "SELECT COUNT(*) FROM chunks c JOIN embeddings e"
                " ON e.sha256=c.sha256 AND e.model=?"
                + (
                    f" JOIN files f ON f.id = c.file_id WHERE {where[0]}"
                    if scopes is not None
                    else ""
                ),
                [model, *where[1]],
            ).fetchone()[0]
        return {"files": files, "units": units, "embedded_units": embedded}


if TYPE_CHECKING:
    from .backend import IndexBackend

    def _conforms(store: Store) -> IndexBackend:
        return store  # mypy: the SQLite store is an IndexBackend
