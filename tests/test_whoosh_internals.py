"""The Whoosh internals the keyword index uses for speed (index/whoosh_internals.py), pinned
to the installed Whoosh-Reloaded: every speed-up engages with it (a Whoosh whose internals
moved would leave them off silently: the same index, slower), and what each writes or reads
is exactly what Whoosh's own writer and matchers write or read."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from vault_memory.index.fulltext import LAYOUT, FullText, documents, matching_docs
from vault_memory.index.store import Store
from vault_memory.index.whoosh_internals import FastWriter, blocks_readable, live_docs

SPEED_UPS = {
    "lengths known missing",
    "postings made quickly",
    "lengths kept in memory",
    "postings kept by term",
}


def test_the_installed_whoosh_is_a_version_pinned_in_pyproject() -> None:
    import tomllib
    from importlib.metadata import version

    from packaging.requirements import Requirement

    project = tomllib.loads(
        (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    )
    (pin,) = [Requirement(r) for r in project["project"]["dependencies"] if r.startswith("whoosh")]
    assert pin.specifier.contains(version("whoosh-reloaded")), pin
    assert pin.specifier.contains("2.7.5") and not pin.specifier.contains("2.8.0")


def test_every_speed_up_engages_with_the_pinned_whoosh(tmp_path: Path) -> None:
    fulltext = FullText(tmp_path / "whoosh")
    for ix in (fulltext.open_files(), fulltext.open()):
        writer = ix.writer()
        try:
            fast = FastWriter(writer, LAYOUT, {})
            assert fast.engaged == SPEED_UPS
            fast.finish()
            assert all("index" not in vars(field) for _, field in writer.schema.items())
        finally:
            writer.cancel()
    fulltext.close()


def test_live_docs_reads_what_whoosh_matchers_read(indexed_sample: Path, tmp_path: Path) -> None:
    """A block at a time, deleted documents left out, as the matcher's `all_ids` and the
    reader's deletions give them one by one; and the block reader is the one used."""
    from whoosh.query import Term

    docs = _sample_documents(indexed_sample)
    fulltext = FullText(tmp_path / "whoosh")
    fulltext.update([], docs)
    fulltext.update([docs[-1]["path"]], [])  # a segment with deleted documents
    with fulltext.open().searcher() as searcher:
        reader = searcher.reader()
        checked = 0
        for leaf, _ in reader.leaf_readers():
            for fieldname, text in list(leaf.all_terms())[:400]:
                word = text.decode("utf-8") if isinstance(text, bytes) else text
                matcher = leaf.postings(fieldname, text)
                want = [d for d in matcher.all_ids() if not leaf.is_deleted(d)]
                assert live_docs(leaf, fieldname, word).tolist() == want
                checked += 1
            matcher = leaf.postings("kind", "daily")
            assert blocks_readable(getattr(matcher, "child", matcher))
        assert checked > 100
        kind = matching_docs(searcher, Term("kind", "daily"))
        assert kind.tolist() == sorted(searcher.docs_for_query(Term("kind", "daily")))
    fulltext.close()


def _whoosh_contents(folder: Path) -> list[Any]:
    """Every term's postings (unit or file id, weight), every unit's field lengths and stored
    fields of both Whoosh indexes in `folder`: what a search can read of them."""
    from vault_memory.index.fulltext import FullText

    fulltext = FullText(folder)
    out: list[Any] = []
    try:
        for ix, key in ((fulltext.open(), "uid"), (fulltext.open_files(), "fid")):
            with ix.searcher() as searcher:
                reader = searcher.reader()
                ids = list(reader.column_reader(key))
                live = [d for d in range(reader.doc_count_all()) if not reader.is_deleted(d)]
                for fieldname, text in reader.all_terms():
                    matcher = reader.postings(fieldname, text)
                    if fieldname in ("text", "heading"):  # the block's length statistics
                        out.append(
                            (
                                key,
                                fieldname,
                                text,
                                matcher.block_min_length(),
                                matcher.block_max_length(),
                            )
                        )
                    found = []
                    while matcher.is_active():
                        if not reader.is_deleted(matcher.id()):
                            found.append((ids[matcher.id()], matcher.weight()))
                        matcher.next()
                    if found:
                        out.append((key, fieldname, text, sorted(found)))
                out += sorted(
                    (ids[d], f, reader.doc_field_length(d, f))
                    for d in live
                    for f in ("text", "heading")
                    if key == "uid"
                )
                out += sorted((ids[d], sorted(reader.stored_fields(d).items())) for d in live)
    finally:
        fulltext.close()
    return out


