"""The derived index on a PostgreSQL server with pgvector (docs/postgres-design.md):
the second `IndexBackend`, chosen by `[index] backend = "postgres"`.

Files, units, names, links and skipped files are rows keyed by the vault's id (one server may
hold several vaults); vectors are a pgvector column keyed by (vault, text sha256, model), with
an HNSW cosine index per model; every unit carries a weighted `tsvector` written from our own
analyzed terms (index/pgtext.py) under a GIN index.

Writers: one transaction per batch (`transaction`), serialised per vault by
`pg_advisory_xact_lock`, and every committed write bumps `meta.generation` (the
`data_version` readers compare). Readers run their multi-statement reads in one
`REPEATABLE READ` snapshot: no reader sees half a batch. Upserts are keyed by content: a file
whose sha256 the server already holds at that path keeps its units (only its stat is
updated), so two machines indexing the same commit converge to one state.

What belongs to this machine rather than the server (the local Whoosh index's fingerprint) is
kept in `.vault/server-local.json`, with the server generation it was written at: when another
machine changed the server since, this machine's keyword index is out of date.

Nothing here touches a vault file: a server that fails raises `IndexServerError` (one line,
host:port/db, never the password), and the caller's local files stay as they were.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .backend import Capabilities
from .pgconnect import IndexServerError, connect, describe
from .pgschema import MIGRATION_LOCK, applied, current, migrate
from .pgtext import tsvector_literal
from .rows import (
    ChangedRows,
    CloneRow,
    Embedding,
    FileRow,
    FileStat,
    FulltextRow,
    LinkRow,
    NewLink,
    NewUnit,
    Property,
    ScopeCount,
    ServedRows,
    ServedUnit,
    SkippedFile,
    StoredUnit,
    TableRows,
    TextToEmbed,
    UnitDigest,
    UnitRow,
    make_rows,
)
from .store import UNIT_COLUMNS

LOCAL_KEYS = ("fulltext_dirty", "fulltext_files")  # this machine's, not the server's
#: Meta of one clone's view (its run, its counts, its vectors still to add), kept on the
#: server as `key@<clone id>`; the others (model, dimensions, generations) are the vault's.
CLONE_KEYS = frozenset(
    (
        "last_index_at",
        "files_count",
        "units_count",
        "embeddings_complete",
        "embeddings_error",
        "embeddings_pending",
        "embeddings_pending_model",
        "fulltext_pending",
        "hard_linked",
        "racy_files",
    )
)
LOCAL_FILE = "server-local.json"
HNSW_BUILD_MEMORY = "512MB"  # for the one bulk build of a model's HNSW index
#: Rows written since the planner's statistics were last taken: past this many, the write
#: transaction ends with ANALYZE (autovacuum takes up to a minute; a search right after a
#: first index would be planned as if the tables were empty: nested loops over every vector)
ANALYZE_AFTER_ROWS = 5000
NAMED_MOST = 500  # units of the notes a query names, read for a search on the server
#: Matches of a search's keywords ranked at most, rarest keywords first
#: (`_ServedStatement.best_matches`): the keyword candidates cost a bounded read, not one
#: that grows with the vault for a common word.
KEYWORD_MATCHES_RANKED = 10_000
#: How many of a candidate stream's best matches are sorted (a bounded top-N sort) before
#: their files are read, as a multiple of the candidates asked for: enough that the files
#: this clone lacks or the filters leave out rarely empty it (`_ServedStatement._best_allowed`).
RANKED_FIRST_SHARE = 4
#: the unit columns a ranked keyword candidate carries: its id and file (to find the file)
#: and the ones `allowed_sql` reads
ALLOWED_READS = ("id", "file_id", "date", "kind")
UNIT_COLUMNS_PG = UNIT_COLUMNS.replace("c.", "u.")


def vector_text(blob: bytes) -> str:
    """A float32 vector (our blobs) as pgvector's text input; repr round-trips float32."""
    import numpy as np

    return "[" + ",".join(map(repr, np.frombuffer(blob, dtype=np.float32).tolist())) + "]"


def vector_blob(binary: bytes) -> bytes:
    """pgvector's binary output (int16 dims, int16 unused, big-endian float4s) as our blob."""
    import numpy as np

    return np.frombuffer(binary, dtype=">f4", offset=4).astype("<f4").tobytes()


def vector_blobs(binaries: Sequence[bytes | None]) -> list[bytes | None]:
    """`vector_blob` of each (None stays None), their bytes swapped in one pass: a search
    reads a vector with each of its thousand-odd rows."""
    import numpy as np

    present = [b for b in binaries if b is not None]
    swapped = memoryview(
        np.frombuffer(b"".join(b[4:] for b in present), dtype=">f4").astype("<f4").tobytes()
    )
    out: list[bytes | None] = []
    at = 0
    for b in binaries:
        if b is None:
            out.append(None)
        else:
            out.append(bytes(swapped[at : at + len(b) - 4]))
            at += len(b) - 4
    return out


