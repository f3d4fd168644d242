"""The PostgreSQL index's schema as numbered migrations, recorded in the database
(docs/postgres-design.md §3 and §6).

`migrate(conn)` brings a database up to `LATEST` in one transaction, under an advisory lock:
processes that start together apply each step once, and a step that fails leaves the database
as it was (PostgreSQL's DDL is transactional). A database migrated by a newer vault-memory is
refused, never changed. `conn` is a psycopg 3 connection; this module does not import psycopg.

Every table is keyed by `vault` first: one server may hold the indexes of several vaults.
"""

from __future__ import annotations

from typing import Any

from ..errors import VaultError

# pg_advisory_xact_lock key of schema changes (any constant: "vm-schema" as ASCII)
MIGRATION_LOCK = 0x766D2D736368656D

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "units, files, hashes, vectors",
        """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE meta (
    vault text NOT NULL, key text NOT NULL, value text NOT NULL,
    PRIMARY KEY (vault, key));
CREATE TABLE files (
    id bigserial PRIMARY KEY, vault text NOT NULL, path text NOT NULL, kind text NOT NULL,
    mtime_ns bigint NOT NULL, size bigint NOT NULL, sha256 text NOT NULL, date text,
    title text, tags text NOT NULL DEFAULT '', indexed_at double precision NOT NULL,
    scope text NOT NULL DEFAULT '', note_tags text NOT NULL DEFAULT '',
    UNIQUE (vault, path));
CREATE INDEX files_scope ON files (vault, scope);
CREATE TABLE units (
    id bigserial PRIMARY KEY,
    file_id bigint NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    ord integer NOT NULL, start_line integer NOT NULL, end_line integer NOT NULL,
    heading text NOT NULL, text text NOT NULL, sha256 text NOT NULL, date text,
    kind text NOT NULL, salience real NOT NULL DEFAULT 1.0, tags text NOT NULL DEFAULT '',
    terms text NOT NULL DEFAULT '', tsv tsvector NOT NULL);
CREATE INDEX units_file ON units (file_id, ord);
CREATE INDEX units_sha ON units (sha256);
CREATE INDEX units_tsv ON units USING gin (tsv);
CREATE TABLE embeddings (
    vault text NOT NULL, sha256 text NOT NULL, model text NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (vault, sha256, model));
CREATE TABLE properties (
    file_id bigint NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    ord integer NOT NULL, name text NOT NULL, value text NOT NULL);
CREATE INDEX properties_file ON properties (file_id, ord);
CREATE TABLE names (
    key text NOT NULL, file_id bigint NOT NULL REFERENCES files (id) ON DELETE CASCADE);
CREATE INDEX names_key ON names (key);
CREATE INDEX names_file ON names (file_id);
CREATE TABLE links (
    file_id bigint NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    ord integer NOT NULL, line integer NOT NULL, kind text NOT NULL, target text NOT NULL,
    subpath text NOT NULL DEFAULT '', display text NOT NULL DEFAULT '',
    embed boolean NOT NULL DEFAULT false, key text NOT NULL, text text NOT NULL DEFAULT '');
CREATE INDEX links_file ON links (file_id, ord);
CREATE INDEX links_key ON links (key);
CREATE TABLE skipped (
    vault text NOT NULL, path text NOT NULL, mtime_ns bigint NOT NULL, size bigint NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (vault, path));
""",
    ),
    # Search on the server (docs/postgres-design.md §4) computes BM25 as the unit table does:
    # it needs the visible units' number and their fields' total lengths, summed per file
    # here (a search sums the files of its scopes, not every unit).
    (
        2,
        "per-file unit counts and field lengths",
        """
ALTER TABLE files ADD COLUMN units integer NOT NULL DEFAULT 0,
    ADD COLUMN tx_terms bigint NOT NULL DEFAULT 0,
    ADD COLUMN hd_terms bigint NOT NULL DEFAULT 0;
UPDATE files f SET units = s.units, tx_terms = s.tx, hd_terms = s.hd FROM (
    SELECT u.file_id, count(*) AS units,
        sum(coalesce(array_length(regexp_split_to_array(nullif(btrim(u.terms), ''), '\\s+'), 1),
                     0)) AS tx,
        sum((SELECT count(*) FROM unnest(u.tsv) x, unnest(x.weights) w WHERE w = 'A')) AS hd
    FROM units u GROUP BY u.file_id) s
WHERE s.file_id = f.id;
""",
    ),
    # Whether a unit reads as an instruction to a model, judged when indexed as the embedded
    # index does (NULL: written before this step; search judges the returned text then).
    (
        3,
        "instruction flags",
        """
ALTER TABLE units ADD COLUMN flagged boolean;
""",
    ),
    # One database for many clones of a vault (git checkouts at different commits): a file
    # row is content, keyed by (vault, path, sha256) and shared by every clone holding that
    # text at that path; `clone_files` is each clone's view (path -> content row, with its
    # own stat). The rows indexed before belong to the clone named "", which the first clone
    # that writes adopts. Skipped files are a clone's own: they are found again by its next
    # index run, so the old ones are dropped.
    (
        4,
        "clones: per-clone views over shared content",
        """
CREATE TABLE clones (
    id serial PRIMARY KEY, vault text NOT NULL, name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (vault, name));
CREATE TABLE clone_files (
    clone integer NOT NULL REFERENCES clones (id) ON DELETE CASCADE,
    path text NOT NULL,
    file_id bigint NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    mtime_ns bigint NOT NULL, size bigint NOT NULL,
    PRIMARY KEY (clone, path));
CREATE INDEX clone_files_file ON clone_files (file_id, clone);
INSERT INTO clones (vault, name) SELECT DISTINCT vault, '' FROM files;
INSERT INTO clone_files (clone, path, file_id, mtime_ns, size)
    SELECT c.id, f.path, f.id, f.mtime_ns, f.size FROM files f
    JOIN clones c ON c.vault = f.vault AND c.name = '';
ALTER TABLE files DROP CONSTRAINT IF EXISTS files_vault_path_key;
CREATE UNIQUE INDEX files_content ON files (vault, path, sha256);
DELETE FROM skipped;
ALTER TABLE skipped ADD COLUMN clone integer NOT NULL REFERENCES clones (id) ON DELETE CASCADE,
    DROP CONSTRAINT skipped_pkey, ADD PRIMARY KEY (clone, path);
""",
    ),
    # A search's BM25 document frequencies (per query term, how many units hold it in the
    # text and in the heading) counted once when units are written, per vault and scope,
    # rather than by reading every unit that holds a query term at each search (which cost
    # a pass over all matches: tens of thousands of rows for a common word at 1M units).
    # Kept by triggers, so every way a unit comes or goes (a file stored, a content row
    # collected, a rebuild, a clone removed) keeps them exact for the vault's content rows.
    (
        5,
        "term document counts per scope",
        """
CREATE TABLE term_counts (
    vault text NOT NULL, scope text NOT NULL, term text NOT NULL,
    tx bigint NOT NULL DEFAULT 0, hd bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (vault, term, scope));
CREATE FUNCTION vault_memory_count_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO term_counts AS t (vault, scope, term, tx, hd)
    SELECT f.vault, f.scope, x.lexeme,
        count(*) FILTER (WHERE 'D' = ANY(x.weights)),
        count(*) FILTER (WHERE 'A' = ANY(x.weights))
    FROM written u JOIN files f ON f.id = u.file_id, unnest(u.tsv) x
    GROUP BY f.vault, f.scope, x.lexeme
    ON CONFLICT (vault, term, scope) DO UPDATE SET tx = t.tx + excluded.tx,
        hd = t.hd + excluded.hd;
    RETURN NULL;
END $$;
CREATE TRIGGER units_count_terms AFTER INSERT ON units REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION vault_memory_count_terms();
CREATE FUNCTION vault_memory_uncount_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE term_counts t SET tx = t.tx - d.tx, hd = t.hd - d.hd FROM (
        SELECT x.lexeme AS term, count(*) FILTER (WHERE 'D' = ANY(x.weights)) AS tx,
            count(*) FILTER (WHERE 'A' = ANY(x.weights)) AS hd
        FROM units u, unnest(u.tsv) x WHERE u.file_id = OLD.id GROUP BY x.lexeme) d
    WHERE t.vault = OLD.vault AND t.scope = OLD.scope AND t.term = d.term;
    RETURN OLD;
END $$;
CREATE TRIGGER files_uncount_terms BEFORE DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION vault_memory_uncount_terms();
INSERT INTO term_counts (vault, scope, term, tx, hd)
    SELECT f.vault, f.scope, x.lexeme, count(*) FILTER (WHERE 'D' = ANY(x.weights)),
        count(*) FILTER (WHERE 'A' = ANY(x.weights))
    FROM units u JOIN files f ON f.id = u.file_id, unnest(u.tsv) x
    GROUP BY f.vault, f.scope, x.lexeme;
""",
    ),
)
LATEST = MIGRATIONS[-1][0]


class ServerSchemaError(VaultError):
    """The index server's database was migrated by a newer vault-memory."""


def applied(conn: Any) -> list[int]:
    """The migration versions the database records (none before the first `migrate`)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()[0]
    if not exists:
        return []
    return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]


def current(done: list[int]) -> bool:
    """Whether a database recording the versions `done` needs no `migrate`: every step
    applied (not only the latest: a step may have been undone by hand) and none newer."""
    return set(done) == {version for version, _, _ in MIGRATIONS}


def migrate(conn: Any) -> list[int]:
    """Apply the migrations the database lacks, in order, in one transaction; returns the
    versions applied now (empty when it was up to date)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY,"
            " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = set(applied(conn))
        newer = [v for v in done if v > LATEST]
        if newer:
            raise ServerSchemaError(
                f"the index server's database has schema version {max(newer)}, this "
                f"vault-memory knows up to {LATEST}; upgrade vault-memory on this machine."
            )
        now = []
        for version, name, sql in MIGRATIONS:
            if version in done:
                continue
            conn.execute(sql)
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name)
            )
            now.append(version)
    return now
