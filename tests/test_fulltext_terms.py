"""`terms_of` must analyze text exactly as the Whoosh analyzer of the keyword index does."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_memory.index.fulltext import analyzer, terms_of

SAMPLE = Path(__file__).resolve().parent.parent / "sample_vault"

TRICKY = [
    "", "   ", "ERR_LEDGER_409 and BIL-1423 failed at 14:03", "v2.1.3 e.g. i.e. U.S.A.",
    "Zoë's café — naïve résumé Jürgen's Straße", "*bold* **x** wild*card",
    "running runs ran RUNNING Happily happiness", "don't won't it's can't",
    "https://example.com/a/b?c=d#frag user@example.org", "C++ C# .NET node.js",
    "日本語のテキスト と 中文", "emoji 🎉 party", "__init__ _private snake_case_name",
    "1,000,000 3.14159 0x1F 1e-9", "The THE tHe and AND or", "a b c d e f g h i j",
    "#pin #important [[wikilink|alias]] `code`", "tab\tseparated\nnew\nlines",
]


def whoosh_terms(text: str) -> list[str]:
    return [t.text for t in analyzer()(text)]


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_strings(text: str) -> None:
    assert terms_of(text) == whoosh_terms(text)


def test_every_line_of_the_sample_vault() -> None:
    lines = [line for path in sorted(SAMPLE.rglob("*.md")) if ".vault" not in path.parts
             for line in path.read_text("utf-8").splitlines()]
    assert len(lines) > 200
    for line in lines:
        assert terms_of(line) == whoosh_terms(line), line