class PgStore:
    """The index of vault `vault` on the server at `dsn` (see the module docstring)."""

    capabilities = Capabilities(
        name="postgres",
        where="the index server",
        local_file=False,
        shared=True,
        change_counter=False,
        patches_unit_table=False,
        serves_candidates=True,
    )

    def __init__(
        self, dsn: str, vault: str, cache: Path, readonly: bool = False, clone: str = ""
    ) -> None:
        self.dsn = dsn
        self.vault = vault
        #: This checkout's name among the vault's clones (`[index] clone_id`, by default the
        #: machine and the folder): it sees the files it indexed, over content rows shared
        #: by every clone; `clone_id` is its row in `clones`, read when connecting.
        self.clone = clone
        self.clone_id = -1
        self.cache = cache
        self.readonly = readonly
        self.fell_back = False
        self.write_problem: str | None = None  # never set: the server reports its own disk errors
        self.server = describe(dsn)
        self._conn: Any = None
        self._wrote = False
        self._wrote_units = False  # files or units changed in this transaction
        self._lock = zlib.crc32(f"vault-memory:{vault}".encode())
        #: The meta rows the last `served` statement read, what `get_meta` answers inside
        #: `search_reads` (a warm search: one statement); `stale` when that statement found
        #: another generation than the rows answered before it (the caller searches again).
        self._meta: dict[str, str] | None = None
        #: visible units per scope set, as the last search's statement counted them (its
        #: keyword ranking's idf, when this search's statement does not count them again)
        self._counted: dict[tuple[str, ...] | None, int] = {}
        self._search_reads = False
        self.stale = False
        self._unanalyzed = 0  # rows written since the last ANALYZE (ANALYZE_AFTER_ROWS)

    # -- connection ---------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self.server

    @property
    def conn(self) -> Any:
        if self._conn is None:
            conn = connect(self.dsn, autocommit=True)
            try:
                done = applied(conn)  # up to date: nothing written (a read-only replica)
                if not current(done):
                    migrate(conn)  # which refuses a database newer than this code
                self.clone_id = self._clone_row(conn)
            except Exception:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def versions(self) -> dict[str, str]:
        row = self._execute(
            "SELECT current_setting('server_version'),"
            " (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        ).fetchone()
        return {"postgresql": str(row[0]).split()[0], "pgvector": str(row[1] or "missing")}

    def _clone_row(self, conn: Any) -> int:
        """This clone's id in `clones`, made on first use (not by a reader: -1, which sees
        nothing, until it indexes). The rows a database held before clones were told apart
        belong to the clone named "": the first clone that writes adopts them (its index run
        then keeps what its files share with them and replaces the rest)."""
        find = "SELECT id FROM clones WHERE vault=%s AND name=%s"
        row = conn.execute(find, (self.vault, self.clone)).fetchone()
        if row is not None:
            return int(row[0])
        if self.readonly:
            row = conn.execute(find, (self.vault, "")).fetchone()  # what was there before
            return int(row[0]) if row is not None else -1
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock,))
            row = conn.execute(
                "UPDATE clones SET name=%s WHERE vault=%s AND name='' AND NOT EXISTS"
                " (SELECT 1 FROM clones WHERE vault=%s AND name=%s) RETURNING id",
                (self.clone, self.vault, self.vault, self.clone),
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO clones (vault, name) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    (self.vault, self.clone),
                )
                row = conn.execute(find, (self.vault, self.clone)).fetchone()
        return int(row[0])

    def clones(self) -> list[CloneRow]:
        """Every clone of this vault on the server, oldest first: its name, when it last
        indexed, what its view holds and what only it holds."""
        rows = self._execute(
            "SELECT c.id, c.name, extract(epoch FROM c.created_at),"
            " (SELECT value FROM meta m WHERE m.vault = c.vault"
            "  AND m.key = 'last_index_at@' || c.id),"
            " count(DISTINCT cf.path), count(u.id),"
            " count(u.id) FILTER (WHERE NOT EXISTS (SELECT 1 FROM clone_files o"
            "  WHERE o.file_id = cf.file_id AND o.clone <> c.id))"
            " FROM clones c LEFT JOIN clone_files cf ON cf.clone = c.id"
            " LEFT JOIN units u ON u.file_id = cf.file_id"
            " WHERE c.vault = %s GROUP BY c.id ORDER BY c.id",
            (self.vault,),
        ).fetchall()
        return [
            CloneRow(
                int(i),
                str(name),
                float(created),
                float(last) if last else None,
                int(files),
                int(units),
                int(own),
            )
            for i, name, created, last, files, units, own in rows
        ]

    def forget_clone(self, clone_id: int) -> CloneRow:
        """Remove the clone `clone_id` of this vault (a stale checkout): its view, its
        skipped files and meta, and the content (units, names, links, vectors) no other
        clone holds. Never another clone's rows; one transaction under the vault's writer
        lock, so no clone attaches a content row meanwhile. Returns what it held."""
        from ..errors import VaultError

        found = {c.id: c for c in self.clones()}
        if clone_id not in found:
            known = ", ".join(str(i) for i in found) or "none"
            raise VaultError(
                f"vault {self.vault!r} has no clone {clone_id} on the index server "
                f"(its clones: {known}); `vault postgres clones` lists them."
            )
        with self.transaction():
            held = self._execute(
                "DELETE FROM clone_files WHERE clone = %s RETURNING file_id", (clone_id,)
            ).fetchall()
            shas = self._execute(
                "SELECT DISTINCT u.sha256 FROM units u WHERE u.file_id = ANY(%s)",
                ([r[0] for r in held],),
            ).fetchall()
            self._collect([r[0] for r in held])
            self._execute(
                "DELETE FROM embeddings e WHERE e.vault = %s AND e.sha256 = ANY(%s)"
                " AND NOT EXISTS (SELECT 1 FROM units u JOIN files f ON f.id = u.file_id"
                " WHERE f.vault = e.vault AND u.sha256 = e.sha256)",
                (self.vault, [r[0] for r in shas]),
            )
            self._execute(
                "DELETE FROM meta WHERE vault = %s AND key LIKE %s",
                (self.vault, f"%@{int(clone_id)}"),
            )
            self._execute(  # its skipped files go with it (ON DELETE CASCADE)
                "DELETE FROM clones WHERE vault = %s AND id = %s", (self.vault, clone_id)
            )
            self._wrote = self._wrote_units = True  # other readers' candidates changed
        return found[clone_id]

    def _attach(self, path: str, file_id: int, mtime_ns: int, size: int, held: Any) -> None:
        """This clone's `path` is the content row `file_id` now (`held`: the row it was)."""
        self._execute(
            "INSERT INTO clone_files (clone, path, file_id, mtime_ns, size) VALUES"
            " (%s, %s, %s, %s, %s) ON CONFLICT (clone, path) DO UPDATE SET"
            " file_id=excluded.file_id, mtime_ns=excluded.mtime_ns, size=excluded.size",
            (self.clone_id, path, file_id, mtime_ns, size),
        )
        if held is not None and held[0] != file_id:
            self._collect([held[0]])

    def _detach(self, paths: Sequence[str]) -> None:
        """This clone no longer holds `paths`; content no clone holds any more goes."""
        gone = self._execute(
            "DELETE FROM clone_files WHERE clone=%s AND path = ANY(%s) RETURNING file_id",
            (self.clone_id, list(paths)),
        ).fetchall()
        self._collect([r[0] for r in gone])

    def _collect(self, file_ids: Sequence[int]) -> None:
        """Delete the content rows of `file_ids` that no clone holds (their units, names and
        links go with them). Writers hold the vault's lock: no clone attaches meanwhile."""
        if file_ids:
            self._execute(
                "DELETE FROM files f WHERE f.id = ANY(%s) AND NOT EXISTS"
                " (SELECT 1 FROM clone_files c WHERE c.file_id = f.id)",
                (list(file_ids),),
            )

    def open(self) -> None:
        self.conn  # noqa: B018

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Run one statement; a connection lost on the way is an `IndexServerError`."""
        import psycopg

        try:
            conn = self.conn  # connected first: the clone's id is known
            return conn.execute(self._view(sql), params)
        except psycopg.errors.ReadOnlySqlTransaction as exc:
            raise IndexServerError(
                f"the index server at {self.server} is read-only (a replica?): search it, "
                "but index against the primary server."
            ) from exc
        except psycopg.OperationalError as exc:
            self.close()
            raise IndexServerError(
                f"the index server at {self.server} failed: {str(exc).splitlines()[0]}; "
                "nothing was changed here, run the command again when it is back."
            ) from exc

    def _view(self, sql: Any) -> Any:
        """`sql` where it says SEEN after `files f` joined to `clone_files` on this clone's
        id: the statement reads the files this clone holds, never another clone's."""
        if not isinstance(sql, str):
            sql = sql.as_string(self.conn)
        seen = f" JOIN clone_files cf ON cf.file_id = f.id AND cf.clone = {int(self.clone_id)}"
        return sql.replace(" SEEN", seen)

    @contextmanager
    def search_reads(self) -> Iterator[None]:
        """Meta reads answered from the rows the previous search's statement read, checked
        by this search's statement (`stale` when another generation came since)."""
        self._search_reads, self.stale = True, False
        try:
            yield
        finally:
            self._search_reads = False

    def exists(self) -> bool:
        """Whether the server holds anything of this vault yet."""
        if self._search_reads and self._meta is not None:
            return bool(self._meta)
        return (
            self._execute("SELECT 1 FROM meta WHERE vault=%s LIMIT 1", (self.vault,)).fetchone()
            is not None
        )

    def reset(self) -> None:
        """Forget what this clone holds (a rebuild): its files, skipped files and own meta;
        content and vectors no other clone holds go too. When no other clone holds
        anything, the vault's shared meta goes as well (a fresh start)."""
        with self.transaction():
            self._execute("DELETE FROM clone_files WHERE clone=%s", (self.clone_id,))
            self._execute("DELETE FROM skipped WHERE clone=%s", (self.clone_id,))
            self._execute(
                "DELETE FROM files f WHERE f.vault=%s AND NOT EXISTS"
                " (SELECT 1 FROM clone_files c WHERE c.file_id = f.id)",
                (self.vault,),
            )
            self._execute(
                "DELETE FROM embeddings e WHERE e.vault=%s AND NOT EXISTS (SELECT 1 FROM"
                " units u JOIN files f ON f.id = u.file_id WHERE f.vault = e.vault"
                " AND u.sha256 = e.sha256)",
                (self.vault,),
            )
            others = self._execute(
                "SELECT 1 FROM files WHERE vault=%s LIMIT 1", (self.vault,)
            ).fetchone()
            if others is None:  # nothing of the vault is left: no generation either
                self._execute("DELETE FROM meta WHERE vault=%s", (self.vault,))
                self._wrote = self._wrote_units = False
            else:
                self._execute(
                    "DELETE FROM meta WHERE vault=%s AND key LIKE %s",
                    (self.vault, f"%{self._suffix}"),
                )
                self._wrote = self._wrote_units = True
        self._local_write({})

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One write transaction (a batch): the vault's writers take turns; the generation
        is bumped when anything but this machine's own keys changed."""
        import psycopg

        conn = self.conn
        self._meta = None  # written here: read again
        try:
            with conn.transaction():
                self._execute("SELECT pg_advisory_xact_lock(%s)", (self._lock,))
                self._wrote = self._wrote_units = False
                yield conn
                if self._unanalyzed >= ANALYZE_AFTER_ROWS:
                    self._execute("ANALYZE files, units, embeddings")
                    self._unanalyzed = 0
                for key, bump in (
                    ("generation", self._wrote),
                    ("units_generation", self._wrote_units),
                ):
                    if bump:
                        self._execute(
                            "INSERT INTO meta VALUES (%s, %s, '1') ON CONFLICT (vault, key) DO"
                            " UPDATE SET value = (meta.value::bigint + 1)::text",
                            (self.vault, key),
                        )
        except psycopg.OperationalError as exc:
            self.close()
            raise IndexServerError(
                f"the index server at {self.server} failed: {str(exc).splitlines()[0]}; "
                "nothing was changed here, run the command again when it is back."
            ) from exc

    @contextmanager
    def _read_snapshot(self) -> Iterator[Any]:
        import psycopg

        conn = self.conn
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            yield conn
            return
        with conn.transaction():
            self._execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    # -- meta -----------------------------------------------------------------------------

    def _local(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.cache / LOCAL_FILE).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return {}

    def _local_write(self, data: dict[str, Any]) -> None:
        if self.readonly:
            return
        self.cache.mkdir(parents=True, exist_ok=True)
        target = self.cache / LOCAL_FILE
        temporary = target.with_name(f".{LOCAL_FILE}.{os.getpid()}")
        temporary.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(temporary, target)

    def _generation(self, key: str = "generation") -> str:
        row = self._execute(
            "SELECT value FROM meta WHERE vault=%s AND key=%s", (self.vault, key)
        ).fetchone()
        return row[0] if row else "0"

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        if key in LOCAL_KEYS:
            local = self._local()
            if not local and not self.has_units():  # nothing to keep a keyword index of yet
                return default
            if local.get("units_generation") != self._generation("units_generation"):
                # the server changed since this machine's keyword index was written
                return {"fulltext_dirty": "behind", "fulltext_files": None}[key] or default
            value = local.get(key)
            return str(value) if value is not None else default
        key = self._keyed(key)
        if self._search_reads and self._meta is not None:
            return self._meta.get(key, default)
        row = self._execute(
            "SELECT value FROM meta WHERE vault=%s AND key=%s", (self.vault, key)
        ).fetchone()
        return row[0] if row else default

    @property
    def _suffix(self) -> str:
        self.conn  # noqa: B018 - connected: the clone's id is known
        return f"@{self.clone_id}"

    def _keyed(self, key: str) -> str:
        """The meta key of `key` on the server: this clone's own, or the vault's."""
        return key + self._suffix if key in CLONE_KEYS else key

    def set_meta(self, conn: Any, key: str, value: Any) -> None:
        if key in LOCAL_KEYS:
            local = self._local()
            local[key] = str(value)
            # the generation this transaction commits: the current one, bumped if it wrote
            local["units_generation"] = str(
                int(self._generation("units_generation")) + (1 if self._wrote_units else 0)
            )
            self._local_write(local)
            return
        self._wrote = True
        self._execute(
            "INSERT INTO meta VALUES (%s, %s, %s) ON CONFLICT (vault, key)"
            " DO UPDATE SET value = excluded.value",
            (self.vault, self._keyed(key), str(value)),
        )
        if key == "dims":  # the model's vectors are all in: build its HNSW index once, in bulk
            model = self.get_meta("model_id")
            if model and str(value).isdigit():
                self._hnsw(model, int(value))

    def data_version(self) -> int:
        return int(self._generation())

    def changes_key(self) -> None:
        """None: no counter of commits is read cheaply here (`state_stamp` tells)."""
        return None

    def state_stamp(self) -> dict[str, Any]:
        with self._read_snapshot():
            meta = dict(
                self._execute(
                    "SELECT key, value FROM meta WHERE vault=%s AND key = ANY(%s)",
                    (self.vault, [self._keyed("last_index_at"), "vectors_added", "generation"]),
                ).fetchall()
            )
            units = self._execute(
                "SELECT max(u.id), count(*) FROM units u JOIN files f ON f.id = u.file_id SEEN"
                " WHERE f.vault=%s",
                (self.vault,),
            ).fetchone()
        return {
            "last_index_at": meta.get(self._keyed("last_index_at")),
            "units": list(units),
            "vectors": meta.get("vectors_added"),
            "generation": meta.get("generation"),
        }

    def _count(self, table: str) -> int:
        if table == "units":
            sql = (
                "SELECT count(*) FROM units u JOIN files f ON f.id = u.file_id SEEN"
                " WHERE f.vault=%s"
            )
        elif table == "files":
            sql = "SELECT count(*) FROM files f SEEN WHERE f.vault=%s"
        else:
            sql = f"SELECT count(*) FROM {table} WHERE vault=%s"
        return int(self._execute(sql, (self.vault,)).fetchone()[0])

    def record_counts(self, conn: Any) -> None:
        self.set_meta(conn, "files_count", self._count("files"))
        self.set_meta(conn, "units_count", self._count("units"))

    def count_problem(self) -> str | None:
        with self._read_snapshot():
            rows = dict(
                self._execute(
                    "SELECT key, value FROM meta WHERE vault=%s AND key = ANY(%s)",
                    (self.vault, [self._keyed("files_count"), self._keyed("units_count")]),
                ).fetchall()
            )
            if not rows:
                return None
            have = {"files": self._count("files"), "units": self._count("units")}
        for what in ("files", "units"):
            want = rows.get(self._keyed(f"{what}_count"))
            if want is not None and str(have[what]) != want:
                return f"it holds {have[what]} {what} where the last index recorded {want}"
        return None

    def quick_check(self, most: int = 1) -> list[str]:
        return ["ok"]  # the server checks its own pages; rows are checked by count_problem

    # -- files and units ------------------------------------------------------------------

    def files(self) -> dict[str, FileRow]:
        rows = self._execute(
            "SELECT f.id, f.path, f.kind, cf.mtime_ns, cf.size, f.sha256 FROM files f"
            " SEEN WHERE f.vault=%s",
            (self.vault,),
        )
        return {row.path: row for row in make_rows(FileRow, rows)}

    def file_stats(self) -> dict[str, FileStat]:
        rows = self._execute(
            "SELECT f.path, cf.mtime_ns, cf.size, f.sha256 FROM files f SEEN WHERE f.vault=%s",
            (self.vault,),
        )
        new = tuple.__new__
        return {r[0]: new(FileStat, (r[1], r[2], r[3])) for r in rows}

    def delete_file(self, conn: Any, path: str) -> None:
        self._wrote = self._wrote_units = True
        self._detach([path])

    def analyzed_otherwise(self, analyze: Callable[[str], str]) -> list[str]:
        """As `Store.analyzed_otherwise` (`words.analyzed_otherwise` over this vault's rows)."""
        from .words import analyzed_otherwise

        return analyzed_otherwise(
            self._execute(
                "SELECT f.path, u.text, u.terms FROM units u JOIN files f"
                " ON f.id = u.file_id SEEN WHERE f.vault=%s",
                (self.vault,),
            ).fetchall(),
            self._execute(
                "SELECT f.path, n.key FROM names n JOIN files f ON f.id = n.file_id SEEN"
                " WHERE f.vault=%s",
                (self.vault,),
            ).fetchall(),
            analyze,
        )

    def files_with_units(self, match: Callable[[str], bool]) -> list[str]:
        """As `Store.files_with_units`."""
        return sorted(
            {
                path
                for path, text in self._execute(
                    "SELECT f.path, u.text FROM units u JOIN files f ON f.id = u.file_id SEEN"
                    " WHERE f.vault=%s",
                    (self.vault,),
                )
                if match(text)
            }
        )

    def texts_holding(self, match: Callable[[str], bool]) -> list[str]:
        """As `Store.texts_holding`."""
        return sorted(
            {
                sha
                for sha, text in self._execute(
                    "SELECT u.sha256, u.text FROM units u JOIN files f ON f.id = u.file_id SEEN"
                    " WHERE f.vault=%s",
                    (self.vault,),
                )
                if match(text)
            }
        )

    def drop_vectors(self, conn: Any, model: str, shas: Iterable[str]) -> None:
        """As `Store.drop_vectors`."""
        wanted = list(shas)
        if wanted:
            self._wrote = True
            self._execute(
                "DELETE FROM embeddings WHERE vault=%s AND model=%s AND sha256 = ANY(%s)",
                (self.vault, model, wanted),
            )

    def forget_content(self, conn: Any, paths: Iterable[str]) -> None:
        """Make the next index run read `paths` again and store them anew."""
        wanted = list(paths)
        if wanted:
            self._wrote = True
            self._wrote_units = True
            # content this clone alone holds is marked unread (stored anew by the next run);
            # content other clones hold too is theirs as well: this clone lets go of it, and
            # its next run reads the file as new (and attaches what the others vouch for)
            shared = self._execute(
                "SELECT cf.path FROM clone_files cf WHERE cf.clone=%s AND cf.path = ANY(%s)"
                " AND EXISTS (SELECT 1 FROM clone_files o WHERE o.file_id = cf.file_id"
                " AND o.clone != cf.clone)",
                (self.clone_id, wanted),
            ).fetchall()
            self._detach([r[0] for r in shared])
            self._execute(
                "UPDATE files SET sha256='' WHERE id IN (SELECT file_id FROM clone_files"
                " WHERE clone=%s AND path = ANY(%s))",
                (self.clone_id, wanted),
            )
            self._execute(
                "UPDATE clone_files SET mtime_ns=-1 WHERE clone=%s AND path = ANY(%s)",
                (self.clone_id, wanted),
            )

    def touch_file(self, conn: Any, path: str, mtime_ns: int, size: int) -> None:
        # a stat is this machine's: another machine's checkout has other mtimes; no bump
        self._execute(
            "UPDATE clone_files SET mtime_ns=%s, size=%s WHERE clone=%s AND path=%s",
            (mtime_ns, size, self.clone_id, path),
        )

    def replace_file(
        self,
        conn: Any,
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
        """As `Store.replace_file`; a file the server holds with this content is kept (its
        stat updated): the upsert is keyed by (vault, path, sha256)."""
        from ..files import is_instruction
        from .words import terms_of

        v = self.vault
        self._execute("DELETE FROM skipped WHERE clone=%s AND path=%s", (self.clone_id, path))
        held = self._execute(
            "SELECT f.id, f.sha256 FROM clone_files cf JOIN files f ON f.id = cf.file_id"
            " WHERE cf.clone=%s AND cf.path=%s",
            (self.clone_id, path),
        ).fetchone()
        if held is not None and held[1] == sha256:
            self.touch_file(conn, path, mtime_ns, size)
            return
        self._wrote = self._wrote_units = True
        # the content another clone stored of this path is this clone's too: no units written
        shared = self._execute(
            "SELECT id FROM files WHERE vault=%s AND path=%s AND sha256=%s", (v, path, sha256)
        ).fetchone()
        if shared is not None:
            self._attach(path, shared[0], mtime_ns, size, held)
            return
        units = list(units)
        self._unanalyzed += len(units) + 1
        headings = {unit.heading: terms_of(unit.heading) for unit in units}
        file_id = self._execute(
            "INSERT INTO files (vault, path, kind, mtime_ns, size, sha256, date, title, tags,"
            " indexed_at, scope, note_tags, units, tx_terms, hd_terms) VALUES (%s, %s, %s, %s,"
            " %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                v,
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
                len(units),
                sum(len(unit.terms.split()) for unit in units),
                sum(len(headings[unit.heading]) for unit in units),
            ),
        ).fetchone()[0]
        self._attach(path, file_id, mtime_ns, size, held)
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO properties (file_id, ord, name, value) VALUES (%s, %s, %s, %s)",
                [(file_id, i, n, val) for i, (n, val) in enumerate(properties)],
            )
            cur.executemany(
                "INSERT INTO names (key, file_id) VALUES (%s, %s)",
                [(key, file_id) for key in dict.fromkeys(names) if key],
            )
            cur.executemany(
                "INSERT INTO links (file_id, ord, line, kind, target, subpath, display, embed,"
                " key, text) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(file_id, i, *link) for i, link in enumerate(links)],
            )
            # One COPY a file, not an INSERT a unit: the statement trigger that keeps
            # `term_counts` runs once for the file's units instead of once for each.
            with cur.copy(
                "COPY units (file_id, ord, start_line, end_line, heading, text, sha256, date,"
                " kind, salience, tags, terms, tsv, flagged) FROM STDIN"
            ) as copy:
                for i, (start, end, heading, text, sha, salience, utags, terms) in enumerate(units):
                    copy.write_row(
                        (
                            file_id,
                            i,
                            start,
                            end,
                            heading,
                            text,
                            sha,
                            date,
                            kind,
                            salience,
                            utags,
                            terms,
                            tsvector_literal([(headings[heading], "A"), (terms.split(), "D")]),
                            is_instruction(text),
                        )
                    )

    def skipped(self) -> dict[str, SkippedFile]:
        rows = self._execute(
            "SELECT path, mtime_ns, size, reason FROM skipped WHERE clone=%s", (self.clone_id,)
        )
        return {r[0]: SkippedFile(r[1], r[2], r[3]) for r in rows}

    def set_skipped(self, conn: Any, path: str, mtime_ns: int, size: int, reason: str) -> None:
        self._wrote = True
        self._execute(
            "INSERT INTO skipped (vault, path, mtime_ns, size, reason, clone) VALUES"
            " (%s, %s, %s, %s, %s, %s) ON CONFLICT (clone, path)"
            " DO UPDATE SET mtime_ns=excluded.mtime_ns, size=excluded.size,"
            " reason=excluded.reason",
            (self.vault, path, mtime_ns, size, reason, self.clone_id),
        )

    def forget_skipped(self, conn: Any, paths: Iterable[str]) -> None:
        wanted = list(paths)
        if wanted:
            self._wrote = True
            self._execute(
                "DELETE FROM skipped WHERE clone=%s AND path = ANY(%s)", (self.clone_id, wanted)
            )

    def scope_counts(self) -> dict[str, ScopeCount]:
        with self._read_snapshot():
            files = dict(
                self._execute(
                    "SELECT f.scope, count(*) FROM files f SEEN WHERE f.vault=%s GROUP BY f.scope",
                    (self.vault,),
                ).fetchall()
            )
            units = dict(
                self._execute(
                    "SELECT f.scope, count(*) FROM units u JOIN files f ON f.id = u.file_id SEEN"
                    " WHERE f.vault=%s GROUP BY f.scope",
                    (self.vault,),
                ).fetchall()
            )
        return {scope: ScopeCount(count, units.get(scope, 0)) for scope, count in files.items()}

    def counts(self, model: str | None, scopes: Sequence[str] | None = None) -> dict[str, int]:
        where, params = "f.vault=%s", list[Any]([self.vault])
        if scopes is not None:
            where += " AND f.scope = ANY(%s)"
            params.append(list(scopes))
        with self._read_snapshot():
            files = self._execute(
                f"SELECT count(*) FROM files f SEEN WHERE {where}",
                params,
            ).fetchone()[0]
            units = self._execute(
                f"SELECT count(*) FROM units u JOIN files f ON f.id = u.file_id SEEN WHERE {where}",
                params,
            ).fetchone()[0]
            embedded = 0
            if model:
                embedded = self._execute(
                    "SELECT count(*) FROM units u JOIN files f ON f.id = u.file_id SEEN JOIN"
                    " embeddings e ON e.vault = f.vault AND e.sha256 = u.sha256 AND e.model=%s"
                    f" WHERE {where}",
                    [model, *params],
                ).fetchone()[0]
        return {"files": files, "units": units, "embedded_units": embedded}

    # -- what search reads ----------------------------------------------------------------

    def unit_rows(self, model: str | None) -> list[UnitRow]:
        """As `Store.unit_rows`: by scope, then file id, then order (the C collation sorts
        scopes as SQLite's binary one does)."""
        with self._read_snapshot() as conn:
            by_sha: dict[str, bytes] = {}
            if model:
                with conn.cursor(binary=True) as cur:
                    cur.execute(
                        "SELECT sha256, embedding FROM embeddings WHERE vault=%s AND model=%s",
                        (self.vault, model),
                    )
                    by_sha = {sha: vector_blob(vec) for sha, vec in cur}
            rows = self._execute(
                "SELECT u.id, u.file_id, u.heading, u.date, u.salience, u.sha256,"
                " u.end_line - u.start_line + 1, u.terms, u.text, f.scope FROM units u"
                " JOIN files f ON f.id = u.file_id SEEN WHERE f.vault=%s"
                ' ORDER BY f.scope COLLATE "C", u.file_id, u.ord',
                (self.vault,),
            ).fetchall()
        new = tuple.__new__
        vector = by_sha.get
        return [
            new(
                UnitRow,
                (uid, fid, heading, date, float(salience), vector(sha), n, terms, text, scope),
            )
            for uid, fid, heading, date, salience, sha, n, terms, text, scope in rows
        ]

    def file_marks(self) -> dict[int, int]:
        """None kept here: a unit table read from the server is built whole, never patched by
        the files that changed (search/table.py patches tables of the embedded index)."""
        return {}

    def unit_rows_and_marks(self, model: str | None) -> TableRows:
        return TableRows(self.unit_rows(model), {})

    def changed_unit_rows(
        self,
        model: str | None,
        dims: int,
        marks: dict[int, int],
        unvectored: dict[int, int],
        most: int,
    ) -> ChangedRows | None:
        """Always None: the table is built whole (see `file_marks`)."""
        return None

    def flagged_ids(self, ids: Iterable[int]) -> set[int] | None:
        """Which of the units `ids` read as an instruction to a model, as judged when they
        were indexed; None when one of them was written before the server kept judgements
        (search judges the returned text itself then)."""
        wanted = [int(i) for i in ids]
        if not wanted:
            return set()
        rows = self._execute(
            "SELECT id, flagged FROM units WHERE id = ANY(%s)", (wanted,)
        ).fetchall()
        if any(flagged is None for _, flagged in rows):
            return None
        return {uid for uid, flagged in rows if flagged}

    def flagged_count(self, scopes: Sequence[str] | None = None) -> int | None:
        """Units flagged as instructions (of those `scopes` only, when given); None when some
        were written before the server kept judgements."""
        where, params = "f.vault = %s", list[Any]([self.vault])
        if scopes is not None:
            where += " AND f.scope = ANY(%s)"
            params.append(list(scopes))
        flagged, unknown = self._execute(
            "SELECT count(*) FILTER (WHERE u.flagged), count(*) FILTER (WHERE u.flagged IS NULL)"
            f" FROM units u JOIN files f ON f.id = u.file_id SEEN WHERE {where}",
            params,
        ).fetchone()
        return None if unknown else int(flagged)

    def shas_of(self, paths: Sequence[str]) -> set[str]:
        return {
            r[0]
            for r in self._execute(
                "SELECT u.sha256 FROM units u JOIN files f ON f.id = u.file_id SEEN"
                " WHERE f.vault=%s AND f.path = ANY(%s)",
                (self.vault, list(paths)),
            )
        }

    def missing_embeddings_of(self, model: str, paths: Sequence[str]) -> list[TextToEmbed]:
        found = [
            TextToEmbed(r[0], r[1])
            for r in self._execute(
                'SELECT u.sha256, min(u.text COLLATE "C") FROM units u'
                " JOIN files f ON f.id = u.file_id SEEN AND f.vault = %s"
                " LEFT JOIN embeddings e ON e.vault = f.vault AND e.sha256 = u.sha256"
                " AND e.model = %s WHERE e.sha256 IS NULL AND f.path = ANY(%s)"
                " GROUP BY u.sha256",
                (self.vault, model, list(paths)),
            )
        ]
        return sorted(found, key=lambda t: (len(t.text), t.sha256))

    def prune_embeddings_of(self, conn: Any, shas: Iterable[str]) -> int:
        cur = self._execute(
            "DELETE FROM embeddings e WHERE e.vault=%s AND e.sha256 = ANY(%s)"
            " AND NOT EXISTS (SELECT 1 FROM units u JOIN files f ON f.id = u.file_id"
            " WHERE f.vault = e.vault AND u.sha256 = e.sha256)",
            (self.vault, list(shas)),
        )
        if cur.rowcount:
            self._wrote = True
        return int(cur.rowcount)

    def units_by_id(self, ids: Iterable[int]) -> dict[int, StoredUnit]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        rows = self._execute(
            f"SELECT {UNIT_COLUMNS_PG} FROM units u JOIN files f ON f.id = u.file_id SEEN"
            " WHERE f.vault=%s AND u.id = ANY(%s) ORDER BY u.id",
            [self.vault, wanted],
        )
        return {
            r[0]: StoredUnit(
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], float(r[9]), r[10]
            )
            for r in rows
        }

    def named_files(self, keys: Iterable[str]) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        wanted = list(dict.fromkeys(keys))
        if wanted:
            for key, file_id in self._execute(
                "SELECT n.key, n.file_id FROM names n JOIN files f ON f.id = n.file_id SEEN"
                " WHERE f.vault=%s AND n.key = ANY(%s)",
                (self.vault, wanted),
            ):
                found.setdefault(key, []).append(file_id)
        return found

    def has_names(self) -> bool:
        return (
            self._execute(
                "SELECT 1 FROM names n JOIN files f ON f.id = n.file_id SEEN"
                " WHERE f.vault=%s LIMIT 1",
                (self.vault,),
            ).fetchone()
            is not None
        )

    def links(
        self, paths: Iterable[str] | None = None, keys: Iterable[str] | None = None
    ) -> list[LinkRow]:
        base = (
            "SELECT f.path, l.line, l.kind, l.target, l.subpath, l.display, l.embed, l.text"
            " FROM links l JOIN files f ON f.id = l.file_id SEEN WHERE f.vault=%s"
        )
        order = ' ORDER BY f.path COLLATE "C", l.line, l.ord'
        if paths is None and keys is None:
            rows = self._execute(base + order, (self.vault,)).fetchall()
        else:
            column, values = (
                ("f.path", list(paths)) if paths is not None else ("l.key", list(keys or ()))
            )
            rows = self._execute(
                f"{base} AND {column} = ANY(%s)" + order, (self.vault, values)
            ).fetchall()
        return [LinkRow(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7]) for r in rows]

    def fulltext_rows(self, paths: Iterable[str] | None = None) -> Iterator[FulltextRow]:
        query = (
            "SELECT u.id, f.id, f.path, u.text, u.heading, u.date, u.kind, u.tags,"
            " f.note_tags, f.scope FROM units u JOIN files f ON f.id = u.file_id SEEN"
            " WHERE f.vault=%s"
        )
        if paths is None:
            yield from make_rows(
                FulltextRow, self._execute(query + " ORDER BY u.id", (self.vault,)).fetchall()
            )
            return
        for path in paths:
            yield from make_rows(
                FulltextRow,
                self._execute(query + " AND f.path = %s ORDER BY u.ord", (self.vault, path)),
            )

    def properties_of(self, file_ids: Iterable[int]) -> dict[int, list[Property]]:
        found: dict[int, list[Property]] = {}
        wanted = sorted(set(file_ids))
        if wanted:
            for file_id, name, value in self._execute(
                "SELECT file_id, name, value FROM properties WHERE file_id = ANY(%s)"
                " ORDER BY file_id, ord",
                (wanted,),
            ):
                found.setdefault(file_id, []).append(Property(name, value))
        return found

    # -- asked besides --------------------------------------------------------------------

    def has_units(self) -> bool:
        return (
            self._execute(
                "SELECT 1 FROM units u JOIN files f ON f.id = u.file_id WHERE f.vault=%s LIMIT 1",
                (self.vault,),
            ).fetchone()
            is not None
        )

    def unit_ids_where(
        self,
        since: str | None = None,
        until: str | None = None,
        kinds: Sequence[str] = (),
        hidden_kinds: Sequence[str] = (),
        within: str | None = None,
    ) -> list[int]:
        clauses: list[str] = ["f.vault = %s"]
        params: list[Any] = [self.vault]
        if since:
            clauses.append("u.date >= %s")
            params.append(since)
        if until:
            clauses.append("u.date <= %s")
            params.append(until)
        if kinds:
            clauses.append("u.kind = ANY(%s)")
            params.append(list(kinds))
        if hidden_kinds:
            clauses.append("NOT (u.kind = ANY(%s))")
            params.append(list(hidden_kinds))
        if within:
            clauses.append("(f.path = %s OR left(f.path, %s) = %s)")
            prefix = within.rstrip("/") + "/"
            params.extend([within.rstrip("/"), len(prefix), prefix])
        return [
            r[0]
            for r in self._execute(
                "SELECT u.id FROM units u JOIN files f ON f.id = u.file_id SEEN WHERE "
                + " AND ".join(clauses),
                params,
            )
        ]

    def unit_ids_of_kinds(self, kinds: Sequence[str]) -> list[int]:
        return [
            r[0]
            for r in self._execute(
                "SELECT u.id FROM files f JOIN units u ON u.file_id = f.id"
                " SEEN"
                " WHERE f.vault=%s AND f.kind = ANY(%s)",
                (self.vault, list(kinds)),
            )
        ]

    def unit_digests(self) -> Iterator[UnitDigest]:
        yield from make_rows(
            UnitDigest,
            self._execute(
                "SELECT u.file_id, u.start_line, u.end_line, u.sha256 FROM units u"
                " JOIN files f ON f.id = u.file_id SEEN WHERE f.vault=%s ORDER BY u.file_id, u.ord",
                (self.vault,),
            ).fetchall(),
        )

    def vector_shas(self, model: str) -> set[str]:
        return {
            r[0]
            for r in self._execute(
                "SELECT sha256 FROM embeddings WHERE vault=%s AND model=%s", (self.vault, model)
            )
        }

    # -- server-side candidates (docs/postgres-design.md §4, phase 2) ------------------------

    OVERFETCH = 4  # HNSW candidates per wanted unit (pgvector 0.6 filters after the scan)

    def nearest_query(self, model: str, dims: int, scopes: Sequence[str] | None) -> Any:
        """The SQL of `nearest` (parameters: vector, vault, over-fetch, vault[, scopes],
        limit). The model is a literal, so that the planner can use its partial HNSW index."""
        from psycopg import sql

        vec = sql.SQL(f"%s::vector({int(dims)})")
        query = sql.SQL(
            "SELECT u.id, 1 - c.d FROM (SELECT sha256, embedding::vector({dims}) <=> {vec} AS d"
            " FROM embeddings WHERE model = {model} AND vault = %s"
            " ORDER BY embedding::vector({dims}) <=> {vec2} LIMIT %s) c"
            " JOIN units u ON u.sha256 = c.sha256 JOIN files f ON f.id = u.file_id SEEN"
            " WHERE f.vault = %s{scoped} ORDER BY c.d, u.id LIMIT %s"
        ).format(
            dims=sql.SQL(str(int(dims))),
            vec=vec,
            vec2=vec,
            model=sql.Literal(model),
            scoped=sql.SQL(" AND f.scope = ANY(%s)" if scopes is not None else ""),
        )
        return sql.SQL(self._view(query))  # this clone's files only

    def nearest(
        self, model: str, query: bytes, scopes: Sequence[str] | None, limit: int
    ) -> list[tuple[int, float]]:
        """(unit id, cosine) of the `limit` units nearest `query` among the visible `scopes`
        (all when None), by the model's HNSW index; the scope filter is in the SQL (HNSW
        candidates are over-fetched, as pgvector 0.6 filters after its scan: a scope that
        holds few of the nearest texts may get fewer than `limit`)."""
        dims = len(query) // 4
        vec = vector_text(query)
        over = int(limit) * self.OVERFETCH
        params: list[Any] = [vec, self.vault, vec, over, self.vault]
        if scopes is not None:
            params.append(list(scopes))
        params.append(limit)
        with self._read_snapshot():
            self._execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, over))}")
            return [
                (int(i), float(d))
                for i, d in self._execute(self.nearest_query(model, dims, scopes), params)
            ]

    def keyword(
        self, tsquery: str, scopes: Sequence[str] | None, limit: int
    ) -> list[tuple[int, float]]:
        """(unit id, ts_rank_cd) of the best `limit` units matching `tsquery` (a literal from
        pgtext.tsquery_literal) among the visible `scopes`, by the GIN index."""
        if not tsquery:
            return []
        where, params = "f.vault = %s", list[Any]([self.vault])
        if scopes is not None:
            where += " AND f.scope = ANY(%s)"
            params.append(list(scopes))
        return [
            (int(i), float(s))
            for i, s in self._execute(
                "SELECT u.id, ts_rank_cd(u.tsv, q, 32) AS r FROM units u"
                " JOIN files f ON f.id = u.file_id SEEN, CAST(%s AS tsquery) q"
                f" WHERE u.tsv @@ q AND {where} ORDER BY r DESC, u.id LIMIT %s",
                [tsquery, *params, limit],
            )
        ]

    # -- search on the server (docs/postgres-design.md §4, phase 2) ---------------------------

    def _ef_search(self, value: int) -> None:
        """HNSW's candidate list for this connection's scans (a session setting, set again
        only when it changes: no statement of its own per query)."""
        if getattr(self, "_ef", None) != value:
            self._execute(f"SET hnsw.ef_search = {int(value)}")
            self._ef = value

    def served(
        self,
        model: str | None,
        vector: bytes | None,
        keywords: Sequence[str],
        terms: Sequence[str],
        names: Sequence[str],
        scopes: Sequence[str] | None,
        conditions: dict[str, Any],
        near: int,
        words: int,
        pad: int,
        known: str | None,
        instances: Sequence[str] = (),
    ) -> ServedRows:
        """What a search needs of the server, in one statement (one round trip, one
        snapshot): the `near` units nearest `vector` (HNSW) and the `words` best matches of
        any of the analyzed `keywords` (over the GIN index, by the idf of the keywords each
        holds), both among the visible `scopes` and the units `conditions` allow
        (`unit_ids_where`'s, and `hidden_files`: file kinds left out); the units of the
        notes whose name keys are in `names`; every unit within `pad` of those in their file
        (context windows); how many visible units hold each of `terms` in the text and in
        the heading (BM25's document frequencies); the vault's meta rows; and, when the
        server's generation is not `known`, the visible units' count and field lengths;
        with `instances` (the instances of a kind the question asks for: search/kinds.py),
        the `words` best allowed units holding any of them too. The rows come in scope,
        file and unit order, as `unit_rows` gives them."""
        from .pgtext import tsquery_literal

        statement = _ServedStatement(self, scopes, conditions, known)
        scopes_key = tuple(scopes) if scopes is not None else None
        if vector is not None and model:
            statement.nearest(model, vector, near, self.OVERFETCH)
            self._ef_search(max(40, min(1000, statement.params["over"])))
        kept = [t for t in dict.fromkeys([*terms, *keywords]) if t]
        statement.frequencies(kept)
        statement.best_matches(keywords, words, self._counted.get(scopes_key))
        statement.instance_matches(tsquery_literal(instances), words)
        if names:
            statement.named(names)
        with self.conn.cursor(binary=True) as cur:
            try:
                cur.execute(self._view(statement.sql(pad, model)), statement.params)
                found = cur.fetchall()
            except Exception as exc:
                self._failed(exc)
                raise
        head = _head_row(found)
        got = _served_rows(found, head, known)
        if got.stats is not None:
            self._counted[scopes_key] = got.stats[0]
        meta = json.loads(head[6] or "{}")
        if self._meta is not None and self._meta.get("generation") != meta.get("generation"):
            self.stale = True  # what this search read of meta before may be out of date
        self._meta = {str(k): str(v) for k, v in meta.items()}
        return got

    def _failed(self, exc: Exception) -> None:
        """A failed statement as `_execute` reports it (a lost server: `IndexServerError`)."""
        import psycopg

        if isinstance(exc, psycopg.OperationalError):
            self.close()
            raise IndexServerError(
                f"the index server at {self.server} failed: {str(exc).splitlines()[0]}; "
                "nothing was changed here, run the command again when it is back."
            ) from exc

    # -- embeddings -------------------------------------------------------------------------

    def missing_embeddings(self, model: str) -> list[TextToEmbed]:
        return [
            TextToEmbed(r[0], r[1])
            for r in self._execute(
                'SELECT u.sha256, min(u.text COLLATE "C") AS text FROM units u'
                " JOIN files f ON f.id = u.file_id SEEN AND f.vault = %s"
                " LEFT JOIN embeddings e ON e.vault = f.vault AND e.sha256 = u.sha256"
                " AND e.model = %s WHERE e.sha256 IS NULL GROUP BY u.sha256"
                ' ORDER BY char_length(min(u.text COLLATE "C")), u.sha256 COLLATE "C"',
                (self.vault, model),
            )
        ]

    def _hnsw(self, model: str, dims: int) -> None:
        """The model's HNSW cosine index (pgvector needs a fixed dimension: one per model),
        made when the indexer records the model's dimensions, after its vectors are in: one
        bulk build rather than an insert into the graph per vector (later vectors are)."""
        from psycopg import sql

        name = f"embeddings_hnsw_{zlib.crc32(f'{model}:{dims}'.encode()):08x}"
        self._execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        if (
            self._execute("SELECT 1 FROM pg_class WHERE relname = %s", (name,)).fetchone()
            is not None
        ):
            return
        # pgvector builds far faster while the graph fits in memory (64 MB by default holds
        # about 40k vectors of 384 dimensions)
        self._execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
        self._execute(
            sql.SQL(
                "CREATE INDEX IF NOT EXISTS {} ON embeddings USING hnsw"
                " ((embedding::vector({})) vector_cosine_ops) WHERE model = {}"
            )
            .format(sql.Identifier(name), sql.SQL(str(int(dims))), sql.Literal(model))
            .as_string(self.conn)
        )

    def add_embeddings(self, conn: Any, model: str, rows: Iterable[Embedding]) -> None:
        batch = [(self.vault, sha, model, vector_text(blob)) for sha, blob in rows]
        if not batch:
            return
        self._unanalyzed += len(batch)
        self._wrote = True
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO embeddings VALUES (%s, %s, %s, %s::vector) ON CONFLICT"
                " (vault, sha256, model) DO UPDATE SET embedding = excluded.embedding",
                batch,
            )
        self._execute(
            "INSERT INTO meta VALUES (%s, 'vectors_added', '1') ON CONFLICT (vault, key)"
            " DO UPDATE SET value = (meta.value::bigint + 1)::text",
            (self.vault,),
        )

    def bad_vectors(self, model: str) -> int:
        dims = self.get_meta("dims")
        if not dims or not dims.isdigit():
            return 0
        return int(
            self._execute(
                "SELECT count(*) FROM embeddings WHERE vault=%s AND model=%s"
                " AND vector_dims(embedding) != %s",
                (self.vault, model, int(dims)),
            ).fetchone()[0]
        )

    def drop_bad_vectors(self, model: str) -> int:
        bad = self.bad_vectors(model)
        if bad:
            dims = int(self.get_meta("dims") or 0)
            with self.transaction() as conn:
                self._wrote = True
                self._execute(
                    "DELETE FROM embeddings WHERE vault=%s AND model=%s"
                    " AND vector_dims(embedding) != %s",
                    (self.vault, model, dims),
                )
                self.set_meta(conn, "embeddings_complete", 0)
        return bad

    def prune_embeddings(self, conn: Any, model: str, keep: Iterable[str] = ()) -> int:
        cur = self._execute(
            "DELETE FROM embeddings e WHERE e.vault=%s AND (NOT (e.model = ANY(%s))"
            " OR NOT EXISTS (SELECT 1 FROM units u JOIN files f ON f.id = u.file_id"
            " WHERE f.vault = e.vault AND u.sha256 = e.sha256))",
            (self.vault, [model, *keep]),
        )
        if cur.rowcount:
            self._wrote = True
        return int(cur.rowcount)


