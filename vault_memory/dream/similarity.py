"""How alike two short texts are, for the dream: sentence embeddings with token overlap, or
token overlap alone.

Both give a score in [0, 1] and thresholds set by hand on the pairs of sample_vault/ (daily
entries against MEMORY.md entries that restate them, and against entries on the same topic
that say something else): `duplicate` (the same fact said again: merge it), `related` (the
same thing mentioned on another day: it recurs) and `place_at` (close enough to put a new
entry in that entry's section). MiniLM's cosine alone puts a topic above a fact ("Move the
renderer to WeasyPrint" is 0.78 from "The renderer runs wkhtmltopdf", about what a true
restatement scores), so the model's cosine is averaged with the overlap of content words,
which keeps the names and numbers that make a fact. Token overlap alone is deterministic and
needs no model; it is used when embeddings are turned off or the model cannot load.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_WORD = re.compile(r"[^\W_]+(?:[-'.][^\W_]+)*", re.U)
_STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "so",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "they",
        "them",
        "their",
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "why",
        "how",
        "not",
        "no",
        "nor",
        "too",
        "very",
        "can",
        "will",
        "just",
        "do",
        "does",
        "did",
        "done",
        "has",
        "have",
        "had",
        "having",
        "should",
        "would",
        "could",
        "may",
        "might",
        "must",
        "also",
        "only",
        "than",
        "up",
        "out",
        "over",
        "under",
        "again",
        "further",
        "once",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "own",
        "same",
    }
)


def tokens(text: str) -> frozenset[str]:
    """Content words, lower-cased, with a light plural/verb-ending fold."""
    out = set()
    for word in _WORD.findall(text.lower()):
        if word in _STOP or len(word) < 2:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(word) > len(suffix) + 3 and word.endswith(suffix):
                word = word[: -len(suffix)]
                break
        out.add(word)
    return frozenset(out)


MAX_CACHED = 20_000
_VECTORS: dict[str, dict[str, Any]] = {}


class Similarity:
    """Scores between texts; `duplicate` and `related` are the thresholds to compare with."""

    name = "similarity"
    duplicate = 1.0
    related = 1.0
    place_at = 1.0  # a new entry joins the section of an existing entry at least this similar

    def matrix(self, left: Sequence[str], right: Sequence[str]) -> list[list[float]]:
        raise NotImplementedError

    def pair(self, a: str, b: str) -> float:
        return self.matrix([a], [b])[0][0]


class TokenSimilarity(Similarity):
    """Dice coefficient of content-word sets: no model, fully deterministic."""

    name = "token-overlap"
    duplicate = 0.6
    related = 0.4
    place_at = 0.3

    def matrix(self, left: Sequence[str], right: Sequence[str]) -> list[list[float]]:
        lt = [tokens(t) for t in left]
        rt = [tokens(t) for t in right]
        rows = []
        for a in lt:
            row = []
            for b in rt:
                total = len(a) + len(b)
                row.append(2 * len(a & b) / total if total else 0.0)
            rows.append(row)
        return rows


class EmbeddingSimilarity(Similarity):
    """The mean of the sentence model's cosine and the token overlap (one embedding per
    distinct text)."""

    duplicate = 0.6
    related = 0.55
    place_at = 0.4

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        model = str(getattr(embedder, "model_id", "embeddings"))
        self.name = f"{model} + token-overlap"
        # Vectors are kept for the process (a watcher dreams every night; tests dream often).
        self._cache = _VECTORS.setdefault(model, {})
        self._tokens = TokenSimilarity()

    def _vectors(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if len(self._cache) + len(missing) > MAX_CACHED:
            self._cache.clear()
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._cache[text] = vector
        dims = int(getattr(self.embedder, "dims", 0)) or 1
        if not texts:
            return np.zeros((0, dims), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def matrix(self, left: Sequence[str], right: Sequence[str]) -> list[list[float]]:
        if not left or not right:
            return [[] for _ in left]
        cosines = self._vectors(left) @ self._vectors(right).T
        overlap = self._tokens.matrix(left, right)
        return [
            [(max(0.0, min(1.0, float(c))) + t) / 2 for c, t in zip(crow, trow, strict=True)]
            for crow, trow in zip(cosines, overlap, strict=True)
        ]
