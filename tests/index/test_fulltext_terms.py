"""`terms_of` must analyze text exactly as the Whoosh analyzer of the keyword index does, and,
for text without CJK, as Whoosh's own StemmingAnalyzer does once the text is folded (the
reference: the stop list, the stemmer and the split into runs of word characters are its)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_memory.index.fulltext import analyzer
from vault_memory.index.words import (
    fold,
    has_cjk,
    name_pictographs,
    pictograph_words,
    stop_words,
    terms_of,
)

SAMPLE = Path(__file__).resolve().parents[2] / "sample_vault"

TRICKY = [
    "",
    "   ",
    "ERR_LEDGER_409 and BIL-1423 failed at 14:03",
    "v2.1.3 e.g. i.e. U.S.A.",
    "Zoë's café — naïve résumé Jürgen's Straße",
    "*bold* **x** wild*card",
    "running runs ran RUNNING Happily happiness",
    "don't won't it's can't",
    "https://example.com/a/b?c=d#frag user@example.org",
    "C++ C# .NET node.js",
    "日本語のテキスト と 中文",
    "emoji 🎉 party",
    "__init__ _private snake_case_name",
    "1,000,000 3.14159 0x1F 1e-9",
    "The THE tHe and AND or",
    "a b c d e f g h i j",
    "#pin #important [[wikilink|alias]] `code`",
    "tab\tseparated\nnew\nlines",
]


def whoosh_terms(text: str) -> list[str]:
    return [t.text for t in analyzer()(text)]


def reference_terms(text: str) -> list[str]:
    """Whoosh's StemmingAnalyzer on the folded text, its pictographs written as words."""
    from whoosh.analysis import StemmingAnalyzer

    return [
        t.text
        for t in StemmingAnalyzer(stoplist=stop_words(), minsize=1)(name_pictographs(fold(text)))
    ]


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_strings(text: str) -> None:
    assert terms_of(text) == whoosh_terms(text)
    if not has_cjk(text):
        assert terms_of(text) == reference_terms(text)


def test_ascii_text_is_analyzed_as_whoosh_does_without_folding() -> None:
    """An English vault's keyword index is what it was before folding existed."""
    from whoosh.analysis import StemmingAnalyzer

    plain = StemmingAnalyzer(stoplist=stop_words(), minsize=1)
    for text in TRICKY:
        if text.isascii():
            assert terms_of(text) == [t.text for t in plain(text)]


def test_the_index_analyzer_keeps_positions_in_order() -> None:
    tokens = [(t.text, t.pos) for t in analyzer()("東京 Café", positions=True)]
    assert tokens == [("東", 0), ("東京", 1), ("京", 2), ("cafe", 3)]


def test_every_line_of_the_sample_vault() -> None:
    lines = [
        line
        for path in sorted(SAMPLE.rglob("*.md"))
        if ".vault" not in path.parts
        for line in path.read_text("utf-8").splitlines()
    ]
    assert len(lines) > 200
    for line in lines:
        assert terms_of(line) == whoosh_terms(line), line
        assert terms_of(line) == reference_terms(line), line


def test_pictographs_stand_for_the_words_of_their_names() -> None:
    """A chat's "got a 🐶!!" is found by "dog"; faces, skin tones and gestures say how, not
    what, and give nothing."""
    assert terms_of("got a 🐶 today!!") == ["got", "dog", "todai"]
    assert terms_of("happy bday 🎂") == ["happi", "bdai", "birthdai", "cake"]
    assert terms_of("I ❤️ NY") == ["heart", "love", "ny"]  # the emoji presentation selector
    assert terms_of("⚽ tonight ✈️") == ["soccer", "ball", "tonight", "airplan"]
    assert terms_of("lol 😂😭🙏 🤣 👍🏽 👋") == ["lol"]
    assert terms_of("🐱") == ["cat"]  # an animal's face is the animal
    assert terms_of("family 👨‍👩‍👧") == ["famili", "man", "woman", "girl"]  # joined: each
    assert pictograph_words("🥑") == " avocado " and pictograph_words("😂") == " "
    assert name_pictographs("plain ascii :)") == "plain ascii :)"
    assert terms_of("café ☕") == terms_of("cafe hot beverage")
