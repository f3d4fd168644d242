"""One database for many clones of a vault: two checkouts that diverged (different files,
different mtimes) share one PostgreSQL vault id. Each sees exactly its own files; neither's
index removes or hides the other's rows; a text both hold is stored and embedded once;
two clones indexing at the same time lose and duplicate nothing. Slow: a real server."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault

from .test_pg_store import checkout

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")


def clone_settings(dsn: str, name: str) -> dict[str, Any]:
    return {
        "index.backend": "postgres",
        "index.dsn": dsn,
        "index.vault_id": "team",
        "index.clone_id": name,
    }


def diverge(root: Path, tag: str, mtime: int) -> None:
    """A note only this clone has, a changed shared file, and its own mtimes."""
    (root / "notes" / f"only-{tag}.md").write_text(
        f"# Only {tag}\n\n- The {tag} clone keeps the marmot-{tag} runbook.\n", encoding="utf-8"
    )
    with (root / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write(f"\n- Clone {tag} prefers the heron-{tag} dashboard.\n")
    for path in root.rglob("*.md"):
        os.utime(path, ns=(mtime, mtime))


def server_rows(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        one = conn.execute(
            "SELECT count(*), count(DISTINCT (path, sha256)) FROM files WHERE vault='team'"
        ).fetchone()
        texts = conn.execute(
            "SELECT count(*), count(DISTINCT sha256) FROM embeddings WHERE vault='team'"
        ).fetchone()
        views = conn.execute(
            "SELECT count(*), count(DISTINCT (clone, path)) FROM clone_files"
        ).fetchone()
    return {
        "content": one[0],
        "distinct_content": one[1],
        "vectors": texts[0],
        "distinct_vectors": texts[1],
        "views": views[0],
        "distinct_views": views[1],
    }


def paths_found(vault: Vault, query: str) -> set[str]:
    return {hit.path for hit in vault.search(query, fresh=False, limit=20)}


def test_two_diverged_clones_share_one_database(
    pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = checkout(tmp_path, "a"), checkout(tmp_path, "b")
    diverge(a, "alpha", 1_700_000_000_000_000_000)
    diverge(b, "beta", 1_750_000_000_000_000_000)
    (b / "notes" / "ci-flaky-tests.md").unlink()  # b deleted a file a still has

    with Vault(a, clone_settings(pg_database, "a")) as va:
        first = va.index()
    with Vault(b, clone_settings(pg_database, "b")) as vb:
        second = vb.index()
    assert first.files == 26 and second.files == 25
    # b embedded only the texts a had not: its own note and its MEMORY.md line
    assert 0 < second.units_embedded <= 4 < first.units_embedded

    with (
        Vault(a, clone_settings(pg_database, "a")) as va,
        Vault(b, clone_settings(pg_database, "b")) as vb,
    ):
        assert "notes/only-alpha.md" in paths_found(va, "marmot-alpha runbook")
        assert "notes/only-beta.md" not in paths_found(va, "marmot-beta runbook")
        assert "notes/only-beta.md" in paths_found(vb, "marmot-beta runbook")
        assert "notes/only-alpha.md" not in paths_found(vb, "marmot-alpha runbook")
        assert "notes/ci-flaky-tests.md" in paths_found(va, "flaky tests runners")
        assert "notes/ci-flaky-tests.md" not in paths_found(vb, "flaky tests runners")
        a_memory = [h for h in va.search("heron dashboard", fresh=False) if "heron" in h.text]
        assert a_memory and all("heron-beta" not in h.text for h in a_memory)
        for vault in (va, vb):
            info = vault.status()
            assert info["drift"] == {"new": 0, "changed": 0, "deleted": 0}

    # a indexes again (nothing changed for a): b's rows stay, b still finds its note
    with Vault(a, clone_settings(pg_database, "a")) as va:
        va.index()
        va.index(rebuild=True)  # even a rebuild of a leaves b's view whole
    with Vault(b, clone_settings(pg_database, "b")) as vb:
        assert "notes/only-beta.md" in paths_found(vb, "marmot-beta runbook")
        assert vb.status()["files"] == 25
    rows = server_rows(pg_database)
    assert rows["content"] == rows["distinct_content"]  # no content stored twice
    assert rows["vectors"] == rows["distinct_vectors"]  # each distinct text embedded once
    # the 24 files held unchanged (by both, or by a alone) are one content row each; MEMORY.md
    # and each clone's own note are two each
    assert rows["content"] == 24 + 2 + 2


def test_two_clones_indexing_at_once_lose_and_duplicate_nothing(
    pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    roots = {}
    for tag, mtime in (("alpha", 1_700_000_000_000_000_000), ("beta", 1_750_000_000_000_000_000)):
        roots[tag] = checkout(tmp_path, tag)
        diverge(roots[tag], tag, mtime)
    errors: list[BaseException] = []

    def run(tag: str) -> None:
        try:
            with Vault(roots[tag], clone_settings(pg_database, tag)) as vault:
                vault.index()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(tag,)) for tag in roots]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    rows = server_rows(pg_database)
    assert rows["views"] == rows["distinct_views"] == 26 + 26
    assert rows["content"] == rows["distinct_content"] == 24 + 2 + 2
    for tag in roots:
        with Vault(roots[tag], clone_settings(pg_database, tag)) as vault:
            info = vault.status()
            assert info["files"] == 26 and info["drift"] == {"new": 0, "changed": 0, "deleted": 0}


def view_rows(dsn: str, clone: int) -> list[tuple[Any, ...]]:
    """A clone's view with the content each path points at (its units' texts and vectors)."""
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT cf.path, f.sha256, count(u.id), count(e.sha256) FROM clone_files cf"
            " JOIN files f ON f.id = cf.file_id LEFT JOIN units u ON u.file_id = f.id"
            " LEFT JOIN embeddings e ON e.sha256 = u.sha256 AND e.vault = f.vault"
            " WHERE cf.clone = %s GROUP BY cf.path, f.sha256 ORDER BY cf.path",
            (clone,),
        ).fetchall()


def test_a_stale_clone_is_listed_and_removed_without_touching_the_others(
    pg_database: str, tmp_path: Path, run_cli: Any
) -> None:
    """`vault postgres clones` lists every clone (last index, files, units only it holds);
    `--remove ID` drops that clone's view and the content no other clone holds, asks first
    (or takes --yes), and never removes another clone's rows or this checkout's own."""
    import json

    a, b = checkout(tmp_path, "a"), checkout(tmp_path, "b")
    diverge(a, "alpha", 1_700_000_000_000_000_000)
    diverge(b, "beta", 1_750_000_000_000_000_000)
    for root, name in ((a, "a"), (b, "b")):
        with Vault(root, clone_settings(pg_database, name)) as vault:
            vault.index()
    env = {
        "VAULT_INDEX_BACKEND": "postgres",
        "VAULT_INDEX_DSN": pg_database,
        "VAULT_INDEX_VAULT_ID": "team",
        "VAULT_INDEX_CLONE_ID": "a",
    }

    def clones(*args: str, input: str | None = None) -> Any:
        return run_cli("--vault", str(a), "postgres", "clones", *args, env=env, input=input)

    listed = clones("--json")
    assert listed.exit_code == 0, listed.stderr
    rows = {c["name"]: c for c in json.loads(listed.stdout)}
    assert set(rows) == {"a", "b"} and rows["a"]["this"] and not rows["b"]["this"]
    assert rows["a"]["files"] == rows["b"]["files"] == 26
    assert rows["a"]["last_index_at"] and rows["b"]["last_index_at"]
    # each holds its own note and its own MEMORY.md: the only units no other clone holds
    assert 0 < rows["b"]["own_units"] < rows["b"]["units"]
    text = clones()
    assert (
        text.exit_code == 0 and "(this checkout)" in text.stdout and "only its own" in text.stdout
    )
    a_id, b_id = rows["a"]["id"], rows["b"]["id"]
    before_a, before = view_rows(pg_database, a_id), server_rows(pg_database)

    declined = clones("--remove", str(b_id), input="n\n")
    assert declined.exit_code == 1 and "nothing removed" in declined.stderr
    assert server_rows(pg_database) == before
    for refused in (clones("--remove", str(a_id), "--yes"), clones("--remove", "999", "--yes")):
        errors = [line for line in refused.stderr.splitlines() if line.startswith("Error:")]
        assert refused.exit_code == 1 and len(errors) == 1, refused.stderr
    assert server_rows(pg_database) == before

    removed = clones("--remove", str(b_id), "--yes")
    assert removed.exit_code == 0, removed.stderr
    assert f"removed clone {b_id} (b)" in removed.stderr
    assert [c["name"] for c in json.loads(clones("--json").stdout)] == ["a"]
    assert view_rows(pg_database, a_id) == before_a  # a's view, units and vectors untouched
    after = server_rows(pg_database)
    assert after["views"] == 26 and after["content"] == 26  # b's own content went with it
    assert after["vectors"] == after["distinct_vectors"] < before["vectors"]
    with psycopg.connect(pg_database) as conn:
        keys = [
            r[0] for r in conn.execute("SELECT key FROM meta WHERE key LIKE %s", (f"%@{b_id}",))
        ]
        assert keys == []
    with Vault(a, clone_settings(pg_database, "a")) as va:
        assert paths_found(va, "marmot-alpha runbook") >= {"notes/only-alpha.md"}
        assert va.index().files == 26  # nothing of a's needed indexing again


def counted_terms(dsn: str) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """The document counts the server keeps (`term_counts`) and the same counted afresh from
    every unit's tsvector: (kept, recounted), rows with a text or heading count only."""
    with psycopg.connect(dsn) as conn:
        kept = conn.execute(
            "SELECT vault, scope, term, tx, hd FROM term_counts WHERE tx > 0 OR hd > 0"
        ).fetchall()
        fresh = conn.execute(
            "SELECT * FROM (SELECT f.vault, f.scope, x.lexeme,"
            " count(*) FILTER (WHERE 'D' = ANY(x.weights)) AS tx,"
            " count(*) FILTER (WHERE 'A' = ANY(x.weights)) AS hd"
            " FROM units u JOIN files f ON f.id = u.file_id, unnest(u.tsv) x"
            " GROUP BY f.vault, f.scope, x.lexeme) c WHERE tx > 0 OR hd > 0"
        ).fetchall()
    return set(kept), set(fresh)


