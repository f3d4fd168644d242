"""`plural`: the count and the noun that agrees with it."""

from __future__ import annotations

import pytest

from vault_memory.text import plural


@pytest.mark.parametrize(
    ("count", "words", "expected"),
    [
        (0, ("batch",), "0 batches"),
        (1, ("batch",), "1 batch"),
        (2, ("batch",), "2 batches"),
        (1, ("search",), "1 search"),
        (7, ("search",), "7 searches"),
        (1, ("changed path",), "1 changed path"),
        (300, ("changed path",), "300 changed paths"),
        (1, ("reconcile",), "1 reconcile"),
        (2, ("reconcile",), "2 reconciles"),
        (2, ("box",), "2 boxes"),
        (2, ("wish",), "2 wishes"),
        (1, ("entry", "entries"), "1 entry"),
        (3, ("entry", "entries"), "3 entries"),
    ],
)
def test_plural(count: int, words: tuple[str, ...], expected: str) -> None:
    assert plural(count, *words) == expected
