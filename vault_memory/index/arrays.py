"""A file of named numpy arrays that opens in microseconds: a JSON header, then each array's raw
bytes, 64-byte aligned, memory-mapped on open.

The search's unit table (every unit's vector, date, salience and window layout) takes 0.2 s to
assemble from SQLite at 10,000 units and 2 s at 100,000; a cold `vault search` process maps it
instead. It is a cache like the rest of `.vault/`: written atomically, stamped with the index
state it was built from, ignored (and rebuilt) when the stamp or the format differs.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MAGIC = b"VAULTARR1\n"
_ALIGN = 64


def write_arrays(path: Path, stamp: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Write `arrays` with `stamp` to `path` atomically (temp file + rename)."""
    import numpy as np

    layout: dict[str, list[Any]] = {}
    offset = 0
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        arrays[name] = array
        layout[name] = [array.dtype.str, list(array.shape), offset]
        offset += _padded(array.nbytes)
    header = json.dumps({"stamp": stamp, "arrays": layout}, sort_keys=True).encode()
    start = -(-(len(MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(MAGIC + struct.pack("<Q", len(header)) + header)
            out.write(b"\0" * (start - out.tell()))
            for name, array in arrays.items():
                out.write(array.tobytes())
                out.write(b"\0" * (start + layout[name][2] + _padded(array.nbytes)
                                   - out.tell()))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_arrays(path: Path, stamp: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The arrays in `path`, memory-mapped read-only, if the file exists, is whole and carries
    exactly `stamp`; otherwise None."""
    import numpy as np

    try:
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                return None
            (length,) = struct.unpack("<Q", f.read(8))
            if length > 1_000_000:
                return None
            header = json.loads(f.read(length))
            size = os.fstat(f.fileno()).st_size
    except (OSError, ValueError, struct.error):
        return None
    if header.get("stamp") != json.loads(json.dumps(stamp)):
        return None
    start = -(-(len(MAGIC) + 8 + length) // _ALIGN) * _ALIGN
    result: dict[str, np.ndarray] = {}
    try:
        for name, (dtype, shape, offset) in header["arrays"].items():
            dtype_ = np.dtype(dtype)
            count = int(np.prod(shape)) if shape else 1
            if start + offset + count * dtype_.itemsize > size:
                return None  # a truncated file
            if count == 0:
                result[name] = np.zeros(shape, dtype=dtype_)
            else:
                result[name] = np.memmap(path, dtype=dtype_, mode="r", offset=start + offset,
                                         shape=tuple(shape))
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return result


def _padded(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN
