"""Is this word a secret? The tests a value must pass once a context word ("password",
"Passwort", "API key", "PIN" …) has named it: placeholders, variable references, paths, dates,
versions, numbers with a unit, words and code are not secrets; a password mixes letters with
digits or symbols, a key is long and random-looking."""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# `<password>`, `${DB_PASSWORD}`, `$PASS`, `{{ vault_pw }}`, `%(pw)s`, `***`, `••••`, `xxxx`,
# `YOUR_API_KEY`, `REPLACE_ME`, an earlier `[REDACTED:…]`
PLACEHOLDER = re.compile(
    r"^(?:<[^>]*>?|\$\{?[A-Za-z_][\w]*\}?.*|\$\(.*|\{\{.*|\{%.*|%\(?\w*\)?s|%\w+%|"
    r"[*•●·x.…_\-]{3,}|[X]{3,}\w*|\w*[xX*]{6,}|(?:your|my|the)[_-]\w+|\w*(?:replace|change)[_-]?me\w*"
    r"|\[redacted.*|\[.*\]|None|null|nil|undefined|true|false|str|int|bytes|string|env\(.*|os\.environ.*"
    r"|(?:my|your|the)?(?:password|passwd|pass|pwd|pw|secret|token|user|username|changeme)"
    r"|process\.env.*)$",
    re.I,
)
# Password managers and vaults: "my password manager is 1Password", "the password is in KeePassXC"
MANAGERS = _words(
    "1password bitwarden keepass keepassxc keepassx lastpass dashlane keeper nordpass protonpass "
    "enpass roboform keychain vaultwarden passbolt psono"
)
_DATE_TIME_VERSION = re.compile(
    r"^(?:\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[T ]?\d{1,2}:\d{2}.*)?"  # dates
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:[ap]m)?"  # times
    r"|v?\d+(?:\.\d+){1,3}(?:[-+~][\w.+-]*)?"  # versions
    r"|\d{1,2}/\d{2,4}"  # expiry dates
    r"|#?\d{1,3}(?:[,.]\d{3})*(?:[.,]\d+)?%?"  # amounts and counts
    r"|\d+(?:\.\d+)?(?:k|m|g|kb|mb|gb|ms|s|h|min|px|em|%|x)"  # numbers with a unit
    r")$",
    re.I,
)
_PATH_URL_MAIL = re.compile(
    r"^(?:(?:~|\.{1,2})?/[\w.\-/*]*|(?-i:(?:[a-z0-9_.\-*]+/)+[a-z0-9_.\-*]+)|[A-Za-z]:\\.*|[a-z][a-z0-9+.\-]*://.*|[\w.+\-]+@[\w\-]+\.[\w.]+"
    r"|[\w\-]+\.(?:md|txt|py|js|ts|json|ya?ml|toml|env|pem|key|cfg|conf|ini|log|csv|sh))$",
    re.I,
)
_CODE = re.compile(
    r"\w\(|^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)+$|^[\W_]*[(\[{}\])]|[)}\]>]$|^[.,;(<>]|\\[ntr]$"
)
# Keys meant to be public: Stripe's publishable keys, Nostr and age public keys, SSH public keys
_PUBLIC_KEY = re.compile(
    r"pk_(?:live|test)_|npub1|age1[02-9ac-hj-np-z]{20}|ssh-(?:rsa|ed25519|dss)"
)
UNITS = _words(
    "characters chars character digits digit letters letter symbols days day hours hour minutes "
    "min mins seconds weeks months years times attempts tries bits bytes words caractères "
    "caracteres zeichen stellen ziffern tage dígitos días jours heures cifre caratteri tekens "
    "dagen dias"
)


def _classes(value: str) -> tuple[bool, bool, bool, bool]:
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() for c in value)
    return lower, upper, digit, symbol


