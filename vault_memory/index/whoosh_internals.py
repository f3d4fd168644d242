"""Whoosh's internals, used for speed: the one module that reaches past Whoosh's public API
(fulltext.py uses nothing else). Each speed-up checks that the internals it needs are there
and leaves Whoosh as it is where they are not (the same index, written or read more slowly);
pyproject.toml pins Whoosh-Reloaded to the versions tests/test_whoosh_internals.py has
checked, and that test fails when a speed-up no longer engages or its files differ by a byte
from Whoosh's own.

Writing (a run's writer: `FastWriter`):
- field lengths: Whoosh asks the disk for the length column of every posting of a field
  without lengths (`lengths_known_missing`), and reads each scorable length back from the
  column it wrote moments before (`_lengths_kept_in_memory`);
- postings: the analysed fields take their terms from `terms_of`, ID and list fields skip
  the tokenizer, repeated values are turned into postings once (`_postings_made_quickly`);
- the pool: postings are kept by term in memory (`_Postings`) and each term's blocks written
  at once (`_TermBlocks`), instead of a tuple a posting sorted at the commit.
Together about half of a keyword-only full index (bench/perf_bulk.py).

Reading: `live_docs` reads a term's document numbers a block at a time.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..files import fsutil
from .words import terms_of

#: Postings a run's writer keeps by term in memory (`_Postings`, about 20 bytes each) before
#: it hands them to Whoosh's pool, which sorts them in runs on disk: a bound on its memory
#: (about Whoosh's own pool's, 128 MB by its reckoning).
POSTINGS_IN_MEMORY = 4_000_000


@dataclass(frozen=True)
class Layout:
    """What fulltext.py's schemas say of their fields, for `FastWriter`."""

    analysed: tuple[str, ...]  # analysed by `terms_of` (fulltext.analyzer)
    repeated: tuple[str, ...]  # values that repeat from document to document
    list_field: str  # the expression of the IDLIST fields given one term a line


# -- reading ---------------------------------------------------------------------------------


def live_docs(leaf: Any, fieldname: str, text: str) -> Any:
    """The live document numbers of one term in one segment (a numpy int64 array), read a
    block (up to 128 documents) at a time from format 3's matcher; one by one through
    `all_ids` from another."""
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
    if blocks_readable(matcher):
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


def blocks_readable(matcher: Any) -> bool:
    """Whether `live_docs` can read `matcher`'s ids a block at a time (W3LeafMatcher)."""
    return all(hasattr(matcher, name) for name in ("_read_ids", "_next_block", "_ids", "_i"))


# -- writing ---------------------------------------------------------------------------------


class FastWriter:
    """A Whoosh `SegmentWriter` with the speed-ups of the module docstring; `add` for each
    document, then `finish` before the writer commits (or cancels). `engaged` names the
    speed-ups this Whoosh allowed."""

    def __init__(self, writer: Any, layout: Layout, known: dict[str, list[str]]) -> None:
        self.writer = writer
        self.engaged: set[str] = set()
        if lengths_known_missing(writer):
            self.engaged.add("lengths known missing")
        if _postings_made_quickly(writer, layout, known):
            self.engaged.add("postings made quickly")
        if _lengths_kept_in_memory(writer):
            self.engaged.add("lengths kept in memory")
        self.postings = _postings_kept(writer)
        if self.postings is not None:
            self.engaged.add("postings kept by term")

    def add(self, fields: dict[str, Any]) -> None:
        """`writer.add_document(**fields)`."""
        if self.postings is None:
            self.writer.add_document(**fields)
        else:
            _add_document(self.writer, self.postings, fields)

    def finish(self) -> None:
        """The writer's fields index as before: the commit pickles its schema."""
        for _, field in self.writer.schema.items():
            vars(field).pop("index", None)


