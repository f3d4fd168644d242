"""Secrets made of several parts: BIP-39 seed phrases (12 to 24 words of a public wordlist),
lists of 2FA backup codes, TOTP seeds in groups of four, app passwords (`abcd efgh ijkl mnop`).

BIP-39's wordlists come from the `mnemonic` package (Trezor's reference implementation, MIT),
loaded on first need. A run of twelve or more words all from one list is a seed phrase whatever
surrounds it (ordinary prose always holds words the lists leave out: "the", "and", "is", "of");
after a context word ("seed phrase", "frase semilla") six are enough.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

_LANGUAGES = ("english", "spanish", "french", "italian", "portuguese", "czech")
_WORD = r"[^\W\d_]{3,10}"
_SEP = r"(?>[\s,;·\-]+(?:\d{1,2}[.):]?[ \t]+)?)"
RUN = re.compile(rf"(?<![^\W\d_])(?>{_WORD}+)(?:{_SEP}(?>[^\W\d_]{{3,10}}+)(?![^\W\d_])){{11,}}")
_WORDS = re.compile(_WORD)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@cache
def _wordlists() -> tuple[frozenset[str], ...]:
    from importlib import resources  # on first need: most texts never get this far

    folder = resources.files("mnemonic") / "wordlist"
    lists = []
    for language in _LANGUAGES:
        text = (folder / f"{language}.txt").read_text(encoding="utf-8")
        lists.append(frozenset(unicodedata.normalize("NFC", w.strip()) for w in text.split()))
    return tuple(lists)


def _longest_run(words: list[re.Match[str]], least: int) -> tuple[int, int] | None:
    """The longest stretch of `words` all in one BIP-39 list, as (first, last) indexes into
    `words`, if `least` or more words long."""
    best: tuple[int, int] | None = None
    for wordlist in _wordlists():
        run_start = None
        for index in range(len(words) + 1):
            inside = index < len(words) and words[index].group(0).lower() in wordlist
            if inside and run_start is None:
                run_start = index
            elif not inside and run_start is not None:
                longest = best[1] - best[0] + 1 if best else least - 1
                if index - run_start > longest:
                    best = (run_start, index - 1)
                run_start = None
    return best


def seed_phrases(text: str) -> list[tuple[int, int]]:
    """Runs of twelve or more BIP-39 words (a numbered list, commas or line breaks between)."""
    found = []
    for run in RUN.finditer(text):
        words = list(_WORDS.finditer(text, run.start(), run.end()))
        run_span = _longest_run(words, 12)
        if run_span is not None:
            found.append((words[run_span[0]].start(), words[run_span[1]].end()))
    return found


def _after(text: str, pos: int, limit: int) -> str:
    """The stretch a list may take from `pos`: up to a blank line."""
    window = text[pos : pos + limit]
    blank = _BLANK_LINE.search(window)
    return window[: blank.start()] if blank else window


def seed_words_at(text: str, pos: int) -> tuple[int, int] | None:
    """Six or more BIP-39 words from `pos` on (after "seed phrase", "recovery words" …)."""
    window = _after(text, pos, 400)
    words = list(_WORDS.finditer(window))[:30]
    run_span = _longest_run(words, 6)
    if run_span is None or run_span[0] > 0 or words[0].start() > 6:
        return None
    return pos + words[0].start(), pos + words[run_span[1]].end()


_CODE = r"(?:[A-Za-z0-9]{4,12}(?:[ \-][A-Za-z0-9]{4,12})?)"
_CODE_LIST = re.compile(
    rf"{_CODE}(?:[ \t]*[,;]?[ \t]*\r?\n?[ \t]*(?:[\-*•][ \t]*|\d{{1,2}}[.)][ \t]+)?{_CODE})*"
)
_CODE_PART = re.compile(r"[A-Za-z0-9]{4,12}")


def code_list_at(text: str, pos: int) -> tuple[int, int] | None:
    """One-time codes from `pos` on (after "backup codes", "Backup-Codes" …): each holds a
    digit; the list ends before the first part that has none ("… 4471-2219 and then")."""
    m = _CODE_LIST.match(text, pos)
    if m is None:
        return None
    last = None
    for part in _CODE_PART.finditer(text, m.start(), m.end()):
        if not any(c.isdigit() for c in part.group(0)):
            break
        last = part
    return (m.start(), last.end()) if last is not None else None


_B32_GROUPED = re.compile(r"[A-Za-z2-7]{4}(?:[ \-][A-Za-z2-7]{4}){3,7}(?![\w\-])")
_B32 = re.compile(r"(?:[A-Z2-7]{16,}|[a-z2-7]{16,})={0,6}(?![\w\-])")


def totp_seed_at(text: str, pos: int) -> tuple[int, int] | None:
    """A TOTP seed at `pos` (after "TOTP secret", "setup key" …): Base32, whole or in groups
    of four; a whole one holds a digit or is upper case (not a long word)."""
    m = _B32_GROUPED.match(text, pos)
    if m is None:
        m = _B32.match(text, pos)
        if m is None or not (re.search(r"[2-7]", m.group(0)) or m.group(0).isupper()):
            return None
    return m.start(), m.end()


_APP_PASSWORD = re.compile(r"[a-z]{4}([ \-])[a-z]{4}\1[a-z]{4}\1[a-z]{4}(?![\w\-])")


def app_password_at(text: str, pos: int) -> tuple[int, int] | None:
    """An app password at `pos`: four groups of four lower-case letters (Google's, Apple's)."""
    m = _APP_PASSWORD.match(text, pos)
    return (m.start(), m.end()) if m else None
