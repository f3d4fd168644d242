"""Words for counts in messages: `plural(1, "batch")` is "1 batch", `plural(2, "batch")` is
"2 batches"."""

from __future__ import annotations

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
