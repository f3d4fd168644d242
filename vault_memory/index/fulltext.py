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

from ..files import fsutil
from .rows import FulltextRow, Property
from .words import terms_of

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
    if hasattr(query, "subqueries"):
        return set().union(*(_query_fields(sub) for sub in query.subqueries))
    return {query.fieldname}


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
            _postings(leaf, node.fieldname, node.text) + offset
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


def _postings(leaf: Any, fieldname: str, text: str) -> Any:
    """The live document numbers of one term in one segment."""
    import numpy as np
    from whoosh.matching.wrappers import FilterMatcher
    from whoosh.reading import TermNotFound

    try:
        matcher = leaf.postings(fieldname, text)
    except TermNotFound:
        return np.zeros(0, dtype=np.int64)
    deleted = None
    if isinstance(matcher, FilterMatcher):  # a segment with deleted documents
        deleted = leaf.deleted_docs_set
        matcher = matcher.child
    if hasattr(matcher, "_read_ids") and hasattr(matcher, "_next_block"):  # W3LeafMatcher
        blocks = []
        while matcher.is_active():
            matcher._read_ids()
            blocks.append(np.asarray(matcher._ids[matcher._i :], dtype=np.int64))
            matcher._next_block()
        docs = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)
    else:
        docs = np.fromiter(matcher.all_ids(), dtype=np.int64)
    if deleted:
        docs = docs[~np.isin(docs, np.fromiter(deleted, dtype=np.int64))]
    return docs


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
    _lengths_known_missing(writer)
    try:
        yield
    except BaseException:
        writer.cancel()
        raise
    writer.commit(**commit)


def _lengths_known_missing(writer: Any) -> None:
    """While it writes a segment's postings, Whoosh looks each one's field length up in a
    column, and for a field without lengths (ID, IDLIST: not scorable) it asks the disk again
    whether the column exists, for every posting: about 5 us each, a third of the build time
    once a unit carries its note's properties, path parts and tags (bench/obsidian.py). Telling
    the segment's length reader that those columns do not exist changes nothing else. A Whoosh
    without these internals is left as it is."""
    from whoosh.codec import whoosh3

    make = getattr(writer, "per_document_reader", None)
    lenfield = getattr(whoosh3, "_lenfield", None)
    if make is None or lenfield is None:
        return
    unscored = [
        lenfield(name)
        for name, field in writer.schema.items()
        if field.indexed and not field.scorable
    ]

    def per_document_reader() -> Any:
        reader = make()
        known = getattr(reader, "_readers", None)
        if isinstance(known, dict):
            for name in unscored:
                known.setdefault(name, None)
        return reader

    writer.per_document_reader = per_document_reader


#: Fields whose values repeat from document to document: a unit's heading (every unit of a
#: section), path, kind, date and tags; a file's scope. Their postings are computed once a
#: value per writer (`_postings_made_quickly`). Not the text: nearly every one differs.
REPEATED_FIELDS = ("heading", "path", "kind", "date", "tag", "scope")
#: The analysed fields (`analyzer()`): their terms come from `terms_of`.
ANALYSED_FIELDS = ("text", "heading")


