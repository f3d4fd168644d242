"""The words of a text for keyword search, in every script.

Latin, Cyrillic, Greek and other scripts written with spaces are split into runs of word
characters, as Whoosh's RegexTokenizer does (dots inside kept: v2.1, e.g.). Chinese, Japanese
and Korean are not written with spaces between words: a run of their characters would be
one "word" a sentence long that no query matches, so each such run gives its overlapping
character pairs (東京タワー -> 東京 京タ タワ ワー), the standard answer of search engines for
these scripts (Lucene's CJKBigramFilter) and one that needs no dictionary. A text is indexed
with the single characters as well, so that a one-character query word (猫) still matches;
a query of two or more characters asks for the pairs only, which are what carry meaning.

Matching folds what a reader would not tell apart: compatibility and width variants (ＡＢＣ,
ｶﾀｶﾅ, ﬁ, ①), case (Straße = strasse), and the accents of Latin, Greek and Cyrillic letters
(café = cafe, Ёлка = елка); the marks of other scripts (Japanese voicing: が is not か,
Devanagari vowel signs) are kept, and stay inside their word.

Emoji and pictographs stand for the words of their Unicode names (🐶 DOG FACE -> dog, 🎂
BIRTHDAY CAKE -> birthday cake, ⚽ SOCCER BALL -> soccer ball; a heart also for "love"), as
people type them for things in chats ("got a 🐶!!"), without words that name no thing (face,
sign, black, heavy). Faces and gestures (😂 😭 🙏, the emoticons block, and the faces of the
other blocks) say how something was said, not what: they stay out, as before.

Text that is all ASCII takes the same path as before this module (nothing to fold): the
keyword index of an English vault is unchanged by it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from typing import Any

#: Recorded in the index (meta `analyzer`): bump when `words` changes what a text gives, and
#: the files whose words differ are indexed again (their vectors are kept).
ANALYZER = 3  # 1: Whoosh's RegexTokenizer and lower-case; 2: folding and CJK pairs; 3: emoji

#: Whoosh's RegexTokenizer default: runs of word characters, dots inside (v2.1, e.g).
ASCII_TOKEN = re.compile(r"[\w\*]+(\.?[\w\*]+)*")

#: Han (with extensions and compatibility ideographs), kana (with the half-width forms),
#: Hangul syllables and jamo: the scripts written without spaces between words.
_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0002fa1f\U00030000-\U0003134f"
)


@functools.cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a run of CJK characters, one), compiled on the first non-ASCII text: their character
    class takes 6 CPU-ms to compile, a tenth of what a cold `vault search` does itself."""
    return re.compile(f"[{_CJK}]+"), re.compile(f"[{_CJK}]")


#: Letters that carry no combining accent but are the same letter to a reader of a query.
_LETTERS = str.maketrans(
    {"ø": "o", "ł": "l", "đ": "d", "ð": "d", "ħ": "h", "ı": "i", "æ": "ae", "œ": "oe", "þ": "th"}
)


#: Variation selectors (text or emoji presentation of the same character): not part of a word.
_INVISIBLE = dict.fromkeys(range(0xFE00, 0xFE10))


def _is_accent(ch: str) -> bool:
    """A combining accent of Latin, Greek or Cyrillic (the block they decompose into)."""
    return "\u0300" <= ch <= "\u036f"


#: Where the combining marks of the world's scripts are (from the combining diacritics to
#: the Indic, Southeast Asian and other scripts' blocks; kana voicing; variation selectors).
_MARK_BLOCKS = (
    (0x0300, 0x1DFF),
    (0x20D0, 0x20FF),
    (0x302A, 0x302F),
    (0x3099, 0x309A),
    (0xA66F, 0xABFF),
    (0xFE20, 0xFE2F),
)


@functools.cache
def _token() -> re.Pattern[str]:
    """Runs of word characters and the combining marks inside words (vowel signs and
    viramas of Indic scripts, Hebrew points, Japanese voicing marks: Python's `\\w` leaves
    them out, which would cut नमस्ते in three). Built once, on the first non-ASCII text."""
    marks: list[str] = []
    for low, high in _MARK_BLOCKS:
        start = None
        for code in range(low, high + 2):
            is_mark = code <= high and unicodedata.category(chr(code))[0] == "M"
            if is_mark and start is None:
                start = code
            elif not is_mark and start is not None:
                marks.append(f"\\u{start:04x}-\\u{code - 1:04x}")
                start = None
    inside = f"[\\w\\*{''.join(marks)}]"  # a word starts with a word character
    return re.compile(f"[\\w\\*]{inside}*(?:\\.[\\w\\*]{inside}*)*")


