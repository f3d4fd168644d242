"""A file of named numpy arrays that opens in microseconds: a JSON header, then each array's raw
bytes, 64-byte aligned, memory-mapped on open.

The search's unit table (every unit's vector, date, salience and window layout) takes 0.2 s to
assemble from SQLite at 10,000 units and 2 s at 100,000; a cold `vault search` process maps it
instead. It is a cache like the rest of `.vault/`: written atomically, stamped with the index
state it was built from, ignored (and rebuilt) when the stamp or the format differs.

Each array carries a 64-bit XXH3 digest of its bytes (xxhash: 10 GB/s, nine times zlib's
crc32, so that saving a patched table, 30 MB at 100,000 units, costs 1 ms of sums, not 8).
Checking them still reads every byte, so a file whose sums were checked (or which this
process wrote) is noted in `<name>.ok` by its identity and change stamps (device, inode,
size, mtime and ctime in ns: any write to the file changes its ctime, which no one can set
back); a process mapping the same file skips the sums. `check_arrays` (`vault doctor`,
`vault status`) always checks.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import os
import struct
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MAGIC = b"VAULTARR3\n"  # 2: each array's crc32 in the header; 3: its XXH3-64 digest
_ALIGN = 64
log = logging.getLogger("vault_memory")


class ArraysDamaged(Exception):
    """The file's header does not parse, or an array's bytes fail their checksum."""


def write_arrays(path: Path, stamp: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Write `arrays` with `stamp` to `path` atomically (temp file + rename)."""
    import numpy as np

    layout: dict[str, list[Any]] = {}
    offset = 0
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        arrays[name] = array
        layout[name] = [
            array.dtype.str,
            list(array.shape),
            offset,
            data_checksum(array.data) if array.nbytes else 0,
        ]
        offset += _padded(array.nbytes)
    header = json.dumps({"stamp": stamp, "arrays": layout}, sort_keys=True).encode()
    start = -(-(len(MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(MAGIC + struct.pack("<Q", len(header)) + header)
            out.write(b"\0" * (start - out.tell()))
            for name, array in arrays.items():
                out.write(array.data.cast("B") if array.nbytes else b"")  # no copy
                out.write(b"\0" * (start + layout[name][2] + _padded(array.nbytes) - out.tell()))
        os.replace(tmp, path)
        _note_checked(path)  # its sums are those of the arrays just written
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_arrays(path: Path, stamp: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The arrays in `path`, memory-mapped read-only, if the file exists, is whole and carries
    exactly `stamp`; otherwise None. Damage (bytes that fail their checksum, a header that does
    not parse) is logged as one warning: the caller rebuilds the file."""
    try:
        return _read_arrays(path, stamp)
    except ArraysDamaged as exc:
        log.warning("%s is damaged (%s): rebuilding it from the index.", path.name, exc)
        return None


def read_stamped(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """The stamp and the arrays in `path` whatever the stamp (a caller that can bring arrays
    of an older state up to date: the unit table, patched by the files that changed), or None
    when there is no whole file (damage is logged as by `read_arrays`)."""
    try:
        header: dict[str, Any] = {}
        arrays = _read_arrays(path, None, header)
    except ArraysDamaged as exc:
        log.warning("%s is damaged (%s): rebuilding it from the index.", path.name, exc)
        return None
    if arrays is None or not isinstance(header.get("stamp"), dict):
        return None
    return header["stamp"], arrays


def check_arrays(path: Path) -> str | None:
    """Why the arrays file at `path` is damaged, or None when it is whole (every checksum)."""
    try:
        _read_arrays(path, None, trust_checked=False)
    except ArraysDamaged as exc:
        return str(exc)
    return None


def _checked_path(path: Path) -> Path:
    return path.with_name(path.name + ".ok")


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _note_checked(path: Path) -> None:
    """Note that the file at `path`, as it is now, has its sums right (best effort)."""
    with contextlib.suppress(OSError):
        identity = json.dumps(_identity(os.stat(path))).encode()
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(identity)
            os.replace(tmp, _checked_path(path))
        except OSError:
            os.unlink(tmp)
            raise


def _was_checked(path: Path, st: os.stat_result) -> bool:
    try:
        return bool(json.loads(_checked_path(path).read_bytes()) == _identity(st))
    except (OSError, ValueError):
        return False


def _read_arrays(
    path: Path,
    stamp: dict[str, Any] | None,
    seen: dict[str, Any] | None = None,
    trust_checked: bool = True,
) -> dict[str, np.ndarray] | None:
    import numpy as np

    try:
        with open(path, "rb") as f:
            magic = f.read(len(MAGIC))
            if magic != MAGIC:
                if magic[:8] == MAGIC[:8]:  # an older format: rebuilt quietly
                    return None
                raise ArraysDamaged("not a unit table file")
            (length,) = struct.unpack("<Q", f.read(8))
            if length > 10_000_000:
                raise ArraysDamaged("its header is too long")
            header = json.loads(f.read(length))
            st = os.fstat(f.fileno())
            size = st.st_size
            # one map of the whole file for every array (np.memmap per array: 0.5 ms each)
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ArraysDamaged(f"cannot be read: {exc.strerror}") from None
    except (ValueError, struct.error):
        raise ArraysDamaged("its header does not parse") from None
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), dict):
        raise ArraysDamaged("its header does not parse")
    if stamp is not None and header.get("stamp") != json.loads(json.dumps(stamp)):
        return None
    if seen is not None:
        seen.update(header)
    start = -(-(len(MAGIC) + 8 + length) // _ALIGN) * _ALIGN
    checked = trust_checked and _was_checked(path, st)
    result: dict[str, np.ndarray] = {}
    try:
        for name, (dtype, shape, offset, crc) in header["arrays"].items():
            dtype_ = np.dtype(dtype)
            count = int(np.prod(shape)) if shape else 1
            if start + offset + count * dtype_.itemsize > size:
                raise ArraysDamaged(f"it is cut short (array {name})")
            if count == 0:
                result[name] = np.zeros(shape, dtype=dtype_)
                continue
            array = np.frombuffer(mapped, dtype=dtype_, count=count, offset=start + offset).reshape(
                shape
            )
            if not checked and data_checksum(array.data) != crc:
                raise ArraysDamaged(f"array {name} fails its checksum")
            result[name] = array
    except ArraysDamaged:
        raise
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ArraysDamaged(f"its layout does not parse ({exc})") from None
    if not checked and trust_checked:
        _note_checked(path)
    return result


def data_checksum(data: memoryview) -> int:
    """The checksum of an array's bytes (XXH3, 64 bits)."""
    import xxhash

    return int(xxhash.xxh3_64_intdigest(data))


def _padded(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN
