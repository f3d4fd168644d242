"""Secrets named by a context word: "password", "Passwort", "mot de passe", "パスワード", "pw",
"PIN", "CVV", "API key", "auth token", "backup codes", "seed phrase" … in many languages.

A context word (a *label*) is followed by a few qualifying words ("for the staging box",
"del servidor"), then maybe a connector (":", "=", "is", "es", "ist", "lautet", "est", "é",
"は", "是" …), then the value. The value is only the first word after the connector, or the
word right after the label when there is none ("pw hunter2", "Passwort Sommer2024!"), and it
must pass the test of its label's family (values.py): a password, a key, a PIN, a code list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from . import lists
from .lexicon import PHRASES, SEPARATORS, UNSPACED, trie
from .values import UNITS, digits_code, key_like, password_like


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CONNECTORS = _words(
    ": = := => -> → — – - == is are was were now is: es era son ist sind lautet lauten war "
    "heißt est était sont é è são zijn är var er on to je jest это 是 为 為 は が 는 은 이 가 "
    "contains holds enthält contiene contient contém bevat auf a à en"
)
# Words after a label that show it is not followed by its value ("password manager",
# "password policy", "key fingerprint", "token count").
_STOP = _words(
    "manager managers policy policies reset resets hint hints field fields length requirements "
    "rules rule strength hash hashes hashing fingerprint id ids rotation rotated expiry "
    "expiration generator checker prompt prompts dialog count counts budget limit limits usage "
    "gestor gestionnaire verwaltung manager. store stores storage vault format type name names "
    "prefix scope scopes header headers file files endpoint endpoints page form"
)
_CLAUSE_END = re.compile(r"[.;!?]$|[.;!?][\"')\]]$")
_TOKEN = re.compile(
    r"(?P<space>[ \t\u3000]*(?:\r?\n[ \t>*\-]*)?)"
    r"(?:(?P<quoted>\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|`[^`\n]{1,120}`|«[^»\n]{1,120}»"
    r"|„[^“”\"\n]{1,120}[“”\"]|“[^”\n]{1,120}”|‘[^’\n]{1,120}’|「[^」\n]{1,120}」|『[^』\n]{1,120}』)"
    r"|(?P<conn>:=|=>|->|==|[:=→—–])"
    r"|(?P<cjk>[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u3000-\u303f]+)"
    r"|(?P<word>[^\s\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u3000-\u303f]+))"
)
_PUBLIC = re.compile(r"\b(?:public|publishable|pub|öffentliche[rn]?|pública|publique)[ _\-]$")
_WIFI = re.compile(r"wi-?fi|wlan|wpa|ssid|router|network|netzwerk|red |réseau|rede ", re.I)


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    text: str
    kind: str  # "quoted", "conn", "cjk", "word"
    newline: bool  # a line break came before it


def _tokens(text: str, pos: int, limit: int) -> Iterator[_Token]:
    end = min(len(text), pos + limit)
    while pos < end:
        m = _TOKEN.match(text, pos, end)
        if m is None or m.end() == pos:
            return
        kind = m.lastgroup or "word"
        start = m.start(kind)
        value = m.group(kind)
        newline = "\n" in m.group("space")
        if kind == "word" and len(value) > 1 and value[-1] in ":=" and value[-2] not in ":=":
            # "is:" or "mdp:" — the word, then its connector
            yield _Token(start, m.end() - 1, value[:-1], "word", newline)
            yield _Token(m.end() - 1, m.end(), value[-1], "conn", False)
        else:
            yield _Token(start, m.end(), value, kind, newline)
        pos = m.end()


def _trim(token: _Token) -> tuple[int, int, str, bool]:
    """The value a token holds: the inside of quotes, or the word without the sentence's
    punctuation after it."""
    if token.kind == "quoted":
        return token.start + 1, token.end - 1, token.text[1:-1].strip(), True
    text = token.text
    cut = len(text) - len(text.rstrip(",;.)]}>\"'`»“”’」』"))
    if cut and text[: len(text) - cut].count("(") > 0:
        cut = len(text) - len(text.rstrip(",;."))
    return token.start, token.end - cut, text[: len(text) - cut], False


def _accepts(
    label: str, family: str, strength: str, value: str, quoted: bool, after_connector: bool
) -> bool:
    immediate = not after_connector
    if family in ("password", "app-password"):
        return password_like(value, quoted=quoted, strict=strength == "weak" and immediate)
    if family == "credential":
        if quoted and not after_connector and strength == "weak":
            return False
        strict = strength == "weak" and immediate
        if key_like(value, strict=strict, uuid_ok=strength == "strong"):
            return True
        # "secret: Tr0ub4dor&3", "shared secret = …": a password-like value named a secret
        return "secret" in label and after_connector and password_like(value, quoted=quoted)
    if family == "pin":
        return digits_code(value, 3, 8)
    if family == "card-code":
        return digits_code(value, 3, 4)
    return False


# Families whose value is a list or a group of parts, read from the first part on.
_GROUP_READERS = {
    "backup": lists.code_list_at,
    "seed": lists.seed_words_at,
    "totp": lists.totp_seed_at,
    "app-password": lists.app_password_at,
}


def _read(
    text: str, label: str, family: str, strength: str, token: _Token, after_connector: bool
) -> tuple[int, int] | None:
    """The value's span if `token` starts the value a label of `family` names."""
    reader = _GROUP_READERS.get(family)
    if reader is not None:
        span = reader(text, token.start + (token.kind == "quoted"))
        if span is not None or family != "app-password":
            return span
    value_start, value_end, value, quoted = _trim(token)
    if value and _accepts(label, family, strength, value, quoted, after_connector):
        return value_start, value_end
    return None


