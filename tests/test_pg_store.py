"""The index on a real PostgreSQL + pgvector server (issue 21; index/pgstore.py): what it
holds equals the SQLite index, two machines indexing one commit converge to one state, a
server that fails is one clear line and touches no file, the watcher retries with back-off.
Slow: each test uses the session's server (tests/pg_server.py) and skips without pgserver."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.errors import VaultError
from vault_memory.index import IndexServerError

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parent.parent / "sample_vault"


def use_server(root: Path, dsn: str, vault_id: str = "") -> Path:
    """Point the vault at `dsn` (its vault.toml gets an [index] section)."""
    with (root / "vault.toml").open("a", encoding="utf-8") as fh:
        fh.write(
            f'\n[index]\nbackend = "postgres"\ndsn = "{dsn}"\n'
            + (f'vault_id = "{vault_id}"\n' if vault_id else "")
        )
    return root


def checkout(tmp_path: Path, name: str) -> Path:
    """A copy of sample_vault/ as a git checkout would make it: new mtimes, no .vault/."""
    root = tmp_path / name
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".vault"))
    return root


def vault_files(state: dict[str, Any]) -> dict[str, Any]:
    """A `tree_state` without the derived cache (.vault/: its lock file, its logs)."""
    return {k: v for k, v in state.items() if not k.startswith(".vault/")}


def server_state(dsn: str, vault: str) -> dict[str, Any]:
    """What the server holds of `vault`, without ids or stats (which differ between machines
    by nature): files by content, units by position and text, vectors, names, links."""
    import psycopg

    with psycopg.connect(dsn) as conn:

        def rows(sql: str) -> list[tuple[Any, ...]]:
            return sorted(conn.execute(sql, (vault,)).fetchall())

        return {
            "files": rows(
                "SELECT path, kind, sha256, date, title, tags, scope, note_tags"
                " FROM files WHERE vault=%s"
            ),
            "units": rows(
                "SELECT f.path, u.ord, u.start_line, u.end_line, u.sha256, u.kind,"
                " u.salience, u.terms, u.tsv::text FROM units u JOIN files f"
                " ON f.id = u.file_id WHERE f.vault=%s"
            ),
            "vectors": rows("SELECT sha256, model, embedding::text FROM embeddings WHERE vault=%s"),
            "names": rows(
                "SELECT f.path, n.key FROM names n JOIN files f ON f.id = n.file_id"
                " WHERE f.vault=%s"
            ),
            "links": rows(
                "SELECT f.path, l.ord, l.line, l.target, l.key FROM links l"
                " JOIN files f ON f.id = l.file_id WHERE f.vault=%s"
            ),
            "properties": rows(
                "SELECT f.path, p.ord, p.name, p.value FROM properties p"
                " JOIN files f ON f.id = p.file_id WHERE f.vault=%s"
            ),
        }


def test_the_server_holds_what_the_sqlite_index_holds(
    pg_database: str, tmp_path: Path, loaded_embedder: Any
) -> None:
    local, served = checkout(tmp_path, "local"), checkout(tmp_path, "served")
    use_server(served, pg_database)
    with Vault(local) as a, Vault(served) as b:
        ra, rb = a.index(), b.index()
        assert (ra.files, ra.units, ra.embedded_units) == (rb.files, rb.units, rb.embedded_units)
        assert rb.units > 150
        sqlite_store, pg_store = a._index.store, b._index.store
        assert type(pg_store).__name__ == "PgStore"
        assert sqlite_store.file_stats().keys() == pg_store.file_stats().keys()
        # the unit table is built from the same rows, vectors bit for bit
        model = a._index.model_id
        rows_a, rows_b = sqlite_store.unit_rows(model), pg_store.unit_rows(model)
        assert [r[2:] for r in rows_a] == [r[2:] for r in rows_b]
        assert sqlite_store.links() == pg_store.links()
        assert sqlite_store.counts(model) == pg_store.counts(model)
        # phase 2's building blocks: nearest by the model's HNSW index, keyword by
        # ts_rank_cd over the GIN index, both filtered by scope inside the SQL
        import numpy as np
        from psycopg.sql import SQL as psycopg_sql  # noqa: N811

        query = np.asarray(
            b._index.query_embedder().embed_query("ledger conflict error"), dtype=np.float32
        )
        ids = np.array([r[0] for r in rows_b])
        matrix = np.stack([np.frombuffer(r[5], dtype=np.float32) for r in rows_b])
        brute = [int(i) for i in ids[np.argsort(-(matrix @ query), kind="stable")[:5]]]
        nearest = pg_store.nearest(model, query.tobytes(), [""], 5)
        assert [i for i, _ in nearest] == brute
        assert pg_store.nearest(model, query.tobytes(), ["org/nobody"], 5) == []
        from vault_memory.index import terms_of
        from vault_memory.index.pgtext import tsquery_literal

        code = tsquery_literal(terms_of("ERR_LEDGER_409", query=True))
        found = pg_store.keyword(code, None, 5)
        texts = pg_store.units_by_id(i for i, _ in found)
        assert found and all("ERR_LEDGER_409" in texts[i].text for i, _ in found)
        assert pg_store.keyword(code, ["x"], 5) == []
        assert (
            pg_store.conn.execute(
                "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'embeddings_hnsw_%'"
            ).fetchone()[0]
            == 1
        )  # made when the model's dimensions were recorded
        pg_store.conn.execute("ANALYZE embeddings")  # as autovacuum would, on a real server
        pg_store.conn.execute("SET enable_seqscan = off")  # 192 rows: a scan is cheaper
        vec = "[" + ",".join(["0.05"] * 384) + "]"
        plan = pg_store.conn.execute(
            psycopg_sql("EXPLAIN ") + pg_store.nearest_query(model, 384, [""]),
            [vec, "served", vec, 20, "served", [""], 5],
        ).fetchall()
        assert any("embeddings_hnsw_" in line[0] for line in plan), plan
        pg_store.conn.execute("RESET enable_seqscan")
        # a second run finds nothing to do
        again = b.index()
        assert again.new + again.modified + again.deleted == 0
        assert b.status()["drift"] == {"new": 0, "changed": 0, "deleted": 0}


def test_two_machines_indexing_one_commit_converge(
    pg_database: str, tmp_path: Path, loaded_embedder: Any
) -> None:
    """Two checkouts (other folders, other mtimes) share one vault id on the server: after
    both index, interleaved with edits they both make, the server's state equals one
    single-machine rebuild of the final files."""
    one = use_server(checkout(tmp_path, "one"), pg_database, "team")
    two = use_server(checkout(tmp_path, "two"), pg_database, "team")
    os.utime(two / "MEMORY.md", (1_000_000, 1_000_000))  # another machine's stat
    with Vault(one) as a, Vault(two) as b:
        a.index()
        report = b.index()  # the same commit: only stats differ, no unit is rewritten
        assert report.units_embedded == 0
        edit = "\n## 10:00 · decision\n- Both machines agree on the shared index.\n"
        for root in (one, two):  # git pull on both
            with (root / "memory" / "2026-11-14.md").open("a", encoding="utf-8") as fh:
                fh.write(edit)
        (one / "notes" / "ci-flaky-tests.md").unlink()
        (two / "notes" / "ci-flaky-tests.md").unlink()
        b.index()
        a.index()
        assert a.status()["drift"] == {"new": 0, "changed": 0, "deleted": 0}
        assert b.status()["drift"] == {"new": 0, "changed": 0, "deleted": 0}
        hits_a = [(h.path, h.start_line) for h in a.search("shared index decision")]
        hits_b = [(h.path, h.start_line) for h in b.search("shared index decision")]
        assert hits_a == hits_b and hits_a[0][0] == "memory/2026-11-14.md"
    converged = server_state(pg_database, "team")
    single = use_server(checkout(tmp_path, "single"), pg_database, "single")
    shutil.copy2(one / "memory" / "2026-11-14.md", single / "memory" / "2026-11-14.md")
    (single / "notes" / "ci-flaky-tests.md").unlink()
    with Vault(single) as c:
        c.index(rebuild=True)
    assert converged == server_state(pg_database, "single")


def test_status_shows_drift_against_the_server(
    pg_database: str, tmp_path: Path, loaded_embedder: Any
) -> None:
    root = use_server(checkout(tmp_path, "v"), pg_database)
    with Vault(root) as vault:
        assert vault.status()["problem"] == "not indexed yet on the server: run `vault index`"
        vault.index()
        (root / "notes" / "new.md").write_text("# New\n\nfresh\n", encoding="utf-8")
        (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\n- more\n")
        os.utime(root / "memory" / "2026-11-03.md", (2_000_000, 2_000_000))  # stat only
        info = vault.status()
    assert info["backend"] == "postgres" and info["server"].startswith("127.0.0.1:")
    assert info["drift"] == {"new": 1, "changed": 1, "deleted": 0}


def test_the_cli_indexes_into_the_server_given_on_its_command_line(
    pg_database: str, tmp_path: Path, run_cli: Any, loaded_embedder: Any
) -> None:
    root = checkout(tmp_path, "v")
    result = run_cli("--vault", str(root), "index", "--backend", "postgres", "--dsn", pg_database)
    assert result.exit_code == 0, result.output
    assert not (root / ".vault" / "index.sqlite").exists()
    import psycopg

    with psycopg.connect(pg_database) as conn:
        assert conn.execute("SELECT count(*) FROM files WHERE vault='v'").fetchone()[0] == 25


def test_a_dsn_password_is_never_shown(
    tmp_path: Path, run_cli: Any, pg_server: Any, tree_state: Callable[[Path], Any]
) -> None:
    """A refused port: one line naming host:port/db and the reason, never the password;
    the vault's files are left as they were, for `index`, `search` and `status`."""
    root = checkout(tmp_path, "v")
    closed = pg_server.port + 1 if pg_server.port < 65535 else pg_server.port - 1
    use_server(root, f"postgresql://alice:s3cret-pw@127.0.0.1:{closed}/team")
    before = tree_state(root)
    for args in (["index"], ["search", "billing"]):
        result = run_cli("--vault", str(root), *args)
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output and "s3cret" not in result.output
        assert f"cannot reach the index server at 127.0.0.1:{closed}/team" in result.output
        assert "refused" in result.output
    status = run_cli("--vault", str(root), "status")
    assert "s3cret" not in status.output and "alice:***@" in status.output
    assert f"127.0.0.1:{closed}/team" in status.output
    assert vault_files(tree_state(root)) == vault_files(before)


