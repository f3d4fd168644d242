"""pgvector's binary output read as our vector blobs (little-endian float32), one row at a
time and a search's rows in one pass. Pure: no server."""

from __future__ import annotations

import struct

import numpy as np

from vault_memory.index.pgstore import vector_blob, vector_blobs


def _binary(values: np.ndarray) -> bytes:
    """A vector as pgvector sends it: int16 dims, int16 unused, big-endian float4s."""
    return struct.pack(">hh", len(values), 0) + values.astype(">f4").tobytes()


def test_a_vector_reads_as_its_little_endian_floats() -> None:
    values = np.array([1.5, -0.25, 3.0], dtype=np.float32)
    assert np.frombuffer(vector_blob(_binary(values)), dtype="<f4").tolist() == [1.5, -0.25, 3.0]


def test_many_vectors_read_as_each_alone_with_none_kept_in_place() -> None:
    rng = np.random.default_rng(7)
    binaries: list[bytes | None] = [_binary(rng.standard_normal(384)) for _ in range(4)]
    binaries[1:1] = [None]
    binaries.append(_binary(np.arange(3, dtype=np.float32)))  # another length: a damaged row
    assert vector_blobs(binaries) == [None if b is None else vector_blob(b) for b in binaries]
    assert vector_blobs([]) == [] and vector_blobs([None]) == [None]
