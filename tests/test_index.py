"""The derived index with the real SQLite, Whoosh and bundled model: what `vault index` does to
`.vault/` (and never to the vault's files), healing, keyword-only mode and the writer lock."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.errors import LockTimeoutError
from vault_memory.index.embedder import BUNDLED_MODEL_ID, DISABLE_ENV
from vault_memory.index.indexer import Index, IndexReport
from vault_memory.index.store import SCHEMA_VERSION

pytestmark = pytest.mark.usefixtures("loaded_embedder")

Snapshot = Callable[[Path], dict[str, tuple[bytes, int, int]]]

SAMPLE_FILES = 25
SMALL_FILES = 4
SMALL_UNITS = 6


def index(root: Path, **overrides: Any) -> IndexReport:
    with Vault(root, overrides) as vault:
        return vault.index()


@contextlib.contextmanager
def db(root: Path) -> Iterator[sqlite3.Connection]:
    """Read the index without leaving a trace (no -wal/-shm files)."""
    uri = (root / ".vault" / "index.sqlite").as_uri() + "?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True)
    try:
        yield conn
    finally:
        conn.close()


def chunks(root: Path, relpath: str) -> list[tuple[int, int, str]]:
    with db(root) as conn:
        return list(
            conn.execute(
                "SELECT c.start_line, c.end_line, c.text FROM chunks c JOIN files f ON f.id=c.file_id"  # noqa: E501
                " WHERE f.path=? ORDER BY c.ord",
                (relpath,),
            )
        )


def indexed_paths(root: Path) -> set[str]:
    with db(root) as conn:
        return {r[0] for r in conn.execute("SELECT path FROM files")}


def embedding_rows(root: Path) -> list[tuple[str, str]]:
    with db(root) as conn:
        return list(conn.execute("SELECT sha256, model FROM embeddings"))


def distinct_unit_texts(root: Path) -> int:
    with db(root) as conn:
        return conn.execute("SELECT COUNT(DISTINCT sha256) FROM chunks").fetchone()[0]


def keyword_paths(root: Path, query: str) -> list[str]:
    with Vault(root) as vault:
        return [hit.path for hit in vault.search(query, mode="keyword", fresh=False)]


def vault_files(state: dict[str, Any]) -> dict[str, Any]:
    return {path: value for path, value in state.items() if not path.startswith(".vault/")}


def assert_spans_match_files(root: Path) -> None:
    """Every stored unit is exactly its lines of the file on disk."""
    for relpath in indexed_paths(root):
        lines = (root / relpath).read_bytes().decode("utf-8-sig").splitlines()
        for start, end, text in chunks(root, relpath):
            assert text == "\n".join(lines[start - 1 : end]), f"{relpath}:{start}-{end}"


# -- first index, no-op, moves and edits ------------------------------------------------------


def test_first_index_embeds_every_unit(small_vault: Path) -> None:
    report = index(small_vault)
    assert (report.new, report.modified, report.moved, report.deleted) == (SMALL_FILES, 0, 0, 0)
    assert report.files == SMALL_FILES
    assert report.units == report.units_embedded == report.embedded_units == SMALL_UNITS
    assert report.model == BUNDLED_MODEL_ID
    assert report.rebuilt is None and report.warnings == []
    assert len(embedding_rows(small_vault)) == distinct_unit_texts(small_vault)
    assert_spans_match_files(small_vault)
    with Vault(small_vault) as vault:
        hits = vault.search("which database does billing use?", mode="semantic", fresh=False)
    assert hits[0].path == "MEMORY.md"


def test_noop_index_embeds_nothing_and_writes_nothing(
    indexed_sample: Path,
    tree_state: Snapshot,
    vault_warnings: Callable[[], list[str]],
) -> None:
    before = tree_state(indexed_sample)
    assert {".vault/index.sqlite", ".vault/write.lock"} <= set(before)
    assert any(p.startswith(".vault/whoosh/") and p.endswith(".seg") for p in before)
    report = index(indexed_sample)
    assert report.units_embedded == 0
    assert report.unchanged == report.files == SAMPLE_FILES
    assert (report.new, report.modified, report.moved, report.deleted) == (0, 0, 0, 0)
    assert report.rebuilt is None and report.warnings == [] and vault_warnings() == []
    assert tree_state(indexed_sample) == before  # bytes and mtimes, .vault/ included
    assert not (indexed_sample / ".vault" / "index.sqlite-wal").exists()


def test_noop_cli_index_writes_nothing(
    indexed_sample: Path,
    tree_state: Snapshot,
    run_cli: Callable[..., Any],
) -> None:
    before = tree_state(indexed_sample)
    result = run_cli("--vault", str(indexed_sample), "index")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == "0 new, 0 modified, 0 moved, 0 deleted, 25 unchanged"
    assert "(0 new)" in result.stdout
    assert result.stderr == ""
    assert tree_state(indexed_sample) == before


def test_renaming_a_file_reembeds_nothing(indexed_sample: Path) -> None:
    old, new = "notes/ci-flaky-tests.md", "notes/ci/flaky-tests.md"
    units = chunks(indexed_sample, old)
    (indexed_sample / "notes" / "ci").mkdir()
    os.rename(indexed_sample / old, indexed_sample / new)
    report = index(indexed_sample)
    assert (report.moved, report.new, report.deleted, report.modified) == (1, 0, 0, 0)
    assert report.units_embedded == 0
    assert chunks(indexed_sample, new) == units
    assert chunks(indexed_sample, old) == []
    found = keyword_paths(indexed_sample, "CI-88")
    assert new in found and old not in found


def test_moving_and_editing_reembeds_only_the_edited_unit(indexed_sample: Path) -> None:
    old, new = "memory/2026-11-13.md", "notes/archive-2026-11-13.md"
    text = (indexed_sample / old).read_text(encoding="utf-8")
    (indexed_sample / new).write_text(text.replace("Going to bed.", "Going to sleep."))
    (indexed_sample / old).unlink()
    report = index(indexed_sample)
    assert (report.new, report.deleted, report.moved) == (1, 1, 0)
    assert report.units_embedded == 1


def test_editing_one_line_reembeds_only_that_unit(indexed_sample: Path) -> None:
    path = indexed_sample / "memory" / "2026-11-13.md"
    units_before = index(indexed_sample).units
    path.write_bytes(path.read_bytes().replace(b"Going to bed.", b"Going to sleep."))
    report = index(indexed_sample)
    assert (report.modified, report.unchanged) == (1, SAMPLE_FILES - 1)
    assert report.units_embedded == 1
    assert report.units == units_before == report.embedded_units
    assert len(embedding_rows(indexed_sample)) == distinct_unit_texts(indexed_sample)  # pruned
    assert keyword_paths(indexed_sample, "sleep")[0] == "memory/2026-11-13.md"


def test_shifted_lines_reembed_nothing_but_the_new_line(indexed_sample: Path) -> None:
    path = indexed_sample / "memory" / "2026-11-13.md"
    before = chunks(indexed_sample, "memory/2026-11-13.md")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("# 2026-11-13\n", "# 2026-11-13\n\nWoke up early.\n", 1))
    report = index(indexed_sample)
    assert report.units_embedded == 1
    after = chunks(indexed_sample, "memory/2026-11-13.md")
    assert after[0][:2] == (3, 3) and after[0][2] == "Woke up early."
    assert [(s + 2, e + 2, t) for s, e, t in before] == after[1:]
    assert_spans_match_files(indexed_sample)


def test_touched_file_refreshes_its_stat_only(indexed_sample: Path, tree_state: Snapshot) -> None:
    path = indexed_sample / "MEMORY.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    report = index(indexed_sample)
    assert (report.unchanged, report.modified, report.units_embedded) == (SAMPLE_FILES, 0, 0)
    before = tree_state(indexed_sample)
    assert index(indexed_sample).units_embedded == 0
    assert tree_state(indexed_sample) == before  # the new mtime is known now: a true no-op


def test_deleted_file_leaves_the_index(indexed_sample: Path) -> None:
    (indexed_sample / "notes" / "ci-flaky-tests.md").unlink()
    report = index(indexed_sample)
    assert (report.deleted, report.files, report.units_embedded) == (1, SAMPLE_FILES - 1, 0)
    assert "notes/ci-flaky-tests.md" not in indexed_paths(indexed_sample)
    assert "notes/ci-flaky-tests.md" not in keyword_paths(indexed_sample, "CI-88")
    assert len(embedding_rows(indexed_sample)) == distinct_unit_texts(indexed_sample)


# -- the vault's files: read only, hostile ones skipped ---------------------------------------

HOSTILE: dict[str, bytes] = {
    "notes/frontmatter.md": b"---\ntitle: Front matter\ntags: [alpha]\n---\n# Front\n\n- body\n",
    "notes/broken-frontmatter.md": b"---\ntitle: [unclosed\n---\n# Broken\n\n- still indexed\n",
    "notes/crlf.md": b"# Windows\r\n\r\n- saved on windows\r\n- second line\r\n",
    "notes/bom.md": b"\xef\xbb\xbf# Bom title\n\n- after a byte order mark\n",
    "notes/no-newline.md": b"- last line without a newline",
    "notes/empty.md": b"",
    "notes/latin1.md": b"# Caf\xe9\n\n- cr\xe8me br\xfbl\xe9e\n",
    "notes/binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
    "notes/huge.md": b"- a very long note line\n" * 1000,  # 24 kB, over the limit set below
}
SKIPPED = {
    "notes/latin1.md": "not valid UTF-8",
    "notes/binary.md": "binary file",
    "notes/huge.md": "over the 10,000-byte limit",
}


def add_hostile_files(root: Path) -> None:
    for relpath, data in HOSTILE.items():
        (root / relpath).write_bytes(data)


def test_indexing_never_changes_a_vault_file(
    indexed_sample: Path,
    tree_state: Snapshot,
    vault_warnings: Callable[[], list[str]],
) -> None:
    add_hostile_files(indexed_sample)
    before = vault_files(tree_state(indexed_sample))
    report = index(indexed_sample, **{"index.max_file_bytes": 10_000})
    assert vault_files(tree_state(indexed_sample)) == before
    assert (report.new, report.unreadable, report.units_embedded > 0) == (6, 3, True)
    assert len(report.warnings) == 3
    for relpath, reason in SKIPPED.items():
        (message,) = [w for w in report.warnings if relpath in w]
        assert reason in message
        assert relpath not in indexed_paths(indexed_sample)
    warnings = vault_warnings()
    assert len(warnings) == 4, warnings  # the three skipped files, and the broken frontmatter
    assert any("notes/broken-frontmatter.md" in w and "broken frontmatter" in w for w in warnings)
    assert chunks(indexed_sample, "notes/broken-frontmatter.md")[-1][2] == "- still indexed"
    assert chunks(indexed_sample, "notes/crlf.md") == [
        (3, 3, "- saved on windows"),
        (4, 4, "- second line"),
    ]
    assert chunks(indexed_sample, "notes/bom.md") == [(3, 3, "- after a byte order mark")]
    assert chunks(indexed_sample, "notes/frontmatter.md") == [(7, 7, "- body")]  # properties
    assert chunks(indexed_sample, "notes/no-newline.md") == [
        (1, 1, "- last line without a newline")
    ]
    assert chunks(indexed_sample, "notes/empty.md") == []
    assert_spans_match_files(indexed_sample)
    # Skipped files are reported once per change (issue 22): not again while unchanged, and
    # nothing else happens; `vault status` lists them as skipped with the reason, not drift.
    again = index(indexed_sample, **{"index.max_file_bytes": 10_000})
    assert (again.unreadable, again.units_embedded, again.new, again.warnings) == (0, 0, 0, [])
    assert vault_files(tree_state(indexed_sample)) == before
    with Vault(indexed_sample) as vault:
        info = vault.status()
    assert info["drift"] == {"new": 0, "changed": 0, "deleted": 0}
    for relpath, reason in SKIPPED.items():
        assert reason in info["skipped"][relpath]
    # Changed (still not UTF-8): reported again, once.
    (indexed_sample / "notes/latin1.md").write_bytes(b"caf\xe9 au lait, encore\n")
    third = index(indexed_sample, **{"index.max_file_bytes": 10_000})
    assert (third.unreadable, len(third.warnings)) == (1, 1)
    assert "notes/latin1.md" in third.warnings[0]


def test_ignored_paths_are_never_indexed(
    vault_dir: Path,
    escapes: dict[str, Path],
    run_cli: Callable[..., Any],
) -> None:
    for relpath in (
        ".obsidian/workspace.md",
        ".trash/old.md",
        ".git/notes.md",
        ".hidden.md",
        "notes/.draft.md",
        "notes/foo.md~",
        "notes/~$lock.md",
        "node_modules/pkg/readme.md",
        "notes/picture.png",
        "notes/plain.txt",
    ):
        (vault_dir / relpath).parent.mkdir(parents=True, exist_ok=True)
        (vault_dir / relpath).write_text("SECRET ignored\n")
    report = index(vault_dir)
    assert indexed_paths(vault_dir) == {"MEMORY.md", "notes/real.md", "alias.md"}
    # the link to a file outside is skipped, and said so once (folder links are not entered)
    assert report.warnings == ["skipped leak.md: a symlink leading outside the vault"]
    with db(vault_dir) as conn:
        leaked = conn.execute("SELECT COUNT(*) FROM chunks WHERE text LIKE '%SECRET%'")
        assert leaked.fetchone()[0] == 0
    result = run_cli("--vault", str(vault_dir), "search", "--mode", "keyword", "SECRET", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["results"] == []


def test_partial_index_refuses_what_a_full_scan_skips(
    vault_dir: Path,
    escapes: dict[str, Path],
) -> None:
    index(vault_dir)
    with Vault(vault_dir) as vault:
        report = vault.index(
            paths=[
                "leak.md",
                "leakdir/secret.md",
                "notesdir/real.md",
                str(escapes["secret"]),
                ".obsidian/x.md",
                "../outside/x.md",
                "notes/real.md",
            ]
        )
    assert (report.new, report.unchanged, report.files) == (0, 1, 3)
    assert indexed_paths(vault_dir) == {"MEMORY.md", "notes/real.md", "alias.md"}


# -- healing ------------------------------------------------------------------------------------


def _truncate_sqlite(cache: Path) -> None:
    db_path = cache / "index.sqlite"
    os.truncate(db_path, db_path.stat().st_size // 2)


def _garbage_sqlite(cache: Path) -> None:
    db_path = cache / "index.sqlite"
    db_path.write_bytes(bytes(range(256)) * (db_path.stat().st_size // 256))


def _damage_whoosh_segment(cache: Path) -> None:
    (segment,) = (cache / "whoosh").glob("units_*.seg")  # beside it: files_*.seg
    size = segment.stat().st_size
    with segment.open("r+b") as fh:  # the middle: postings that a light check does not read
        fh.seek(size // 2)
        fh.write(b"\xff" * 512)


def _delete_whoosh(cache: Path) -> None:
    shutil.rmtree(cache / "whoosh")


def _change_schema_version(cache: Path) -> None:
    conn = sqlite3.connect(cache / "index.sqlite")
    with conn:
        conn.execute("UPDATE meta SET value='0' WHERE key='schema_version'")
    conn.close()


@pytest.mark.parametrize(
    ("damage", "announced", "reembeds"),
    [
        (_truncate_sqlite, "the index is damaged", True),
        (_garbage_sqlite, "the index is damaged (index.sqlite: file is not a database)", True),
        (_damage_whoosh_segment, "the keyword index files changed", False),
        (_delete_whoosh, "the keyword index is missing", False),
        (
            _change_schema_version,
            f"the index has schema version 0, this vault-memory uses {SCHEMA_VERSION}",
            True,
        ),
    ],
    ids=[
        "truncated-sqlite",
        "garbage-sqlite",
        "damaged-whoosh-segment",
        "whoosh-deleted",
        "schema-version",
    ],
)
def test_damage_is_repaired_with_one_warning(
    indexed_small: Path,
    tree_state: Snapshot,
    vault_warnings: Callable[[], list[str]],
    damage: Callable[[Path], None],
    announced: str,
    reembeds: bool,
) -> None:
    damage(indexed_small / ".vault")
    report = index(indexed_small)
    (warning,) = vault_warnings()
    assert warning.startswith(announced), warning
    assert warning.endswith(
        "rebuilding it from the files." if reembeds else "rebuilding it from the index."
    )
    assert report.rebuilt is not None and report.rebuilt.startswith(announced)
    assert report.units == report.embedded_units == SMALL_UNITS
    assert report.units_embedded == (SMALL_UNITS if reembeds else 0)
    assert keyword_paths(indexed_small, "ERR_LEDGER_409") == ["memory/2026-11-21.md"]
    with Vault(indexed_small) as vault:
        assert vault.search("teeth appointment", mode="semantic", fresh=False)
    # Repaired for good: the next run is a silent no-op.
    before = tree_state(indexed_small)
    again = index(indexed_small)
    assert (again.rebuilt, again.units_embedded, again.unchanged) == (None, 0, SMALL_FILES)
    assert len(vault_warnings()) == 1
    assert tree_state(indexed_small) == before


def test_deleted_cache_is_rebuilt_from_the_files(
    indexed_small: Path,
    vault_warnings: Callable[[], list[str]],
) -> None:
    shutil.rmtree(indexed_small / ".vault")
    report = index(indexed_small)
    # Indistinguishable from a vault never indexed: a plain first index, nothing to warn about.
    assert vault_warnings() == [] and report.rebuilt is None
    assert (report.new, report.units_embedded) == (SMALL_FILES, SMALL_UNITS)
    assert keyword_paths(indexed_small, "ERR_LEDGER_409") == ["memory/2026-11-21.md"]


def test_model_change_reembeds_every_unit_announced(
    indexed_small: Path,
    vault_warnings: Callable[[], list[str]],
) -> None:
    # The index as another embedding model left it (a second model needs the network).
    conn = sqlite3.connect(indexed_small / ".vault" / "index.sqlite")
    with conn:
        conn.execute("UPDATE meta SET value='other/model' WHERE key='model_id'")
        conn.execute("UPDATE embeddings SET model='other/model'")
    conn.close()
    report = index(indexed_small)
    assert vault_warnings() == [
        f"embedding model changed (other/model -> {BUNDLED_MODEL_ID}): embedding the units "
        "that have no vector from it yet."
    ]
    assert report.rebuilt == "the embedding model changed"
    assert report.units_embedded == report.embedded_units == SMALL_UNITS
    # The previous model's vectors are kept, so switching back re-embeds nothing (test_remote).
    assert {model for _, model in embedding_rows(indexed_small)} == {
        BUNDLED_MODEL_ID,
        "other/model",
    }
    assert index(indexed_small).units_embedded == 0


# -- keyword-only mode --------------------------------------------------------------------------


def test_keyword_only_without_the_model_then_catching_up(
    small_vault: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Callable[..., Any],
    vault_warnings: Callable[[], list[str]],
) -> None:
    monkeypatch.setenv(DISABLE_ENV, "1")
    report = index(small_vault)
    (warning,) = vault_warnings()
    assert f"disabled by {DISABLE_ENV}=1" in warning and "keywords only" in warning
    assert (report.units, report.units_embedded, report.embedded_units) == (SMALL_UNITS, 0, 0)
    assert report.model is None

    vault = str(small_vault)
    found = run_cli("--vault", vault, "search", "--mode", "keyword", "ERR_LEDGER_409", "--json")
    assert found.exit_code == 0, found.stderr
    assert [r["path"] for r in json.loads(found.stdout)["results"]] == ["memory/2026-11-21.md"]
    refused = run_cli("--vault", vault, "search", "--mode", "semantic", "dentist")
    assert refused.exit_code == 1
    error = refused.stderr.splitlines()[-1]  # after the model's own warning
    assert error.startswith(
        "Error: semantic search needs the embedding model, which is not available (embedding model "
    )
    assert error.endswith("Use --mode keyword or hybrid.")
    assert refused.stdout == ""

    monkeypatch.delenv(DISABLE_ENV)
    caught_up = run_cli("--vault", vault, "index", "--json")
    assert caught_up.exit_code == 0, caught_up.stderr
    data = json.loads(caught_up.stdout)
    assert (data["new"], data["units_embedded"], data["embedded_units"]) == (
        0,
        SMALL_UNITS,
        SMALL_UNITS,
    )
    assert data["model"] == BUNDLED_MODEL_ID
    semantic = run_cli("--vault", vault, "search", "--mode", "semantic", "dentist", "--json")
    assert semantic.exit_code == 0, semantic.stderr
    assert json.loads(semantic.stdout)["results"][0]["path"] == "memory/2026-11-21.md"


def test_unreadable_indexed_file_keeps_its_units(
    indexed_small: Path,
    make_unreadable: Callable[[Path], None],
    vault_warnings: Callable[[], list[str]],
) -> None:
    import builtins
    import io

    real_open, real_io_open = builtins.open, io.open
    path = indexed_small / "memory" / "2026-11-21.md"
    units = chunks(indexed_small, "memory/2026-11-21.md")
    with path.open("a", encoding="utf-8") as fh:
        fh.write("- A line nobody can read yet.\n")
    make_unreadable(path)
    report = index(indexed_small)
    assert (report.modified, report.unreadable, report.deleted) == (1, 1, 0)
    (warning,) = vault_warnings()
    assert warning.startswith("skipped memory/2026-11-21.md: cannot read")
    assert chunks(indexed_small, "memory/2026-11-21.md") == units
    assert keyword_paths(indexed_small, "ERR_LEDGER_409") == ["memory/2026-11-21.md"]
    # Readable again: the change is picked up.
    path.chmod(0o644)
    builtins.open, io.open = real_open, real_io_open
    again = index(indexed_small)
    assert (again.modified, again.unreadable, again.units_embedded) == (1, 0, 1)
    assert chunks(indexed_small, "memory/2026-11-21.md")[-1][2] == "- A line nobody can read yet."


# -- one writer at a time -----------------------------------------------------------------------

LOCK_HOLDER = """
import sys
from pathlib import Path
from vault_memory.files.fsutil import lock_file
with lock_file(Path(sys.argv[1]), "index writer", 5):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_second_writer_waits_while_readers_go_on(indexed_small: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(indexed_small / ".vault" / "write.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with Vault(indexed_small) as vault:
            with pytest.raises(LockTimeoutError) as caught:
                Index(vault.config).run(lock_timeout=0.2)
            assert str(caught.value) == (
                f"could not take the index writer lock ({indexed_small / '.vault' / 'write.lock'})"
                " within 0.2 s: another vault process is busy. Wait for it to finish and try again."
            )
            # Readers never wait, not even one that would first index a changed file.
            assert vault.search("ERR_LEDGER_409", mode="keyword", fresh=False)
            with (indexed_small / "MEMORY.md").open("a") as fh:
                fh.write("- Staging runs PostgreSQL 17.\n")
            hits = vault.search("PostgreSQL", fresh=True)
            assert hits and all("Staging" not in hit.text for hit in hits)  # as it was

        reports: list[IndexReport] = []
        writer = threading.Thread(target=lambda: reports.append(index(indexed_small)))
        writer.start()
        writer.join(timeout=0.5)
        assert writer.is_alive() and not reports  # waiting for the lock
        assert holder.stdin is not None
        holder.stdin.close()  # the holder exits and releases the lock
        writer.join(timeout=60)
        assert not writer.is_alive()
        assert reports[0].modified == 1
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


# -- `vault index` on the command line ----------------------------------------------------------

REPORT_KEYS = {
    "new",
    "modified",
    "moved",
    "deleted",
    "unchanged",
    "unreadable",
    "skipped_links",
    "files",
    "units",
    "units_embedded",
    "embedded_units",
    "model",
    "rebuilt",
    "seconds",
    "warnings",
    "pending_units",
}


def test_cli_index_json(small_vault: Path, run_cli: Callable[..., Any]) -> None:
    first = run_cli("--vault", str(small_vault), "index", "--json")
    assert first.exit_code == 0, first.stderr
    data = json.loads(first.stdout)
    assert set(data) == REPORT_KEYS
    assert data | {"seconds": 0} == {
        "new": SMALL_FILES,
        "modified": 0,
        "moved": 0,
        "deleted": 0,
        "unchanged": 0,
        "unreadable": 0,
        "skipped_links": 0,
        "files": SMALL_FILES,
        "units": SMALL_UNITS,
        "units_embedded": SMALL_UNITS,
        "embedded_units": SMALL_UNITS,
        "model": BUNDLED_MODEL_ID,
        "rebuilt": None,
        "seconds": 0,
        "warnings": [],
        "pending_units": 0,
    }
    assert isinstance(data["seconds"], float)
    noop = json.loads(run_cli("--vault", str(small_vault), "index", "--json").stdout)
    assert (noop["unchanged"], noop["units_embedded"], noop["new"]) == (SMALL_FILES, 0, 0)


def test_cli_index_rebuild(indexed_small: Path, run_cli: Callable[..., Any]) -> None:
    result = run_cli("--vault", str(indexed_small), "index", "--rebuild")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "rebuilt: requested with --rebuild"
    assert lines[1] == "4 new, 0 modified, 0 moved, 0 deleted, 0 unchanged"
    assert lines[2].startswith(f"4 files, 6 units, 6 embedded (6 new) with {BUNDLED_MODEL_ID} in ")


def test_cli_index_reports_skipped_files(indexed_small: Path, run_cli: Callable[..., Any]) -> None:
    (indexed_small / "notes" / "binary.md").write_bytes(HOSTILE["notes/binary.md"])
    result = run_cli("--vault", str(indexed_small), "index")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].endswith(", 1 skipped")
    assert result.stderr == (
        "Warning: skipped notes/binary.md: binary file (contains NUL bytes), not Markdown\n"
    )


# -- interrupted runs and folders as paths (used by `vault watch`) ----------------------------


def test_a_run_killed_while_embedding_is_finished_by_the_next_one(
    indexed_small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vault_memory.index import indexer

    (indexed_small / "notes" / "more.md").write_text(
        "# More\n\n- First new fact.\n- Second new fact.\n- Third new fact.\n"
    )
    monkeypatch.setattr(indexer, "EMBED_BATCH", 1)  # one commit per vector

    def die_after_first_vector(phase: str, done: int, total: int) -> None:
        if phase == "embedding":
            raise KeyboardInterrupt  # the process goes away between two commits

    with Vault(indexed_small) as vault, pytest.raises(KeyboardInterrupt):
        vault.index(progress=die_after_first_vector)
    with Vault(indexed_small) as vault:
        report = vault.index()  # no file changed since: only the vectors are missing
    assert report.new == report.modified == 0
    assert report.units_embedded >= 2
    assert report.embedded_units == report.units


def test_a_folder_path_stands_for_its_files(indexed_small: Path) -> None:
    (indexed_small / "notes" / "sub").mkdir()
    (indexed_small / "notes" / "sub" / "a.md").write_text("# A\n\n- alpha\n")
    (indexed_small / "notes" / "sub" / ".hidden.md").write_text("# hidden\n")
    with Vault(indexed_small) as vault:
        report = vault.index(paths=["notes/sub"])
        assert (report.new, report.deleted) == (1, 0)
        shutil.move(str(indexed_small / "notes"), str(indexed_small.parent / "notes-moved-out"))
        report = vault.index(paths=["notes"])  # gone from disk: the index knows what was in it
        assert (report.new, report.deleted) == (0, 2)
        assert vault.index(paths=[".git", "../x", ""]).unchanged == 0
        assert vault.status()["drift"] == {"new": 0, "changed": 0, "deleted": 0}


def test_symlink_loops_dangling_and_outside_links_are_skipped_with_one_warning_each(
    vault_dir: Path,
    run_cli: Callable[..., Any],
    tmp_path: Path,
) -> None:
    """`ln -s self.md notes/self.md` once made index, search, status and the MCP search tool
    exit with a RuntimeError traceback."""
    from vault_memory.agents.tools import call_tool, make_tools

    notes = vault_dir / "notes"
    notes.mkdir()
    (notes / "real.md").write_text("# Real\n\nThe loop test keeps this line searchable.\n")
    (notes / "self.md").symlink_to("self.md")  # a loop
    (notes / "gone.md").symlink_to("nowhere.md")  # dangling
    (tmp_path / "outside.md").write_text("SECRET\n")
    (notes / "out.md").symlink_to(tmp_path / "outside.md")  # leads outside
    expected = [
        "skipped notes/gone.md: a dangling symlink (its target does not exist)",
        "skipped notes/out.md: a symlink leading outside the vault",
        "skipped notes/self.md: a symlink loop",
    ]
    result = run_cli("--vault", str(vault_dir), "index", env={DISABLE_ENV: "1"})
    assert result.exit_code == 0, result.stderr
    assert [
        line.removeprefix("Warning: ") for line in result.stderr.splitlines() if "symlink" in line
    ] == expected
    assert "3 skipped" in result.stdout
    assert indexed_paths(vault_dir) == {"MEMORY.md", "notes/real.md"}

    found = run_cli(
        "--vault", str(vault_dir), "search", "loop test", "--json", env={DISABLE_ENV: "1"}
    )
    assert found.exit_code == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "notes/real.md"

    status = run_cli("--vault", str(vault_dir), "status", "--json")
    assert status.exit_code == 0, status.stderr
    assert json.loads(status.stdout)["skipped"] == {
        line.split(": ", 1)[0].removeprefix("skipped "): line.split(": ", 1)[1] for line in expected
    }

    with Vault(vault_dir) as vault:
        reply = json.loads(call_tool(make_tools(vault), "search_memory", {"query": "loop test"}))
        assert reply["results"][0]["path"] == "notes/real.md"
        assert "error" in json.loads(
            call_tool(make_tools(vault), "get_memory", {"path": "notes/self.md"})
        )
    shown = run_cli("--vault", str(vault_dir), "get", "notes/self.md")
    assert shown.exit_code == 1 and "symlink loop" in shown.stderr


# -- the keyword index written in large batches (issue 23) -------------------------------------


def _whoosh_generations(root: Path) -> tuple[int, int]:
    from whoosh import index as whoosh_index

    folder = str(root / ".vault" / "whoosh")
    return (
        whoosh_index.open_dir(folder, indexname="units").latest_generation(),
        whoosh_index.open_dir(folder, indexname="files").latest_generation(),
    )


def _many_notes(root: Path, count: int, start: int = 0) -> None:
    folder = root / "kb"
    folder.mkdir(exist_ok=True)
    for i in range(start, start + count):
        (folder / f"page-{i:04d}.md").write_text(
            f"# Page {i}\n\n- point {i} about topic {i % 13}\n- another {i}\n"
        )


def test_one_run_commits_the_keyword_index_once(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many batches of files (SQLite commits every FILE_BATCH files) are one Whoosh commit on
    each index: a large change is not written and merged segment by segment."""
    from vault_memory.index import indexer

    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    monkeypatch.setattr(indexer, "FILE_BATCH", 20)
    index(vault_dir)
    before = _whoosh_generations(vault_dir)
    _many_notes(vault_dir, 90)  # five batches
    report = index(vault_dir)
    assert report.new == 90
    assert _whoosh_generations(vault_dir) == (before[0] + 1, before[1] + 1)
    for i in range(0, 90, 7):  # and some modified: their old documents are removed
        (vault_dir / "kb" / f"page-{i:04d}.md").write_text(f"# Page {i}\n\n- rewritten {i}\n")
    (vault_dir / "kb" / "page-0001.md").unlink()
    report = index(vault_dir)
    assert (report.modified, report.deleted) == (13, 1)
    assert _whoosh_generations(vault_dir) == (before[0] + 2, before[1] + 2)
    with Vault(vault_dir) as vault:
        check = vault._index.verify()
        assert check.equal, check.differences
        assert [h.path for h in vault.search("rewritten", mode="keyword", limit=50)].count(
            "kb/page-0007.md"
        ) == 1


def test_a_run_stopped_between_batches_leaves_the_keyword_index_equal(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped after some batches (the watcher stopping) commits to Whoosh what it
    committed to SQLite: the keyword index is not marked interrupted, the next run goes on."""
    from vault_memory.index import indexer

    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    monkeypatch.setattr(indexer, "FILE_BATCH", 20)
    index(vault_dir)
    _many_notes(vault_dir, 90)

    class Stop(Exception):
        pass

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "files" and done >= 40:
            raise Stop

    with Vault(vault_dir) as vault, pytest.raises(Stop):
        vault.index(progress=progress)
    with db(vault_dir) as conn:
        dirty = conn.execute("SELECT value FROM meta WHERE key='fulltext_dirty'").fetchone()
        files = conn.execute("SELECT count(*) FROM files WHERE path LIKE 'kb/%'").fetchone()
    assert dirty == ("0",) and files == (40,)
    with Vault(vault_dir) as vault:
        check = vault._index.verify()
        assert not check.equal and not any("keyword" in d for d in check.differences)
        report = vault.index()
        assert (report.new, report.rebuilt) == (50, None)
        assert vault._index.verify().equal
