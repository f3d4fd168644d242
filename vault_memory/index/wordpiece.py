"""The bundled model's tokenizer for ASCII text, without the tokenizers library.

A cold `vault search` embeds one query. The tokenizers library gives the ids of any text, but
importing it and loading tokenizer.json costs about 25 CPU-ms, a tenth of such a process.
For text that is all ASCII (most queries) the bundled tokenizer (BERT uncased: BertNormalizer,
BertPreTokenizer, WordPiece, `[CLS] … [SEP]`, truncated at 256 tokens) comes down to a few
rules, done here with the vocabulary the tokenizer holds (model/vocab.txt, one token a line,
in id order): the special tokens are taken from the raw text first; control characters other
than tab and line breaks are dropped; the text is lower-cased and cut at whitespace and around
each punctuation character (all of ASCII's, symbols included); each word is split greedily
into its longest known pieces (`##` continuing), or is `[UNK]` when one is missing or it is
longer than 100 characters. Any other text gets None, and the caller asks tokenizers.
tests/index/test_wordpiece.py compares the ids with tokenizers' on generated and real text.
"""

from __future__ import annotations

import re
from pathlib import Path

SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
MAX_WORD_CHARS = 100  # WordPiece's max_input_chars_per_word in tokenizer.json
_SPECIAL = re.compile(r"(\[(?:PAD|UNK|CLS|SEP|MASK)\])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")


class WordPiece:
    """Token ids of ASCII text as the bundled tokenizer.json gives them."""

    def __init__(self, vocab: Path, max_length: int) -> None:
        tokens = vocab.read_text("utf-8").split("\n")
        if tokens and tokens[-1] == "":
            tokens.pop()
        self._ids = dict(zip(tokens, range(len(tokens)), strict=True))
        self._unk = self._ids["[UNK]"]
        self._cls = self._ids["[CLS]"]
        self._sep = self._ids["[SEP]"]
        self.max_length = max_length

    def ids(self, text: str) -> list[int] | None:
        """`[CLS]`, the text's tokens (at most max_length - 2) and `[SEP]`; None for text
        that is not all ASCII."""
        if not text.isascii():
            return None
        ids = [self._cls]
        for number, part in enumerate(_SPECIAL.split(text)):
            if number % 2:
                ids.append(self._ids[part])
                continue
            for word in _WORDS.findall(_CONTROL.sub("", part).lower()):
                self._pieces(word, ids)
        del ids[self.max_length - 1 :]
        ids.append(self._sep)
        return ids

    def _pieces(self, word: str, out: list[int]) -> None:
        if len(word) > MAX_WORD_CHARS:
            out.append(self._unk)
            return
        found = []
        start, end = 0, len(word)
        while start < len(word):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            number = self._ids.get(piece)
            if number is not None:
                found.append(number)
                start, end = end, len(word)
            elif end - start > 1:
                end -= 1
            else:
                out.append(self._unk)
                return
        out.extend(found)
