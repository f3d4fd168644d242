"""The unit table patched by the files that changed (search/table.py `UnitTable.patch`) equals
the table built whole, array for array, after random edits, additions, deletions, renames and
moves between scopes, on a real index; in memory and from the table a process saved."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vault_memory import Vault
from vault_memory.search.table import VECTOR_ARRAYS, UnitTable

WORDS = (
    "billing",
    "ledger",
    "refund",
    "cutover",
    "Jonas",
    "Priya",
    "PostgreSQL",
    "Kafka",
    "invoice",
    "renderer",
    "fonts",
    "retry",
    "budget",
    "standup",
    "deploy",
    "staging",
    "rollback",
    "Zoë",
    "Jürgen",
    "naïve",
    "café",
    "ERR_LEDGER_409",
    "why",
    "what",
    "decided",
    "moved",
    "approved",
    "owns",
)
FOLDERS = (
    "notes",
    "memory",
    "scopes/alpha/notes",
    "scopes/alpha/memory",
    "scopes/beta/notes",
    "scopes/alpha/gamma/notes",
)


def same_arrays(got: UnitTable, want: UnitTable) -> None:
    """Equal array for array; the vectors row for row, however each table holds them (a
    patched table appends its new rows' vectors: search/table.py `VECTOR_ARRAYS`)."""
    kept = {name: array for name, array in got.arrays.items() if name not in VECTOR_ARRAYS}
    wanted = {name: array for name, array in want.arrays.items() if name not in VECTOR_ARRAYS}
    assert sorted(kept) == sorted(wanted)
    wanted["matrix"], kept["matrix"] = want.matrix, got.matrix
    for name, array in wanted.items():
        other = kept[name]
        assert other.dtype == array.dtype, name
        assert other.shape == array.shape, name
        assert np.array_equal(other, array), name


def note_text(rnd: random.Random) -> str:
    lines = [f"# {rnd.choice(WORDS).title()} notes", ""]
    for _ in range(rnd.randint(0, 3)):
        lines.append(f"## {' '.join(rnd.sample(WORDS, rnd.randint(1, 3)))}")
        chat = rnd.random() < 0.5  # a chat: a speaker often sends several messages in a row
        speaker = rnd.choice(["Maya", "Jonas", "Ops"])
        for _ in range(rnd.randint(0, 9 if chat else 4)):
            if not chat or rnd.random() < 0.4:
                speaker = rnd.choice(["Maya", "Jonas", "Ops"])
            words = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 9)))
            lines.append(f"- {speaker}: {words}{rnd.choice(['.', '?', ' #decision', ''])}")
        lines.append("")
    return "\n".join(lines)


def random_step(root: Path, rnd: random.Random, made: list[int]) -> str:
    """One random change to the vault's files; returns what it did."""
    files = sorted(
        p
        for p in root.rglob("*.md")
        if ".vault" not in p.parts and p.name != "MEMORY.md" and "dreams" not in p.parts
    )
    kind = rnd.choice(
        ["edit", "edit", "append", "add", "add", "delete", "rename", "move", "empty", "same"]
    )
    if kind in ("add",) or not files:
        made[0] += 1
        path = root / rnd.choice(FOLDERS) / f"n{made[0]}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(rnd), encoding="utf-8")
        return f"add {path.relative_to(root)}"
    path = rnd.choice(files)
    if kind == "edit":
        path.write_text(note_text(rnd), encoding="utf-8")
    elif kind == "append":
        with path.open("a", encoding="utf-8") as out:
            out.write(f"\n- {' '.join(rnd.sample(WORDS, 4))}\n")
    elif kind == "delete":
        path.unlink()
    elif kind == "rename":
        made[0] += 1
        path.rename(path.with_name(f"r{made[0]}.md"))
    elif kind == "move":  # into another folder, often another scope
        made[0] += 1
        target = root / rnd.choice(FOLDERS) / f"m{made[0]}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        path.rename(target)
    elif kind == "empty":
        path.write_text("", encoding="utf-8")
    else:  # the same bytes again: a new mtime, no new units
        path.write_bytes(path.read_bytes())
    return f"{kind} {path.relative_to(root)}"


