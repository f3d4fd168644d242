"""Secret redaction: every text `flush` writes (or sends to a model) passes through `redact`.

Secrets are found by families, each with its own evidence (capture/secrets/):
- a provider's prefix, length and alphabet, a structure, a checksum (`prefixed.py`);
- where it sits: command-line flags, `.netrc`, Docker auth, `otpauth://`, a URL's user part,
  user/password pairs, wallet keys with a checksum, seed phrases (`shapes.py`, `lists.py`);
- a context word in many languages ("password", "Passwort", "contraseña", "パスワード", "pw",
  "PIN", "CVV", "API key", "backup codes", "seed phrase" …) followed by a value that passes its
  family's test (`labelled.py`, `values.py`).

All of them read the text as `view.py` folds it (no invisible characters, NFKC, look-alike
letters of other scripts inside Latin words) and report spans of the text as given; a key
broken across a line break is followed onto the next line. `find_secrets` is the pure answer
("which spans of this text are credentials"); `redact` replaces each span by
`[REDACTED:kind]`, and leaves everything else byte for byte.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .secrets.checksums import iban, luhn
from .secrets.labelled import labelled
from .secrets.prefixed import (
    PATTERNS,
    SecretPattern,
    _assignment_value_is_secret,
)
from .secrets.shapes import shaped
from .secrets.values import masked, ordinary
from .secrets.view import View, fold, make_view

__all__ = [
    "PATTERNS",
    "Redacted",
    "SecretPattern",
    "Span",
    "find_secrets",
    "fold",
    "has_secret",
    "iban",
    "luhn",
    "redact",
    "redact_text",
    "redact_texts",
]


@dataclass(frozen=True, order=True)
class Span:
    """A secret in a text: `text[start:end]`, of family `kind` (`password`, `openai-key` …)."""

    start: int
    end: int
    kind: str


@dataclass
class Redacted:
    """A text with its secrets replaced, and how many of each kind were found."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


# Kinds whose secret may run on over a line break (a key pasted into a narrow terminal).
_UNBROKEN = frozenset(
    {"password", "card-number", "iban", "url-password", "private-key", "authorization"}
)
_CONTINUATION = re.compile(r"\r?\n[ \t]*(?:>[ \t]*)*([A-Za-z0-9_\-+/=]{4,})(?=[\s.,;:!?)\"'\]]|$)")
_NOT_A_CARD = re.compile(r"(?:imei|meid|imsi|iccid|serial|s/n|sn)\W{0,4}$", re.I)


def _random_part(part: str) -> bool:
    """The rest of a key on the next line, not the next sentence: a digit, or long and with
    case changes inside."""
    if any(c.isdigit() for c in part):
        return any(c.isalpha() for c in part) or len(part) >= 12
    return len(part) >= 12 and len(re.findall(r"[a-z][A-Z]", part)) >= 1


def _continued(text: str, end: int) -> int:
    """The end of a key that runs on over line breaks from `end`."""
    while True:
        m = _CONTINUATION.match(text, end)
        if m is None or not _random_part(m.group(1)):
            return end
        end = m.end(1)


def _run_on(text: str, spans: list[Span]) -> list[Span]:
    """Keys followed over line breaks; a span never runs into the next one."""
    out = []
    for index, span in enumerate(spans):
        if span.kind not in _UNBROKEN and span.end - span.start >= 16:
            end = _continued(text, span.end)
            if index + 1 < len(spans):
                end = min(end, spans[index + 1].start)
            span = Span(span.start, max(end, span.end), span.kind)
        out.append(span)
    return out


