"""Other spellings of a query word that the vault may use: typing slips ("restuarant" for
"restaurant": `spelling_variants`), the short forms of chats ("bday" for "birthday",
"bf" for "boyfriend": `short_forms`) and words stretched for emphasis ("loveee", "sooo
good", "yesss": `stretched_variants`). Pure functions over analyzed terms (folded,
Porter-stemmed, as the index has them); `Searcher` looks the candidates up in the vault.

A slip is told from a word by the keyboard and by frequency: it is one slip of a kind people
make away from the word (a letter dropped, two swapped, a key next to the meant one struck
instead or as well, another vowel for a sound), rarer than the word in the vault, and not
itself an English word: the stems of the whole words of the bundled model's WordPiece
vocabulary (`known_stems.txt`, derived from `model/vocab.txt` by `derive_known_stems`) are
words, so "stage" is never a slip of "state", nor "thin" of "think".

The short forms are English texting shortenings in general use, each standing for one word
whatever the conversation; a form with two common readings ("def", "prob", "doc") is left
out, and so are forms of stop words ("ur", "bc", "rn": nothing to match). The list is not
drawn from any benchmark's questions.

A stretched word repeats a letter for a voice's emphasis: three times or more ("goooood",
"yesss", "happyyyy"), or a final vowel twice ("cutee", as the stemmer leaves "cuteee"). It
stands for the word with the run cut to two letters or to one, whichever is a word: "goooood"
is "good" (a known word, so not "god"), "funnn" is "fun" (`stretch_key`: every run cut to one
letter, for the words of three letters that the known stems do not hold).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..index import terms_of
from ..relative_dates import TYPED_FORMS

KNOWN_STEMS = Path(__file__).resolve().parent / "known_stems.txt"
VOCAB = Path(__file__).resolve().parent.parent / "model" / "vocab.txt"

log = logging.getLogger("vault_memory")

TYPO_MIN_LETTERS = 5  # shorter words are one slip from too many others ("cat", "car", "cap")
TYPO_RARE = 3  # a vault word this rare, one slip from a query word, reads as a slip of it...
TYPO_RATIO = 10  # ...as does one the query word outnumbers this many times ("definately")
KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_VOWELS = frozenset("aeiouy")


def _keyboard() -> dict[str, frozenset[str]]:
    at = {key: (r, c) for r, row in enumerate(KEY_ROWS) for c, key in enumerate(row)}
    return {
        key: frozenset(
            k for k, (r2, c2) in at.items() if k != key and abs(r2 - r) <= 1 and abs(c2 - c) <= 1
        )
        for key, (r, c) in at.items()
    }


NEAR_KEYS = _keyboard()  # the keys around each key of a QWERTY keyboard (rows, diagonals)


def _struck(letter: str) -> frozenset[str]:
    """The letters a finger meaning `letter` strikes instead: a key next to it, or another
    vowel (a sound spelt otherwise: "definately", "seperate")."""
    near = NEAR_KEYS.get(letter, frozenset())
    return near | (_VOWELS - {letter}) if letter in _VOWELS else near


@functools.lru_cache(maxsize=4096)
def slips_of(word: str) -> frozenset[str]:
    """What typing `word` (a-z) with one slip gives: a letter dropped, two neighbours
    swapped, a key next to the meant one struck instead of it (or another vowel), or as well
    as one of the letters beside the place (a doubled letter, a key next to one)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    found = {a + b[1:] for a, b in splits if b}
    found.update(a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1)
    found.update(a + c + b[1:] for a, b in splits if b for c in _struck(b[0]))
    for a, b in splits:
        beside = {x for x in (a[-1:], b[:1]) if x}
        for c in beside.union(*(NEAR_KEYS.get(x, frozenset()) for x in beside)):
            found.add(a + c + b)
    found.discard(word)
    return frozenset(found)


@functools.lru_cache(maxsize=4096)
def meant_by(slip: str) -> frozenset[str]:
    """The words (a-z) that `slips_of` turns into `slip`: what a slip may have meant."""
    splits = [(slip[:i], slip[i:]) for i in range(len(slip) + 1)]
    found = {a + c + b for a, b in splits for c in "abcdefghijklmnopqrstuvwxyz"}
    found.update(a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1)
    found.update(a + c + b[1:] for a, b in splits if b for c in _struck(b[0]))
    for a, b in splits:  # a letter struck as well as one beside it: dropped again
        if b and (
            {b[0]}
            & (
                {a[-1:], b[1:2]}
                | NEAR_KEYS.get(a[-1:], frozenset())
                | NEAR_KEYS.get(b[1:2], frozenset())
            )
        ):
            found.add(a + b[1:])
    found.discard(slip)
    return frozenset(found)