@pytest.fixture
def patches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows each patch of a table replaced (so a test knows the patch ran)."""
    calls: list[int] = []
    patch = UnitTable.patch

    def counted(self: UnitTable, changed: Any, rows: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(rows))
        return patch(self, changed, rows, *args, **kwargs)

    monkeypatch.setattr(UnitTable, "patch", counted)
    return calls


def builds() -> int:
    return BUILDS[0]


BUILDS = [0]


@pytest.fixture(autouse=True)
def _count_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    build = UnitTable.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[UnitTable], *args: Any, **kwargs: Any) -> UnitTable:
        BUILDS[0] += 1
        return build(cls, *args, **kwargs)

    monkeypatch.setattr(UnitTable, "build", classmethod(counted))


def rebuilt(vault: Vault, model: str | None) -> UnitTable:
    store = vault.cache.store
    rows, marks = store.unit_rows_and_marks(model)
    dims = int(store.get_meta("dims", "384") or 384)
    return UnitTable.build(rows, dims, vault.searcher.settings.windows, marks)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_patched_table_equals_a_rebuilt_one(
    indexed_small: Path, seed: int, patches: list[int]
) -> None:
    rnd = random.Random(seed)
    made = [0]
    for _ in range(3):  # scopes and more files to start from
        random_step(indexed_small, random.Random(rnd.random()), made)
    turns = 0  # the most windows of turns a table held (`table._turn_windows`)
    with Vault(indexed_small) as vault:
        vault.index()
        for mode in ("hybrid", "keyword"):
            vault.searcher.table(vault.searcher.model_for(mode))
        for step in range(8):
            done = [random_step(indexed_small, rnd, made) for _ in range(rnd.randint(1, 3))]
            vault.index()
            for mode in ("hybrid", "keyword"):
                model = vault.searcher.model_for(mode)
                built = builds()
                table = vault.searcher.table(model)
                assert builds() == built, (step, done)  # patched (or unchanged), not built
                same_arrays(table, rebuilt(vault, model))
                turns = max(turns, len(table.arrays["t3_len"]))
    assert any(patches)
    assert turns


def test_a_new_process_patches_the_saved_table(indexed_small: Path, patches: list[int]) -> None:
    with Vault(indexed_small) as vault:
        vault.search("renderer fonts")  # saves the table
    (indexed_small / "notes" / "renderer.md").write_text(
        "# Renderer\n\nThe renderer needs fonts-dejavu now.\n", encoding="utf-8"
    )
    (indexed_small / "memory" / "2026-11-20.md").unlink()
    with Vault(indexed_small) as vault:
        hits = vault.search("which fonts does the renderer need")
        assert patches == [1]  # the renderer's one unit; the deleted log's went out
        assert "dejavu" in hits[0].text
        model = vault.searcher.model_for("hybrid")
        same_arrays(vault.searcher.table(model), rebuilt(vault, model))
    with Vault(indexed_small) as vault:  # the patched table was saved: mapped as it is
        vault.search("which fonts does the renderer need")
        assert patches == [1]


def test_units_that_get_their_vectors_later_are_patched_in(
    indexed_small: Path, patches: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file indexed without its vectors (the model busy or failing) is searched by keywords;
    when its vectors arrive, its rows are patched though the file did not change."""
    path = indexed_small / "notes" / "late.md"
    path.write_text("# Late\n\n- The late note about the cutover.\n", encoding="utf-8")
    with Vault(indexed_small) as vault:
        vault.cache.run(paths=["notes/late.md"], embed_repairs=False)
        store = vault.cache.store
        model = store.get_meta("model_id")
        with store.transaction() as conn:  # as if the embedding had failed
            conn.execute(
                "DELETE FROM embeddings WHERE sha256 IN (SELECT c.sha256 FROM chunks c"
                " JOIN files f ON f.id = c.file_id WHERE f.path = 'notes/late.md')"
            )
        first = vault.searcher.table(model)
        row = int(first.positions(first.ids[first.arrays["vectored"] == 0][:1])[0])
        assert not first.matrix[row].any()
        vault.index()  # embeds the missing vectors
        second = vault.searcher.table(model)
        assert second.matrix[int(second.positions([int(first.ids[row])])[0])].any()
        same_arrays(second, rebuilt(vault, model))
    assert patches and patches[-1] == 1


