"""Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint (Ollama, llama.cpp server,
vLLM, LM Studio, OpenAI itself): `[index] provider = "openai"`.

A provider's vectors are kept under their own fingerprint, `openai:MODEL` (plus `:Nd` when
`dimensions` asks for N), never under the bundled model's id, so vectors of two models never
meet in one search (index/store.py keys embeddings by text hash and fingerprint).

Nothing a provider does reaches a caller as an exception other than
`EmbeddingProviderError`, which the indexer and the searcher turn into "pending" units and a
keyword-only search with a warning: a server that is down, slow, or answers 429/5xx (retried
after a back-off, `llm.post_json`), and replies that are not the protocol or hold the wrong
number of vectors or vectors of the wrong length. A single vector that is not finite (NaN,
infinity) or is all zeros comes back as a row of NaN: the indexer leaves that unit pending.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..config import IndexSettings
from ..errors import ConfigError, VaultError
from ..files import boundedjson
from ..llm import LLMError, RetryPolicy, post_json

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("vault_memory")

PROVIDERS = ("fastembed", "openai")
QUERY_TIMEOUT = 5.0  # seconds a search waits for its query's vector at most
DOWN_SECONDS = 30.0  # after a failed query, searches skip the provider this long
RETRIES = 3
MAX_RETRY_WAIT = 20.0


class EmbeddingProviderError(VaultError):
    """The embedding provider could not give usable vectors (down, slow, bad reply)."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(
            f"embedding provider failed: {what}. Check [index] base_url and model in "
            "vault.toml and that the server runs; `vault index` adds the missing vectors later."
        )


def check_provider(settings: IndexSettings) -> str:
    provider = settings.provider.strip().lower() or "fastembed"
    if provider not in PROVIDERS:
        raise ConfigError(
            f'index.provider is {settings.provider!r}; use "fastembed" (the bundled model, '
            'in-process) or "openai" (an OpenAI-compatible /v1/embeddings server).'
        )
    if settings.dimensions < 0:
        raise ConfigError(
            f"index.dimensions is {settings.dimensions}; give 0 (the model's "
            "own) or the vector length to ask for."
        )
    return provider


def remote_model_id(settings: IndexSettings) -> str:
    """The fingerprint of a provider's vectors: provider, model and dimensions."""
    model = settings.model.strip()
    return f"openai:{model}" + (f":{settings.dimensions}d" if settings.dimensions else "")


