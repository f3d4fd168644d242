"""JSON from outside, read within bounds: a depth limit and a size limit per record, both
enforced while the bytes stream in, before anything is built from them.

Why: `json.loads` recurses once per nesting level (a few thousand levels of `[` end in a
`RecursionError`), and a streaming parser that builds a path string per level (ijson's
prefixes) takes memory quadratic in the depth (200 KB of `[` took it past 24 GB). Nothing
nested deeper than `MAX_DEPTH` is handed on, so no code that walks a value (`repr`,
`json.dumps`, our own) can run out of stack.

How: the bracket depth outside strings is counted with numpy over each chunk of bytes (a few
linear, vectorised passes; only the ends of elements are handled one by one in Python), which
also finds where each element of a top-level list ends; each element is then parsed by
`json.loads` (C) from its own bytes, held only while it is parsed. Reading a ChatGPT export
this way takes less CPU than ijson's `items` did (1.3 s against 1.9 s for 89 MB). An element
over `max_bytes` is refused as soon as its bytes pass the limit.

Every refusal is a `JsonLimitError` whose `reason` says which limit and where; callers name
the file and the record around it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from ..errors import VaultError

if TYPE_CHECKING:
    import numpy as np

MAX_DEPTH = 256  # levels of nesting a value may have (real exports use under 20)
#: Bytes one record (an element of a top-level list, a JSONL line) may take. Its parsed form
#: takes up to about 24 times that in the worst case (`[{},{},...]`), so 32 MiB stays well
#: under a gigabyte; the largest conversations of real exports take a few MB.
MAX_RECORD_BYTES = 32 << 20
CHUNK = 1 << 20

_QUOTE, _BACKSLASH, _COMMA = 0x22, 0x5C, 0x2C
_OPEN_LIST, _OPEN_OBJECT, _CLOSE_LIST, _CLOSE_OBJECT = 0x5B, 0x7B, 0x5D, 0x7D
_SPACE = b" \t\r\n"
BOM = b"\xef\xbb\xbf"


class JsonLimitError(VaultError):
    """A value over the depth or size limit; `reason` says which and where."""

    def __init__(self, reason: str, offset: int | None = None) -> None:
        self.reason = reason
        self.offset = offset
        super().__init__(reason)


class JsonBrokenError(ValueError):
    """JSON that does not parse or breaks off; `reason` says how, `element` after which."""

    def __init__(self, reason: str, element: int, offset: int | None = None) -> None:
        self.reason = reason
        self.element = element
        self.offset = offset
        super().__init__(reason)


def too_deep(limit: int = MAX_DEPTH) -> str:
    return f"nested deeper than the limit of {limit} levels"


def too_large(limit: int) -> str:
    return f"over the limit of {limit:,} bytes per record"


@dataclass
class _Counter:
    """The bracket depth outside strings, carried from one chunk of bytes to the next. Only
    the few structural bytes are looked at one by one (as positions); the passes over the
    whole chunk are numpy comparisons."""

    depth: int = 0
    in_string: bool = False
    escaped: bool = False  # the chunk before ended on an odd run of backslashes

    def feed(self, chunk: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the bytes, the positions of brackets and commas outside strings, the depth after
        each of them) of `chunk`."""
        import numpy as np

        data = np.frombuffer(chunk, dtype=np.uint8)
        quotes = self._real_quotes(data)
        marks = np.flatnonzero(
            (data == _OPEN_LIST)
            | (data == _OPEN_OBJECT)
            | (data == _CLOSE_LIST)
            | (data == _CLOSE_OBJECT)
            | (data == _COMMA)
        )
        before = np.searchsorted(quotes, marks) + int(self.in_string)  # quotes before a mark
        marks = marks[(before & 1) == 0]
        kinds = data[marks]
        step = ((kinds == _OPEN_LIST) | (kinds == _OPEN_OBJECT)).astype(np.int64) - (
            (kinds == _CLOSE_LIST) | (kinds == _CLOSE_OBJECT)
        )
        depth = np.cumsum(step) + self.depth
        if len(depth):
            self.depth = int(depth[-1])
        self.in_string ^= bool(len(quotes) & 1)
        return data, marks, depth

    def _real_quotes(self, data: np.ndarray) -> np.ndarray:
        """The positions of the quotes that open or close a string: those after an odd run
        of backslashes are escaped. Notes whether the chunk ends on such a run."""
        import numpy as np

        quotes = np.flatnonzero(data == _QUOTE)
        slashes = np.flatnonzero(data == _BACKSLASH)
        carried = self.escaped
        self.escaped = False
        if not len(slashes):
            return quotes[1:] if carried and len(quotes) and quotes[0] == 0 else quotes
        breaks = np.flatnonzero(np.diff(slashes) != 1)
        starts = slashes[np.concatenate(([0], breaks + 1))]
        ends = slashes[np.concatenate((breaks, [len(slashes) - 1]))] + 1  # the byte after
        lengths = ends - starts
        if carried:
            if starts[0] == 0:
                lengths[0] += 1
            elif len(quotes) and quotes[0] == 0:
                quotes = quotes[1:]
        escaped = ends[(lengths & 1) == 1]
        if len(escaped) and escaped[-1] == len(data):
            self.escaped = True
        return quotes[~np.isin(quotes, escaped)]