def spelling_variants(
    term: str, frequency: Callable[[str], int], known: Callable[[str], bool]
) -> list[str]:
    """The vault's words that read as typing slips of the query word `term`, or that `term`
    reads as a slip of (analyzed terms, a-z, five letters at least). A slip is one that
    `slips_of` the word gives and no English word (`known`); of two words one slip apart the
    rarer is the slip. So: the vault's words among the slips of `term` that are rare (at
    most TYPO_RARE units) or outnumbered TYPO_RATIO times by `term`, never more common (all
    of them when the vault never spells `term` right); and, for a query word that is no
    English word and that the vault never uses, the words it may have meant (`meant_by`).
    "bread" and "break" are no slip of each other (d and k are far apart on the keyboard),
    nor "stage" of "state" (a word). `frequency(word)`: how many units hold the word (0: not
    in the vault)."""
    if len(term) < TYPO_MIN_LETTERS or not term.isascii() or not term.isalpha():
        return []
    own = frequency(term)
    if not own and not known(term):  # the query's word is the slip
        return [w for w in sorted(meant_by(term)) if frequency(w)]
    found = []
    for variant in sorted(slips_of(term)):
        held = frequency(variant)
        rare = not own or (held <= own and (held <= TYPO_RARE or held * TYPO_RATIO <= own))
        if held and rare and not known(variant):
            found.append(variant)
    return found


def derive_known_stems(vocab: Path = VOCAB) -> list[str]:
    """The stems (four letters or more) of the whole words (a-z, three letters or more) of a
    WordPiece vocabulary: what `known_stems.txt` holds for the bundled model's."""
    words = vocab.read_text(encoding="utf-8").split("\n")
    stems = {
        t
        for w in words
        if len(w) >= 3 and w.isascii() and w.isalpha()
        for t in terms_of(w)
        if len(t) >= 4
    }
    return sorted(stems)


@functools.cache
def known_stems() -> frozenset[str] | None:
    """The stems of English words (`derive_known_stems`), read once (about 2 ms); None when
    the file cannot be read (a damaged install: then no word is taken for a slip)."""
    try:
        return frozenset(KNOWN_STEMS.read_text(encoding="ascii").split())
    except (OSError, UnicodeDecodeError) as exc:
        log.warning(
            "typing slips are not matched: %s cannot be read (%s); reinstall vault-memory",
            KNOWN_STEMS.name,
            exc,
        )
        return None


def is_word(stem: str) -> bool:
    """Whether `stem` is an English word's (`known_stems`; every one is, without the list)."""
    stems = known_stems()
    return stems is None or stem in stems


#: Each group: one word and the forms typed for it (those of "tomorrow" and "yesterday" are
#: also the days `relative_dates` reads).
GROUPS: tuple[tuple[str, ...], ...] = (
    ("birthday", "bday"),
    ("boyfriend", "bf"),
    ("girlfriend", "gf"),
    ("husband", "hubby"),
    ("family", "fam"),
    ("brother", "bro"),
    ("sister", "sis"),
    ("mother", "mom", "mum", "mommy", "mummy", "mama"),
    ("father", "dad", "daddy", "papa"),
    ("grandmother", "grandma", "granny", "nana"),
    ("grandfather", "grandpa", "gramps"),
    ("picture", "pic", "pix"),
    ("video", "vid"),
    ("conversation", "convo"),
    ("information", "info"),
    ("university", "uni"),
    ("professor", "prof"),
    ("appointment", "appt"),
    ("homework", "hw"),
    ("basketball", "bball"),
    ("favorite", "favourite", "fav", "fave"),
    ("people", "ppl"),
    ("weekend", "wknd"),
    TYPED_FORMS["tomorrow"],
    TYPED_FORMS["yesterday"],
    TYPED_FORMS["tonight"],
    ("minutes", "mins"),
    ("hours", "hrs"),
    ("years", "yrs"),
    ("message", "msg"),
    ("vacation", "vacay"),
    ("vegetables", "veggies"),
    ("congratulations", "congrats"),
    ("restaurant", "resto"),
    ("kid", "kiddo"),
    ("dog", "doggo"),
    ("gorgeous", "gorg"),
    ("definitely", "defo"),
    ("awkward", "awk"),
    ("chocolate", "choc"),
    ("mathematics", "math", "maths"),
)