def _next_word_is_unit(tokens: list[_Token], index: int) -> bool:
    return index + 1 < len(tokens) and tokens[index + 1].text.lower().strip(",.;") in UNITS


def _is_connector(token: _Token) -> bool:
    if token.kind == "conn" or token.text.lower() in _CONNECTORS:
        return True
    # a particle written onto the next word: "は", "是", "는"
    return token.kind == "cjk" and len(token.text) == 1 and token.text in _CONNECTORS


def _value_after(
    text: str, label: str, family: str, strength: str, start: int
) -> tuple[int, int] | None:
    """The span of the value a label ending at `start` names, or None."""
    tokens = list(islice(_tokens(text, start, 160), 12))
    after_connector = previous_connector = False
    qualifiers = 0
    for index, token in enumerate(tokens):
        if token.newline and index > 0 and not previous_connector:
            return None  # a value on the next line only right after "password:" or the label
        if index == 0 and token.kind in ("word", "quoted") and token.start == start:
            return None  # `passwords?|…`: the label is part of a longer token
        if strength == "weak" and token.newline:
            return None  # "pw", "pass", "key": their value is on their line (not Python's `pass`)
        if _is_connector(token):
            after_connector = previous_connector = True
            continue
        previous_connector = False
        if (after_connector or index == 0) and not _next_word_is_unit(tokens, index):
            span = _read(text, label, family, strength, token, after_connector)
            if span is not None:
                return span
        if after_connector or token.kind == "cjk" or token.newline:
            return None  # only the first word after the connector (or the line break) is it
        lowered = token.text.lower().strip(",.;:()")
        if lowered in _STOP or _CLAUSE_END.search(token.text) or token.text[:1] in "$<{%":
            return None
        qualifiers += 1
        if qualifiers > 6:
            return None
    return None


def _label_at(text: str, lowered: str, match: re.Match[str]) -> tuple[str, str] | None:
    """The family and strength of the context word `match` found, or None where it is part of
    a longer word (`compass`, `password_hash`, `password.encode()`, `pin(`) or a lower-case
    "pin" (a GPIO pin, pinning a version: only "PIN" names a secret)."""
    phrase = match.group(0)
    family, strength = PHRASES[phrase]
    start, end = match.span()
    if not UNSPACED.match(phrase):
        before = lowered[max(0, start - 2) : start]
        if before[-1:].isalnum() or (before and before[-1] in ":@"):
            return None  # inside a word or a URL: `compass`, `1Password`, `user:password@`
        if before[-1:] == "-" and before[:1].isalnum() and not text[start].isupper():
            # `<your-password>`, `/reset-password?`: part of a name; a compound noun keeps
            # its capital (`GPG-Passphrase`, `Root-Passwort`) and is a context word
            return None
        after = lowered[end : end + 2]
        if after[:1].isalnum() or after[:1] in "_(" or (after[:1] in ".-" and after[1:2].isalnum()):
            return None  # `password_hash`, `password.encode()`, `pin(`, `pass-through`
    if phrase in ("pin", "puk") and text[start:end] != phrase.upper():
        return None
    if _PUBLIC.search(lowered, max(0, start - 14), start):
        return None  # "publishable key", "public key", "clé publique"
    # "Guest Wi-Fi is 'Cafe Nord', key …": a key of a network is its password
    if (
        family == "credential"
        and strength == "weak"
        and _WIFI.search(text, max(0, start - 60), start)
    ):
        return "password", "strong"
    return family, strength


_KINDS = {
    "app-password": "password",
    "backup": "backup-codes",
    "seed": "seed-phrase",
    "totp": "totp-secret",
}


def labelled(text: str) -> list[Found]:
    """Values named by a context word, as spans of `text`: passwords, PINs, card codes, keys
    and tokens with no prefix of their own, lists of codes and seed words (lists.py)."""
    found: list[Found] = []
    taken = 0
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer (İ): keep offsets
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    for match in trie().finditer(lowered.translate(SEPARATORS)):
        if match.start() < taken:
            continue
        label = _label_at(text, lowered, match)
        if label is None:
            continue
        family, strength = label
        span = _value_after(text, match.group(0), family, strength, match.end())
        if span is not None:
            found.append(Found(span[0], span[1], _KINDS.get(family, family)))
            taken = span[1]
    return found