def lengths_known_missing(writer: Any) -> bool:
    """While it writes a segment's postings, Whoosh looks each one's field length up in a
    column, and for a field without lengths (ID, IDLIST: not scorable) it asks the disk again
    whether the column exists, for every posting: about 5 us each, a third of the build time
    once a unit carries its note's properties, path parts and tags (bench/obsidian.py). Telling
    the segment's length reader that those columns do not exist changes nothing else. False
    (the writer left as it is) for a Whoosh without these internals."""
    from whoosh.codec import whoosh3

    make = getattr(writer, "per_document_reader", None)
    lenfield = getattr(whoosh3, "_lenfield", None)
    if make is None or lenfield is None:
        return False
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
    return True


def _postings_made_quickly(writer: Any, layout: Layout, known: dict[str, list[str]]) -> bool:
    """Make the writer's fields turn values into postings faster, the postings unchanged:
    - the analysed fields take their terms from `terms_of`, which gives exactly the terms
      the analyzer gives (tests/test_fulltext_terms.py compares them; the unit table's BM25
      already scores with them), 5x faster than Whoosh's token objects; the postings are
      those of Whoosh's Frequency format (term, frequency, weight = frequency x field boost);
      `known` holds texts whose `terms_of` the caller has computed already (the index run);
    - the ID fields (the whole value is the term) and the IDLIST fields of the layout's
      `list_field` (each line is one) give their terms without Whoosh's tokenizer, as its
      Existence format does (each term once: frequency 1, weight the field boost, no value);
    - repeated fields turn a value into postings once and give the same postings again.
    The writer's schema is its own (unpickled from the index's table of contents), so nothing
    outside this writer sees the change; `FastWriter.finish` takes it back before the commit
    pickles that schema into the new table of contents. A field of another kind is left as
    it is. False when no field was changed."""
    changed = False
    for name, field in writer.schema.items():
        index = None
        if name in layout.analysed:
            index = _analysed(field, known)
            if index is None:  # not Whoosh's Frequency format: left as it is
                continue
        elif not field.vector:
            index = _listed(field, layout.list_field)
        if name in layout.repeated:
            index = _repeated(index or field.index)
        if index is not None:
            field.index = index
            changed = True
    return changed


def _analysed(field: Any, known: dict[str, list[str]]) -> Any:
    """`field.index` by `terms_of`, for a Frequency field (None for another)."""
    from whoosh import formats
    from whoosh.system import pack_uint

    fmt = field.format
    if type(fmt) is not formats.Frequency or fmt.options or field.vector:
        return None
    boost, original = fmt.field_boost, field.index

    def index(value: Any, **kwargs: Any) -> Any:
        if kwargs or not isinstance(value, str):
            return original(value, **kwargs)
        counts: dict[str, int] = {}
        terms = known.get(value) if known else None
        for term in terms_of(value) if terms is None else terms:
            counts[term] = counts.get(term, 0) + 1
        return [(term.encode("utf-8"), n, n * boost, pack_uint(n)) for term, n in counts.items()]

    return index


def _listed(field: Any, list_field: str) -> Any:
    """`field.index` without the tokenizer, for an Existence field of IDTokenizer or of the
    list expression (None for another)."""
    from whoosh import formats
    from whoosh.analysis import IDTokenizer, RegexTokenizer

    fmt, analyzer = field.format, field.analyzer
    if type(fmt) is not formats.Existence:
        return None
    whole = type(analyzer) is IDTokenizer
    listed = (
        type(analyzer) is RegexTokenizer
        and not analyzer.gaps
        and analyzer.expression.pattern == list_field
    )
    if not (whole or listed):
        return None
    boost, original = fmt.field_boost, field.index

    def index(value: Any, **kwargs: Any) -> Any:
        if kwargs or not isinstance(value, str):
            return original(value, **kwargs)
        if whole:  # IDTokenizer: the value, even empty
            terms = {value}
        else:  # the list expression matches the lines that are not empty
            terms = set(value.split("\n"))
            terms.discard("")
        return [(term.encode("utf-8"), 1, boost, b"") for term in terms]

    return index


