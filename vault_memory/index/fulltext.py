"""Whoosh (whoosh-reloaded) index over the same units as SQLite, in `.vault/whoosh/`.

Stemming analyzer with a full English stop list (Whoosh's default list keeps "what", "did",
"how", which flood question queries), and OR grouping at query time: natural questions share
few words with their answers, so AND finds almost nothing.

Ranking scores come from the unit table's postings (search/table.py); what Whoosh does for a
query is select: the fields of the search operators (`tag:`, `[property:value]`, `path:`,
`file:`, `kind:`, `date:`, `scope:`, words to exclude or require) are fields of this index,
and `unit_ids` gives the units a filter query matches (search/query.py parses it).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .rows import FulltextRow, Property
from .whoosh_internals import FastWriter, Layout, lengths_known_missing, live_docs

T = TypeVar("T")

INDEX_NAME = "units"
FILES_INDEX = "files"  # in the same folder: one document a file (files_schema)
BM25_K1 = 1.2
BM25_B = 0.5  # units are short and of similar length


class FullTextDamaged(Exception):
    """Whoosh could not read its index (a damaged table of contents or segment)."""


def _guarded(read: Callable[[], T]) -> T:
    """`read()`, with Whoosh's errors on damaged files turned into `FullTextDamaged`. Whoosh
    leaves a file open when it fails that way; it is closed here, without the ResourceWarning
    its collection would raise (the caller rebuilds the index)."""
    import gc
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            return read()
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
        gc.collect()
    raise FullTextDamaged(problem)


@functools.cache
def analyzer() -> Any:
    """The keyword index's analyzer: exactly `terms_of` (a Whoosh tokenizer, index/analysis.py,
    imported only where an index is written or opened)."""
    from .analysis import Terms

    return Terms()


#: The terms of the list fields (tags, properties, path and name parts) are given one per line.
LIST_FIELD = r"[^\n]+"


def schema() -> Any:
    """The units' index: their text and heading, and the fields a unit has of its own."""
    from whoosh.columns import NumericColumn
    from whoosh.fields import COLUMN, ID, IDLIST, STORED, TEXT, Schema

    ana = analyzer()
    return Schema(
        # Only read back from hits, never searched: a NUMERIC field would index 16 terms per
        # unit, about a third of the keyword index's build time (bench/index.py).
        id=STORED(),
        # The same id as a column: a filter's document numbers map to units in one read.
        uid=COLUMN(NumericColumn("q")),
        path=ID(stored=False),
        text=TEXT(analyzer=ana, phrase=False),
        heading=TEXT(analyzer=ana, phrase=False),
        date=ID(),
        kind=ID(),
        tag=IDLIST(expression=LIST_FIELD),  # the unit's own #tags, nested ones expanded
    )


def files_schema() -> Any:
    """The files' index (one document a file, `FILES_INDEX`): what holds for every unit of a
    file. Kept apart from the units' so that a note's properties, path and name parts are
    indexed once, not once per unit (bench/obsidian.py), and the units' BM25 statistics stay
    those of units alone."""
    from whoosh.columns import NumericColumn
    from whoosh.fields import COLUMN, ID, IDLIST, Schema

    return Schema(
        fid=COLUMN(NumericColumn("q")),  # the store's files.id
        path=ID(stored=False),
        scope=ID(),
        tag=IDLIST(expression=LIST_FIELD),  # the note's tags (obsidian.tag_terms)
        prop=IDLIST(expression=LIST_FIELD),  # `name` and `name:word` (obsidian.property_terms)
        pathpart=IDLIST(expression=LIST_FIELD),  # see path_parts
        filename=IDLIST(expression=LIST_FIELD),  # see name_parts
    )


def path_parts(relpath: str) -> list[str]:
    """The path from each of its folders on, and each run of folders: `path:X` matches a file
    when one of these starts with X (lower-case): `a/b/c.md` -> a/b/c.md, a/, a/b/, b/c.md,
    b/, c.md."""
    parts = relpath.lower().split("/")
    found: dict[str, None] = {}
    for first in range(len(parts)):
        found.setdefault("/".join(parts[first:]), None)
        for end in range(first + 1, len(parts)):
            found.setdefault("/".join(parts[first:end]) + "/", None)
    return list(found)


_WORD_START = re.compile(r"(?:^|(?<=[\s_.\-]))[^\s_.\-]")


