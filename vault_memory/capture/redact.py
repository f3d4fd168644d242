"""Secret redaction: every text `flush` writes (or sends to a model) passes through `redact`.

A table of named patterns, most specific first; a match becomes `[REDACTED:kind]`. Where a
secret sits in a structure worth keeping (a URL, an `Authorization:` header, a `password=`
assignment) only the secret part is replaced, so the entry still reads well.

The patterns look for the shape of real credentials (fixed prefixes, lengths, alphabets), not
for "random-looking" strings: git SHAs, UUIDs, content hashes, base64 images and ids must pass
untouched (tests/test_redact.py holds both corpora).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

# Token alphabets; a lookbehind/lookahead on these keeps a prefix such as `sk-` from matching
# inside a longer word ("task-management") or a longer token.
_B = r"(?<![A-Za-z0-9_\-])"  # not preceded by a token character
_E = r"(?![A-Za-z0-9_\-])"  # not followed by one
_HAS_DIGIT = r"(?=[A-Za-z_\-]*[0-9])"  # the random part holds a digit (real tokens all do)
# a digit or symbol, or a lower-to-upper case change: "dXNlcjpw…", not "authentication"
_RANDOMISH = r"(?=[A-Za-z0-9._~+/\-]*(?:[0-9+/=_]|[a-z][A-Z]))"


@dataclass(frozen=True)
class SecretPattern:
    kind: str
    regex: re.Pattern[str]
    needles: tuple[str, ...]  # the regex can only match if the text holds one of these
    group: int = 0  # the part replaced; the rest of the match is kept
    fold: bool = False  # needles are lower case, checked against the lower-cased text

    def may_match(self, text: str, lowered: str) -> bool:
        haystack = lowered if self.fold else text
        return any(needle in haystack for needle in self.needles)


def _p(kind: str, pattern: str, needles: str, group: int = 0, flags: int = 0) -> SecretPattern:
    fold = bool(flags & re.I)
    return SecretPattern(kind, re.compile(pattern, flags), tuple(needles.split()), group, fold)


# Words that name a secret in an assignment (`password=…`, `"api_key": "…"`, `SECRET: …`);
# the key must END with one of them, so `max_tokens = 256` or `tokens_in=2311` do not count.
_SECRET_WORDS = "pass pwd secret token key credential"
_SECRET_KEY = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|secret[_-]?key|private[_-]?key|auth[_-]?key|client[_-]?secret|credentials?"
    r"|auth[_-]?token|session[_-]?key|signing[_-]?key|encryption[_-]?key)"
)
_VALUE = r"(\"[^\"\n]{4,}\"|'[^'\n]{4,}'|[^\s\"',;()\[\]{}<>]{6,})"
_PLACEHOLDER = re.compile(
    r"^(?:<[^>]*>|\$\{?[A-Za-z_][\w]*\}?|\{\{.*\}\}|%\(?\w*\)?s|\*+|x+|"
    r"\.\.\.|…|None|null|nil|true|false|True|False|str|int|bytes|os\.environ.*|env\(.*)$",
    re.I,
)

# Most specific first: a later pattern never matches inside an earlier `[REDACTED:…]`.
PATTERNS: tuple[SecretPattern, ...] = (
    # -- key material -------------------------------------------------------------------------
    # PEM / OpenSSH / PGP private key blocks, also with JSON-escaped newlines (a GCP
    # service-account file's "private_key": "-----BEGIN PRIVATE KEY-----\n…").
    _p(
        "private-key",
        r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?-----END \1-----",
        "-----BEGIN",
        flags=re.S,
    ),
    # …and a block cut off before its END line (a truncated paste): up to its last key line.
    _p(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:\s|\\n|\\r)*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n\\]*))*",
        "-----BEGIN",
    ),
    _p("gcp-private-key-id", r"(\"private_key_id\"\s*:\s*\")([0-9a-f]{40})\"", "private_key_id", 2),
    # -- provider API keys --------------------------------------------------------------------
    _p("anthropic-key", _B + r"sk-ant-(?:api|admin|oat)?\d*-?[A-Za-z0-9_\-]{20,}" + _E, "sk-ant-"),
    _p("openai-key", _B + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}" + _E, "sk-"),
    _p("openai-key", _B + r"sk-" + _HAS_DIGIT + r"[A-Za-z0-9]{20,}" + _E, "sk-"),
    _p("github-token", _B + r"gh[pousr]_[A-Za-z0-9]{30,255}" + _E, "ghp_ gho_ ghu_ ghs_ ghr_"),
    _p("github-token", _B + r"github_pat_[A-Za-z0-9]{20,}_[A-Za-z0-9]{30,}" + _E, "github_pat_"),
    _p(
        "gitlab-token",
        _B + r"gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_\-]{20,}" + _E,
        "glpat- gldt- glrt- glptt- glcbt- gloas-",
    ),
    _p("slack-token", _B + r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}" + _E, "xox"),
    _p(
        "slack-webhook",
        r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
        "hooks.slack.com",
    ),
    _p("stripe-key", _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _E, "_live_ _test_"),
    _p("stripe-webhook-secret", _B + r"whsec_[A-Za-z0-9]{24,}" + _E, "whsec_"),
    _p(
        "aws-access-key-id",
        _B + r"(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}" + _E,
        "AKIA ASIA ABIA ACCA AROA AIDA",
    ),
    _p(
        "aws-secret-key",
        r"((?:aws)?_?secret_?(?:access)?_?key[\"']?\s*(?:[:=]|=>)\s*[\"']?)"
        r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "secret",
        2,
        re.I,
    ),
    _p("google-api-key", _B + r"AIza[0-9A-Za-z_\-]{35}" + _E, "AIza"),
    _p("google-oauth-secret", _B + r"GOCSPX-[A-Za-z0-9_\-]{20,}" + _E, "GOCSPX-"),
    _p(
        "azure-key",
        r"((?:AccountKey|SharedAccessKey|SharedSecretValue)=)([A-Za-z0-9+/]{20,}={0,2})",
        "AccountKey= SharedAccessKey= SharedSecretValue=",
        2,
    ),
    _p("azure-sas-signature", r"([?&]sig=)([A-Za-z0-9%+/]{20,}={0,2})", "sig=", 2),
    _p("huggingface-token", _B + r"hf_" + _HAS_DIGIT + r"[A-Za-z0-9]{30,}" + _E, "hf_"),
    _p("npm-token", _B + r"npm_" + _HAS_DIGIT + r"[A-Za-z0-9]{36}" + _E, "npm_"),
    _p("pypi-token", _B + r"pypi-AgE[A-Za-z0-9_\-]{50,}" + _E, "pypi-AgE"),
    _p("twilio-key", r"\b(?:SK|AC)[0-9a-f]{32}\b", "SK AC"),
    _p("sendgrid-key", _B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E, "SG."),
    _p("mailgun-key", _B + r"key-[0-9a-f]{32}" + _E, "key-"),
    _p(
        "shopify-token",
        _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E,
        "shpat_ shpca_ shppa_ shpss_",
    ),
    _p("digitalocean-token", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E, "_v1_"),
    _p("databricks-token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E, "dapi"),
    _p("telegram-bot-token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _E, ":AA"),
    _p(
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{30,}",
        "/api/webhooks/",
    ),
    # -- tokens in context --------------------------------------------------------------------
    _p(
        "jwt",
        _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _E,
        "eyJ",
    ),
    _p(
        "authorization",
        r"((?:Proxy-)?Authorization[\"']?\s*[:=]\s*[\"']?(?:Bearer|Token|Basic|Digest|Bot)\s+)"
        + _RANDOMISH
        + r"([A-Za-z0-9._~+/\-]{8,}=*)",
        "authorization",
        2,
        re.I,
    ),
    _p(
        "authorization",
        r"((?:Proxy-)?Authorization[\"']?\s*[:=]\s*[\"']?)"
        + _HAS_DIGIT
        + r"([A-Za-z0-9._~+/\-]{16,}=*)",
        "authorization",
        2,
        re.I,
    ),
    _p(
        "bearer-token",
        r"(\bBearer\s+)" + _RANDOMISH + r"([A-Za-z0-9._~+/\-]{16,}=*)",
        "Bearer",
        2,
    ),
    # scheme://user:password@host (database URLs, git remotes, proxies); also redis://:pw@host
    _p(
        "url-password",
        r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@?#\"'`]*:)([^\s@/?#\"'`]+)(@[^\s/@]+)",
        "://",
        2,
    ),
    # password=…, "api_key": "…", SECRET_TOKEN: … The regex starts at the secret word: the
    # `:`/`=` after it proves the word ends the key (`max_tokens = 256` does not match).
    _p(
        "password",
        r"((?:(?<![A-Za-z0-9])|(?-i:(?=[A-Z])))"  # `db_password`, `dbPassword`; not `compass`
        + _SECRET_KEY
        + r"[\"']?\s*(?::=|=>|[:=])\s*)"
        + _VALUE,
        _SECRET_WORDS,
        2,
        re.I,
    ),
    # "my password is hunter22"
    _p(
        "password",
        r"(\b(?:password|passphrase|passcode|pwd)\s+(?:is|was)\s+)" + _VALUE,
        "pass pwd",
        2,
        re.I,
    ),
)


@dataclass
class Redacted:
    """A text with its secrets replaced, and how many of each kind were found."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _assignment_value_is_secret(value: str) -> bool:
    """`password = get_password()` or `token: str` are code, not secrets: an unquoted value
    must hold a digit or a symbol, a quoted one must not read like a sentence; placeholders
    (`<token>`, `${TOKEN}`, `***`, an earlier `[REDACTED:…]`) never count."""
    quoted = value[:1] in "\"'"
    inner = (value[1:-1] if quoted else value.rstrip(".!?:")).strip()
    if len(inner) < 4 or "[REDACTED:" in inner or _PLACEHOLDER.match(inner):
        return False
    if quoted:
        return inner.count(" ") <= 3
    if re.fullmatch(r"[A-Za-z_]+(?:\.[A-Za-z_]\w*)+|[A-Za-z_]+", inner):  # a name or attribute
        return False
    return bool(re.search(r"[0-9!@#$%^&*+/=~\-]", inner))