def _repeated(plain: Any) -> Any:
    """`plain` (a field's `index`) remembering the postings of the last 8,192 values."""

    @functools.lru_cache(maxsize=8192)
    def postings(value: str) -> tuple[Any, ...]:
        return tuple(plain(value))

    def index(value: Any, **kwargs: Any) -> Any:
        if kwargs or not isinstance(value, str):
            return plain(value, **kwargs)
        return postings(value)

    return index


def _lengths_kept_in_memory(writer: Any) -> bool:
    """While it writes a segment's postings, Whoosh reads each one's field length back from the
    length column it wrote to disk moments before (a seek and a read a posting: about a tenth
    of a keyword-only full index). This keeps the same length bytes in memory as the writer
    records them and answers from there; what is written is unchanged. False (the writer left
    as it is) for a Whoosh without these internals."""
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
        return False
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
    return True


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
        for fieldname in sorted(fields):
            fsutil.kill_point("index.mid-keyword-segment")  # a test's kill -9, field by field
            fieldwriter.start_field(fieldname, schema[fieldname])
            blocks = _TermBlocks.of(fieldwriter)
            for tbytes in sorted(fields[fieldname]):
                postings = self.postings(self.terms[fieldname, tbytes])
                lengths_of = [length_of(docnum, fieldname) for docnum, _, _ in postings]
                if blocks is not None:
                    blocks.write(tbytes, postings, lengths_of)
                    continue
                fieldwriter.start_term(tbytes)
                for (docnum, weight, vbytes), length in zip(postings, lengths_of, strict=True):
                    fieldwriter.add(docnum, weight, b"" if vbytes is None else vbytes, length)
                fieldwriter.finish_term()
            fieldwriter.finish_field()

    def cleanup(self) -> None:
        self.terms = {}
        self.pool.cleanup()


