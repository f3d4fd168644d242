"""The text as the detectors read it: invisible characters dropped, compatibility forms
(fullwidth letters, ligatures) replaced by NFKC, and Cyrillic or Greek letters drawn like Latin
ones replaced inside words that mix them with Latin letters (`pаssword` with a Cyrillic `а`).
Each character of the view remembers where it came from, so that a secret found in the view is
replaced in the text as it was given, and the rest of the text is left untouched."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
_DROP = dict.fromkeys(map(ord, INVISIBLE))

# Letters of other scripts drawn like Latin ones (after Unicode's confusables list).
_LOOKS_LATIN = {
    **dict(zip("аеорсухкмтнвіјѕԁԛԝ", "aeopcyxkmtHBijsdqw", strict=True)),
    **dict(zip("АВЕКМНОРСТХУІЈЅ", "ABEKMHOPCTXYIJS", strict=True)),
    **dict(zip("αοριυνκτχ", "aopiuvktx", strict=True)),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),
}
_UNCONFUSE = str.maketrans(_LOOKS_LATIN)
_OTHER = "\u0370-\u03ff\u0400-\u04ff\u0500-\u052f"
_MIXED_WORD = re.compile(rf"[\w\-]*(?:[A-Za-z][\-]?[{_OTHER}]|[{_OTHER}][\-]?[A-Za-z])[\w\-]*")


# a run of ASCII, or one character with the combining marks that follow it
_CLUSTER = re.compile(
    r"[\x00-\x7f]+(?![\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f])|.[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u3099\u309a]*",
    re.S,
)


def fold(text: str) -> str:
    """`text` as the patterns should see it: zero-width and other invisible characters
    removed, compatibility forms (fullwidth letters, ligatures) replaced by NFKC."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text.translate(_DROP))


@dataclass(frozen=True)
class View:
    text: str
    origin: list[int] | None = None  # origin[i]: index in the given text of view character i

    def source(self, start: int, end: int) -> tuple[int, int]:
        """The span of the given text that view span [start, end) came from."""
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


_ANY_OTHER = re.compile(f"[{_OTHER}]")


def _unconfuse(text: str) -> str:
    if not _ANY_OTHER.search(text):  # no Cyrillic or Greek letter at all: nothing to do
        return text
    return _MIXED_WORD.sub(lambda m: m.group(0).translate(_UNCONFUSE), text)


def make_view(text: str) -> View:
    if text.isascii():
        return View(text)
    plain = not any(ch in text for ch in INVISIBLE) and unicodedata.is_normalized("NFKC", text)
    if plain:
        unconfused = _unconfuse(text)  # one for one: the offsets do not move
        return View(unconfused)
    chars: list[str] = []
    origin: list[int] = []
    # NFKC one character with the combining marks after it (so `e` + U+0301 becomes `é`)
    for cluster in _CLUSTER.finditer(text):
        piece = cluster.group(0)
        if piece.isascii():
            chars.append(piece)
            origin.extend(range(cluster.start(), cluster.end()))
            continue
        folded = unicodedata.normalize("NFKC", piece.translate(_DROP))
        chars.append(folded)
        origin.extend([cluster.start()] * len(folded))
    origin.append(len(text))
    return View(_unconfuse("".join(chars)), origin)
