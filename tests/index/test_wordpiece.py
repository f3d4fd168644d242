"""index/wordpiece.py gives the bundled tokenizer's ids for ASCII text (checked against the
tokenizers library itself), and declines any other text, which the query encoder then gives to
tokenizers."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from tokenizers import Tokenizer

from vault_memory.index import embedder as emb
from vault_memory.index.wordpiece import SPECIAL, WordPiece

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "vault-memory-hypothesis")

REPO = Path(__file__).resolve().parents[2]
MAX_LENGTH = 256


@pytest.fixture(scope="module")
def reference() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(emb.TOKENIZER_DIR / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_LENGTH)
    tokenizer.no_padding()
    return tokenizer


@pytest.fixture(scope="module")
def wordpiece() -> WordPiece:
    return WordPiece(emb.TOKENIZER_DIR / "vocab.txt", MAX_LENGTH)


def test_the_vocabulary_file_is_the_tokenizers() -> None:
    vocab = json.loads((emb.TOKENIZER_DIR / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
    lines = (emb.TOKENIZER_DIR / "vocab.txt").read_text("utf-8").split("\n")
    assert lines[-1] == ""
    assert lines[:-1] == sorted(vocab, key=vocab.__getitem__)
    assert list(vocab.values()) == [vocab[t] for t in vocab] and sorted(vocab.values()) == list(
        range(len(vocab))
    )


# Plain words, word pieces, punctuation, the special tokens and every ASCII character,
# controls included: the pieces the rules are about.
_PIECES = st.sampled_from(
    [
        *SPECIAL,
        "[mask]",
        "[MASK",
        "MASK]",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\x00",
        "\x0b",
        "\x0c",
        "\x1f",
        "\x7f",
        "un",
        "##",
        "ing",
        "affable",
        "Billing",
        "DB",
        "e-mail",
        "don't",
        "409",
        "x" * 101,
        "a" * 100,
        "ERR_LEDGER",
        "...",
        "$",
        "~",
        "`",
        "^",
        "|",
    ]
)
_ASCII = st.lists(st.one_of(_PIECES, st.characters(max_codepoint=127)), max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(_ASCII)
def test_generated_ascii_gets_the_tokenizers_ids(
    reference: Tokenizer, wordpiece: WordPiece, text: str
) -> None:
    assert wordpiece.ids(text) == reference.encode(text).ids


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(max_codepoint=127), max_size=400))
def test_any_ascii_string_gets_the_tokenizers_ids(
    reference: Tokenizer, wordpiece: WordPiece, text: str
) -> None:
    assert wordpiece.ids(text) == reference.encode(text).ids


EDGES = [
    "",
    "ab\x00cd",
    "ab\x0bcd",
    "ab\x0ccd",
    "a\x1cb\x1fc\x7fd",
    "tab\there\r\nnew",
    "x[MASK]y",
    "[CLS][SEP]",
    "[mask] [MASK ]",
    "a" * 100,
    "a" * 101,
    "unaffable",
    "ERR_LEDGER_409",
    "don't stop-believing; $100 @home #tag ~x^y|z`q_r\\s",
    "billing " * 400,
]


@pytest.mark.parametrize("text", EDGES)
def test_edge_cases_get_the_tokenizers_ids(
    reference: Tokenizer, wordpiece: WordPiece, text: str
) -> None:
    assert wordpiece.ids(text) == reference.encode(text).ids


def _real_texts() -> list[str]:
    """Every line and every whole file of the sample vault, the README and the docs."""
    files = [
        *sorted((REPO / "sample_vault").rglob("*.md")),
        REPO / "README.md",
        *sorted((REPO / "docs").rglob("*.md")),
    ]
    texts = []
    for path in files:
        text = path.read_text("utf-8")
        lines = text.splitlines()
        texts += [text, *lines, "\n".join(line for line in lines if line.isascii())]
    return texts


def test_real_text_gets_the_tokenizers_ids(reference: Tokenizer, wordpiece: WordPiece) -> None:
    texts = _real_texts()
    ascii_texts = [t for t in texts if t.isascii()]
    assert len(ascii_texts) > 1000 and max(map(len, ascii_texts)) > 10_000  # long ones too
    for text in ascii_texts:
        assert wordpiece.ids(text) == reference.encode(text).ids, text[:80]
    truncated = wordpiece.ids("billing " * 400)
    assert truncated is not None and len(truncated) == MAX_LENGTH


NOT_ASCII = [
    "Zoë likes diagrams",
    "naïve café",
    "数据库 billing",
    "deploy 🚀 friday",
    "İstanbul ΣΟΦΙΑ",
    "tab\u00a0nbsp",
    "line\u2028sep",
    "x\u200by",
    "Ǆ ǅ ǆ",
    "\ufffd",
]


def test_other_text_is_declined_and_given_to_tokenizers(
    reference: Tokenizer, wordpiece: WordPiece
) -> None:
    texts = NOT_ASCII + [t for t in _real_texts() if not t.isascii()]
    encoder = emb.QueryEncoder()
    for text in texts:
        assert wordpiece.ids(text) is None
        assert encoder.token_ids(text) == reference.encode(text).ids
    assert encoder.token_ids("which database?") == reference.encode("which database?").ids