#: The blocks of pictographs people type for things: miscellaneous symbols and dingbats (☀ ☕
#: ⚽ ✈ ❤), stars, symbols and pictographs (🌊 🍕 🎂 🐶), transport (🚗), and the supplemental
#: and extended pictographs (🥑 🦄 🧁). Not the emoticons block (😂 🙏: faces and gestures).
_PICTOGRAPHS = (
    "\u2600-\u27bf\u2b50-\u2b55\U0001f300-\U0001f5ff\U0001f680-\U0001f6ff\U0001f900-\U0001faff"
)
_ANIMAL_FACES = (0x1F300, 0x1F5FF)  # where a name's FACE is an animal's (DOG FACE, CAT FACE)
#: Inside those blocks, what qualifies how a thing is said: skin tones (🏽) and the hands'
#: gestures (👍 👏 👋)
_QUALIFIERS = ((0x1F3FB, 0x1F3FF), (0x1F446, 0x1F450))
#: Words of pictographs' names that name no thing
_NAME_NOISE = frozenset(
    {
        "sign",
        "symbol",
        "black",
        "white",
        "heavy",
        "large",
        "medium",
        "small",
        "face",
        "with",
        "mark",
        "emoji",
    }
)


@functools.cache
def _pictograph() -> re.Pattern[str]:
    return re.compile(f"[{_PICTOGRAPHS}]")


@functools.lru_cache(maxsize=4096)
def pictograph_words(char: str) -> str:
    """The words a pictograph stands for, from its Unicode name, spaced apart (" dog ",
    " birthday cake ", " heart love "), or " " for a face (😂 is in no block named here; 🤣
    ROLLING ON THE FLOOR LAUGHING is a face too), a skin tone, a hand's gesture and a
    character without a name."""
    name, code = unicodedata.name(char, ""), ord(char)
    if (
        not name
        or ("FACE" in name.split() and not _ANIMAL_FACES[0] <= code <= _ANIMAL_FACES[1])
        or "LAUGHING" in name.split()
        or any(low <= code <= high for low, high in _QUALIFIERS)
    ):
        return " "
    found = [w for w in name.lower().replace("-", " ").split() if w not in _NAME_NOISE]
    if "heart" in found or "hearts" in found:
        found.append("love")
    return f" {' '.join(found)} "


def name_pictographs(text: str) -> str:
    """`text` (folded) with each pictograph written as the words it stands for."""
    if text.isascii():
        return text
    return _pictograph().sub(lambda match: pictograph_words(match.group()), text)


def has_pictograph(text: str) -> bool:
    """Whether `text` holds a character of the pictograph blocks (`_PICTOGRAPHS`): one that
    stands for words, or a face, skin tone or gesture among them that stands for none
    (`pictograph_words`); either way `spelled_pictographs` changes the text. The emoticons
    block (😂) is not among them."""
    return not text.isascii() and _pictograph().search(text) is not None


def spelled_pictographs(text: str) -> str:
    """`text` as it is, each pictograph written as the words it stands for and variation
    selectors dropped: what a model whose vocabulary holds no emoji embeds (the bundled
    MiniLM reads 🎂 as [UNK], "🎂🎉 best day ever!!" as "[UNK] [UNK] best day ever!!")."""
    if text.isascii():
        return text
    return name_pictographs(text).translate(_INVISIBLE)