def name_parts(relpath: str) -> list[str]:
    """The file name from each of its words on: `file:X` matches a file when one of these
    starts with X (lower-case): `Priya Raman.md` -> priya raman.md, raman.md, md."""
    name = relpath.rsplit("/", 1)[-1].lower()
    return list(dict.fromkeys(name[m.start() :] for m in _WORD_START.finditer(name)))


def documents(
    rows: Iterable[FulltextRow],
    properties: Callable[[list[int]], dict[int, list[Property]]],
) -> Iterator[dict[str, Any]]:
    """The keyword index's documents for units given as a backend's `fulltext_rows` gives
    them (the rows of a file together), each file's own document (with a "fid") before its
    units'; `properties(file ids)` gives the properties of those files (`properties_of`)."""
    from ..files import obsidian

    property_terms, tag_terms = obsidian.property_terms, obsidian.tag_terms

    pending: list[FulltextRow] = []
    seen: set[int] = set()  # files whose document was given
    for row in rows:
        pending.append(row)
        if len(pending) >= 2000:
            yield from _documents(pending, properties, property_terms, tag_terms, seen)
            pending = []
    yield from _documents(pending, properties, property_terms, tag_terms, seen)


def _documents(
    rows: list[Any], properties: Any, property_terms: Any, tag_terms: Any, seen: set[int]
) -> Iterator[dict[str, Any]]:
    props = properties(sorted({row[1] for row in rows} - seen)) if rows else {}
    for uid, file_id, path, text, heading, date, kind, unit_tags, note_tags, scope in rows:
        if file_id not in seen:  # the file's own document (it holds a "fid")
            seen.add(file_id)
            fdoc: dict[str, Any] = {
                "fid": file_id,
                "path": path,
                "scope": scope or "/",
                "pathpart": "\n".join(path_parts(path)),
                "filename": "\n".join(name_parts(path)),
            }
            note = tag_terms(note_tags.split())
            if note:
                fdoc["tag"] = "\n".join(note)
            found = property_terms(props.get(file_id, ()))
            if found:
                fdoc["prop"] = "\n".join(found)
            yield fdoc
        doc: dict[str, Any] = {
            "id": uid,
            "uid": uid,
            "path": path,
            "text": text,
            "heading": heading,
            "kind": kind,
        }
        tags = tag_terms(unit_tags.split()) if unit_tags else []
        if tags:
            doc["tag"] = "\n".join(tags)
        if date:
            doc["date"] = date
        yield doc


_UNIT_FIELDS = {"path", "text", "heading", "date", "kind", "tag"}  # searched in `schema`
_FILE_FIELDS = {"path", "scope", "tag", "prop", "pathpart", "filename"}  # in `files_schema`


def _query_fields(query: Any) -> set[str]:
    return {leaf.field() for leaf in query.leaves()}


def _column(searcher: Any, name: str) -> Any:
    import numpy as np

    reader = searcher.reader().column_reader(name)
    return np.fromiter(reader, dtype=np.int64, count=searcher.doc_count_all())


def matching_docs(searcher: Any, query: Any) -> Any:
    """The document numbers a query of terms (Term, Prefix, TermRange, And/Or of them) matches,
    as a sorted numpy array. Whoosh's `docs_for_query` yields them one by one through its
    matchers (about 4 us a document: 40 ms for `kind:daily` at 10k units); this reads the same
    postings a block (up to 128 documents) at a time and combines terms with numpy. Other
    queries go through `docs_for_query`."""
    import numpy as np
    from whoosh import query as q

    reader = searcher.reader()
    node = query.simplify(reader)  # a Prefix or TermRange: the Or of the terms it covers
    if node is q.NullQuery or isinstance(node, type(q.NullQuery)):
        return np.zeros(0, dtype=np.int64)
    if isinstance(node, q.Term):
        parts = [
            live_docs(leaf, node.fieldname, node.text) + offset
            for leaf, offset in reader.leaf_readers()
        ]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    if isinstance(node, q.Or | q.And) and not isinstance(node, q.DisjunctionMax):
        found = [matching_docs(searcher, sub) for sub in node.subqueries]
        if not found:
            return np.zeros(0, dtype=np.int64)
        if isinstance(node, q.Or):
            return np.unique(np.concatenate(found))
        out = found[0]
        for more in found[1:]:
            out = np.intersect1d(out, more, assume_unique=True)
        return out
    return np.unique(np.fromiter(searcher.docs_for_query(node), dtype=np.int64))