class _ServedStatement:
    """`PgStore.served`'s one statement, put together from its parts (common table
    expressions): `info` and `stats` always, then the candidates asked for (`nearest`,
    `matches` and `best_matches`, `named`), then `sql` joins them with their neighbours,
    the document frequencies and the meta rows."""

    def __init__(
        self,
        store: PgStore,
        scopes: Sequence[str] | None,
        conditions: dict[str, Any],
        known: str | None,
    ) -> None:
        self.store = store
        self.scoped = " AND f.scope = ANY(%(scopes)s)" if scopes is not None else ""
        self.narrow = scopes is not None or any(
            conditions.get(k) for k in ("kinds", "within", "since", "until")
        )
        self.allowed, self.params = allowed_sql(conditions)
        self.params |= {
            "vault": store.vault,
            "scopes": list(scopes) if scopes is not None else None,
            "known": known,
        }
        self.parts: list[str] = [
            "info AS (SELECT (SELECT value FROM meta WHERE vault = %(vault)s"
            " AND key = 'generation') AS generation, (SELECT json_object_agg(key, value)"
            " FROM meta WHERE vault = %(vault)s) AS meta)",
            "stats AS (SELECT count(*) AS files, sum(f.units) AS units,"
            " sum(f.tx_terms) AS tx, sum(f.hd_terms) AS hd FROM files f"
            " SEEN"
            f" WHERE f.vault = %(vault)s{self.scoped}"
            " AND (SELECT generation FROM info) IS DISTINCT FROM %(known)s)",
        ]
        self.hits = ["SELECT 0::bigint AS id WHERE false"]
        self.names = False

    def nearest(self, model: str, vector: bytes, near: int, overfetch: int) -> None:
        """The `near` visible units nearest `vector`, by the model's HNSW index (its
        candidates over-fetched: pgvector filters after its scan)."""
        from psycopg import sql

        dims = len(vector) // 4
        over = int(int(near) * (overfetch if self.narrow else 1.5))
        self.params |= {"vec": vector_text(vector), "over": over, "near": int(near)}
        self.parts.append(
            sql.SQL(
                "vec AS (SELECT u.id FROM (SELECT sha256, embedding::vector({dims})"
                " <=> %(vec)s::vector({dims}) AS d FROM embeddings WHERE model = {model}"
                " AND vault = %(vault)s ORDER BY embedding::vector({dims})"
                " <=> %(vec)s::vector({dims}) LIMIT %(over)s) c"
                " JOIN units u ON u.sha256 = c.sha256 JOIN files f ON f.id = u.file_id SEEN"
                " WHERE f.vault = %(vault)s{scoped} AND {allowed} ORDER BY c.d, u.id"
                " LIMIT %(near)s)"
            )
            .format(
                dims=sql.SQL(str(int(dims))),
                model=sql.Literal(model),
                scoped=sql.SQL(self.scoped),
                allowed=sql.SQL(self.allowed),
            )
            .as_string(self.store.conn)
        )
        self.hits.append("SELECT id FROM vec")

    def frequencies(self, terms: Sequence[str]) -> None:
        """Per term of `terms`, how many units of the visible scopes hold it in the text and
        in the heading (BM25's document frequencies), from the counts the server keeps as
        units are written (`term_counts`): a few index rows, not a pass over the matches.
        Counted over the vault's content rows, which are this clone's view when one clone
        indexes; clones at other commits add the versions only they hold."""
        self.params |= {"terms": list(terms)}
        scoped = " AND scope = ANY(%(scopes)s)" if self.scoped else ""
        self.parts.append(
            "df AS (SELECT t.term, coalesce(sum(c.tx), 0) AS tx, coalesce(sum(c.hd), 0) AS hd"
            " FROM unnest(%(terms)s::text[]) t(term) LEFT JOIN term_counts c"
            f" ON c.vault = %(vault)s AND c.term = t.term{scoped} GROUP BY t.term)"
        )

    def best_matches(self, keywords: Sequence[str], words: int, units: int | None) -> None:
        """The `words` allowed units best for any of `keywords`, ranked among the matches of
        the rarest keywords only: keywords are taken rarest first while their matches add
        up to at most `KEYWORD_MATCHES_RANKED` (the rarest always), so a word that most
        units hold (little BM25 weight) does not make every search read and rank all of
        them. Every keyword still counts in the rank and, later, in BM25. A keyword the
        counts (`frequencies`) give no unit is no rarest: had it taken that place, a
        question with a word the vault lacks ("which database ...") and a held word past
        the bound would rank nothing, and its keyword candidates would be empty.

        The rank is BM25's idea at the cost of a lookup a keyword a match: the sum of the
        idf of the keywords a unit holds (over the visible units: counted by this
        statement when the generation changed, else `units`, what the last one counted,
        else summed from the files here), then `ts_rank` with the unit's length (more of them, in
        fewer words, first). `ts_rank_cd` over every match cost three quarters of the
        statement at 100,000 units (its cover density walks each match's positions), and,
        idf-blind, ranked a unit holding only common keywords above one holding the rare
        keyword BM25 weighs most."""
        from .pgtext import quote, tsquery_literal

        kept = [t for t in dict.fromkeys(keywords) if t]
        if not kept:
            return
        self.params |= {
            "q": tsquery_literal(kept),
            "words": int(words),
            "kw_terms": kept,
            "kw_quoted": [quote(t) for t in kept],
            "ranked_most": KEYWORD_MATCHES_RANKED,
            "units_known": units,
        }
        self.parts.append(
            "pick AS (SELECT string_agg(p.quoted, ' | ')::tsquery AS q FROM (SELECT k.quoted,"
            " sum(d.tx + d.hd) OVER w AS held, row_number() OVER w AS n"
            " FROM unnest(%(kw_terms)s::text[], %(kw_quoted)s::text[]) k(term, quoted)"
            " JOIN df d ON d.term = k.term AND d.tx + d.hd > 0"
            " WINDOW w AS (ORDER BY d.tx + d.hd, k.term)) p"
            " WHERE p.held <= %(ranked_most)s OR p.n = 1)"
        )
        # a unit holding a keyword in the text and the heading is counted in both: the
        # larger of the two is the nearer guess at how many units hold it
        self.parts.append(
            "weights AS (SELECT k.n, ln(1 + (c.n - least(greatest(d.tx, d.hd), c.n) + 0.5)"
            " / (least(greatest(d.tx, d.hd), c.n) + 0.5))::float8 AS idf"
            " FROM unnest(%(kw_terms)s::text[]) WITH ORDINALITY k(term, n)"
            " JOIN df d ON d.term = k.term CROSS JOIN (SELECT coalesce((SELECT units"
            " FROM stats), %(units_known)s::bigint, (SELECT sum(f.units) FROM files f SEEN"
            f" WHERE f.vault = %(vault)s{self.scoped}), 0) AS n) c)"
        )
        # each keyword's idf an expression of its own (read once for the statement), not a
        # subquery a match: that cost more than the `ts_rank_cd` it replaces
        weighed = " + ".join(
            f"CASE WHEN u.tsv @@ %(kw_q{n})s::tsquery THEN (SELECT idf FROM weights"
            f" WHERE n = {n}) ELSE 0 END"
            for n in range(1, len(kept) + 1)
        )
        self.params |= {f"kw_q{n}": quoted for n, quoted in enumerate(self.params["kw_quoted"], 1)}
        self.parts += self._best_allowed(
            "kw", "(SELECT q FROM pick)", [weighed, "ts_rank(u.tsv, %(q)s::tsquery, 1)"]
        )
        self.hits.append("SELECT id FROM kw")

    def _best_allowed(self, name: str, tsquery: str, ranks: Sequence[str]) -> list[str]:
        """The part `name`: the `words` units holding `tsquery` best by `ranks` (each
        descending, then the unit id) among those this search may see (scopes, this clone's
        files, `allowed`), and the parts it reads.

        The matches are ranked, the best `RANKED_FIRST_SHARE` x `words` of them kept by a
        bounded sort (a heap of that many rows, not a sort of every match: at 1M units the
        full sort of a common word's 48,000 matches cost 57 of its 137 ms), then their files
        read in rank order until `words` pass (files joined first, a lookup a match, cost
        half the statement's server CPU at 100,000 units). When fewer than `words` of the
        kept ones pass while more matches were left (filters or this clone's view leave
        most out), the part ranks every match instead, as exact as before: a one-time
        filter runs that branch only then. The ranks do not depend on the file, so either
        way the same units in the same order."""
        ranked = ", ".join(f"{rank} AS r{n}" for n, rank in enumerate(ranks))
        order = ", ".join(f"r{n} DESC" for n in range(len(ranks)))
        kept = ", ".join(f"r{n}" for n in range(len(ranks)))
        carried = ", ".join(f"u.{column}" for column in ALLOWED_READS)
        seen = (
            " CROSS JOIN LATERAL (SELECT FROM files f SEEN WHERE f.id = u.file_id"
            f" AND f.vault = %(vault)s{self.scoped} AND {self.allowed} OFFSET 0) seen"
        )
        matches = f"SELECT {carried}, {ranked} FROM units u WHERE u.tsv @@ {tsquery}"
        self.params["first"] = RANKED_FIRST_SHARE * int(self.params["words"])
        exact = (
            f"(SELECT count(*) FROM {name}_seen) = %(words)s"
            f" OR (SELECT count(*) FROM {name}_first) < %(first)s"
        )
        return [
            f"{name}_first AS ({matches} ORDER BY {order}, u.id LIMIT %(first)s)",
            f"{name}_seen AS (SELECT u.id, {kept} FROM {name}_first u{seen}"
            f" ORDER BY {order}, u.id LIMIT %(words)s)",
            f"{name} AS (SELECT id FROM {name}_seen WHERE {exact} UNION ALL"
            f" SELECT id FROM (SELECT u.id FROM ({matches} ORDER BY {order}, u.id OFFSET 0) u"
            f"{seen} ORDER BY {order}, u.id LIMIT %(words)s) every WHERE NOT ({exact}))",
        ]

    def instance_matches(self, tsquery: str, words: int) -> None:
        """The `words` best allowed visible units holding any instance of the kind a
        question asks for (`tsquery`), by `ts_rank` with the unit's length (the instances
        count alike, as one term in BM25): a candidate stream of its own, so that they do
        not compete with the question's own words for its places. The tsquery is a
        parameter the planner does not look into, so the matches are read by the GIN index:
        with the literal it guessed a sequential scan of every unit, and with `ts_rank_cd`
        (dozens of instances) that cost 0.8 s of CPU at 100,000 units; now 0.14 s. Every
        match is ranked: taking the rarest instances' matches only, as keywords are, was
        measured at 1M units and left, since the instances of a kind count alike (a rare one
        is no better evidence than a common one): "what food does he like" kept 0 of the
        top five SQLite finds, against 5 with every match ranked."""
        if not tsquery:
            return
        self.params |= {"iq": tsquery, "words": int(words)}
        self.parts += self._best_allowed(
            "inst", "(SELECT %(iq)s::tsquery)", ["ts_rank(u.tsv, %(iq)s::tsquery, 1)"]
        )
        self.hits.append("SELECT id FROM inst")

    def named(self, names: Sequence[str]) -> None:
        """The allowed units of the visible notes a name key of `names` names."""
        self.names = True
        self.params |= {"names": list(names), "named_most": NAMED_MOST}
        self.parts.append(
            "named AS (SELECT DISTINCT n.file_id FROM names n JOIN files f"
            f" ON f.id = n.file_id SEEN WHERE f.vault = %(vault)s{self.scoped}"
            " AND n.key = ANY(%(names)s))"
        )
        self.parts.append(
            "named_units AS (SELECT u.id FROM units u JOIN files f ON f.id = u.file_id SEEN"
            f" WHERE u.file_id IN (SELECT file_id FROM named) AND {self.allowed}"
            " ORDER BY u.file_id, u.ord LIMIT %(named_most)s)"
        )
        self.hits.append("SELECT id FROM named_units")

    def sql(self, pad: int, model: str | None) -> str:
        """The whole statement: the candidates and the units within `pad` of them in their
        section, with the document frequencies of the terms asked for."""
        self.params |= {"model": model, "pad": int(pad)}
        parts = [
            *self.parts,
            "hits AS (" + " UNION ".join(self.hits) + ")",
            # The candidates' units and their neighbours are read by index (primary key;
            # file and position), one lookup per row: `OFFSET 0` keeps the planner from
            # turning the lookups into hash joins over a scan of every unit, which it chose
            # from its guess of the candidates' number (two full scans of `units` per
            # search: 18 of 107 ms at 20,000 units, growing with the vault).
            "spans AS (SELECT u.file_id, u.heading, min(u.ord) - %(pad)s AS lo,"
            " max(u.ord) + %(pad)s AS hi FROM hits CROSS JOIN LATERAL (SELECT file_id,"
            " heading, ord FROM units WHERE id = hits.id OFFSET 0) u"
            " GROUP BY u.file_id, u.heading)",
            "near AS (SELECT DISTINCT n.id FROM spans s CROSS JOIN LATERAL (SELECT id FROM"
            " units WHERE file_id = s.file_id AND ord BETWEEN s.lo AND s.hi"
            " AND heading = s.heading OFFSET 0) n)",
            "dfs AS (SELECT coalesce(json_object_agg(term, json_build_array(tx, hd)),"
            " '{}'::json) AS df FROM df)",
        ]
        named_ids = "(SELECT array_agg(file_id) FROM named)" if self.names else "NULL::bigint[]"
        # the statement's own values (document frequencies, named files, meta: a kilobyte)
        # on its first row only, not repeated on each of its thousand-odd rows
        head = "coalesce(r.n, 1) = 1"
        return (
            "WITH "
            + ", ".join(parts)
            + f" SELECT i.generation, s.units, s.tx, s.hd, CASE WHEN {head} THEN d.df::text END,"
            + f" CASE WHEN {head} THEN {named_ids} END,"
            + f" CASE WHEN {head} THEN i.meta::text END, r.*"
            " FROM info i CROSS JOIN dfs d LEFT JOIN stats s ON true LEFT JOIN ("
            " SELECT u.id, u.file_id, u.heading, u.date, u.salience, e.embedding,"
            " u.end_line - u.start_line + 1 AS lines, u.terms, u.text, f.scope, f.path,"
            " u.start_line, u.end_line, u.sha256, u.kind, u.tags,"
            f" ({self.allowed}) AS allowed, u.ord, u.flagged, row_number() OVER () AS n"
            " FROM near JOIN units u ON u.id = near.id"
            " JOIN files f ON f.id = u.file_id SEEN LEFT JOIN LATERAL (SELECT embedding FROM"
            " embeddings WHERE vault = f.vault AND sha256 = u.sha256 AND model = %(model)s) e"
            " ON true) r ON true"
        )