def ordinary(value: str) -> bool:
    """Not a secret whatever names it: a placeholder, a reference, a path, a URL, a date, a
    version, a number with its unit, code, a password manager's name."""
    bare = value.rstrip(",;.").strip("\"'`«»„“”‘’「」『』")
    return bool(
        not bare
        or PLACEHOLDER.match(bare)
        or _DATE_TIME_VERSION.match(bare)
        or _PATH_URL_MAIL.match(bare)
        or _CODE.search(bare)
        or bare.lower().replace(" ", "") in MANAGERS
        or "[REDACTED:" in bare
        or masked(bare)
        or bool(_PUBLIC_KEY.match(bare))
    )


def masked(value: str) -> bool:
    """A documentation example or a mask in a secret's shape: `AKIA…EXAMPLE`, `ghp_xxxx…`,
    `sk-XXXXXXXX…` (its last sixteen characters hold at most two distinct ones)."""
    if re.search(r"example|sample|dummy|placeholder|redacted", value, re.I):
        return True
    tail = value[-16:]
    return len(tail) >= 8 and not tail.isdigit() and len(set(tail.lower())) <= 2


def password_like(value: str, *, quoted: bool = False, strict: bool = False) -> bool:
    """A password as people make them: letters with digits or symbols (`Sommer2024!`), digits
    alone from four on (a numeric passcode), anything quoted that is not a sentence. `strict`
    (no "is"/":" between the context word and the value): letters and digits both."""
    if ordinary(value) or len(value) > 128:
        return False
    if quoted:
        return len(value) >= 3 and value.count(" ") <= 4 and not value.endswith((".", "?"))
    if len(value) < 4:
        return False
    lower, upper, digit, symbol = _classes(value)
    letters = lower or upper
    if value.isdigit():
        return not strict or len(value) >= 6
    if not letters:
        return symbol and digit and not strict
    if digit:
        return True
    if re.fullmatch(r"[\w.]+", value):
        return False  # an identifier: `OBSIDIAN_SETTINGS`, `settings.db_password`
    # letters and symbols: a symbol inside (not a sentence's comma), not words joined by
    # hyphens or apostrophes ("case-sensitive", "d'accès")
    core = value.strip(".,;:!?)(")
    if not any(not c.isalnum() for c in core[1:-1]) or re.fullmatch(
        r"[^\W\d_]+(?:['’\-][^\W\d_]+)*", core
    ):
        return False
    return len(core) >= 8 and not strict


def key_like(value: str, *, strict: bool = False, uuid_ok: bool = True) -> bool:
    """An API key, token or secret: at least 16 characters of a key alphabet, random-looking
    (hex of 16 and more, or letters mixed with digits). `strict` (a weak context word such as
    "key" with no "is"/":"): upper and lower case letters and digits all three."""
    if ordinary(value) or not 16 <= len(value) <= 512:
        return False
    if not re.fullmatch(r"[A-Za-z0-9_\-+/=.~%$!*]+", value):
        return False
    lower, upper, digit, _ = _classes(value)
    if strict:
        return lower and upper and digit
    if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", value, re.I):
        return uuid_ok
    if re.fullmatch(r"[0-9a-fA-F\-]{16,}", value):
        return digit and (lower or upper)
    if not digit:
        # letters only: random when case changes often (`dXNlcnBhc3N3b3Jk`), not a word
        return len(value) >= 20 and len(re.findall(r"[a-z][A-Z]|[A-Z][a-z]", value)) >= 4
    # an identifier made of words and numbers (`billing-core-2024`, `OPENAI_API_KEY`) is a name
    parts = re.split(r"[_\-.~/+=]+", value)
    return (lower or upper) and not all(re.fullmatch(_WORDISH, part) for part in parts if part)


_WORDISH = r"[a-z]+|[A-Z]+|\d+|[A-Z][a-z]+"


def digits_code(value: str, low: int, high: int) -> bool:
    """A PIN, a door code, a card's CVV: `low` to `high` digits (a trailing `#` allowed)."""
    return bool(re.fullmatch(rf"\d{{{low},{high}}}#?", value))