def fold(text: str) -> str:
    """`text` as matching sees it: compatibility forms unified (NFKC), case folded, Latin,
    Greek and Cyrillic accents dropped. ASCII text is only lower-cased."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text).casefold().translate(_INVISIBLE)
    if not text.isascii():
        decomposed = unicodedata.normalize("NFD", text)
        text = unicodedata.normalize(
            "NFC", "".join(ch for ch in decomposed if not _is_accent(ch))
        ).translate(_LETTERS)
    return text


def has_cjk(text: str) -> bool:
    return not text.isascii() and _cjk_patterns()[1].search(text) is not None


def words(text: str, query: bool = False) -> Iterator[str]:
    """The folded words of `text`, in order. A run of CJK characters gives each character
    followed by the pair it starts (東, 東京, 京: any part of a run gives a contiguous part of
    the run's words); with `query`, the pairs only (a single character alone)."""
    if text.isascii():
        for match in ASCII_TOKEN.finditer(text):
            yield match.group().lower()
        return
    cjk_run, cjk = _cjk_patterns()
    for match in _token().finditer(name_pictographs(fold(text))):
        word = match.group()
        if not cjk.search(word):
            yield word
            continue
        at = 0
        for run in cjk_run.finditer(word):
            if piece := word[at : run.start()].strip("."):
                yield piece
            yield from _cjk(run.group(), query)
            at = run.end()
        if piece := word[at:].strip("."):
            yield piece


def _cjk(run: str, query: bool) -> Iterator[str]:
    if len(run) == 1:
        yield run
        return
    for i in range(len(run)):
        if not query:
            yield run[i]
        if i + 1 < len(run):
            yield run[i : i + 2]


def whole(
    body: str, first: str, last: str, before: str = r"(?<!\w)", after: str = r"(?!\w)"
) -> str:
    """The regular expression `body` (a token or phrase whose first and last characters are
    `first` and `last`) as a whole word: `before` and `after` it, except at an edge that is a
    CJK character (a word of those scripts may start or end anywhere in a run of them)."""
    return ("" if has_cjk(first) else before) + body + ("" if has_cjk(last) else after)


@functools.cache
def stop_words() -> frozenset[str]:
    from whoosh.lang.stopwords import stoplists

    extra = {"would", "could", "should", "might", "must", "shall", "also", "ever", "yet", "us"}
    return frozenset(stoplists["en"]) | extra


@functools.cache
def _stem() -> Any:
    from whoosh.lang.porter import stem  # the porter module alone: 4 ms to import

    return functools.lru_cache(maxsize=100_000)(stem)


def terms_of(text: str, query: bool = False) -> list[str]:
    """The analyzed terms of `text`: its words (index/words.py: folded, CJK as character
    pairs), stop words dropped, Porter-stemmed. For text without CJK this is what Whoosh's
    StemmingAnalyzer gives for the folded text (tests/index/test_fulltext_terms.py compares the
    two), without Whoosh's token objects: 5x faster, and a cold query does not import
    whoosh.analysis. `query`: the terms a query ranks by (CJK pairs without their single
    characters, see `words`)."""
    stops = stop_words()
    stem = _stem()
    return [stem(word) for word in words(text, query) if word not in stops]


def analyzed_otherwise(
    units: Iterable[tuple[str, str, str]],
    names: Iterable[tuple[str, str]],
    analyze: Callable[[str], str],
) -> list[str]:
    """The paths whose stored words `analyze` (text -> its terms joined by spaces) would give
    otherwise: of `units` (path, text, stored terms) and `names` (path, stored key: kept
    analyzed, so a key that is not plain ASCII is analyzed again as it stands). Only text that
    is not plain ASCII is looked at: the analyzer's changes so far leave ASCII as it was."""
    found: set[str] = set()
    for path, text, terms in units:
        if path not in found and not text.isascii() and analyze(text) != terms:
            found.add(path)
    for path, key in names:
        if path not in found and not key.isascii() and analyze(key) != key:
            found.add(path)
    return sorted(found)


# A unit's lead-in label: what a Markdown line is about, written before a colon at its start
# (`- **Alice**: …`, `- **Decision:** …`, `- Billing cutover window: …`, `Bob: …`). Plain labels
# are at most six words and hold no sentence punctuation, so a sentence that merely contains a
# colon has none.
_LEAD = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?")
_BOLD_LABEL = re.compile(r"\*\*([^*\n]{1,60}?)\*\*\s*:|\*\*([^*\n]{1,60}?):\*\*")
_PLAIN_LABEL = re.compile(r"([^\s:*`#>|\[][^:.!?;`*\n]{0,59}?):\s")


def lead_label(text: str) -> str | None:
    """The label a unit's first line opens with, or None: its subject (a speaker, a person,
    a field name) that a query may name."""
    first = text.split("\n", 1)[0]
    if ":" not in first:
        return None
    rest = first[_LEAD.match(first).end() :]  # type: ignore[union-attr]
    bold = _BOLD_LABEL.match(rest)
    if bold:
        label = (bold[1] or bold[2]).strip()
    else:
        plain = _PLAIN_LABEL.match(rest)
        if not plain or len(plain[1].split()) > 6:
            return None
        label = plain[1].strip()
    return label if any(c.isalpha() for c in label) else None


def after_label(line: str) -> str:
    """What a line says after its list marker and lead-in label (`- **Sam**: caught 3
    fish!!` -> `caught 3 fish!!`); the line without its marker when it has no label."""
    rest = line[_LEAD.match(line).end() :]  # type: ignore[union-attr]
    if lead_label(line) is None:
        return rest
    bold = _BOLD_LABEL.match(rest)
    found = bold or _PLAIN_LABEL.match(rest)
    return rest[found.end() :].lstrip() if found else rest