def _pattern_spans(text: str, pattern: SecretPattern) -> list[Span]:
    spans = []
    for match in pattern.regex.finditer(text):
        secret = match.group(pattern.group)
        start, end = match.span(pattern.group)
        if pattern.valid is not None and not pattern.valid(secret):
            continue
        if pattern.kind == "password":
            if not _assignment_value_is_secret(secret):
                continue
            if secret[:1] in "\"'":  # keep the quotes around the marker
                start, end = start + 1, end - 1
            else:  # a sentence's final stop is not part of the password
                end -= len(secret) - len(secret.rstrip(".?:"))
        elif pattern.kind == "card-number" and _NOT_A_CARD.search(text, max(0, start - 24), start):
            continue  # an IMEI or a serial number passes the Luhn check too
        elif pattern.kind == "url-password" and ordinary(secret):
            continue  # `postgres://app:${DB_PASSWORD}@db`, `https://user:****@proxy`
        elif pattern.kind not in ("card-number", "iban") and masked(secret):
            continue  # `AKIAIOSFODNN7EXAMPLE`, `ghp_xxxxxxxx…`
        spans.append(Span(start, end, pattern.kind))
    return spans


# Every needle of the patterns, looked for once per text; a pattern runs only when one of its
# own is there (most texts hold none, or one or two).
_CASE_NEEDLES = tuple(sorted({n for p in PATTERNS if not p.fold for n in p.needles}))
_FOLD_NEEDLES = tuple(sorted({n for p in PATTERNS if p.fold for n in p.needles}))
_PATTERN_NEEDLES = [(p, frozenset(p.needles)) for p in PATTERNS]


def _candidates(text: str) -> list[list[Span]]:
    """Every detector's spans, most specific first: provider tokens, then shapes, then the
    context words of a specific family (TOTP seeds, backup codes, PINs …), then `KEY=value`
    assignments, then the other context words."""
    lowered = text.lower()
    present = {n for n in _CASE_NEEDLES if n in text}
    present.update(n for n in _FOLD_NEEDLES if n in lowered)
    tokens: list[list[Span]] = []
    assignments: list[list[Span]] = []
    for pattern, needles in _PATTERN_NEEDLES:
        if not needles.isdisjoint(present):
            (assignments if pattern.kind == "password" else tokens).append(
                _pattern_spans(text, pattern)
            )
    named = [Span(s.start, s.end, s.kind) for s in labelled(text)]
    specific = [s for s in named if s.kind not in ("password", "credential")]
    general = [s for s in named if s.kind in ("password", "credential")]
    shapes = [Span(s.start, s.end, s.kind) for s in shaped(text, lowered)]
    return [*tokens, shapes, specific, *assignments, general]


def _without_overlaps(groups: list[list[Span]]) -> list[Span]:
    """The spans that do not overlap a span of an earlier (more specific) detector."""
    kept: list[Span] = []
    for group in groups:
        for span in group:
            if span.end > span.start and all(
                span.end <= k.start or span.start >= k.end for k in kept
            ):
                kept.append(span)
    return sorted(kept)


def find_secrets(text: str) -> list[Span]:
    """The credentials in `text`, as sorted, non-overlapping spans of `text` as given. Pure:
    `bool(find_secrets(text))` is the check "does this text carry a credential or a PIN"."""
    view: View = make_view(text)
    spans = _run_on(view.text, _without_overlaps(_candidates(view.text)))
    if view.origin is None:
        return spans
    return [Span(*view.source(s.start, s.end), s.kind) for s in spans]


def has_secret(text: str) -> bool:
    """Whether `text` holds a credential, a PIN, a card number or a seed phrase."""
    return bool(find_secrets(text))


def redact(text: str) -> Redacted:
    """Replace every secret in `text` by `[REDACTED:kind]`; the rest stays as it was.

    The detectors read the text folded (see `fold`), so a zero-width space, fullwidth letters
    or a Cyrillic letter inside a token do not hide it; the span found is replaced in the text
    as given."""
    spans = find_secrets(text)
    if not spans:
        return Redacted(text, {})
    parts = []
    last = 0
    for span in spans:
        parts.append(text[last : span.start])
        parts.append(f"[REDACTED:{span.kind}]")
        last = span.end
    parts.append(text[last:])
    return Redacted("".join(parts), dict(Counter(span.kind for span in spans)))


def redact_text(text: str) -> str:
    """`redact(text).text`."""
    return redact(text).text


def redact_texts(texts: list[str]) -> list[str]:
    """`redact_text` of each text (a whole conversation, for its transcript)."""
    return [redact(text).text for text in texts]