def _served_rows(found: list[Any], first: Any, known: str | None) -> ServedRows:
    """`PgStore.served`'s answer from the rows of its statement: the statistics on every
    row, the document frequencies, named notes and meta on the `first` (`_head_row`), a
    unit on each (none when no unit was picked)."""
    stats = None
    if first[1] is not None:
        stats = (int(first[1]), int(first[2] or 0), int(first[3] or 0))
    elif known is None or first[0] != known:
        stats = (0, 0, 0)  # no file visible
    rows = []
    # in scope (C collation: code point order, as Python compares), file and unit order,
    # sorted here: sorting the rows on the server (vectors and texts with them) took a tenth
    # of the statement's time at 100,000 units
    units = sorted((r for r in found if r[7] is not None), key=_unit_order)
    for r, vec in zip(units, vector_blobs([r[12] for r in units]), strict=True):
        (uid, file_id, heading, date, salience, _, lines, uterms, text, scope) = r[7:17]
        (path, start, end, sha, kind, tags, ok, _, flagged, _) = r[17:]
        salience = float(salience)
        rows.append(
            ServedUnit(
                UnitRow(
                    uid,
                    file_id,
                    heading,
                    date,
                    salience,
                    vec,
                    lines,
                    uterms,
                    text,
                    scope,
                ),
                StoredUnit(uid, path, start, end, heading, text, sha, date, kind, salience, tags),
                bool(ok),
                flagged,
            )
        )
    df = json.loads(first[4] or "{}")
    return ServedRows(
        generation=first[0],
        stats=stats,
        df={t: (int(a), int(b)) for t, (a, b) in df.items()},
        named=[int(f) for f in first[5] or ()],
        rows=rows,
    )