def test_a_search_after_an_edit_embeds_with_the_query_encoder(
    indexed_small: Path, loaded_embedder: Any
) -> None:
    """The few units of a search's index run are embedded by the light query encoder (no
    fastembed import, no second session of the model), to fastembed's vectors."""
    line = "The renderer also needs fonts-dejavu-core for Cyrillic invoices."
    path = indexed_small / "notes" / "renderer.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("WeasyPrint 63.1", "WeasyPrint 64")
        + f"\n{line}\n",
        encoding="utf-8",
    )
    with Vault(indexed_small) as vault:
        hits = vault.search("Cyrillic invoices")
        assert "Cyrillic" in hits[0].text
        assert vault.cache._embedder is None  # the full embedder was never loaded
        store = vault.cache.store
        sha, text = store.conn.execute(
            "SELECT sha256, text FROM chunks WHERE text LIKE '%Cyrillic%'"
        ).fetchone()
        stored = store.conn.execute(
            "SELECT vector FROM embeddings WHERE sha256 = ? AND model = ?",
            (sha, store.get_meta("model_id")),
        ).fetchone()[0]
        orphans = store.conn.execute(
            "SELECT count(*) FROM embeddings e WHERE NOT EXISTS"
            " (SELECT 1 FROM chunks c WHERE c.sha256 = e.sha256)"
        )
        assert orphans.fetchone()[0] == 0  # the old line's vector went with it
    got = np.frombuffer(stored, dtype=np.float32)
    want = loaded_embedder.embed([text])[0]
    assert float(got @ want) > 0.9999


def test_other_windows_make_a_new_table(indexed_small: Path) -> None:
    """A table in memory is patched only for the window sizes it was made with."""
    import dataclasses

    with Vault(indexed_small) as vault:
        searcher = vault.searcher
        model = searcher.model_for("hybrid")
        searcher.table(model)
        (indexed_small / "notes" / "renderer.md").write_text(
            "# Renderer\n\n- Fonts.\n", encoding="utf-8"
        )
        vault.index()
        searcher.settings = dataclasses.replace(searcher.settings, windows=(2,))
        table = searcher.table(model)
        assert list(table.windows) == [2]
        same_arrays(table, rebuilt(vault, model))


def test_a_few_files_run_reports_the_index_counts(indexed_small: Path) -> None:
    """A run over a few files takes its totals from the counts its transactions recorded."""
    (indexed_small / "notes" / "more.md").write_text("# More\n\n- one\n- two\n", encoding="utf-8")
    with Vault(indexed_small) as vault:
        report = vault.cache.run(paths=["notes/more.md"])
        totals = vault.cache.store.counts(vault.cache.model_id)
    assert report.new == 1 and report.units_embedded == 2
    assert (report.files, report.units, report.embedded_units) == (
        totals["files"],
        totals["units"],
        totals["embedded_units"],
    )


QUERIES = (
    "billing ledger refund",
    "who owns the Kafka cutover?",
    "Jonas decided to deploy",
    "ERR_LEDGER_409",
    "naïve café budget",
    "what did Priya approve?",
)


def hits_with(vault: Vault, table: UnitTable, mode: str) -> list[list[dict[str, Any]]]:
    """The hits of every query when the searcher holds `table`."""
    searcher = vault.searcher
    searcher.table(searcher.model_for(mode))  # the version it is kept under
    searcher._table, searcher._hidden = table, {}
    return [
        [h.to_dict() for h in vault.search(q, mode=mode, fresh=False, limit=8)] for q in QUERIES
    ]


def same_hits(a: list[list[dict[str, Any]]], b: list[list[dict[str, Any]]]) -> bool:
    """The same hits in the same order, their scores equal to within 2e-4: a patched table's
    arrays equal a rebuilt one's, but a matrix product over a mapped file and over one in
    memory may sum in another order (BLAS kernels follow the alignment), and a 1e-9
    difference can round to either side of the 4th place `to_dict` keeps."""

    def close(x: float, y: float) -> bool:
        return abs(x - y) <= 2e-4

    def plain(hit: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in hit.items() if k not in ("score", "scores")}

    return len(a) == len(b) and all(
        len(ha) == len(hb)
        and all(
            plain(x) == plain(y)
            and close(x["score"], y["score"])
            and x["scores"].keys() == y["scores"].keys()
            and all(close(x["scores"][k], y["scores"][k]) for k in x["scores"])
            for x, y in zip(ha, hb, strict=True)
        )
        for ha, hb in zip(a, b, strict=True)
    )