def _postings_made_quickly(writer: Any, known: dict[str, list[str]] | None = None) -> None:
    """Make the writer's fields turn values into postings faster, the postings unchanged:
    - the analysed fields take their terms from `terms_of`, which gives exactly the terms
      `analyzer()` gives (tests/test_fulltext_terms.py compares them; the unit table's BM25
      already scores with them), 5x faster than Whoosh's token objects; the postings are
      those of Whoosh's Frequency format (term, frequency, weight = frequency x field boost);
      `known` holds texts whose `terms_of` the caller has computed already (the index run,
      for SQLite);
    - the ID fields (the whole value is the term) and the IDLIST fields of `LIST_FIELD` (each
      line is one) give their terms without Whoosh's tokenizer, as its Existence format does
      (each term once: frequency 1, weight the field boost, no value);
    - REPEATED_FIELDS turn a value into postings once and give the same postings again.
    Together about a third of a keyword-only full index (bench/perf_bulk.py). The writer's
    schema is its own (unpickled from the index's table of contents), so nothing outside
    this writer sees the change; `_indexed_as_before` takes it back before the commit pickles
    that schema into the new table of contents. A field of another kind is left as it is."""
    from whoosh import formats
    from whoosh.analysis import IDTokenizer, RegexTokenizer
    from whoosh.system import pack_uint

    for name, field in writer.schema.items():
        index = field.index
        fmt = field.format
        if name in ANALYSED_FIELDS:
            if type(fmt) is not formats.Frequency or fmt.options or field.vector:
                continue
            boost = fmt.field_boost

            def index(
                value: Any, boost: float = boost, original: Any = index, **kwargs: Any
            ) -> Any:
                if kwargs or not isinstance(value, str):
                    return original(value, **kwargs)
                counts: dict[str, int] = {}
                terms = known.get(value) if known else None
                for term in terms_of(value) if terms is None else terms:
                    counts[term] = counts.get(term, 0) + 1
                return [
                    (term.encode("utf-8"), n, n * boost, pack_uint(n)) for term, n in counts.items()
                ]

        elif (
            type(fmt) is formats.Existence
            and not field.vector
            and (
                type(field.analyzer) is IDTokenizer
                or (
                    type(field.analyzer) is RegexTokenizer
                    and not field.analyzer.gaps
                    and field.analyzer.expression.pattern == LIST_FIELD
                )
            )
        ):
            whole = type(field.analyzer) is IDTokenizer
            boost = fmt.field_boost

            def index(
                value: Any,
                boost: float = boost,
                original: Any = index,
                whole: bool = whole,
                **kwargs: Any,
            ) -> Any:
                if kwargs or not isinstance(value, str):
                    return original(value, **kwargs)
                if whole:  # IDTokenizer: the value, even empty
                    terms = {value}
                else:  # `LIST_FIELD` matches the lines that are not empty
                    terms = set(value.split("\n"))
                    terms.discard("")
                return [(term.encode("utf-8"), 1, boost, b"") for term in terms]

        elif name not in REPEATED_FIELDS:
            continue
        if name in REPEATED_FIELDS:
            plain = index

            @functools.lru_cache(maxsize=8192)
            def postings(value: str, plain: Any = plain) -> tuple[Any, ...]:
                return tuple(plain(value))

            def index(
                value: Any, postings: Any = postings, plain: Any = plain, **kwargs: Any
            ) -> Any:
                if kwargs or not isinstance(value, str):
                    return plain(value, **kwargs)
                return postings(value)

        field.index = index


def _indexed_as_before(writer: Any) -> None:
    for _, field in writer.schema.items():
        vars(field).pop("index", None)


def _lengths_kept_in_memory(writer: Any) -> None:
    """While it writes a segment's postings, Whoosh reads each one's field length back from the
    length column it wrote to disk moments before (a seek and a read a posting: about a tenth
    of a keyword-only full index). This keeps the same length bytes in memory as the writer
    records them and answers from there; what is written is unchanged. A Whoosh without these
    internals is left as it is."""
    from whoosh.codec import whoosh3

    perdoc = getattr(writer, "perdocwriter", None)
    make = getattr(writer, "per_document_reader", None)
    to_byte = getattr(whoosh3, "length_to_byte", None)
    to_length = getattr(whoosh3, "byte_to_length", None)
    if (
        perdoc is None
        or make is None
        or to_byte is None
        or to_length is None
        or not hasattr(perdoc, "_docnum")
    ):
        return
    recorded: dict[str, dict[int, int]] = {}
    add_field = perdoc.add_field

    def add_field_recording(fieldname: str, fieldobj: Any, value: Any, length: Any) -> None:
        add_field(fieldname, fieldobj, value, length)
        if length:  # as W3PerDocWriter.add_field: a length byte in the column
            recorded.setdefault(fieldname, {})[perdoc._docnum] = to_byte(length)

    def per_document_reader() -> Any:
        reader = make()

        def doc_field_length(docnum: int, fieldname: str, default: int = 0) -> Any:
            column = recorded.get(fieldname)
            if column is None:  # no length column for the field: Whoosh gives the default
                return default
            lbyte = column.get(docnum)
            return to_length(lbyte) if lbyte else None  # as W3PerDocReader does

        reader.doc_field_length = doc_field_length
        return reader

    perdoc.add_field = add_field_recording
    writer.per_document_reader = per_document_reader


#: Postings a run's writer keeps by term in memory (`_Postings`, about 20 bytes each) before
#: it hands them to Whoosh's pool, which sorts them in runs on disk: a bound on its memory
#: (about Whoosh's own pool's, 128 MB by its reckoning).
POSTINGS_IN_MEMORY = 4_000_000