class _TermBlocks:
    """For Whoosh's own field writer (format 3) in a field: writes a term's postings (sorted,
    with their field lengths) to the segment's postings and terms files as `start_term`,
    `add` for each posting and `finish_term` would: the same blocks of ids, weights and
    values (pickled, compressed), the same block and term statistics, the same term table
    row, byte for byte (tests/test_whoosh_internals.py compares the files), without a call a
    posting and a dozen a block."""

    NEEDED = (
        "W3TermInfo",
        "WHOOSH3_HEADER_MAGIC",
        "dumps",
        "length_to_byte",
        "delta_encode",
        "pack_ushort",
    )

    @classmethod
    def of(cls, fieldwriter: Any) -> _TermBlocks | None:
        """The term writer of `fieldwriter`; None for another writer (or a Whoosh without
        these internals): the caller then goes posting by posting."""
        from whoosh.codec import whoosh3

        writer: Any = getattr(fieldwriter, "_postwriter", None)
        if (
            type(fieldwriter) is not getattr(whoosh3, "W3FieldWriter", None)
            or type(writer) is not getattr(whoosh3, "W3PostingsWriter", None)
            or not all(hasattr(whoosh3, name) for name in cls.NEEDED)
            or not all(
                hasattr(writer, name)
                for name in ("_byteids", "_blocklimit", "_compression", "_inlinelimit", "_postfile")
            )
            or not all(hasattr(fieldwriter, name) for name in ("_format", "_fieldid", "_tindex"))
            or writer._byteids
            or writer._inlinelimit > 1
        ):
            return None
        return cls(fieldwriter, writer, whoosh3)

    def __init__(self, fieldwriter: Any, writer: Any, whoosh3: Any) -> None:
        self.term_info, self.magic = whoosh3.W3TermInfo, whoosh3.WHOOSH3_HEADER_MAGIC
        self.dumps, self.length_to_byte = whoosh3.dumps, whoosh3.length_to_byte
        self.delta_encode = whoosh3.delta_encode
        self.postfile, self.limit = writer._postfile, writer._blocklimit
        self.comp = writer._compression
        self.fixed = fieldwriter._format.fixed_value_size()
        self.prefix = whoosh3.pack_ushort(fieldwriter._fieldid)
        self.add_term = fieldwriter._tindex.add

    def write(self, tbytes: bytes, postings: list[Any], lengths: list[Any]) -> None:
        if len(postings) == 1 and type(postings[0][0]) is int and 0 <= postings[0][0] < 1 << 32:
            docnum, weight, vbytes = postings[0]
            self._one(tbytes, docnum, weight, vbytes, lengths[0])
            return
        info = self.term_info()
        start = self.postfile.tell()
        for first in range(0, len(postings), self.limit):  # W3PostingsWriter._write_block
            self._block(info, postings, lengths, first)
        info.set_extent(start, self.postfile.tell() - start)
        self.add_term(self.prefix + tbytes, info.to_bytes())

    def _values(self, values: Sequence[Any]) -> Any:
        """A block's values as W3PostingsWriter keeps them for the field's format."""
        if self.fixed is None or self.fixed < 0:
            return tuple(values)
        if self.fixed == 0:
            return None
        return b"".join(values)

    def _data(self, data: Any, head: Any) -> tuple[bytes, bytes]:
        """A block: its length (negative for the last), header and (compressed) data."""
        import zlib

        data = self.dumps(data, 2)
        if self.comp:
            data = zlib.compress(data, self.comp)
        head = self.dumps(head, 2)
        return head, data

    def _one(self, tbytes: bytes, docnum: int, weight: Any, vbytes: Any, length: Any) -> None:
        """`write` of a term with one posting (most: paths, names, dates), the same steps
        without the lists."""
        from array import array

        info = self.term_info()
        postfile = self.postfile
        start = postfile.tell()
        postfile.write(self.magic)
        as_float = array("f", [weight])[0]  # what the block's weights array holds
        top = weight if weight > 0 else 0
        info._weight += as_float
        info._df += 1
        info._minlength = length or None
        info._maxlength = max(info._maxlength, length or 0)
        info._maxweight = max(info._maxweight, top)
        info._minid = info._maxid = docnum
        if self.fixed is None or self.fixed < 0:
            mini_values: Any = (vbytes,) if vbytes else ()
        elif self.fixed == 0:
            mini_values = None
        else:
            mini_values = vbytes or b""
        to_byte = self.length_to_byte
        head, data = self._data(
            ((docnum,), None if as_float == 1.0 else as_float, mini_values),
            (1, docnum, top, self.comp, to_byte(length or None), to_byte(length or 0)),
        )
        postfile.write_int(-(len(head) + len(data)))
        postfile.write(head)
        postfile.write(data)
        info.set_extent(start, postfile.tell() - start)
        self.add_term(self.prefix + tbytes, info.to_bytes())

    def _block(self, info: Any, postings: list[Any], lengths: list[Any], first: int) -> None:
        """The block of `postings` from `first` on, added to the term's `info`."""
        from array import array

        limit = self.limit
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
            self.postfile.write(self.magic)
        # W3TermInfo.add_block
        info._weight += sum(weights)
        info._df += len(ids)
        info._minlength = shortest if info._minlength is None else min(info._minlength, shortest)
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
        to_byte = self.length_to_byte
        head, data = self._data(
            (tuple(self.delta_encode(ids)), mini_weights, self._values(values)),
            (len(ids), ids[-1], top, self.comp, to_byte(shortest), to_byte(longest)),
        )
        size = len(head) + len(data)
        self.postfile.write_int(-size if first + limit >= len(postings) else size)
        self.postfile.write(head)
        self.postfile.write(data)


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
    fulltext.documents makes them (no boosts, no custom stored values: no "_" names), its
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
