"""The derived cache: scan and plan (pure), units, the SQLite store, the Whoosh keyword index, the
embedding model and the unit arrays; `Index` keeps `.vault/` in line with the files.

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import indexer, settings
    from .arrays import read_arrays, write_arrays
    from .census import ScopeInfo, list_scopes
    from .embedder import DISABLE_ENV, ModelUnavailable, model_disabled
    from .fulltext import BM25_B, BM25_K1, terms_of
    from .indexer import (
        IGNORED_DIRS,
        WRITE_LOCK,
        Index,
        IndexReport,
        Progress,
        fingerprint,
        is_indexable,
        model_id_for,
        scope_counts,
        shared_embedder,
        status,
    )
    from .integrity import Finding, Verification
    from .remote import EmbeddingProviderError, RemoteEmbedder
    from .store import CorruptIndexError, SchemaVersionError

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "BM25_B": ("fulltext", "BM25_B"),
    "BM25_K1": ("fulltext", "BM25_K1"),
    "CorruptIndexError": ("store", "CorruptIndexError"),
    "DISABLE_ENV": ("embedder", "DISABLE_ENV"),
    "EmbeddingProviderError": ("remote", "EmbeddingProviderError"),
    "RemoteEmbedder": ("remote", "RemoteEmbedder"),
    "fingerprint": ("indexer", "fingerprint"),
    "Finding": ("integrity", "Finding"),
    "Verification": ("integrity", "Verification"),
    "IGNORED_DIRS": ("indexer", "IGNORED_DIRS"),
    "Index": ("indexer", "Index"),
    "IndexReport": ("indexer", "IndexReport"),
    "ScopeInfo": ("census", "ScopeInfo"),
    "SchemaVersionError": ("store", "SchemaVersionError"),
    "list_scopes": ("census", "list_scopes"),
    "ModelUnavailable": ("embedder", "ModelUnavailable"),
    "Progress": ("indexer", "Progress"),
    "WRITE_LOCK": ("indexer", "WRITE_LOCK"),
    "indexer": ("indexer", None),
    "is_indexable": ("indexer", "is_indexable"),
    "model_disabled": ("embedder", "model_disabled"),
    "model_id_for": ("indexer", "model_id_for"),
    "read_arrays": ("arrays", "read_arrays"),
    "scope_counts": ("indexer", "scope_counts"),
    "settings": ("settings", None),
    "shared_embedder": ("indexer", "shared_embedder"),
    "status": ("indexer", "status"),
    "terms_of": ("fulltext", "terms_of"),
    "write_arrays": ("arrays", "write_arrays"),
}
__all__ = [
    "BM25_B",
    "BM25_K1",
    "CorruptIndexError",
    "DISABLE_ENV",
    "EmbeddingProviderError",
    "Finding",
    "IGNORED_DIRS",
    "Index",
    "IndexReport",
    "ModelUnavailable",
    "Progress",
    "RemoteEmbedder",
    "ScopeInfo",
    "SchemaVersionError",
    "Verification",
    "WRITE_LOCK",
    "fingerprint",
    "indexer",
    "is_indexable",
    "list_scopes",
    "model_disabled",
    "model_id_for",
    "read_arrays",
    "scope_counts",
    "settings",
    "shared_embedder",
    "status",
    "terms_of",
    "write_arrays",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