@functools.cache
def _forms() -> dict[str, tuple[str, ...]]:
    """Analyzed term -> the analyzed terms of the other words of its group."""
    found: dict[str, list[str]] = {}
    for group in GROUPS:
        terms = list(dict.fromkeys(t for word in group for t in terms_of(word)))
        for term in terms:
            found.setdefault(term, []).extend(t for t in terms if t != term)
    return {term: tuple(dict.fromkeys(others)) for term, others in found.items()}


def short_forms(term: str) -> tuple[str, ...]:
    """The other forms of an analyzed query term (`bdai` -> `birthdai`), or ()."""
    return _forms().get(term, ())


_WORD = re.compile(r"[^\W\d_]{3,}")
_BETWEEN = re.compile(r"[\s-]+")  # two words in a row: a space or a hyphen between


def joined_words(query: str) -> list[tuple[str, str, str]]:
    """Two words in a row of `query` that people also type as one ("ice cream", "road trip",
    "video game", "book shelf": "icecream", "roadtrip"…): (the first's term, the second's,
    the term of the two written together), each word of three letters or more and no stop
    word. Whether the vault writes them so is the caller's to look up."""
    found: list[tuple[str, str, str]] = []
    words = list(_WORD.finditer(query))
    for first, second in zip(words, words[1:], strict=False):
        if not _BETWEEN.fullmatch(query, first.end(), second.start()):
            continue
        one, two = terms_of(first.group()), terms_of(second.group())
        together = terms_of(first.group() + second.group())
        if len(one) == len(two) == len(together) == 1:
            found.append((one[0], two[0], together[0]))
    return found


def split_words(query: str) -> list[tuple[str, str, str]]:
    """Words of `query` typed as one that people also write as two ("roadtrip", "icecream",
    "bookshelf": "road trip"…): (the word's term, the first part's, the second's), for a word
    that is no English word (`is_word`: "understand" is never "under stand", nor "carpet"
    "car pet") cut into two that are, of three letters or more each (the known stems have
    four letters at least: a shorter part, "ice", is taken as one). Whether the vault writes
    them so is the caller's to look up."""
    found: list[tuple[str, str, str]] = []
    for match in _WORD.finditer(query):
        word = match.group().lower()
        whole = terms_of(word)
        if len(word) < 6 or len(whole) != 1 or is_word(whole[0]):
            continue
        cuts = []
        for cut in range(3, len(word) - 2):
            one, two = terms_of(word[:cut]), terms_of(word[cut:])
            if len(one) == len(two) == 1 and all(
                len(part) < 4 or is_word(part) for part in (one[0], two[0])
            ):
                known = sum(len(part) >= 4 for part in (one[0], two[0]))
                cuts.append((-known, cut, one[0], two[0]))
        if cuts:  # one cut: the one with more parts the list knows ("pet shop", not "pets hop")
            _, _, first, second = min(cuts)
            found.append((whole[0], first, second))
    return found


#: The stretched terms of a vocabulary: by the known word each stands for, and the others by
#: their `stretch_key` (`stretched_terms`)
Stretched = tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]

_RUN = re.compile(r"([a-z])\1\1+")  # a letter three times or more
_PAIRS = re.compile(r"([a-z])\1+")  # a letter twice or more
_FINAL_PAIR = re.compile(r"([aeiouy])\1$")  # a final vowel twice ("lovee" of "loveee")


def _restored(term: str) -> str:
    """The stem as typed: the stemmer writes a final "y" as "i" ("happyyyy" -> "happyyyi")."""
    return term[:-1] + "y" if term.endswith("yi") else term


def _analysed(surface: str) -> str:
    """`surface` as the index analyses it when that gives one term, else itself."""
    found = terms_of(surface)
    return found[0] if len(found) == 1 else surface


@functools.lru_cache(maxsize=4096)
def is_stretched(term: str) -> bool:
    """Whether the analyzed term reads as a word stretched for emphasis: a letter three
    times or more ("goooood", "yesss", "happyyyi"), or a final vowel twice where the stemmer
    took the third ("lovee" of "loveee"), and no English word (`is_word`: "coffe", the stem
    of "coffee", is one)."""
    typed = _restored(term)
    return (
        typed.isascii()
        and typed.isalpha()
        and len(typed) >= 3
        and bool(_RUN.search(typed) or _FINAL_PAIR.search(typed))
        and not is_word(term)
    )


