"""Credentials recognised by where they sit, with no context word in a sentence: command-line
flags (`mysql -p'…'`, `sshpass -p`, `curl -u user:…`, `ldapsearch -w`), `.netrc` and
`.pgpass` lines, Docker's `config.json` `auth`, `otpauth://` URIs, Wi-Fi QR payloads, cookies,
XML properties, a token as a URL's user (a Sentry DSN), user/password pairs ("admin / …"),
"use … as the password", and wallet keys that carry a checksum (Bitcoin WIF, BIP-32 `xprv`,
Nostr `nsec`), BitLocker recovery keys and BIP-39 seed phrases.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from .checksums import base58check, bech32_hrp
from .lists import seed_phrases
from .values import key_like, ordinary, password_like


@dataclass(frozen=True)
class Shape:
    kind: str
    regex: re.Pattern[str]
    needles: tuple[str, ...]  # lower-case; the shape can only match if the text holds one
    group: int = 1
    valid: Callable[[str, re.Match[str]], bool] | None = None


def _shape(
    kind: str,
    pattern: str,
    needles: str,
    group: int = 1,
    valid: Callable[[str, re.Match[str]], bool] | None = None,
    flags: int = 0,
) -> Shape:
    # needles are words, or one needle with spaces in it when written `| … |`
    words = (needles.strip("|"),) if needles.startswith("|") else tuple(needles.split())
    return Shape(kind, re.compile(pattern, flags), words, group, valid)


def _not_ordinary(value: str, _: re.Match[str]) -> bool:
    return not ordinary(value) and len(value) >= 3


def _password(value: str, _: re.Match[str]) -> bool:
    return password_like(value)


def _password_or_key(value: str, _: re.Match[str]) -> bool:
    return password_like(value) or key_like(value)


def _key(value: str, _: re.Match[str]) -> bool:
    return key_like(value)


def _docker_auth(value: str, _: re.Match[str]) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return key_like(value)
    return b":" in decoded or key_like(value)


def _wif(value: str, match: re.Match[str]) -> bool:
    if match.start() and (
        match.string[match.start() - 1].isalnum() or match.string[match.start() - 1] == "_"
    ):
        return False  # inside a longer token
    payload = base58check(value)
    return payload is not None and payload[:1] in (b"\x80", b"\xef") and len(payload) in (33, 34)


def _xprv(value: str, _: re.Match[str]) -> bool:
    payload = base58check(value)
    return payload is not None and len(payload) == 78


def _nsec(value: str, _: re.Match[str]) -> bool:
    return bech32_hrp(value) == "nsec"


_MYSQL = re.compile(r"\b(?:mysql\w*|mariadb\w*|sshpass|docker\s+login|podman\s+login)\b")


def _on_mysql_line(value: str, match: re.Match[str]) -> bool:
    """`-pSECRET` is a password only on a MySQL (or sshpass, docker login) command line:
    elsewhere `-p` is a port (`docker run -p 8080:80`, `ssh -p 2222`)."""
    text = match.string
    line_start = text.rfind("\n", 0, match.start()) + 1
    return bool(_MYSQL.search(text, line_start, match.start())) and not ordinary(value)


_PGPASS_PORTS = re.compile(r"543\d|6432|\*")


def _pgpass(value: str, match: re.Match[str]) -> bool:
    return bool(
        ("pgpass" in match.string.lower() or _PGPASS_PORTS.fullmatch(match.group("port")))
        and not ordinary(value)
    )


_Q = r"""(['"]?)"""  # an optional quote, matched again after the value by \N


@cache
def shapes() -> tuple[Shape, ...]:
    """The shapes, most specific first; compiled on first use (a `vault` command that never
    redacts does not pay for them)."""
    return (
        # -- command lines ------------------------------------------------------------------------
        _shape("password", r"(?<!\S)-p(['\"])([^'\"\n]{1,128})\1", "-p", 2, _not_ordinary),
        _shape("password", r"(?<!\S)-p([^\s'\"$\-][^\s]{2,127})", "-p", 1, _on_mysql_line),
        _shape("password", r"(?<!\S)-p\s+" + _Q + r"([^\s'\"]{3,128})\1", "-p", 2, _on_mysql_line),
        _shape(
            "password",
            r"(?<!\S)--(?:password|passwd|pass|pw|token|api-?key|secret|auth-token|access-token"
            r"|client-secret|bind-password)(?:=|\s+)" + _Q + r"([^\s'\"]{3,256})\1",
            "--",
            2,
            _not_ordinary,
            re.I,
        ),
        _shape(
            "password",
            r"\bldap\w*\b[^\n]*?(?<!\S)-w\s+" + _Q + r"([^\s'\"]+)\1",
            "ldap",
            2,
            _not_ordinary,
        ),
        _shape(
            "password",
            r"\bredis-cli\b[^\n]*?(?<!\S)-a\s+" + _Q + r"([^\s'\"]+)\1",
            "redis-cli",
            2,
            _not_ordinary,
        ),
        _shape(
            "password",
            r"(?<!\S)(?:-u|--user)\s+" + _Q + r"[^\s:'\"]+:([^\s'\"@]+)\1",
            "-u --user",
            2,
            _not_ordinary,
        ),
        # -- files and payloads -------------------------------------------------------------------
        _shape(
            "password",
            r"\b(?:machine\s+\S+|default)\s+(?:login\s+\S+\s+)?password\s+(\S+)",
            "machine default",
            1,
            _not_ordinary,
        ),
        _shape(
            "password",
            r"(?<![\w:.\-])(?:[\w.\-]+|\*):(?P<port>\d{2,5}|\*):(?:[\w\-]+|\*):(?:[\w.@\-]+|\*):"
            r"([^\s:]\S*)",
            "pgpass :543 :6432 :*:",
            2,
            _pgpass,
        ),
        _shape(
            "docker-auth",
            r"\"(?:auth|identitytoken)\"\s*:\s*\"([A-Za-z0-9+/=_\-.]{8,})\"",
            '"auth" "identitytoken"',
            1,
            _docker_auth,
        ),
        _shape(
            "totp-secret", r"otpauth://[^\s?]*\?(?:[^\s#]*?&)?secret=([A-Za-z2-7]+=*)", "otpauth"
        ),
        _shape(
            "password", r"WIFI:[^\n]*?(?<=[;:])P:((?:\\.|[^;\\\n])+);", "wifi:", 1, _not_ordinary
        ),
        _shape(
            "cookie",
            r"(?:sess|sid|remember)[\w.\-]*=([^\s;,&\"']{16,512})",
            "sess sid remember",
            1,
            _key,
            re.I,
        ),
        _shape(
            "password",
            r"<(?P<tag>[\w:.\-]*(?:password|passwd|secret|token|api[_\-]?key)[\w:.\-]*)>"
            r"([^<\n]{3,200})</(?P=tag)>",
            "password passwd secret token key",
            2,
            _not_ordinary,
            re.I,
        ),
        _shape(
            "password",
            r"name=[\"'][^\"'\n]*(?:password|passwd|secret|token|api[_.\-]?key)[^\"'\n]*[\"']"
            r"[^>\n]*?(?:>([^<\n]{3,200})<|value=[\"']([^\"'\n]{3,200})[\"'])",
            "password passwd secret token key",
            1,
            _not_ordinary,
            re.I,
        ),
        # -- a token as a URL's user: a Sentry DSN, `https://TOKEN@host` ------------------------
        _shape(
            "url-credential",
            r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://([A-Za-z0-9_\-.~%]{16,256})@[\w.\-]+",
            "://",
            1,
            _key,
        ),
        # -- user and password side by side ------------------------------------------------------
        _shape(
            "password",
            r"\b(?:log ?in|sign ?in|creds|credentials|account|zugang|zugangsdaten|acceso"
            r"|accès|acesso|accesso|inloggen|anmeldung|identifiants|credenciales)\b(?!\()"
            r"[^\n]{0,40}?(?<![\w/.@\-])[\w.@\-]{2,40}+[ \t]*+(?:/|:|\|)[ \t]*(\S{4,64})",
            "login log sign creds credential account zugang acceso accès acesso accesso inlog "
            "anmeld identifiants credenciales",
            1,
            _password,
            re.I,
        ),
        _shape(
            "password",
            r"(?<![\w/.\-])(?:admin|administrator|root|sa|postgres|ubuntu|pi|guest|user|test|demo"
            r"|operator|superuser|deploy)[ \t]+/[ \t]+(\S{4,64})",
            "| / |",
            1,
            _password,
            re.I,
        ),
        # -- "use … as the password", "… is the admin password" ----------------------------------
        _shape(
            "password",
            r"\b(?:use|try|enter|type|with)\s+(['\"`]?)(\S{4,64}?)\1\s+as\s+(?:the\s+|your\s+|my\s+"
            r"|our\s+)?(?:[\w\-]+\s+){0,2}?(?:password|passphrase|passcode|pin|pw)\b",
            "password passphrase passcode pw",
            2,
            _password,
            re.I,
        ),
        _shape(
            "password",
            r"(?:^|(?<=[.!?]\s)|(?<=\n))(['\"`]?)(\S{4,64}?)\1\s+(?:is|was)\s+(?:the|my|our|your)\s+"
            r"(?:[\w\-]+\s+){0,2}?(?:password|passphrase|passcode|pw)\b(?!\s+(?:manager|policy|hint))",
            "password passphrase passcode pw",
            2,
            _password,
            re.I,
        ),
        # -- wallet keys with a checksum, recovery keys -------------------------------------------
        _shape(
            "crypto-key",
            r"(?<![\w])([5KLc9][1-9A-HJ-NP-Za-km-z]{50,51})(?![\w])",
            "5 k l c 9",
            1,
            _wif,
        ),
        _shape(
            "crypto-key",
            r"(?<![\w])([xyztuv]prv[1-9A-HJ-NP-Za-km-z]{100,112})(?![\w])",
            "prv",
            1,
            _xprv,
        ),
        _shape("crypto-key", r"(?<![\w])(nsec1[02-9ac-hj-np-z]{58})(?![\w])", "nsec1", 1, _nsec),
        _shape("recovery-key", r"\b(\d{6}(?:-\d{6}){7})\b", "-"),
    )


@cache
def _needles() -> tuple[tuple[str, ...], list[tuple[Shape, frozenset[str]]]]:
    every = tuple(sorted({n for shape in shapes() for n in shape.needles}))
    return every, [(shape, frozenset(shape.needles)) for shape in shapes()]


@dataclass(frozen=True)
class ShapeFound:
    start: int
    end: int
    kind: str


def shaped(text: str, lowered: str) -> list[ShapeFound]:
    """Every shape's secrets in `text` (`lowered`: the same, lower-cased, for the needles)."""
    found = []
    every, by_shape = _needles()
    present = {needle for needle in every if needle in lowered}
    for shape, needles in by_shape:
        if needles.isdisjoint(present):
            continue
        for match in shape.regex.finditer(text):
            group = shape.group if match.group(shape.group) is not None else shape.group + 1
            value = match.group(group)
            if value is None:
                continue
            value = value.rstrip(",;.")  # the sentence's punctuation, not the secret's
            if shape.valid is not None and not shape.valid(value, match):
                continue
            end = match.start(group) + len(value)
            found.append(ShapeFound(match.start(group), end, shape.kind))
    for start, end in seed_phrases(text):
        found.append(ShapeFound(start, end, "seed-phrase"))
    return found