@functools.cache
def weighting() -> Any:
    """BM25F with B=0.5 (units are short and of similar length) and Robertson's idf
    log(1 + (N - n + 0.5) / (n + 0.5)): Whoosh's log(N / (n + 1)) + 1 keeps a floor of 1 that
    over-rewards words found in most units."""
    import math

    from whoosh import scoring

    class RobertsonBM25F(scoring.BM25F):
        def idf(self, searcher: Any, fieldname: str, text: Any) -> float:
            parent = searcher.get_parent()
            n = parent.doc_frequency(fieldname, text)
            total = parent.doc_count_all()
            return math.log(1.0 + (total - n + 0.5) / (n + 0.5))

    return RobertsonBM25F(B=BM25_B, K1=BM25_K1)


@contextlib.contextmanager
def _committing(writer: Any, **commit: Any) -> Iterator[None]:
    """Commit the writer's changes if the block finishes, cancel them all if it raises."""
    lengths_known_missing(writer)
    try:
        yield
    except BaseException:
        writer.cancel()
        raise
    writer.commit(**commit)


#: What the writer's speed-ups (whoosh_internals.FastWriter) are told of the schemas: the
#: analysed fields (`analyzer()`: their terms come from `terms_of`); the fields whose values
#: repeat from document to document, turned into postings once a value per writer (a unit's
#: heading, every unit of a section, path, kind, date and tags; a file's scope; not the
#: text: nearly every one differs); the expression of the list fields.
LAYOUT = Layout(
    analysed=("text", "heading"),
    repeated=("heading", "path", "kind", "date", "tag", "scope"),
    list_field=LIST_FIELD,
)


class FullTextWriter:
    """The changes of a whole index run, written with one Whoosh writer on each index and
    committed once (Whoosh merges its small segments then; it never optimises here). A commit
    a batch of 200 files made a 15,000-file `git checkout` write and merge 75 segments: 90%
    of the watcher's time (bench/watch.py). Writers open on first use: a run that changes
    nothing commits nothing."""

    def __init__(self, fulltext: FullText) -> None:
        self._fulltext = fulltext
        self._files: Any = None
        self._units: Any = None
        self._fast: list[FastWriter] = []  # the files' writer's, the units' writer's
        #: text -> its `terms_of`, for texts the caller has analysed already (it clears it)
        self.known_terms: dict[str, list[str]] = {}

    def _writers(self) -> tuple[Any, Any]:
        if self._files is None:
            files = self._fulltext.open_files().writer(timeout=30.0)
            try:
                units = self._fulltext.open().writer(timeout=30.0, limitmb=128)
            except BaseException:
                files.cancel()
                raise
            self._fast = [FastWriter(w, LAYOUT, self.known_terms) for w in (files, units)]
            self._files, self._units = files, units
        return self._files, self._units

    def remove(self, paths: Iterable[str]) -> None:
        """Remove every unit and file document of `paths` (as the index held them when the
        writer opened: documents added by this writer are not looked at)."""
        paths = list(paths)
        if not paths:
            return
        for writer in self._writers():
            if not writer.segments:  # an index that held nothing (a first full index)
                continue
            from whoosh.query import Term

            searcher = writer.searcher()  # the writer's cached one: no reader a path
            reader = searcher.reader()
            for path in paths:
                if ("path", path) in reader:  # a term look-up; most paths of a burst are new
                    writer.delete_by_query(Term("path", path), searcher=searcher)

    def add(self, docs: Iterable[dict[str, Any]]) -> None:
        """Add documents as `documents` gives them (a file's own, with a "fid", and units)."""
        opened = False
        for doc in docs:
            if not opened:
                self._writers()
                opened = True
            self._fast[0 if "fid" in doc else 1].add(doc)

    def open(self) -> None:
        """Open the writers now (they open on first use otherwise)."""
        self._writers()

    def commit(self, optimize: bool = False) -> None:
        """Commit both indexes (Whoosh merges small segments; `optimize`, for a rebuild only,
        merges all into one)."""
        if self._files is None:
            return
        files, units = self._files, self._units
        self._files = self._units = None
        for fast in self._fast:
            fast.finish()
        self._fast = []
        try:
            files.commit(merge=True, optimize=optimize)
        except BaseException:
            units.cancel()
            raise
        units.commit(merge=True, optimize=optimize)

    def cancel(self) -> None:
        if self._files is None:
            return
        files, units = self._files, self._units
        self._files = self._units = None
        self._fast = []
        for writer in (files, units):
            with contextlib.suppress(Exception):
                writer.cancel()