def test_a_missing_database_and_a_wrong_user_are_one_line(tmp_path: Path, pg_server: Any) -> None:
    root = checkout(tmp_path, "v")
    base = pg_server.dsn.rsplit("/", 1)[0]
    for dsn, reason in (
        (base + "/nowhere", 'database "nowhere" does not exist'),
        (base.replace("postgres@", "mallory:pw@") + "/postgres", 'role "mallory" does not exist'),
    ):
        shutil.copy2(SAMPLE / "vault.toml", root / "vault.toml")
        use_server(root, dsn)
        with Vault(root) as vault, pytest.raises(IndexServerError) as caught:
            vault.index()
        message = str(caught.value)
        assert reason in message and "\n" not in message and ":pw@" not in message


@pytest.fixture
def own_server() -> Any:
    """A server of this test's own, to stop and start again."""
    from .pg_server import binaries, start_server

    folder = binaries()
    if folder is None:
        pytest.skip("the pgserver wheel is not installed")
    server = start_server(folder)
    yield server
    server.stop()


def test_a_server_stopped_mid_life_is_one_line_and_touches_nothing(
    own_server: Any,
    tmp_path: Path,
    tree_state: Callable[[Path], Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    root = use_server(checkout(tmp_path, "v"), own_server.dsn)
    with Vault(root) as vault:
        vault.index()
        assert vault.search("billing")
        own_server.pause()
        (root / "notes" / "later.md").write_text("# Later\n\nbilling note\n", encoding="utf-8")
        before = tree_state(root)
        for attempt in (lambda: vault.index(), lambda: vault.search("billing")):
            with pytest.raises(VaultError) as caught:
                attempt()
            assert "index server at 127.0.0.1" in str(caught.value)
            assert "\n" not in str(caught.value)
        assert vault_files(tree_state(root)) == vault_files(before)
        own_server.resume()
        report = vault.index()  # a new connection: back to work
        assert report.new == 1


def test_the_watcher_retries_with_back_off_until_the_server_is_back(
    own_server: Any,
    tmp_path: Path,
    tree_state: Callable[[Path], Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from vault_memory.live.watch import Watcher

    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    caplog.set_level(logging.INFO, logger="vault_memory")
    root = use_server(checkout(tmp_path, "v"), own_server.dsn)
    own_server.pause()
    before = tree_state(root)
    assert not any(k.startswith(".vault/") for k in before)
    watcher = Watcher(Vault(root), dream=False, serve=False, quiet_ms=100)
    watcher.start()
    try:

        def retries() -> list[str]:
            return [r.getMessage() for r in caplog.records if "Trying again in" in r.getMessage()]

        deadline = time.monotonic() + 30
        while len(retries()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        waits = [m.rsplit("Trying again in ", 1)[1] for m in retries()[:3]]
        assert waits == ["1 s.", "2 s.", "4 s."]
        assert "cannot reach the index server at 127.0.0.1" in retries()[0]
        # the vault's files untouched while the server is away
        assert vault_files(tree_state(root)) == before
        own_server.resume()
        import psycopg

        def indexed() -> int:
            with psycopg.connect(own_server.dsn) as conn:
                if conn.execute("SELECT to_regclass('files')").fetchone()[0] is None:
                    return 0
                return int(conn.execute("SELECT count(*) FROM files WHERE vault='v'").fetchone()[0])

        deadline = time.monotonic() + 60  # the next retry is at most 8 s away
        while indexed() < 25 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert indexed() == 25, "the watcher did not index once the server was back"

        def answered() -> bool:
            return any("the index server answers again" in r.getMessage() for r in caplog.records)

        while not answered() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert answered()
    finally:
        watcher.stop()
        watcher.vault.close()


def test_readers_never_see_half_a_batch(
    pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one process writes batches, another's reads always agree with the counts the
    writer records at the end of each batch (in the batch's transaction): a reader that saw
    a batch half applied would find more or fewer rows than recorded."""
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    root = use_server(checkout(tmp_path, "v"), pg_database)
    for i in range(60):
        (root / "notes" / f"bulk-{i:02}.md").write_text(
            "# Bulk\n\n" + "".join(f"## part {j}\n- line {i} {j}\n\n" for j in range(6)),
            encoding="utf-8",
        )
    from vault_memory.index.pgstore import PgStore

    reader = PgStore(pg_database, "v", tmp_path / "reader-cache", readonly=True)
    seen: list[str] = []
    reads = [0]
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            reads[0] += 1
            problem = reader.count_problem()
            if problem:
                seen.append(problem)

    thread = threading.Thread(target=read)
    thread.start()
    try:
        with Vault(root) as vault:
            vault.index()
            for i in range(0, 60, 3):
                (root / "notes" / f"bulk-{i:02}.md").unlink()
            vault.index()
    finally:
        stop.set()
        thread.join(30)
        reader.close()
    assert seen == [] and reads[0] > 5


def test_a_read_only_replica_answers_searches_and_refuses_writes_in_one_line(
    pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Readers may point at a replica: opening an up-to-date database writes nothing (no
    migration step), searches work, and indexing says where to go instead."""
    import psycopg

    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    root = use_server(checkout(tmp_path, "v"), pg_database)
    with Vault(root) as vault:
        vault.index()
    name = pg_database.rsplit("/", 1)[1]
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    (root / "notes" / "later.md").write_text("# Later\n\nbilling\n", encoding="utf-8")
    with Vault(root) as vault:
        assert vault.search("billing migration", fresh=False)
        with pytest.raises(IndexServerError, match="is read-only .a replica.+primary"):
            vault.index()


def test_a_database_migrated_by_a_newer_version_is_refused(
    pg_database: str, tmp_path: Path
) -> None:
    import psycopg

    from vault_memory.index.pgschema import LATEST, ServerSchemaError, migrate

    with psycopg.connect(pg_database, autocommit=True) as conn:
        migrate(conn)
        conn.execute(
            "INSERT INTO schema_migrations (version, name) VALUES (%s, 'future')", (LATEST + 1,)
        )
    root = use_server(checkout(tmp_path, "v"), pg_database)
    with Vault(root) as vault, pytest.raises(ServerSchemaError, match="upgrade vault-memory"):
        vault.index()


def test_doctor_and_verify_check_the_server(
    pg_database: str, tmp_path: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    root = use_server(checkout(tmp_path, "v"), pg_database)
    first = run_cli("--vault", str(root), "doctor")
    assert first.exit_code == 0, first.output
    assert "the index server: holds nothing of this vault\n  repair  built it" in first.output
    again = run_cli("--vault", str(root), "doctor", "--verify")
    assert again.exit_code == 0, again.output
    assert "nothing damaged" in again.output and "index equals the files (25 files" in again.output
    # a second machine (no keyword index here yet) builds its own from the server's units
    other = tmp_path / "machine-2" / "v"  # the same folder name: the same vault id
    shutil.copytree(root, other, ignore=shutil.ignore_patterns(".vault"))
    with Vault(other) as vault:
        assert vault.index().rebuilt
        assert [h.path for h in vault.search("tag:#decision")]


def test_an_index_on_the_server_from_before_embeds_its_emoji_again(
    pg_database: str, tmp_path: Path, loaded_embedder: Any
) -> None:
    """The upgrade that gives the bundled model emoji as words (`embedder.PICTOGRAPHS`) on
    the server: the texts holding one are embedded again once, the other vectors kept."""
    import psycopg

    root = use_server(checkout(tmp_path, "emoji"), pg_database)
    (root / "memory" / "2023-05-08.md").write_text(
        "# 2023-05-08\n\n## 20:01 — chat\n\n- **Ria**: 🎂🎉 best day ever!!\n", "utf-8"
    )
    with Vault(root) as vault:
        vault.index()
    with psycopg.connect(pg_database) as conn:
        assert conn.execute("DELETE FROM meta WHERE key='pictographs'").rowcount == 1
    with Vault(root) as vault:
        report = vault.index()
        assert (report.modified, report.units_embedded) == (1, 1)
        hit = vault.search(
            "When was the birthday party?", mode="semantic", limit=1, within="memory/2023-05-08.md"
        )[0]
        assert hit.flags == []  # near: the words of 🎂🎉, not two [UNK]s
        assert vault.index().units_embedded == 0