# Most texts hold no needle of any pattern: one look for all of them first (a transcript
# redacts every message of a conversation; bench/sessions.py).
_CASE_NEEDLES = tuple(sorted({n for p in PATTERNS if not p.fold for n in p.needles}))
_FOLD_NEEDLES = tuple(sorted({n for p in PATTERNS if p.fold for n in p.needles}))


def redact(text: str) -> Redacted:
    """Replace every secret in `text` by `[REDACTED:kind]`."""
    counts: Counter[str] = Counter()
    lowered = text.lower()
    if not any(map(text.__contains__, _CASE_NEEDLES)) and not any(
            map(lowered.__contains__, _FOLD_NEEDLES)):
        return Redacted(text, {})
    for pattern in PATTERNS:
        if not pattern.may_match(text, lowered) or not pattern.regex.search(text):
            continue

        def replace(match: re.Match[str], pattern: SecretPattern = pattern) -> str:
            secret = match.group(pattern.group)
            start, end = match.span(pattern.group)
            if pattern.kind == "password":
                if not _assignment_value_is_secret(secret):
                    return match.group(0)
                if secret[:1] in "\"'":  # keep the quotes around the marker
                    start, end = start + 1, end - 1
                else:  # a sentence's final stop is not part of the password
                    end -= len(secret) - len(secret.rstrip(".!?:"))
            elif secret.startswith("[REDACTED:"):
                return match.group(0)
            counts[pattern.kind] += 1
            whole, base = match.group(0), match.start()
            return f"{whole[: start - base]}[REDACTED:{pattern.kind}]{whole[end - base :]}"

        text = pattern.regex.sub(replace, text)
        lowered = text.lower()
    return Redacted(text, dict(counts))


def redact_text(text: str) -> str:
    """`redact(text).text`."""
    return redact(text).text


def redact_texts(texts: list[str]) -> list[str]:
    """`redact_text` of each text, faster for many (a whole conversation): the needles are
    looked for in all of them at once, then in the texts only when some are there."""
    joined = "\n".join(texts)
    lowered = joined.lower()
    case = tuple(n for n in _CASE_NEEDLES if n in joined)
    fold = tuple(n for n in _FOLD_NEEDLES if n in lowered)
    if not case and not fold:
        return list(texts)
    return [redact(text).text if any(map(text.__contains__, case)) or (
        fold and any(map(text.lower().__contains__, fold))) else text for text in texts]