def _segment_files(folder: Path) -> dict[tuple[str, int, str], bytes]:
    """The bytes of every file of every segment of both Whoosh indexes in `folder` (inside
    the compound segment file), named by index, segment and extension (segment names are
    random)."""
    from whoosh import index
    from whoosh.filedb.filestore import FileStorage

    storage = FileStorage(str(folder))
    out: dict[tuple[str, int, str], bytes] = {}
    for name in ("units", "files"):
        segments = index.open_dir(str(folder), indexname=name)._read_toc().segments
        for number, segment in enumerate(segments):
            assert segment.is_compound()
            compound = segment.open_compound_file(storage)
            try:
                for sub in compound.list():
                    with contextlib.closing(compound.open_file(sub)) as f:
                        out[name, number, sub.replace(segment.segment_id(), "")] = f.read()
            finally:
                compound.close()
    return out


def _run_written(folder: Path, docs: list[dict[str, Any]], cut: int = 20) -> None:
    from vault_memory.index.fulltext import FullText

    quick = FullText(folder)
    writer = quick.writer()
    writer.add(docs[:cut])
    writer.add(docs[cut:])
    writer.commit()
    quick.close()


def _sample_documents(indexed: Path) -> list[dict[str, Any]]:

    store = Store(indexed / ".vault" / "index.sqlite")
    try:
        return list(documents(store.fulltext_rows(), store.properties_of))
    finally:
        store.close()


@pytest.mark.parametrize("in_memory", [None, 50])
def test_the_run_writer_writes_the_segment_whoosh_writes_byte_for_byte(
    indexed_sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_memory: int | None
) -> None:
    """The run writer keeps postings by term and writes each term's blocks itself
    (whoosh_internals._Postings, _TermBlocks); past POSTINGS_IN_MEMORY it hands them to
    Whoosh's pool. Either way every file of the segment is the one Whoosh's own writer
    makes."""
    from vault_memory.index import fulltext, whoosh_internals

    docs = _sample_documents(indexed_sample)
    plain = fulltext.FullText(tmp_path / "plain")
    plain.update([], docs)  # Whoosh's writer, Whoosh's analysis
    plain.close()
    if in_memory is not None:
        monkeypatch.setattr(whoosh_internals, "POSTINGS_IN_MEMORY", in_memory)
    spilled: list[bool] = []
    spill = whoosh_internals._Postings.spill

    def spill_seen(self: Any) -> None:
        spilled.append(True)
        spill(self)

    monkeypatch.setattr(whoosh_internals._Postings, "spill", spill_seen)
    _run_written(tmp_path / "quick", docs)
    made = _segment_files(tmp_path / "quick")
    assert made == _segment_files(tmp_path / "plain")
    assert {ext for *_, ext in made} >= {".pst", ".trm"}
    assert bool(spilled) is (in_memory is not None)


def test_the_run_writer_merges_segments_as_whoosh_does(
    indexed_sample: Path, tmp_path: Path
) -> None:
    """A run's commit that merges the index's segments into its own (a rebuild optimises;
    Whoosh's merge policy adds their postings to the writer's pool: here, `_Postings.add`)
    writes the segment Whoosh's own writer writes."""
    from vault_memory.index import fulltext

    docs = _sample_documents(indexed_sample)
    plain = fulltext.FullText(tmp_path / "plain")
    quick = fulltext.FullText(tmp_path / "quick")
    for part in (docs[:30], docs[30:60]):  # two segments each
        plain.update([], part)
        writer = quick.writer()
        writer.add(part)
        writer.commit()
    for ix, mine in ((plain.open_files(), True), (plain.open(), False)):
        with ix.writer() as raw:
            raw.optimize = True
            for doc in docs[60:]:
                if ("fid" in doc) is mine:
                    raw.add_document(**doc)
    plain.close()
    writer = quick.writer()
    writer.add(docs[60:])
    writer.commit(optimize=True)
    quick.close()
    made = _segment_files(tmp_path / "quick")
    assert {(name, number) for name, number, _ in made} == {("units", 0), ("files", 0)}
    assert made == _segment_files(tmp_path / "plain")


def test_the_run_writer_makes_the_index_whoosh_itself_makes(
    indexed_sample: Path, tmp_path: Path
) -> None:
    """The keyword index written by a run (terms from `terms_of`, repeated values turned into
    postings once, lengths kept in memory) holds exactly what Whoosh's own writer and
    analyzer make of the same documents."""
    from vault_memory.index.fulltext import FullText

    store = Store(indexed_sample / ".vault" / "index.sqlite")
    try:
        docs = list(documents(store.fulltext_rows(), store.properties_of))
    finally:
        store.close()
    assert len(docs) > 50
    plain = FullText(tmp_path / "plain")
    plain.update([], docs)  # Whoosh's writer, Whoosh's analysis
    plain.close()
    quick = FullText(tmp_path / "quick")
    writer = quick.writer()
    writer.add(docs[:20])
    writer.add(docs[20:])
    writer.commit()
    quick.close()
    made = _whoosh_contents(tmp_path / "quick")
    assert made == _whoosh_contents(tmp_path / "plain")
    assert any(row[1] == "text" for row in made) and any(row[1] == "heading" for row in made)
