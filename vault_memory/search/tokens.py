"""Offline token counts for context budgets.

The estimator is the bundled WordPiece tokenizer of all-MiniLM-L6-v2
(`vault_memory/model/tokenizer.json`, run by the `tokenizers` package that fastembed already
depends on), loaded on first use and cached; nothing is ever downloaded. Its count is the
number of word pieces (no [CLS]/[SEP]) plus one per newline: WordPiece treats a newline as
free whitespace, while the chat models a context block is written for spend a token on most
line breaks, so Markdown with many short lines would otherwise be undercounted.

When the tokenizer cannot be loaded, a heuristic takes over: one token per 2.5 characters
plus one per newline. On the files of sample_vault/ the tokenizer gives 2.7 to 3.9
characters per token (3.3 overall), so the heuristic overestimates and errs on the side of a
smaller block.

Two floors keep a count honest where WordPiece is not: a word longer than 100 characters
(a hex string, a base64 blob) is one [UNK] piece to WordPiece, so it counts by the heuristic
instead; and no line counts fewer than one token per MAX_CHARS_PER_TOKEN characters, so a
block within its token budget is also within a character cap derived from it (budget x 6
characters), whatever the text.

Counts add up over lines (the pieces of a word never span a line break), so a budget can be
filled line by line; callers still count the final text.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("vault_memory")

TOKENIZER_FILE = Path(__file__).resolve().parent.parent / "model" / "tokenizer.json"
HEURISTIC_CHARS_PER_TOKEN = 2.5
MAX_CHARS_PER_TOKEN = 6  # no line counts fewer tokens than its length / 6 (real text: 2.7-3.9)
LONGEST_WORD = 100  # WordPiece's max_input_chars_per_word: a longer word is one [UNK]


class TokenCounter:
    """Counts tokens of text; `name` says which estimator is in use.

    A text's count is the sum of its lines' counts plus its newlines, by definition (for the
    tokenizer this is also what encoding the whole text gives). Line counts are cached, so
    building a block again for a MEMORY.md that barely changed costs almost nothing.
    """

    MAX_CACHED_LINES = 50_000

    def __init__(self, tokenizer: Any | None, name: str) -> None:
        self._tokenizer = tokenizer
        self.name = name
        self._cache: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"TokenCounter({self.name!r})"

    @property
    def tokenizer(self) -> Any | None:
        """The WordPiece tokenizer counted with (None when counting by characters)."""
        return self._tokenizer

    def count(self, text: str) -> int:
        if not text:
            return 0
        lines = text.split("\n")
        return sum(self.count_lines(lines)) + len(lines) - 1

    def count_lines(self, lines: Sequence[str]) -> list[int]:
        """Counts of each line (without its newline)."""
        cache = self._cache
        missing = [line for line in dict.fromkeys(lines) if line not in cache]
        if missing:
            cache.update(zip(missing, self._pieces(missing), strict=True))
        counts = [cache[line] for line in lines]
        if len(cache) > self.MAX_CACHED_LINES:
            cache.clear()
        return counts

    def _pieces(self, texts: list[str]) -> list[int]:
        if self._tokenizer is None:
            return [math.ceil(len(t) / HEURISTIC_CHARS_PER_TOKEN) for t in texts]
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [_floored(t, len(e.ids)) for t, e in zip(texts, encodings, strict=True)]


def _floored(line: str, pieces: int) -> int:
    """A line's WordPiece count, raised to the floors of the module docstring."""
    if len(line) <= LONGEST_WORD:
        return pieces
    for word in line.split():
        if len(word) > LONGEST_WORD:  # counted as one [UNK] piece
            pieces += math.ceil(len(word) / HEURISTIC_CHARS_PER_TOKEN) - 1
    return max(pieces, math.ceil(len(line) / MAX_CHARS_PER_TOKEN))


_counter: TokenCounter | None = None
_lock = threading.Lock()


def load_counter(path: Path = TOKENIZER_FILE) -> TokenCounter:
    """A counter backed by the tokenizer file at `path`, or the heuristic if it cannot load."""
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
        # tokenizer.json pads and truncates to 128 pieces for the model; counting needs neither.
        tokenizer.no_truncation()
        tokenizer.no_padding()
    except Exception as exc:  # missing package, unreadable file: a count is still needed
        log.info("token counts use the heuristic (the bundled tokenizer did not load: %s)", exc)
        return TokenCounter(None, f"heuristic: {HEURISTIC_CHARS_PER_TOKEN:g} characters per token")
    return TokenCounter(tokenizer, "wordpiece: all-MiniLM-L6-v2 tokenizer (bundled)")


def token_counter() -> TokenCounter:
    """The process-wide counter, loaded once (about 40 ms)."""
    global _counter
    with _lock:
        if _counter is None:
            _counter = load_counter()
        return _counter


def count_tokens(text: str) -> int:
    return token_counter().count(text)