class FullText:
    """The units' Whoosh index and, beside it in the same folder, the files' (`files_schema`);
    they are written, checked, fingerprinted and rebuilt together."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._ix: Any = None
        self._files_ix: Any = None
        self._searcher: Any = None
        self._files_searcher: Any = None
        self._uids: tuple[Any, Any] | None = None  # (searcher, unit id of each document)
        self._fids: tuple[Any, Any] | None = None  # (files searcher, file id of each document)

    def exists(self) -> bool:
        from whoosh import index

        if not self.folder.is_dir():
            return False
        folder = str(self.folder)
        try:
            return bool(
                _guarded(
                    lambda: (
                        index.exists_in(folder, INDEX_NAME) and index.exists_in(folder, FILES_INDEX)
                    )
                )
            )
        except FullTextDamaged:  # a damaged table of contents: there, but unreadable (`check`)
            return True

    def open(self) -> Any:
        """Open the units' index (creating both if missing). Damage surfaces as an exception
        here or on first search; the caller rebuilds."""
        if self._ix is None:
            self._ix = self._open(INDEX_NAME, schema)
        return self._ix

    def open_files(self) -> Any:
        if self._files_ix is None:
            self._files_ix = self._open(FILES_INDEX, files_schema)
        return self._files_ix

    def _open(self, name: str, make_schema: Callable[[], Any]) -> Any:
        from whoosh import index

        folder = str(self.folder)
        if self.folder.is_dir():
            try:
                there = bool(_guarded(lambda: index.exists_in(folder, name)))
            except FullTextDamaged:
                there = True  # a damaged table of contents: opening it says so
            if there:
                return _guarded(lambda: index.open_dir(folder, indexname=name))
        self.folder.mkdir(parents=True, exist_ok=True)
        return index.create_in(folder, make_schema(), indexname=name)

    def reset(self) -> None:
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def fingerprint(self) -> str:
        """Names, sizes and mtimes of the index files: recorded after each write, so a file
        changed by anything else (damage that `check` may not reach) is noticed by a stat."""
        try:
            entries = sorted(
                (entry.name, entry.stat().st_size, entry.stat().st_mtime_ns)
                for entry in os.scandir(self.folder)
                if entry.is_file() and not entry.name.endswith("_WRITELOCK")
            )
        except OSError:
            return ""
        return ";".join(f"{name}:{size}:{mtime}" for name, size, mtime in entries)

    def digests(self, known: dict[str, Any] | None = None) -> dict[str, list[Any]]:
        """name -> [size, mtime_ns, sha256] of the index files, recorded after each write next
        to `fingerprint`: Whoosh never rewrites a segment, so only the files a write added are
        read (a file whose size and mtime `known` holds keeps its digest there). A copy of the
        cache (`cp -r`, `rsync`, a git checkout: new mtimes) is then checked by content
        (`same_content`), not rebuilt."""
        out: dict[str, list[Any]] = {}
        known = known or {}
        try:
            for entry in os.scandir(self.folder):
                if not entry.is_file() or entry.name.endswith("_WRITELOCK"):
                    continue
                st = entry.stat()
                was = known.get(entry.name)
                if (
                    isinstance(was, list)
                    and len(was) == 3
                    and was[:2] == [st.st_size, st.st_mtime_ns]
                ):
                    out[entry.name] = was
                else:
                    out[entry.name] = [st.st_size, st.st_mtime_ns, _sha256_of(entry.path)]
        except OSError:
            return {}
        return out

    def same_content(self, recorded: dict[str, Any]) -> bool:
        """Whether the index files are, by content, those `recorded` by `digests`: the same
        names and sizes, and the same sha256 for each file whose mtime differs."""
        try:
            now = self.digests(recorded)
        except OSError:
            return False
        return bool(now) and {k: (v[0], v[2]) for k, v in now.items()} == {
            k: (v[0], v[2]) for k, v in recorded.items() if isinstance(v, list) and len(v) == 3
        }

    def check(self) -> None:
        """Read every segment's term and doc tables a little: raises if a segment is damaged."""
        for ix in (self.open(), self.open_files()):

            def read(ix: Any = ix) -> None:
                with ix.searcher() as searcher:
                    searcher.doc_count_all()
                    reader = searcher.reader()
                    for _ in zip(range(50), reader.all_stored_fields(), strict=False):
                        pass
                    for _ in zip(range(50), reader.all_terms(), strict=False):
                        pass

            _guarded(read)

    def update(self, remove_paths: Iterable[str], docs: Sequence[dict[str, Any]]) -> None:
        """Remove every unit (and file document) of `remove_paths`, then add `docs` (as
        `documents` gives them), one commit for each index, through Whoosh's own writer and
        analysis: the reference tests compare the indexer's `writer()` with."""
        from whoosh.query import Term

        remove = list(remove_paths)
        if not remove and not docs:
            return
        for ix, mine in ((self.open_files(), True), (self.open(), False)):
            writer = ix.writer(timeout=30.0)
            with _committing(writer, merge=True):
                for path in remove:
                    writer.delete_by_query(Term("path", path))
                for doc in docs:
                    if ("fid" in doc) is mine:
                        writer.add_document(**doc)

    def writer(self) -> FullTextWriter:
        """One writer on each index for a whole run of many batches (`FullTextWriter`)."""
        return FullTextWriter(self)

    def rebuild(self, docs: Iterable[dict[str, Any]]) -> None:
        self.reset()
        writer = self.writer()
        writer.open()  # both indexes exist, even empty
        try:
            writer.add(docs)
        except BaseException:
            writer.cancel()
            raise
        writer.commit(optimize=True)

    def searcher(self) -> Any:
        """A searcher kept open between queries, refreshed when the index has changed."""
        if self._searcher is None:
            self._searcher = self.open().searcher(weighting=weighting())
        elif not self._searcher.up_to_date():
            self._searcher = self._searcher.refresh()
        return self._searcher

    def files_searcher(self) -> Any:
        if self._files_searcher is None:
            self._files_searcher = self.open_files().searcher()
        elif not self._files_searcher.up_to_date():
            self._files_searcher = self._files_searcher.refresh()
        return self._files_searcher

    def search_terms(
        self,
        terms: Sequence[str],
        limit: int,
        heading_boost: float = 0.5,
        allowed: Any = None,
    ) -> list[tuple[int, float, frozenset[str]]]:
        """Units matching any of the analyzed `terms`, best BM25F first: (unit id, score, the
        terms its text matched). Queries score from the unit table's postings instead
        (search.FieldPostings); this is the index's own answer they are tested against."""
        from whoosh.query import Or, Term

        if not terms:
            return []
        clauses = [Term("text", t) for t in terms]
        if heading_boost:
            clauses += [Term("heading", t, boost=heading_boost) for t in terms]
        query = Or(clauses)
        # Whoosh's automatic choice scores every matching unit of a segment under 5,000
        # documents (most segments, as the index grows in batches); the union tree skips
        # blocks that cannot reach the top `limit`. Same hits and scores, about 40% less time
        # (bench/search.py).
        query.matcher_type = Or.DEFAULT_MATCHER
        results = self.searcher().search(query, limit=limit, filter=allowed, terms=True)
        return [
            (
                hit["id"],
                float(hit.score),
                frozenset(
                    t.decode("utf-8") if isinstance(t, bytes) else t
                    for field, t in hit.matched_terms()
                    if field == "text"
                ),
            )
            for hit in results
        ]

    def unit_ids(self, query: Any) -> Any:
        """The ids of the units a Whoosh query of the units' index matches (a numpy int64
        array, unordered)."""
        searcher = self.searcher()
        if self._uids is None or self._uids[0] is not searcher:
            self._uids = (searcher, _column(searcher, "uid"))
        return self._uids[1][matching_docs(searcher, query)]

    def file_ids(self, query: Any) -> Any:
        """The ids (the store's files.id) of the files a query of the files' index matches."""
        searcher = self.files_searcher()
        if self._fids is None or self._fids[0] is not searcher:
            self._fids = (searcher, _column(searcher, "fid"))
        return self._fids[1][matching_docs(searcher, query)]

    def select(self, query: Any) -> tuple[Any, Any]:
        """What a search operator's query (over one field) selects: (unit ids, file ids), each
        from the index that has the field (a tag: both, the units' own and their notes')."""
        import numpy as np

        fields = _query_fields(query)
        none = np.zeros(0, dtype=np.int64)
        units = self.unit_ids(query) if fields <= _UNIT_FIELDS else none
        files = self.file_ids(query) if fields <= _FILE_FIELDS else none
        return units, files

    def close(self) -> None:
        for searcher in (self._searcher, self._files_searcher):
            if searcher is not None:
                searcher.close()
        self._searcher = self._files_searcher = None
        self._uids = self._fids = None
        self._ix = self._files_ix = None


def _sha256_of(path: str) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