@pytest.mark.parametrize(
    ("seed", "appended_most"),
    [
        (5, 3),
        pytest.param(4, 4096, marks=pytest.mark.slow),  # the scale case: 4,096 rows appended
        pytest.param(6, 0, marks=pytest.mark.slow),
    ],
)
def test_saved_patches_give_a_rebuilds_hits(
    indexed_small: Path,
    seed: int,
    appended_most: int,
    patches: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Random edits, each searched by a new process (a Vault of its own): it maps the table
    the last one saved, patches it (appending the new rows' vectors) and saves it; hits and
    arrays equal those of a table built whole. A small bound makes it compact on the way."""
    from vault_memory.search import table as table_module

    monkeypatch.setattr(table_module, "APPENDED_MOST", appended_most)
    monkeypatch.setattr(table_module, "APPENDED_SHARE", 10**9)
    rnd = random.Random(seed)
    made = [0]
    with Vault(indexed_small) as vault:
        vault.search("warm", fresh=True)
    bases = set()
    for step in range(6):
        done = [random_step(indexed_small, rnd, made) for _ in range(rnd.randint(1, 2))]
        with Vault(indexed_small) as vault:
            vault.search("after the edit")  # the search's own index run, then the table
            for mode in ("hybrid", "keyword"):
                model = vault.searcher.model_for(mode)
                patched = vault.searcher.table(model)
                if model:
                    bases.add(patched.base_id)
                whole = rebuilt(vault, model)
                same_arrays(patched, whole)
                assert same_hits(hits_with(vault, patched, mode), hits_with(vault, whole, mode)), (
                    step,
                    done,
                )
    assert patches
    if appended_most == 4096:
        assert len(bases) == 1  # patched by appending: the base of the first save throughout
    else:
        assert len(bases) > 1  # compacted past the bound: a new base now and then
    names = sorted(p.name for p in (indexed_small / ".vault").glob("units-vectors.base-*"))
    assert len([n for n in names if n.endswith(".arrays")]) == 1  # the old bases removed


@pytest.mark.parametrize("damage", ["base gone", "base damaged", "table names another base"])
def test_a_table_whose_vectors_are_lost_is_made_anew(
    indexed_small: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A crash or a hand between the two files of a saved table (its base missing, damaged,
    or another than the one it names) is found by the next reader, which builds the table
    from the index: the same hits as before."""
    (indexed_small / "notes" / "renderer.md").write_text(
        "# Renderer\n\n- The renderer needs fonts-dejavu now.\n", encoding="utf-8"
    )
    with Vault(indexed_small) as vault:
        before = [h.to_dict() for h in vault.search("which fonts does the renderer need")]
    cache = indexed_small / ".vault"
    (base,) = cache.glob("units-vectors.base-*.arrays")
    if damage == "base gone":
        base.unlink()
    elif damage == "base damaged":
        data = bytearray(base.read_bytes())
        data[-100] ^= 0xFF
        base.write_bytes(bytes(data))
        for ok in cache.glob("*.ok"):
            ok.unlink()
    else:
        base.rename(base.with_name("units-vectors.base-0123456789ab.arrays"))
    built = builds()
    with Vault(indexed_small) as vault:
        again = [h.to_dict() for h in vault.search("which fonts does the renderer need")]
    assert builds() == built + 1 and again == before
    assert (damage != "base damaged") or "damaged" in caplog.text


def synthetic_rows(
    rnd: random.Random, files: dict[int, tuple[str, int]], next_id: list[int], dims: int
) -> dict[int, list[Any]]:
    """Units for each file (file id -> (scope, version)): terms from a small shared pool and
    some of the file's own version (terms that come and go with it), a few headings."""
    out: dict[int, list[Any]] = {}
    for file_id, (scope, version) in files.items():
        units = []
        for ordinal in range(rnd.randint(0, 5)):
            next_id[0] += 1
            words = rnd.sample(WORDS, rnd.randint(0, 4)) + [
                f"only{file_id}v{version}" for _ in range(rnd.randint(0, 2))
            ]
            terms = " ".join(w.lower() for w in words)
            vector = (
                np.asarray([rnd.random() for _ in range(dims)], dtype=np.float32).tobytes()
                if rnd.random() < 0.9
                else None
            )
            units.append(
                (
                    next_id[0],
                    file_id,
                    rnd.choice(["", "# A", "# B"]),
                    "2026-11-0" + str(rnd.randint(1, 9)) if ordinal % 2 else None,
                    1.0,
                    vector,
                    1,
                    terms,
                    " ".join(words) or "-",
                    scope,
                )
            )
        out[file_id] = units
    return out


def ordered(units: dict[int, list[Any]], files: dict[int, tuple[str, int]]) -> list[Any]:
    """The rows as the store gives them: by scope, then file id, then order in the file."""
    return [
        row for file_id in sorted(units, key=lambda f: (files[f][0], f)) for row in units[file_id]
    ]


@pytest.mark.parametrize("bounds", [(8, 2048, 8), (0, 0, 0)])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_patch_of_terms_that_come_and_go_equals_a_build(
    monkeypatch: pytest.MonkeyPatch, seed: int, bounds: tuple[int, int, int]
) -> None:
    """Straight on `UnitTable`: files edited, added and removed, terms added to and dropped
    from the vocabulary (or none: the vocabulary kept), many runs of rows shifted (with the
    bounds 0, the kept rows are renumbered by lookup, postings copied through masks and those
    of dropped rows found by lookup, not by comparing with the bounds of their runs)."""
    from vault_memory.search import table as table_module

    monkeypatch.setattr(table_module, "MOST_MOVES", bounds[0])
    monkeypatch.setattr(table_module, "MOST_PIECES", bounds[1])
    monkeypatch.setattr(table_module, "MOST_DROPPED_RUNS", bounds[2])
    rnd = random.Random(seed)
    dims, windows, next_id = 4, [2, 3], [0]
    files = {f: (rnd.choice(["", "org/a", "org/b"]), 0) for f in range(1, 30)}
    units = synthetic_rows(rnd, files, next_id, dims)
    marks = {f: version for f, (_, version) in files.items()}
    table = UnitTable.build(ordered(units, files), dims, windows, marks)
    for _ in range(6):
        changed = rnd.sample(sorted(files), rnd.randint(1, 8))
        for file_id in changed:
            if rnd.random() < 0.2:
                del files[file_id], units[file_id]
            else:
                files[file_id] = (files[file_id][0], files[file_id][1] + 1)
        for _ in range(rnd.randint(0, 2)):
            new_file = max(files, default=0) + 100
            files[new_file] = (rnd.choice(["", "org/a", "org/c"]), 0)
            changed.append(new_file)
        now = {f: files[f] for f in changed if f in files}
        units.update(synthetic_rows(rnd, now, next_id, dims))
        marks = {f: version for f, (_, version) in files.items()}
        rows = ordered({f: units[f] for f in now}, files)
        table = table.patch(changed, rows, dims, marks)
        same_arrays(table, UnitTable.build(ordered(units, files), dims, windows, marks))
        for field in ("tx", "hd", "lb"):  # each scope's field length: the sum of its rows'
            assert np.array_equal(
                table.arrays[f"{field}_scope_len"],
                np.bincount(
                    table.scope_codes,
                    weights=table.arrays[f"{field}_count"],
                    minlength=len(table.scope_names),
                ),
            )


def narrow(table: UnitTable) -> dict[str, str]:
    """The dtype of each array that numbers rows, sections, windows, days or lines."""
    names = ["section", "order", "line_counts", "day_numbers", "told", "vec_rows"] + [
        name for name in table.arrays if name.startswith("w") and not name.endswith("_norm")
    ]
    return {name: str(table.arrays[name].dtype) for name in names if name in table.arrays}


def test_row_numbers_are_int32_built_and_patched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows, sections, windows, day ordinals and line counts are held as int32 (half the bytes
    a patch copies and saves) in a built table and a patched one, whose vectors' rows too;
    a line count past int32 is capped, not wrapped; a table of more rows is refused."""
    from vault_memory.search import table as table_module

    rnd = random.Random(7)
    dims, windows, next_id = 4, [2, 3], [0]
    files = {f: (rnd.choice(["", "org/a"]), 0) for f in range(1, 12)}
    units = synthetic_rows(rnd, files, next_id, dims)
    first = next(f for f in sorted(units) if units[f])
    units[first][0] = (*units[first][0][:6], 2**40, *units[first][0][7:])
    table = UnitTable.build(ordered(units, files), dims, windows)
    got = narrow(table)
    assert len(got) == 5 + len(windows) + 2 * sum(windows)  # w{k}_len, _rows{i}, _wins{i}
    assert set(got.values()) == {"int32"}
    assert int(table.line_counts.max()) == 2**31 - 1
    assert int(table.line_counts[table.positions([units[first][0][0]])[0]]) == 2**31 - 1
    files[first] = (files[first][0], 1)
    units.update(synthetic_rows(rnd, {first: files[first]}, next_id, dims))
    patched = table.patch([first], ordered({first: units[first]}, files), dims)
    got = narrow(patched)
    assert "vec_rows" in got and set(got.values()) == {"int32"}
    same_arrays(patched, UnitTable.build(ordered(units, files), dims, windows))
    assert patched.positions(patched.ids[:1]).dtype == np.int64  # as before: rows or -1
    monkeypatch.setattr(table_module, "MOST_ROWS", 3)
    with pytest.raises(ValueError, match="at most 3 rows"):
        UnitTable.build(ordered(units, files), dims, windows)