class RemoteEmbedder:
    """Vectors from an OpenAI-compatible embeddings endpoint, float32 and L2-normalised, with
    the `Embedder` interface (`embed`, `embed_query`, `model_id`, `dims`)."""

    def __init__(self, settings: IndexSettings, api_key: str | None = None) -> None:
        if not settings.base_url.strip():
            raise ConfigError(
                'index.provider = "openai" needs index.base_url, e.g. '
                '"http://127.0.0.1:11434/v1" for Ollama.'
            )
        if not settings.model.strip() or settings.model.strip().lower() == "none":
            raise ConfigError(
                'index.provider = "openai" needs index.model, the name the '
                "server knows the embedding model by."
            )
        self.name = settings.model.strip()
        self.model_id = remote_model_id(settings)
        self.url = settings.base_url.strip().rstrip("/") + "/embeddings"
        self.requested_dims = settings.dimensions or None
        self.dims = settings.dimensions  # 0 until the first reply tells
        self.api_key = api_key
        self.timeout = settings.timeout_seconds
        self.policy = RetryPolicy(RETRIES, MAX_RETRY_WAIT)
        self.sleep = time.sleep
        self._down_until = 0.0

    @classmethod
    def from_settings(cls, settings: IndexSettings) -> RemoteEmbedder:
        api_key = None
        if settings.api_key_env:
            api_key = os.environ.get(settings.api_key_env)
            if not api_key:
                raise ConfigError(
                    f"index.api_key_env names {settings.api_key_env}, which is not set; export "
                    "it or remove api_key_env for a local server."
                )
        return cls(settings, api_key)

    def __repr__(self) -> str:
        return f"RemoteEmbedder({self.model_id!r}, {self.url!r})"

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed documents, `batch_size` per request: shape (len(texts), dims). A row that is
        not a usable vector is NaN. Raises `EmbeddingProviderError`."""
        import numpy as np

        rows: list[np.ndarray] = []
        size = max(1, batch_size)
        for start in range(0, len(texts), size):
            rows.append(self._request(list(texts[start : start + size]), self.timeout))
        if not rows:
            return np.empty((0, self.dims), dtype=np.float32)
        return np.concatenate(rows)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query: shape (dims,). Waits at most 5 s; after a failure, the next
        30 s of searches do not ask again. Raises `EmbeddingProviderError`."""
        import numpy as np

        if time.monotonic() < self._down_until:
            raise EmbeddingProviderError(f"{self.url} failed a moment ago")
        try:
            row = self._request([text], min(self.timeout, QUERY_TIMEOUT), retry=False)[0]
        except EmbeddingProviderError:
            self._down_until = time.monotonic() + DOWN_SECONDS
            raise
        if not np.isfinite(row).all():
            raise EmbeddingProviderError(f"{self.url} returned an unusable vector for the query")
        return row

    def _request(self, batch: list[str], timeout: float, retry: bool = True) -> np.ndarray:
        import numpy as np

        body: dict[str, Any] = {"model": self.name, "input": batch, "encoding_format": "float"}
        if self.requested_dims:
            body["dimensions"] = self.requested_dims
        try:
            raw = post_json(
                self.url,
                body,
                api_key=self.api_key,
                timeout=timeout,
                policy=self.policy if retry else RetryPolicy(0, 0.0),
                sleep=self.sleep,
                hint="check [index] base_url and model in vault.toml",
                timeout_hint="raise [index] timeout_seconds or use a smaller batch_size",
                prefix="embedding request failed",
            )
        except LLMError as exc:
            raise EmbeddingProviderError(exc.what) from None
        try:
            payload = boundedjson.loads(raw)
            data = payload["data"]
            if not isinstance(data, list):
                raise TypeError
        except (ValueError, KeyError, TypeError, boundedjson.JsonLimitError):
            raise EmbeddingProviderError(
                f"{self.url} did not answer in the embeddings format"
            ) from None
        if len(data) != len(batch):
            raise EmbeddingProviderError(
                f"{self.url} returned {len(data)} vectors for {len(batch)} texts"
            )
        ordered: list[Any] = [None] * len(batch)
        for position, item in enumerate(data):
            index = item.get("index", position) if isinstance(item, dict) else None
            if not isinstance(index, int) or not 0 <= index < len(batch) or ordered[index]:
                raise EmbeddingProviderError(f"{self.url} returned vectors with bad indexes")
            ordered[index] = item.get("embedding")
        lengths = {len(v) for v in ordered if isinstance(v, list)}
        if len(lengths) != 1 or any(not isinstance(v, list) for v in ordered):
            raise EmbeddingProviderError(f"{self.url} returned vectors of mixed or no lengths")
        length = lengths.pop()
        expected = self.dims or length
        if length != expected or length == 0:
            raise EmbeddingProviderError(
                f"{self.url} returned {length}-dimensional vectors, expected {expected}"
            )
        try:
            matrix = np.asarray(ordered, dtype=np.float64)
        except (TypeError, ValueError):
            raise EmbeddingProviderError(
                f"{self.url} returned vectors that are not numbers"
            ) from None
        if matrix.ndim != 2:
            raise EmbeddingProviderError(f"{self.url} returned vectors that are not numbers")
        self.dims = length
        with np.errstate(invalid="ignore", over="ignore"):
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            usable = (
                np.isfinite(matrix).all(axis=1, keepdims=True) & (norms > 0) & np.isfinite(norms)
            )
            matrix = np.where(usable, matrix / np.where(usable, norms, 1.0), np.nan)
        return matrix.astype(np.float32)