def allowed_sql(conditions: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """`unit_ids_where`'s conditions (and `hidden_files`: file kinds left out, as
    `unit_ids_of_kinds` reads them) as one SQL predicate over `u` and `f`; of `u` it reads
    only `ALLOWED_READS` (a statement may give it a narrower `u` than the table)."""
    clauses, params = ["true"], dict[str, Any]()
    if conditions.get("since"):
        clauses.append("u.date >= %(since)s")
        params["since"] = conditions["since"]
    if conditions.get("until"):
        clauses.append("u.date <= %(until)s")
        params["until"] = conditions["until"]
    if conditions.get("kinds"):
        clauses.append("u.kind = ANY(%(kinds)s)")
        params["kinds"] = list(conditions["kinds"])
    if conditions.get("hidden_kinds"):
        clauses.append("NOT (u.kind = ANY(%(hidden)s))")
        params["hidden"] = list(conditions["hidden_kinds"])
    if conditions.get("hidden_files"):
        clauses.append("NOT (f.kind = ANY(%(hidden_files)s))")
        params["hidden_files"] = list(conditions["hidden_files"])
    if conditions.get("within"):
        within = str(conditions["within"]).rstrip("/")
        clauses.append("(f.path = %(within)s OR left(f.path, %(within_len)s) = %(within_prefix)s)")
        params |= {
            "within": within,
            "within_len": len(within) + 1,
            "within_prefix": within + "/",
        }
    return " AND ".join(clauses), params


def _head_row(found: list[Any]) -> Any:
    """The row of `PgStore.served`'s statement that carries the statement's own values (its
    first unit's, in whatever order the rows came; the only row when no unit was picked)."""
    return next(r for r in found if r[4] is not None)


def _unit_order(row: Any) -> tuple[str, int, int]:
    """A row of `PgStore.served`'s statement by scope, file and position in the file."""
    return (row[16], row[8], row[24])


def dsn_of(dsn: str, dsn_env: str) -> str:
    """The DSN `[index] dsn` gives, or the one in the variable `dsn_env` names."""
    from ..errors import ConfigError

    if dsn_env:
        value = os.environ.get(dsn_env, "")
        if not value:
            raise ConfigError(
                f"[index] dsn_env names {dsn_env}, which is not set; set it to "
                "the index server's DSN (postgresql://user@host/db)."
            )
        return value
    if not dsn:
        raise ConfigError(
            '[index] backend = "postgres" needs dsn or dsn_env (the index '
            "server's DSN, postgresql://user@host/db)."
        )
    return dsn


if TYPE_CHECKING:
    from .backend import ServesCandidates

    def _conforms(store: PgStore) -> ServesCandidates:
        return store  # mypy: the PostgreSQL store is an IndexBackend that serves candidates