def test_term_counts_follow_every_write_and_the_upgrade(pg_database: str, tmp_path: Path) -> None:
    """BM25's document frequencies on the server are counted as units are written: they equal
    a fresh count after two clones index, one edits and deletes files, a clone is removed,
    and after the upgrade that adds them to a database holding units already."""
    a, b = checkout(tmp_path, "a"), checkout(tmp_path, "b")
    diverge(a, "alpha", 1_700_000_000_000_000_000)
    diverge(b, "beta", 1_750_000_000_000_000_000)
    for root, name in ((a, "a"), (b, "b")):
        with Vault(root, clone_settings(pg_database, name)) as vault:
            vault.index()
    kept, fresh = counted_terms(pg_database)
    assert kept == fresh and len(fresh) > 100
    (a / "notes" / "ci-flaky-tests.md").unlink()
    (a / "notes" / "only-alpha.md").write_text("# Only alpha\n\n- Tapir quokka.\n", "utf-8")
    with Vault(a, clone_settings(pg_database, "a")) as va:
        va.index()
        assert "notes/only-alpha.md" in paths_found(va, "tapir quokka")
    assert counted_terms(pg_database)[0] == counted_terms(pg_database)[1]
    with Vault(a, clone_settings(pg_database, "a")) as va:
        store = va.cache.store
        (b_id,) = [c.id for c in store.clones() if c.name == "b"]
        store.forget_clone(b_id)
    kept, fresh = counted_terms(pg_database)
    assert kept == fresh and ("team", "", "heron-beta", 1, 0) not in kept
    with psycopg.connect(pg_database, autocommit=True) as conn:  # as before the upgrade
        conn.execute("DROP TABLE term_counts")
        conn.execute("DROP FUNCTION vault_memory_count_terms, vault_memory_uncount_terms CASCADE")
        conn.execute("DELETE FROM schema_migrations WHERE version = 5")
    with Vault(a, clone_settings(pg_database, "a")) as va:
        assert "notes/only-alpha.md" in paths_found(va, "tapir quokka")
    kept, fresh = counted_terms(pg_database)
    assert kept == fresh and len(fresh) > 100
