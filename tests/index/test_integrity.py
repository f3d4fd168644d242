"""Nothing a user (or the disk) does to the cache ends in a traceback or a silently
wrong answer. One integrity check (index/integrity.py) used by search, index, status and
`vault doctor`.

The damage matrix: each case damages a copy of an indexed vault, then runs `vault status`
(it must say something is wrong), `vault search` (the right hits, healed in place), `vault
index`, `vault status` (healthy again) and `vault doctor --verify` ("index equals the files").
The CLI runs in-process with `catch_exceptions=False`: a traceback fails the test. A few cases
run in the default suite, all of them under `-m slow`.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from vault_memory import Vault
from vault_memory.index.arrays import MAGIC, check_arrays

QUERY = "PostgreSQL billing"
Damage = Callable[[Path], None]


def _sql(root: Path, *statements: str) -> None:
    conn = sqlite3.connect(root / ".vault/index.sqlite")
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def _overwrite(path: Path, data: bytes, at: int = 0) -> None:
    with open(path, "r+b") as fh:
        fh.seek(at)
        fh.write(data)


def _arrays(root: Path) -> Path:
    tables = sorted((root / ".vault").glob("units-*.arrays"), key=lambda p: ".base-" not in p.name)
    assert tables, "a search writes the unit table"
    return tables[0]  # its vectors' base, the bulk of it (search/searcher.py `_save_table`)


def _toc(root: Path) -> Path:
    return next((root / ".vault/whoosh").glob("*.toc"))


def _replace_with_dir(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    path.mkdir()
    (path / "inside").write_text("x")


def _truncate(path: Path, keep: float) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(int(size * keep))


def _vault_is_a_file(root: Path) -> None:
    shutil.rmtree(root / ".vault")
    (root / ".vault").write_text("not a folder\n")


def _garbage_arrays_data(root: Path) -> None:
    path = _arrays(root)
    size = path.stat().st_size
    _overwrite(path, os.urandom(4096), at=size - 8192)


def _zero_arrays(root: Path) -> None:
    path = _arrays(root)
    size = path.stat().st_size
    _overwrite(path, b"\0" * (size - 512), at=512)


def _future_schema(root: Path) -> None:
    _sql(root, "UPDATE meta SET value='99' WHERE key='schema_version'")


def _wrong_vector_bytes(root: Path) -> None:
    _sql(
        root,
        "UPDATE embeddings SET vector=X'00010203' WHERE sha256 IN "
        "(SELECT sha256 FROM embeddings LIMIT 3)",
    )


def _dangling_symlink(root: Path) -> None:
    db = root / ".vault/index.sqlite"
    db.unlink()
    db.symlink_to(root / "nowhere.sqlite")


CASES: dict[str, Damage] = {
    "sqlite-half-truncated": lambda r: _truncate(r / ".vault/index.sqlite", 0.5),
    "sqlite-overwritten": lambda r: _overwrite(r / ".vault/index.sqlite", os.urandom(8192)),
    "sqlite-header-overwritten": lambda r: _overwrite(r / ".vault/index.sqlite", b"garbage" * 8),
    "sqlite-empty": lambda r: _truncate(r / ".vault/index.sqlite", 0),
    "sqlite-is-a-directory": lambda r: _replace_with_dir(r / ".vault/index.sqlite"),
    "sqlite-dangling-symlink": _dangling_symlink,
    "sqlite-wal-garbage": lambda r: (r / ".vault/index.sqlite-wal").write_bytes(os.urandom(5000)),
    "vault-is-a-file": _vault_is_a_file,
    "vault-deleted": lambda r: shutil.rmtree(r / ".vault"),
    "write-lock-is-a-directory": lambda r: _replace_with_dir(r / ".vault/write.lock"),
    "dream-lock-is-a-directory": lambda r: _replace_with_dir(r / ".vault/dream.lock"),
    "chunks-dropped": lambda r: _sql(r, "DROP TABLE chunks"),
    "files-dropped": lambda r: _sql(r, "DROP TABLE files"),
    "embeddings-dropped": lambda r: _sql(r, "DROP TABLE embeddings"),
    "meta-dropped": lambda r: _sql(r, "DROP TABLE meta"),
    "chunk-rows-deleted": lambda r: _sql(r, "DELETE FROM chunks"),
    "file-rows-deleted": lambda r: _sql(r, "DELETE FROM files WHERE path LIKE 'memory/%'"),
    "vectors-deleted": lambda r: _sql(r, "DELETE FROM embeddings"),
    "vector-bytes-wrong": _wrong_vector_bytes,
    "future-schema": _future_schema,
    "whoosh-toc-overwritten": lambda r: _overwrite(_toc(r), os.urandom(200)),
    "whoosh-toc-deleted": lambda r: _toc(r).unlink(),
    "whoosh-segment-deleted": lambda r: next((r / ".vault/whoosh").glob("*.seg")).unlink(),
    "whoosh-deleted": lambda r: shutil.rmtree(r / ".vault/whoosh"),
    "whoosh-is-a-file": lambda r: (
        shutil.rmtree(r / ".vault/whoosh"),
        (r / ".vault/whoosh").write_text("x"),
    ),
    "arrays-data-garbage": _garbage_arrays_data,
    "arrays-zeroed": _zero_arrays,
    "arrays-truncated": lambda r: _truncate(_arrays(r), 0.6),
    "arrays-header-garbage": lambda r: _overwrite(_arrays(r), MAGIC + os.urandom(40)),
    "arrays-not-ours": lambda r: _arrays(r).write_bytes(b"hello\n"),
    "hitlog-garbage": lambda r: (r / ".vault/hits.jsonl").write_bytes(os.urandom(300) + b"\n"),
}
# Damage that changes no answer: SQLite ignores a WAL whose checksums fail, and the hit log
# skips lines it cannot read. Status need not report these; everything else must hold.
HARMLESS = {"sqlite-wal-garbage", "hitlog-garbage"}
QUICK = [
    "sqlite-half-truncated",
    "chunks-dropped",
    "whoosh-toc-overwritten",
    "arrays-data-garbage",
    "arrays-zeroed",
    "vectors-deleted",
    "vault-is-a-file",
]


def _search(run_cli: Callable[..., Result], root: Path) -> list[tuple[str, int]]:
    result = run_cli("search", QUERY, "--json", "--limit", "5", cwd=root)
    assert result.exit_code == 0, result.output
    return [(h["path"], h["start_line"]) for h in json.loads(result.stdout)["results"]]


def _status(run_cli: Callable[..., Result], root: Path) -> dict:
    result = run_cli("status", "--json", cwd=root)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def searched_small(indexed_small: Path, run_cli: Callable[..., Result]) -> Path:
    _search(run_cli, indexed_small)  # writes the unit table, as a user's first search does
    return indexed_small


def _run_matrix(case: str, root: Path, run_cli: Callable[..., Result]) -> None:
    expected = _search(run_cli, root)
    assert expected
    CASES[case](root)
    before = _status(run_cli, root)
    assert case in HARMLESS or before["damaged"] or before["problem"], (case, before)

    hits = _search(run_cli, root)  # heals in place; keywords only until `vault index`
    assert hits, f"{case}: silently empty"
    assert {p for p, _ in hits} & {p for p, _ in expected}, (case, hits, expected)

    result = run_cli("index", cwd=root)
    assert result.exit_code == 0, result.output
    after = _status(run_cli, root)
    assert after["damaged"] == [] and after["problem"] is None, (case, after)
    assert after["embedded_units"] == after["units"] > 0
    assert _search(run_cli, root) == expected, case

    result = run_cli("doctor", "--verify", cwd=root)
    assert result.exit_code == 0, result.output
    assert "index equals the files" in result.output, result.output


@pytest.mark.parametrize("case", QUICK)
def test_damage_is_reported_healed_and_proved(
    case: str, searched_small: Path, run_cli: Callable[..., Result]
) -> None:
    _run_matrix(case, searched_small, run_cli)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(set(CASES) - set(QUICK)))
def test_damage_matrix(case: str, searched_small: Path, run_cli: Callable[..., Result]) -> None:
    _run_matrix(case, searched_small, run_cli)


def test_the_matrix_holds_at_least_25_cases() -> None:
    assert len(CASES) >= 25


# -- doctor ------------------------------------------------------------------------------------


def test_doctor_repairs_what_status_reports_and_says_what_it_did(
    searched_small: Path, run_cli: Callable[..., Result]
) -> None:
    _garbage_arrays_data(searched_small)
    _sql(
        searched_small,
        "DELETE FROM embeddings WHERE sha256 IN (SELECT sha256 FROM embeddings LIMIT 2)",
    )
    status = _status(run_cli, searched_small)
    assert any("checksum" in d for d in status["damaged"]), status
    result = run_cli("doctor", cwd=searched_small)
    assert result.exit_code == 0, result.output
    assert "fails its checksum" in result.output
    assert "2 units have no vector" in result.output
    assert _status(run_cli, searched_small)["damaged"] == []
    assert (
        check_arrays(_arrays(searched_small)) is None
        if list((searched_small / ".vault").glob("units-*.arrays"))
        else True
    )
    result = run_cli("doctor", cwd=searched_small)
    assert "nothing damaged" in result.output


def test_verify_names_the_difference(searched_small: Path, run_cli: Callable[..., Result]) -> None:
    _sql(searched_small, "UPDATE files SET sha256='0000' WHERE path='notes/renderer.md'")
    with Vault(searched_small) as vault:
        check = vault.cache.verify()
    assert not check.equal
    assert any(
        d.startswith("notes/renderer.md: the index holds another version")
        for d in check.differences
    ), check.differences
    (searched_small / "notes/extra.md").write_text("# Extra\n\nunindexed text\n")
    with Vault(searched_small) as vault:
        check = vault.cache.verify()
    assert "notes/extra.md: on disk, not in the index" in check.differences
    result = run_cli("doctor", "--verify", "--json", cwd=searched_small)
    assert result.exit_code == 0, result.output  # repaired (the two files read again), proved
    report = json.loads(result.stdout)
    assert report["verification"]["equal"] is True
    assert any(f["problem"] == "2 files differ from the index" for f in report["findings"])
    result = run_cli("doctor", "--verify", cwd=searched_small)
    assert result.exit_code == 0 and "index equals the files" in result.output, result.output
    assert "nothing damaged" in result.output


def test_units_without_vectors_under_a_complete_flag_are_found_and_embedded(
    indexed_small: Path, run_cli: Callable[..., Result]
) -> None:
    """The state a kill left before vectors were recorded with their units: units
    committed, the flag still saying every vector is there. `vault index` alone never
    repaired it; the check finds it."""
    _sql(
        indexed_small,
        "DELETE FROM embeddings WHERE sha256 IN (SELECT sha256 FROM embeddings LIMIT 2)",
    )
    status = _status(run_cli, indexed_small)
    assert status["embedded_units"] == status["units"] - 2
    result = run_cli("doctor", cwd=indexed_small)
    assert "2 units have no vector although the index says all have" in result.output
    status = _status(run_cli, indexed_small)
    assert status["embedded_units"] == status["units"]


def test_vectors_of_the_wrong_length_never_break_a_search(
    searched_small: Path, run_cli: Callable[..., Result]
) -> None:
    """The unit table is rebuilt (a file changed) while some vectors are damaged: those
    units go by keywords, the others keep their vectors, and the search answers."""
    _wrong_vector_bytes(searched_small)
    note = searched_small / "notes/renderer.md"
    note.write_text(note.read_text() + "\nIt renders PostgreSQL billing invoices too.\n")
    hits = _search(run_cli, searched_small)
    assert hits
    assert "3 vectors have the wrong length" in " ".join(
        _status(run_cli, searched_small)["damaged"]
    )