@functools.lru_cache(maxsize=4096)
def stretch_key(term: str) -> str:
    """What an analyzed term and its stretched forms have in common: its letters with every
    run cut to one, analysed again (a stretched word keeps the ending the stemmer would take:
    "amazinggg", "booor" of "boooring"), cut again, and without a final "e" (which the
    stemmer takes from "loooove" but not from "love"). `good`, `goooood` -> `god`."""
    once = _analysed(_PAIRS.sub(r"\1", _restored(term)))
    key = _PAIRS.sub(r"\1", _restored(once))
    return key[:-1] if len(key) > 2 and key.endswith("e") else key


@functools.lru_cache(maxsize=4096)
def _cuts(term: str) -> tuple[str, ...]:
    """What a stretched term reads as, the likelier first: each run of a letter cut to two
    letters, to one, then a final doubled vowel to one, and that with the final "e" the
    stemmer takes from a stretched word ("loooove" -> "loooov" -> "love"), each analysed."""
    typed = _restored(term)
    one = _RUN.sub(r"\1", typed)
    single = _FINAL_PAIR.sub(r"\1", one)
    cuts = (_RUN.sub(r"\1\1", typed), one, single, single + "e")
    return tuple(t for t in dict.fromkeys(_analysed(c) for c in cuts) if t != term)


def stretched_as(term: str) -> str | None:
    """The first known word (`is_word`) of a stretched term's `_cuts` ("goooood" -> "good",
    so not "god"; "loveee" -> "love"; "niceee" -> "nice"), or None."""
    return next((t for t in _cuts(term) if is_word(t)), None)


def stretched_lines(vocabulary: Any) -> list[str]:
    """The terms of a vocabulary (bytes or a uint8 array: terms a-z and others, one a line)
    that may be stretched: a letter three times in a row, a final doubled vowel or "yyi". A
    scan over the bytes in numpy (a regular expression took 10 ms at 55,000 terms; this
    1-3 ms)."""
    import numpy as np

    raw = np.frombuffer(bytes(vocabulary), dtype=np.uint8)
    if not raw.size:
        return []
    a = np.concatenate((np.array([10], np.uint8), raw, np.array([10, 10], np.uint8)))
    letter, vowel = np.zeros(256, bool), np.zeros(256, bool)
    letter[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", np.uint8)] = True
    vowel[np.frombuffer(b"aeiouy", np.uint8)] = True
    same = a[:-1] == a[1:]  # same[i]: a[i] == a[i + 1]
    run = same[:-2] & same[1:-1] & letter[a[:-3]]  # a[i] three times
    pair = same[:-2] & vowel[a[:-3]] & (a[2:-1] == 10)  # a final vowel twice
    yyi = (a[:-3] == ord("y")) & same[:-2] & (a[2:-1] == ord("i")) & (a[3:] == 10)
    hits = np.flatnonzero(run | pair | yyi)
    if not hits.size:
        return []
    breaks = np.flatnonzero(a == 10)
    lines = np.unique(np.searchsorted(breaks, hits, side="right"))
    text = a.tobytes()
    return [
        text[start:end].decode("utf-8", "replace")
        for start, end in zip((breaks[lines - 1] + 1).tolist(), breaks[lines].tolist(), strict=True)
    ]


def stretched_terms(terms: Iterable[str]) -> Stretched:
    """The stretched ones of `terms` (analyzed; `stretched_lines` of a vocabulary): by the
    known word each stands for (`stretched_as`: `good` -> (`goooood`,)), and the others by
    their `stretch_key` (`fun` -> (`funnn`,))."""
    words: dict[str, list[str]] = {}
    keys: dict[str, list[str]] = {}
    for term in terms:
        if not is_stretched(term):
            continue
        word = stretched_as(term)
        if word is not None:
            words.setdefault(word, []).append(term)
        else:
            keys.setdefault(stretch_key(term), []).append(term)
    return ({w: tuple(t) for w, t in words.items()}, {k: tuple(t) for k, t in keys.items()})


def stretched_variants(
    term: str, vocabulary: Stretched, frequency: Callable[[str], int]
) -> list[str]:
    """The vault's stretched forms of the query word `term` (`vocabulary`: the
    `stretched_terms` of the vault's) and, for a stretched query word, the words it stands
    for that the vault holds and their other stretched forms."""
    words, keys = vocabulary
    found: list[str] = []
    asked = term
    if is_stretched(term):
        word = stretched_as(term)
        found = [t for t in ([word] if word else _cuts(term)) if frequency(t)]
        term = word or term
    # "goooood" is among the words ("good"), not the keys: so "god" does not find it
    found += (*words.get(term, ()), *keys.get(stretch_key(term), ()))
    return [t for t in dict.fromkeys(found) if t != asked]
