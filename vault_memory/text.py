"""Words for counts in messages: `plural(1, "batch")` is "1 batch", `plural(2, "batch")` is
"2 batches"."""

from __future__ import annotations

import re as _re
import unicodedata as _unicodedata

_SIBILANT = ("s", "x", "z", "ch", "sh")


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """`count` and the noun in the form that agrees with it. The plural adds "es" after
    s/x/z/ch/sh and "s" otherwise; give `plural_form` for any other word ("entry", "entries").
    A phrase agrees by its last word: `plural(3, "changed path")` is "3 changed paths"."""
    if count == 1:
        return f"{count} {singular}"
    if plural_form is None:
        plural_form = singular + ("es" if singular.endswith(_SIBILANT) else "s")
    return f"{count} {plural_form}"


def one_line(text: str, width: int = 160) -> str:
    """`text` on one line (every run of white space one space), cut to `width` characters
    with "…": how a message, a diary or a report quotes a line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# -- a model's text is data -------------------------------------------------------------------

_PROTECTED = _re.compile(r"(?<![\w/&#])#pin(?![\w/-])|<!--.*?(?:-->|$)", _re.I | _re.S)


def unsafe_character(text: str) -> str | None:
    """The first character a model's text must not bring into a Markdown file, described
    ("U+0000 (a control character)"), or None: control characters (tab and newline aside),
    lone surrogates (no UTF-8 encoding) and non-characters."""
    for ch in text:
        code = ord(ch)
        if ch in "\t\n":
            continue
        category = _unicodedata.category(ch)
        if category == "Cc":
            return f"U+{code:04X} (a control character)"
        if category == "Cs":
            return f"U+{code:04X} (a lone surrogate)"
        if (code & 0xFFFE) == 0xFFFE or 0xFDD0 <= code <= 0xFDEF:
            return f"U+{code:04X} (a non-character)"
    return None


def visible(text: str) -> str:
    """`text` with every character `unsafe_character` refuses written as an escape (`\\u0000`),
    for a message that quotes a model's text."""
    return "".join(f"\\u{ord(c):04x}" if unsafe_character(c) else c for c in text)


def strip_protected(text: str, allowed: str = "") -> str:
    """`text` without the markers only a person (or the vault itself) may write: `#pin`
    (unless `allowed`, the text it came from, holds it) and HTML comments (provenance
    `<!-- src: … -->`, diary records)."""
    keep_pin = bool(_re.search(r"(?<![\w/&#])#pin(?![\w/-])", allowed, _re.I))

    def drop(match: _re.Match[str]) -> str:
        return match.group(0) if keep_pin and match.group(0).lower() == "#pin" else ""

    return _re.sub(r"[ \t]{2,}", " ", _PROTECTED.sub(drop, text)).strip()
