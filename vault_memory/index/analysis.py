"""Whoosh's side of `words.terms_of`: the tokenizer the keyword index's text fields are
analyzed by (kept apart so that a query, which analyzes with `terms_of` alone, does not
import whoosh.analysis). Whoosh keeps it by name in the index's schema: do not rename."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from whoosh.analysis import Token, Tokenizer

from .words import terms_of


class Terms(Tokenizer):
    """The analyzed terms of a text (`terms_of`) as Whoosh tokens."""

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for pos, term in enumerate(terms_of(value) if tokenize else [value]):
            token.text = term
            token.boost = 1.0
            token.stopped = False
            if keeporiginal:
                token.original = term
            if positions:
                token.pos = start_pos + pos
            if chars:  # a term's characters are not kept, its place among the terms is
                token.startchar = token.endchar = start_char + pos
            yield token