def check_depth(data: bytes | str, max_depth: int = MAX_DEPTH) -> None:
    """Refuse `data` (JSON text) when it nests deeper than `max_depth` levels."""
    if isinstance(data, str):
        opening = data.count("[") + data.count("{")
    else:
        opening = data.count(b"[") + data.count(b"{")
    if opening <= max_depth:
        return  # too few brackets to nest that deep (most model replies, lines, canvases)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    import numpy as np

    counter = _Counter()
    for start in range(0, len(raw), CHUNK):
        _, marks, depth = counter.feed(raw[start : start + CHUNK])
        over = np.flatnonzero(depth > max_depth)
        if len(over):
            raise JsonLimitError(too_deep(max_depth), start + int(marks[over[0]]))


def loads(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` of `data` once its depth is known to be within `max_depth`;
    `JsonLimitError` when it is not, `ValueError` (as `json.loads`) when it does not parse."""
    check_depth(data, max_depth)
    return json.loads(data)


def read_line(fh: IO[bytes], max_bytes: int | None = None) -> bytes:
    """The next line of `fh` (b"" at the end); `JsonLimitError` when it is longer than
    `max_bytes` (`MAX_RECORD_BYTES`; never more than that is read into memory)."""
    max_bytes = MAX_RECORD_BYTES if max_bytes is None else max_bytes
    line = fh.readline(max_bytes + 1)
    if len(line) > max_bytes and not (len(line) == max_bytes + 1 and line.endswith(b"\n")):
        raise JsonLimitError(too_large(max_bytes))
    return line


def iter_lines(fh: IO[bytes], max_bytes: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, line) of `fh`, each line checked by `read_line`; a
    `JsonLimitError` names the line."""
    number = 0
    while True:
        number += 1
        try:
            line = read_line(fh, max_bytes)
        except JsonLimitError as exc:
            raise JsonLimitError(f"line {number} is {exc.reason}") from None
        if not line:
            return
        yield number, line


def _first_byte(fh: IO[bytes]) -> tuple[bytes, int]:
    """The first byte of `fh` that is not white space or a BOM, and its offset."""
    offset = 0
    head = fh.read(3)
    if head.startswith(BOM):
        offset, head = 3, b""
    while True:
        for i, byte in enumerate(head):
            if byte not in _SPACE:
                return head[i:], offset + i
        offset += len(head)
        head = fh.read(4096)
        if not head:
            return b"", offset


@dataclass
class Element:
    """One value of a stream: its number (from 1), the offset of its end, the value."""

    number: int
    end: int
    value: Any


def iter_values(
    fh: IO[bytes], max_depth: int = MAX_DEPTH, max_bytes: int | None = None
) -> Iterator[Element]:
    """The elements of a top-level JSON list, one at a time (or the top-level value itself
    when it is not a list), each parsed from its own bytes. `JsonLimitError` for an element
    nested deeper than `max_depth` or larger than `max_bytes`, `JsonBrokenError` for JSON
    that does not parse or breaks off; both say which element."""
    max_bytes = MAX_RECORD_BYTES if max_bytes is None else max_bytes
    head, offset = _first_byte(fh)
    if not head:
        return
    if head[:1] != b"[":
        yield _whole_value(fh, head, offset, max_depth, max_bytes)
        return
    yield from _list_elements(fh, head, offset, max_depth, max_bytes)


def _whole_value(
    fh: IO[bytes], head: bytes, offset: int, max_depth: int, max_bytes: int
) -> Element:
    pieces, size = [head], len(head)
    while chunk := fh.read(CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise JsonLimitError(f"its top-level value is {too_large(max_bytes)}", offset)
        pieces.append(chunk)
    data = b"".join(pieces)
    try:
        check_depth(data, max_depth)
    except JsonLimitError as exc:
        where = offset + (exc.offset or 0)
        raise JsonLimitError(f"its top-level value is {too_deep(max_depth)}", where) from None
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise JsonBrokenError(_message(exc), 0, offset) from None
    return Element(1, offset + size, value)


class _Elements:
    """The state of `_list_elements`: the bytes of the element under way."""

    def __init__(self, offset: int, max_depth: int, max_bytes: int) -> None:
        self.counter = _Counter()
        self.max_depth = max_depth + 1  # the list itself is one level
        self.max_bytes = max_bytes
        self.pieces: list[bytes] = []
        self.size = 0
        self.number = 0  # elements ended so far
        self.trailing_comma = False
        self.closed_at: int | None = None
        self.base = offset  # the stream offset of the chunk being fed

    def feed(self, chunk: bytes) -> Iterator[Element]:
        data, marks, depth = self.counter.feed(chunk)
        if self.closed_at is not None:
            self._after_end(data)
            self.base += len(chunk)
            return
        over = marks[depth > self.max_depth]
        # a comma of the list itself, or the `]` that closes it
        at_top = (depth == 1) & (data[marks] == _COMMA) | (depth == 0)
        ends, closing_at = marks[at_top], depth[at_top] == 0
        if len(over):
            closing_at = closing_at[ends < over[0]]
            ends = ends[ends < over[0]]
        start = 0
        for end, closing in zip(ends.tolist(), closing_at.tolist(), strict=True):
            piece = chunk[start:end]
            element = self._end(piece, closing, self.base + end)
            if element is not None:
                yield element
            start = end + 1
            if closing:
                self.closed_at = self.base + end
                self._after_end(data[start:])
                self.base += len(chunk)
                return
        if len(over):
            raise JsonLimitError(
                f"element {self.number + 1} is {too_deep(self.max_depth - 1)}",
                self.base + int(over[0]),
            )
        self._keep(chunk[start:])
        self.base += len(chunk)

    def _keep(self, piece: bytes) -> None:
        self.size += len(piece)
        if self.size > self.max_bytes:
            raise JsonLimitError(f"element {self.number + 1} is {too_large(self.max_bytes)}")
        self.pieces.append(piece)

    def _end(self, piece: bytes, closing: bool, at: int) -> Element | None:
        self._keep(piece)
        data, self.pieces, self.size = b"".join(self.pieces), [], 0
        if not data.strip(_SPACE):
            if closing and self.number == 0 and not self.trailing_comma:
                return None  # `[]`
            raise JsonBrokenError(
                "an element is missing (two commas, or one before `]`)", self.number, at
            )
        self.trailing_comma = not closing
        try:
            value = json.loads(data)
        except ValueError as exc:
            raise JsonBrokenError(_message(exc), self.number, at) from None
        self.number += 1
        return Element(self.number, at, value)

    def _after_end(self, rest: np.ndarray) -> None:
        if rest.size and bytes(rest).strip(_SPACE):
            raise JsonBrokenError("more data follows the end of the list", self.number)


def _list_elements(
    fh: IO[bytes], head: bytes, offset: int, max_depth: int, max_bytes: int
) -> Iterator[Element]:
    state = _Elements(offset, max_depth, max_bytes)
    # the `[` itself opens depth 1; the first element starts after it
    state.counter.depth = 1
    state.base = offset + 1
    chunk = head[1:]
    while True:
        if chunk:
            yield from state.feed(chunk)
        chunk = fh.read(CHUNK)
        if not chunk:
            break
    if state.closed_at is None:
        raise JsonBrokenError("it breaks off (the list is not closed)", state.number)


def _message(exc: ValueError) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]
