"""Which lines search returned: one JSON line per query in `.vault/hits.jsonl`.

The dream reads it to favour what agents actually look up. Each hit is logged as its path,
line span and a short hash of each returned line, so a line still counts after the lines
above it moved. Writing never fails a search and costs a few tens of microseconds; the log is
cache (deleting it only forgets which lines were popular) and is rotated at 4 MB.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HIT_LOG = "hits.jsonl"
ROTATED = "hits.1.jsonl"
MAX_BYTES = 4_000_000


def line_hash(line: str) -> str:
    return hashlib.blake2s(line.strip().encode("utf-8"), digest_size=5).hexdigest()


def record(cache_dir: Path, hits: Iterable[Any]) -> None:
    """Append one query's hits (objects with path, start_line, end_line, text). Never raises:
    a read-only or missing cache simply logs nothing."""
    try:
        if not cache_dir.is_dir():
            return
        rows = [
            [
                h.path,
                h.start_line,
                h.end_line,
                [line_hash(t) for t in h.text.split("\n") if t.strip()],
            ]
            for h in hits
        ]
        if not rows:
            return
        path = cache_dir / HIT_LOG
        data = (
            json.dumps(
                {"t": int(time.time()), "hits": rows}, ensure_ascii=False, separators=(",", ":")
            )
            + "\n"
        ).encode("utf-8")
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_size > MAX_BYTES:
                os.replace(path, cache_dir / ROTATED)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)  # one write of one line: appends from two processes never mix
        finally:
            os.close(fd)
    except Exception:  # the log is a hint for the dream; a search must never fail over it
        return


def counts(cache_dir: Path) -> dict[tuple[str, str], int]:
    """(path, line hash) -> how many searches returned that line."""
    found: dict[tuple[str, str], int] = {}
    for name in (ROTATED, HIT_LOG):
        try:
            with open(cache_dir / name, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    try:
                        rows = json.loads(line)["hits"]
                        for path, _start, _end, hashes in rows:
                            for h in set(hashes):
                                found[(path, h)] = found.get((path, h), 0) + 1
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn or foreign line
        except OSError:
            continue
    return found
