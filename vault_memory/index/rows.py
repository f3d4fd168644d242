"""The rows an index backend reads and writes (backend.py), one named tuple each.

Named tuples rather than dataclasses: they still unpack as the positional tuples the stores
returned before (`for path, line, *_ in store.links()`), and a row read by the hundred
thousand (`UnitRow`, when a search builds its unit table) is made by `tuple.__new__` from
the database's own tuple, without a Python call a row (`make_rows`).

"Unit" is the one word for what a file is cut into (index/units.py); the SQLite file still
names its table `chunks` (renaming it would force every index to be rebuilt).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, NamedTuple, TypeVar

R = TypeVar("R", bound=tuple[Any, ...])


def make_rows(kind: type[R], rows: Iterable[Iterable[Any]]) -> list[R]:
    """`rows` as `kind` named tuples (each tuple copied by C code, no Python call a row)."""
    return list(map(functools.partial(tuple.__new__, kind), rows))


# -- what planning and status compare ---------------------------------------------------------


class FileStat(NamedTuple):
    """An indexed file's stat and content digest: what planning compares with the disk."""

    mtime_ns: int
    size: int
    sha256: str


class FileRow(NamedTuple):
    """An indexed file, with the id its units and links refer to."""

    id: int
    path: str
    kind: str
    mtime_ns: int
    size: int
    sha256: str


class SkippedFile(NamedTuple):
    """A file that could not be read as it is now, skipped until its stat changes."""

    mtime_ns: int
    size: int
    reason: str


class CloneRow(NamedTuple):
    """One clone of a vault on an index server (a checkout that indexed into it)."""

    id: int
    name: str  # `[index] clone_id`, by default "host:folder"
    created_at: float  # when it first wrote (seconds since the epoch)
    last_index_at: float | None  # its last index run, None before one finished
    files: int  # the files its view holds
    units: int
    own_units: int  # the units of content rows no other clone holds (what removing it drops)


class ScopeCount(NamedTuple):
    """What the index holds of one scope."""

    files: int
    units: int


# -- what the indexer writes ----------------------------------------------------------------


class NewUnit(NamedTuple):
    """A unit of a file being stored (`replace_file`); `tags` and `terms` are space-joined."""

    start_line: int
    end_line: int
    heading: str
    text: str
    sha256: str
    salience: float
    tags: str
    terms: str  # the text's analyzed words (index/words.py `terms_of`)


class Property(NamedTuple):
    """A frontmatter property of a note, as a name and one text value."""

    name: str
    value: str


class NewLink(NamedTuple):
    """A link of a file being stored (`replace_file`); `key` is its target's lookup key."""

    line: int
    kind: str
    target: str
    subpath: str
    display: str
    embed: bool
    key: str
    text: str  # the line the link is on


class Embedding(NamedTuple):
    """A vector of a unit text: float32 bytes, keyed by the text's sha256."""

    sha256: str
    vector: bytes


class TextToEmbed(NamedTuple):
    """A unit text that has no vector of the model yet."""

    sha256: str
    text: str


# -- what search reads ----------------------------------------------------------------------


class UnitRow(NamedTuple):
    """A unit as the search's unit table is built from it (search/table.py), in scope, file
    and unit order."""

    id: int
    file_id: int
    heading: str
    date: str | None
    salience: float
    vector: bytes | None  # float32 bytes of the model's vector; None when it has none
    lines: int
    terms: str
    text: str
    scope: str


class StoredUnit(NamedTuple):
    """A unit as a hit cites it: its file's path, lines, heading and text."""

    id: int
    path: str
    start_line: int
    end_line: int
    heading: str
    text: str
    sha256: str
    date: str | None
    kind: str
    salience: float
    tags: str


class LinkRow(NamedTuple):
    """A link as it was indexed, with its source file's path."""

    source: str
    line: int
    kind: str
    target: str
    subpath: str
    display: str
    embed: bool
    text: str


class FulltextRow(NamedTuple):
    """What the keyword index (index/fulltext.py) holds of a unit and its file."""

    unit_id: int
    file_id: int
    path: str
    text: str
    heading: str
    date: str | None
    kind: str
    unit_tags: str
    note_tags: str
    scope: str


class UnitDigest(NamedTuple):
    """Where a unit sits in its file and what its text hashes to (integrity checks)."""

    file_id: int
    start_line: int
    end_line: int
    sha256: str


class TableRows(NamedTuple):
    """Every unit (`UnitRow`s) and the file marks of one state of the index."""

    rows: list[UnitRow]
    marks: dict[int, int]


class ChangedRows(NamedTuple):
    """What changed since a unit table was made (`changed_unit_rows`): the file marks now,
    the ids of the files whose units changed, and those files' units now."""

    marks: dict[int, int]
    files: list[int]
    rows: list[UnitRow]


class ServedUnit(NamedTuple):
    """A unit a server picked for a search (`ServesCandidates.served`): its unit-table row,
    what a hit cites of it, whether the search's filters allow it (a neighbour that is not
    allowed still takes part in its context windows), and whether it was judged an
    instruction when indexed (None: written before judgements were kept)."""

    row: UnitRow
    unit: StoredUnit
    allowed: bool
    flagged: bool | None


class ServedRows(NamedTuple):
    """What a server answers for a search (`ServesCandidates.served`)."""

    generation: str | None  # the server's generation the statistics belong to
    #: (visible units, their text terms, their heading terms); None when `known` was current
    stats: tuple[int, int, int] | None
    df: dict[str, tuple[int, int]]  # term -> units holding it in the text, in the heading
    named: list[int]  # the ids of the files whose names the query names
    rows: list[ServedUnit]  # in scope, file and unit order