class _Postings:
    """A run writer's postings, kept by field and term as documents come, in place of Whoosh's
    posting pool (which makes a tuple of each posting, sorts them all at the commit and hands
    them to the segment's writer one by one, checking their order): the segment is written
    term by term from these lists, each sorted as the pool would (by document number, then
    weight and value), through the same field writer: the same files. A term's list holds
    each posting's document number and its (weight, value) pair, one shared object for equal
    pairs. Past `limit` postings they all go to Whoosh's pool (`spill`), which then writes
    the segment as before."""

    def __init__(self, pool: Any, limit: int) -> None:
        self.pool = pool
        self.limit = limit
        #: (field, term) -> [document number, (weight, value), document number, ...]
        self.terms: dict[tuple[str, bytes], list[Any]] = {}
        #: (weight, value, type of weight) -> the one (weight, value) pair kept for them
        self.pairs: dict[tuple[Any, Any, type], tuple[Any, Any]] = {}
        #: name -> (field, indexed, scorable, stored, column type): `_add_document`'s look-ups
        self.fields: dict[str, tuple[Any, bool, bool, bool, Any]] = {}
        self.count = 0
        self.spilled = False

    def pair(self, weight: Any, vbytes: Any) -> tuple[Any, Any]:
        key = (weight, vbytes, type(weight))
        found = self.pairs.get(key)
        if found is None:
            found = self.pairs[key] = (weight, vbytes)
        return found

    def add(self, item: tuple[str, bytes, int, Any, Any]) -> None:
        """Whoosh's pool interface (a merge adds an old segment's postings this way)."""
        fieldname, tbytes, docnum, weight, vbytes = item
        if docnum < 0:  # Whoosh's marker for a spelling word: the pool's business
            self.spill()
        if self.spilled:
            self.pool.add(item)
            return
        found = self.terms.get((fieldname, tbytes))
        if found is None:
            found = self.terms[fieldname, tbytes] = []
        found += (docnum, self.pair(weight, vbytes))
        self.count += 1
        if self.count >= self.limit:
            self.spill()

    @staticmethod
    def postings(flat: list[Any]) -> list[tuple[int, Any, Any]]:
        """A term's postings as the pool sorts them: (document number, weight, value)."""
        found = [(flat[i], *flat[i + 1]) for i in range(0, len(flat), 2)]
        found.sort()
        return found

    def spill(self) -> None:
        """Hand every posting to Whoosh's pool, which sorts them, and go on through it."""
        add, terms = self.pool.add, self.terms
        while terms:
            (fieldname, tbytes), flat = terms.popitem()
            for docnum, weight, vbytes in self.postings(flat):
                add((fieldname, tbytes, docnum, weight, vbytes))
        self.count = 0
        self.spilled = True

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, Any, Any]]:
        if self.spilled:
            return iter(self.pool.iter_postings())
        return (
            (fieldname, tbytes, *posting)
            for fieldname, tbytes in sorted(self.terms)
            for posting in self.postings(self.terms[fieldname, tbytes])
        )

    def write(self, fieldwriter: Any, schema: Any, lengths: Any) -> None:
        """What Whoosh's `FieldWriter.add_postings` does with the pool's sorted postings."""
        if self.spilled:
            fieldwriter.add_postings(schema, lengths, self.pool.iter_postings())
            return
        length_of = lengths.doc_field_length if lengths else (lambda docnum, fieldname: 0)
        fields: dict[str, list[bytes]] = {}
        for fieldname, tbytes in self.terms:
            fields.setdefault(fieldname, []).append(tbytes)
        start_term, add, finish_term = (
            fieldwriter.start_term,
            fieldwriter.add,
            fieldwriter.finish_term,
        )
        for fieldname in sorted(fields):
            fsutil.kill_point("index.mid-keyword-segment")  # a test's kill -9, field by field
            fieldwriter.start_field(fieldname, schema[fieldname])
            write_term = _term_writer(fieldwriter)
            for tbytes in sorted(fields[fieldname]):
                postings = self.postings(self.terms[fieldname, tbytes])
                if write_term is not None:
                    write_term(
                        tbytes,
                        postings,
                        [length_of(docnum, fieldname) for docnum, _, _ in postings],
                    )
                    continue
                start_term(tbytes)
                for docnum, weight, vbytes in postings:
                    add(
                        docnum,
                        weight,
                        b"" if vbytes is None else vbytes,
                        length_of(docnum, fieldname),
                    )
                finish_term()
            fieldwriter.finish_field()

    def cleanup(self) -> None:
        self.terms = {}
        self.pool.cleanup()


