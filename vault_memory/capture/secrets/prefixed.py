"""Credentials with a shape of their own: a provider's fixed prefix, length and alphabet
(`ghp_…`, `sk-ant-…`, `AKIA…`), a structure (PEM blocks, `Authorization:` headers, `KEY=value`
assignments, `scheme://user:password@host`), a checksum (cards, IBANs). A table of named
patterns, most specific first; where a secret sits in a structure worth keeping only its
`group` is the secret, so the entry still reads well.

The patterns look for the shape of real credentials, not for "random-looking" strings: git
SHAs, UUIDs, content hashes, base64 images and ids must pass untouched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .checksums import iban, luhn
from .values import ordinary

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
    valid: Callable[[str], bool] | None = None  # a checksum the secret must pass

    def may_match(self, text: str, lowered: str) -> bool:
        haystack = lowered if self.fold else text
        return any(needle in haystack for needle in self.needles)


def _p(
    kind: str,
    pattern: str,
    needles: str,
    group: int = 0,
    flags: int = 0,
    valid: Callable[[str], bool] | None = None,
) -> SecretPattern:
    fold = bool(flags & re.I)
    return SecretPattern(
        kind, re.compile(pattern, flags), tuple(needles.split()), group, fold, valid
    )


def _randomish(text: str) -> bool:
    """Mixed case with digits: a generated secret, not a word or a number."""
    return bool(
        re.search(r"[a-z]", text) and re.search(r"[A-Z]", text) and re.search(r"[0-9]", text)
    )


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

_NOT_A_SECRET = re.compile(
    r"(?:~|\.{0,2})/[\w./\-]*"  # a path
    r"|\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+\-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}:\d{2}(?::\d{2})?"
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
    # -- more providers (Discord, Vault, age, Postman, Linear, Doppler, Square, …) ----------
    _p("openrouter-key", _B + r"sk-or-v1-[A-Za-z0-9]{32,}" + _E, "sk-or-"),
    _p("groq-key", _B + r"gsk_[A-Za-z0-9]{40,}" + _E, "gsk_"),
    _p("perplexity-key", _B + r"pplx-[A-Za-z0-9]{40,}" + _E, "pplx-"),
    _p("xai-key", _B + r"xai-[A-Za-z0-9]{40,}" + _E, "xai-"),
    _p("replicate-token", _B + r"r8_[A-Za-z0-9]{30,}" + _E, "r8_"),
    _p("bitbucket-app-password", _B + r"ATBB[A-Za-z0-9_\-]{28,}" + _E, "ATBB"),
    _p("atlassian-token", _B + r"ATATT3[A-Za-z0-9_\-=]{50,}" + _E, "ATATT3"),
    _p("slack-app-token", _B + r"xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{30,}" + _E, "xapp-"),
    _p(
        "discord-bot-token",
        _B + r"[MNO][A-Za-z\d_\-]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,38}" + _E,
        ".",
    ),
    _p("square-token", _B + r"sq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,43}" + _E, "sq0"),
    _p("square-token", _B + r"EAAA[A-Za-z0-9_\-]{59,}" + _E, "EAAA"),
    _p("facebook-token", _B + r"EAA[A-Za-z0-9]{60,}" + _E, "EAA"),
    _p(
        "braintree-token",
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
        "access_token$",
    ),
    _p(
        "firebase-fcm-key", _B + r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}" + _E, ":APA91b"
    ),
    _p("azure-ad-secret", _B + r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}" + _E, "Q~"),
    _p("alibaba-key", _B + r"LTAI[A-Za-z0-9]{12,20}" + _E, "LTAI"),
    _p("vault-token", _B + r"hv[sbr]\.[A-Za-z0-9_\-]{24,}" + _E, "hvs. hvb. hvr."),
    _p("terraform-token", _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}" + _E, ".atlasv1."),
    _p("pulumi-token", _B + r"pul-[a-f0-9]{40}" + _E, "pul-"),
    _p("heroku-key", _B + r"HRKU-[A-Za-z0-9_\-]{40,}" + _E, "HRKU-"),
    _p("docker-token", _B + r"dckr_pat_[A-Za-z0-9_\-]{27,}" + _E, "dckr_pat_"),
    _p("rubygems-key", _B + r"rubygems_[a-f0-9]{48}" + _E, "rubygems_"),
    _p("nuget-key", _B + r"oy2[a-z0-9]{43}" + _E, "oy2"),
    _p(
        "planetscale-token", _B + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.=]{32,64}" + _E, "pscale_"
    ),
    _p("supabase-token", _B + r"sbp_[a-f0-9]{40}" + _E, "sbp_"),
    _p("sentry-token", _B + r"sntry[su]_[A-Za-z0-9_=+/\-]{40,}" + _E, "sntrys_ sntryu_"),
    _p("grafana-token", _B + r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + _E, "glsa_"),
    _p("grafana-token", _B + r"glc_[A-Za-z0-9+/]{32,}={0,2}", "glc_"),
    _p("newrelic-key", _B + r"NRAK-[A-Z0-9]{27}" + _E, "NRAK-"),
    _p("linear-key", _B + r"lin_(?:api|oauth)_[A-Za-z0-9]{40}" + _E, "lin_"),
    _p(
        "notion-token", _B + r"(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})" + _E, "ntn_ secret_"
    ),
    _p("figma-token", _B + r"figd_[A-Za-z0-9_\-]{40,}" + _E, "figd_"),
    _p("postman-key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E, "PMAK-"),
    _p(
        "doppler-token",
        _B + r"dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[a-z0-9_\-]{2,35}\.)?[A-Za-z0-9]{40,44}" + _E,
        "dp.",
    ),
    _p(
        "age-secret-key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "AGE-SECRET-KEY-1",
    ),
    _p("mailchimp-key", _B + r"[a-f0-9]{32}-us\d{1,2}" + _E, "-us"),
    _p("twitter-bearer", _B + r"A{20,22}[A-Za-z0-9%]{30,}" + _E, "AAAAAAAAAAAAAAAAAAAA"),
    _p("mapbox-token", _B + r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}" + _E, "sk.eyJ"),
    # -- payment data: shapes with a checksum -------------------------------------------------
    _p(
        "card-number",
        r"(?<![\w.\-/])\d(?:[ \-]?\d){12,18}(?![\w.\-/])",
        "0 1 2 3 4 5 6 7 8 9",
        valid=luhn,
    ),
    _p(
        "iban",
        r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b",
        "A B C D E F G H I J K L M N O P Q R S T U V W X Y Z",
        valid=iban,
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
        r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@?#\"'`]*:)([^\s@/\"'`]+)(@[^\s/@]+)",
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
)


def _assignment_value_is_secret(value: str) -> bool:
    """`password = get_password()` or `token: str` are code, not secrets: an unquoted value
    must hold a digit or a symbol, a quoted one must not read like a sentence; placeholders
    (`<token>`, `${TOKEN}`, `***`, an earlier `[REDACTED:…]`) never count."""
    quoted = value[:1] in "\"'"
    inner = (value[1:-1] if quoted else value.rstrip(".?:")).strip()
    if len(inner) < 4 or "[REDACTED:" in inner or _PLACEHOLDER.match(inner) or ordinary(inner):
        return False
    if _NOT_A_SECRET.fullmatch(inner):  # a path (`PWD=/home/…`), a date, a time
        return False
    if quoted:
        return inner.count(" ") <= 3
    if re.fullmatch(r"[A-Za-z_]+(?:\.[A-Za-z_]\w*)+|[A-Za-z_]+", inner):  # a name or attribute
        return False
    return bool(re.search(r"[0-9!@#$%^&*+/=~\-]", inner))