def _term_writer(fieldwriter: Any) -> Callable[[bytes, list[Any], list[Any]], None] | None:
    """For Whoosh's own field writer (format 3) in a field: a function that writes a term's
    postings (sorted, with their field lengths) to the segment's postings and terms files
    as `start_term`, `add` for each posting and `finish_term` would: the same blocks of
    ids, weights and values (pickled, compressed), the same block and term statistics, the
    same term table row, byte for byte (tests/test_index.py compares the files), without a
    call a posting and a dozen a block. None for another writer (or a Whoosh without these
    internals): the caller then goes posting by posting."""
    from whoosh.codec import whoosh3

    writer: Any = getattr(fieldwriter, "_postwriter", None)
    needed = (
        "W3TermInfo",
        "WHOOSH3_HEADER_MAGIC",
        "dumps",
        "length_to_byte",
        "delta_encode",
        "pack_ushort",
    )
    if (
        type(fieldwriter) is not getattr(whoosh3, "W3FieldWriter", None)
        or type(writer) is not getattr(whoosh3, "W3PostingsWriter", None)
        or not all(hasattr(whoosh3, name) for name in needed)
        or not all(
            hasattr(writer, name)
            for name in ("_byteids", "_blocklimit", "_compression", "_inlinelimit", "_postfile")
        )
        or not all(hasattr(fieldwriter, name) for name in ("_format", "_fieldid", "_tindex"))
        or writer._byteids
        or writer._inlinelimit > 1
    ):
        return None
    import zlib
    from array import array

    term_info, magic, dumps = whoosh3.W3TermInfo, whoosh3.WHOOSH3_HEADER_MAGIC, whoosh3.dumps
    length_to_byte, delta_encode = whoosh3.length_to_byte, whoosh3.delta_encode
    postfile, limit, comp = writer._postfile, writer._blocklimit, writer._compression
    fixed = fieldwriter._format.fixed_value_size()
    prefix, add_term = whoosh3.pack_ushort(fieldwriter._fieldid), fieldwriter._tindex.add

    def write_one(tbytes: bytes, docnum: int, weight: Any, vbytes: Any, length: Any) -> None:
        """`write_term` of a term with one posting (most: paths, names, dates), the same
        steps without the lists."""
        info = term_info()
        start = postfile.tell()
        postfile.write(magic)
        as_float = array("f", [weight])[0]  # what the block's weights array holds
        top = weight if weight > 0 else 0
        info._weight += as_float
        info._df += 1
        info._minlength = length or None
        info._maxlength = max(info._maxlength, length or 0)
        info._maxweight = max(info._maxweight, top)
        info._minid = info._maxid = docnum
        if fixed is None or fixed < 0:
            mini_values: Any = (vbytes,) if vbytes else ()
        elif fixed == 0:
            mini_values = None
        else:
            mini_values = vbytes or b""
        data = dumps(((docnum,), None if as_float == 1.0 else as_float, mini_values), 2)
        if comp:
            data = zlib.compress(data, comp)
        head = dumps(
            (1, docnum, top, comp, length_to_byte(length or None), length_to_byte(length or 0)), 2
        )
        postfile.write_int(-(len(head) + len(data)))
        postfile.write(head)
        postfile.write(data)
        info.set_extent(start, postfile.tell() - start)
        add_term(prefix + tbytes, info.to_bytes())

    def write_term(tbytes: bytes, postings: list[Any], lengths: list[Any]) -> None:
        count = len(postings)
        if count == 1 and type(postings[0][0]) is int and 0 <= postings[0][0] < 1 << 32:
            docnum, weight, vbytes = postings[0]
            write_one(tbytes, docnum, weight, vbytes, lengths[0])
            return
        info = term_info()
        start = postfile.tell()
        for first in range(0, count, limit):  # W3PostingsWriter._write_block, a block each
            block = postings[first : first + limit]
            ids = array("I", [docnum for docnum, _, _ in block])
            weights = array("f", [weight for _, weight, _ in block])
            values = [vbytes for _, _, vbytes in block if vbytes]
            top = 0  # as add_posting keeps it: the first of the greatest, from 0
            for _, weight, _ in block:
                if weight > top:
                    top = weight
            known = [length for length in lengths[first : first + limit] if length]
            shortest = min(known) if known else None
            longest = max(known) if known else 0
            if not first:
                postfile.write(magic)
            # W3TermInfo.add_block
            info._weight += sum(weights)
            info._df += len(ids)
            info._minlength = (
                shortest if info._minlength is None else min(info._minlength, shortest)
            )
            info._maxlength = max(info._maxlength, longest)
            info._maxweight = max(info._maxweight, top)
            if info._minid is None:
                info._minid = ids[0]
            info._maxid = ids[-1]
            if all(w == 1.0 for w in weights):
                mini_weights: Any = None
            elif all(w == weights[0] for w in weights):
                mini_weights = weights[0]
            else:
                mini_weights = tuple(weights)
            if fixed is None or fixed < 0:
                mini_values: Any = tuple(values)
            elif fixed == 0:
                mini_values = None
            else:
                mini_values = b"".join(values)
            data = dumps((tuple(delta_encode(ids)), mini_weights, mini_values), 2)
            if comp:
                data = zlib.compress(data, comp)
            head = dumps(
                (len(ids), ids[-1], top, comp, length_to_byte(shortest), length_to_byte(longest)), 2
            )
            size = len(head) + len(data)
            postfile.write_int(-size if first + limit >= count else size)
            postfile.write(head)
            postfile.write(data)
        info.set_extent(start, postfile.tell() - start)
        add_term(prefix + tbytes, info.to_bytes())

    return write_term


def _postings_kept(writer: Any, limit: int | None = None) -> _Postings | None:
    """Give the writer a `_Postings` in place of its pool, and the segment's flush that
    writes from it; None (the writer left as it is) for a Whoosh without these internals or
    a schema with spelling or vector fields (which add postings otherwise)."""
    from whoosh.writing import PostingPool

    pool = getattr(writer, "pool", None)
    if type(pool) is not PostingPool or not all(
        hasattr(writer, name)
        for name in (
            "_flush_segment",
            "perdocwriter",
            "fieldwriter",
            "codec",
            "docnum",
            "per_document_reader",
            "_check_fields",
            "_check_state",
        )
    ):
        return None
    if any(field.vector or field.separate_spelling() for _, field in writer.schema.items()):
        return None
    postings = _Postings(pool, limit or POSTINGS_IN_MEMORY)

    def flush_segment() -> None:  # SegmentWriter._flush_segment, writing from `postings`
        writer.perdocwriter.close()
        lengths = writer.per_document_reader() if writer.codec.length_stats else None
        postings.write(writer.fieldwriter, writer.schema, lengths)
        writer.fieldwriter.close()
        if lengths:
            lengths.close()

    writer.pool = postings
    writer._flush_segment = flush_segment
    return postings


def _add_document(writer: Any, postings: _Postings, fields: dict[str, Any]) -> None:
    """`writer.add_document(**fields)` for a writer given `_postings_kept` and documents as
    `documents` makes them (no boosts, no custom stored values: no "_" names), its
    postings put in `postings` by term instead of a tuple each in the pool."""
    if postings.spilled or any(name.startswith("_") for name in fields):
        writer.add_document(**fields)
        return
    writer._check_state()
    perdoc, docnum, terms, known, pairs = (
        writer.perdocwriter,
        writer.docnum,
        postings.terms,
        postings.fields,
        postings.pairs,
    )
    names = sorted(fields)
    for name in names:
        if name not in known:
            writer._check_fields(writer.schema, [name])
            field = writer.schema[name]
            known[name] = (field, field.indexed, field.scorable, field.stored, field.column_type)
    perdoc.start_doc(docnum)
    count = 0
    try:
        for name in names:
            value = fields[name]
            if value is None:
                continue
            field, indexed, scorable, stored, column = known[name]
            length = 0
            if indexed:
                for tbytes, freq, weight, vbytes in field.index(value):
                    weight *= 1.0  # Whoosh's document and field boost
                    if scorable:
                        length += freq
                    pair = pairs.get((weight, vbytes, float))
                    if pair is None or type(weight) is not float:
                        pair = postings.pair(weight, vbytes)
                    found = terms.get((name, tbytes))
                    if found is None:
                        terms[name, tbytes] = [docnum, pair]
                    else:
                        found += (docnum, pair)
                    count += 1
            perdoc.add_field(name, field, value if stored else None, length)
            if column:
                perdoc.add_column_value(name, column, field.to_column_value(value))
    except Exception:
        perdoc.cancel_doc()
        raise
    perdoc.finish_doc()
    writer._added = True
    writer.docnum += 1
    postings.count += count
    if postings.count >= postings.limit:
        postings.spill()


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
        self._postings: list[_Postings | None] = [None, None]
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
            for writer in (files, units):
                _lengths_known_missing(writer)
                _postings_made_quickly(writer, self.known_terms)
                _lengths_kept_in_memory(writer)
            self._postings = [_postings_kept(files), _postings_kept(units)]
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
        writers: tuple[Any, Any] | None = None
        for doc in docs:
            if writers is None:
                writers = self._writers()
            which = 0 if "fid" in doc else 1
            postings = self._postings[which]
            if postings is None:
                writers[which].add_document(**doc)
            else:
                _add_document(writers[which], postings, doc)

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
        self._postings = [None, None]
        for writer in (files, units):
            _indexed_as_before(writer)
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
        self._postings = [None, None]
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
