"""Secret redaction: a corpus of real-shaped credentials (all made up) must be caught, and a
corpus of ordinary prose, code, hashes and ids must pass through byte for byte."""

from __future__ import annotations

import pytest

from vault_memory.capture.redact import PATTERNS, redact

from ..support.secrets_corpus import SECRETS as CORPUS

PEM_BODY = (
    "N+orFABAdxObQYDfOTIkmWLGhXIABZrrjqF883h+DtKdHAtj/9cpg3TZvXT8Ea3X\n"
    "ucplA5Uiaf1mn2N27nGHlzf9X3L41RxKyRttDEjUGh5eyeagOShUqGFe7xCfwb+p\n"
    "4lY3ASiPKbPXP2rCtp7dLBnyZL7kYqW68g/Sfs8UwBHtIB+DYyCtuYurFoaijZgB\n"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ik1heWEiLCJpYXQiOj"
    "E1MTYyMzkwMjJ9.OEVHzc0X0AWIRh-JUqBlIFXZ53Ncqe28_ajY75FnCtt"
)
AZURE_KEY = (
    "5Dbd/cmdbnWvZUfPsRtCBySC3FMcK8OQfJYX615QieQBhrqopX0Rnm+2XQCrwyrzjmZ/Ai6HLUnMFckLmZt3Kw=="
)

# (kind, text with @@ where the secret goes, secret): the secret must vanish and
# `[REDACTED:kind]` take exactly its place.
SECRET_CASES = [
    (
        "openai-key",
        "export OPENAI_API_KEY=@@",
        "sk-u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8dKLzdocJ2isAj",
    ),
    (
        "openai-key",
        "my key is @@ please keep it",
        "sk-proj-IhKtJ0RlgLKOmxgJTeKdNnFRIBXuDL7DxtpYlSXp_fKtHF4vUCsMehGAkWvj7F",
    ),
    (
        "anthropic-key",
        'client = Anthropic(api_key="@@")',
        "sk-ant-api03-ORS-6ilI8ihN5KXSc7Tvo-hBKqFYY-kv5ZJr3J1TR4y9ojfljoQoaF1Llqsa",
    ),
    ("github-token", "GH_TOKEN=@@ gh pr list", "ghp_jAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOzd"),
    ("github-token", "the OAuth app returned @@.", "gho_menCkhvMdgaKjIg8xNbe3nNyjOq9wMxEhh2F"),
    (
        "github-token",
        "use @@ for the bot",
        "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",
    ),
    ("gitlab-token", "CI token @@ expires in May", "glpat-goEmvnEN5N1aE6PwZPf1"),
    (
        "slack-token",
        "SLACK_BOT_TOKEN: @@",
        "xoxb-163726516761-2220297299752-JJibaZUPgHV7iB3m03nbqnsG",
    ),
    (
        "slack-webhook",
        "post to @@ when done",
        "https://hooks.slack.com/services/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",
    ),
    ("stripe-key", "stripe.api_key = '@@'", "sk_live_Xg4JdpmrcXgGCJbW56eCuNGM"),
    ("stripe-key", "restricted key @@ for reporting", "rk_live_GmSrCGIZEG8pSH4487q7J58m"),
    ("aws-access-key-id", "aws_access_key_id = @@", "AKIA2I0HZ2UEP1ENTHJX"),
    ("aws-access-key-id", "temporary creds @@ from STS", "ASIAJQI3OGZ5KOK16ZV0"),
    ("aws-secret-key", "aws_secret_access_key = @@", "zTOlUcR64cXQLioDnkHIfxIq2HZt+PlJhx2jIclH"),
    ("google-api-key", "maps key @@ in the web app", "AIzakCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F"),
    ("gcp-private-key-id", '"private_key_id": "@@",', "39988b886e7577496a2c8773e130f7eb19731662"),
    (
        "private-key",
        '"private_key": "@@\\n",',
        "-----BEGIN PRIVATE KEY-----\\n"
        + PEM_BODY.replace("\n", "\\n")
        + "-----END PRIVATE KEY-----",
    ),
    (
        "azure-key",
        "DefaultEndpointsProtocol=https;AccountName=ledgerly;AccountKey=@@;"
        "EndpointSuffix=core.windows.net",
        AZURE_KEY,
    ),
    (
        "azure-key",
        "Endpoint=sb://ledgerly.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=@@",
        "Q2hhbmdlTWVQbGVhc2UxMjM0NTY3ODkwYWJjZGVm=",
    ),
    (
        "huggingface-token",
        "huggingface-cli login --token @@",
        "hf_L9H2WjQ5TY4MyWuUFjsUNPjc01T5GOBUSZ",
    ),
    (
        "npm-token",
        "//registry.npmjs.org/:_authToken=@@",
        "npm_Gi6HWGK10Zb0RLZ5TR9SPofbciOx9gy1CJdO",
    ),
    (
        "pypi-token",
        "password = @@",
        "pypi-AgEIcHlwaS5vcmccF_Ha6ili8GjHEAD6-Wj9KfzjsQGMrb9h_ImB_LK777pzNk8cL6j5IXAAjls",
    ),
    ("twilio-key", "Twilio API key @@ for SMS", "SK8b483b7ffc050fec94dbca3a0aac3609"),
    (
        "sendgrid-key",
        "SENDGRID_API_KEY=@@",
        "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",
    ),
    ("mailgun-key", "mailgun: @@", "key-b5e803b61ba4168160adb59261ff2d3c"),
    ("shopify-token", "X-Shopify-Access-Token @@", "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"),
    (
        "digitalocean-token",
        "doctl auth init -t @@",
        "dop_v1_14c2b54b95523cf6941fa1c257c6f561c5cb347611a3ce9d97dcbee500fe7ee5",
    ),
    (
        "telegram-bot-token",
        "bot token @@ is live",
        "1234567890:AA8ZniqT3Ul4ffqkOkgWrdioyq_KvCiSGuP",
    ),
    (
        "jwt",
        "the session cookie was @@ until logout",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ik1heWEiLCJpYXQiOjE1MTYyMzkwMjJ9.OEVHzc0X0AWIRh-JUqBlIFXZ53Ncqe28_ajY75FnCtt",
    ),
    (
        "authorization",
        "curl -H 'Authorization: Bearer @@' https://api.ledgerly.io/v1/invoices",
        "J6sG-9AH-EOVezxZuJPWvHogU5nGYVHWVsUQk4Dw",
    ),
    ("authorization", 'headers = {"Authorization": "Basic @@"}', "bWF5YTpodW50ZXIyMg=="),
    ("bearer-token", "I pasted Bearer @@ into the console", "7fQwLm29xVbN1cZpR8sTk4HdYj"),
    (
        "url-password",
        "DATABASE_URL=postgres://billing:@@@db.ledgerly.internal:5432/billing",
        "Xq7-vP2m!s",
    ),
    ("url-password", "mongodb+srv://maya:@@@cluster0.ab1cd.mongodb.net/app", "correcthorse9"),
    ("url-password", "REDIS_URL=redis://:@@@cache.internal:6379/0", "s3cr3tRedis"),
    ("url-password", "git clone https://maya:@@@git.ledgerly.io/billing.git", "ghsecret99"),
    ("password", "the staging db user is app and password=@@ for now", "hunter22"),
    ("password", 'config.yaml has  secret: "@@"  under [smtp]', "Tr0ub4dor&3"),
    ("password", "JWT_SIGNING_KEY='@@' in .env", "5up3r-long-signing-value"),
    ("password", "My password is @@ and I know it is weak.", "Winter2026#x"),
    ("password", "the job runs with access_token=@@ for now", "9f8e7d6c5b4a3f2e1d0c"),
]
SECRETS = [(kind, text.replace("@@", secret), secret) for kind, text, secret in SECRET_CASES]

PEM_BLOCKS = [
    f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----",
    f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}-----END EC PRIVATE KEY-----",
    f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}-----END OPENSSH PRIVATE KEY-----",
    f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{PEM_BODY}-----END ENCRYPTED PRIVATE KEY-----",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
    f"{PEM_BODY}=Ab3x\n-----END PGP PRIVATE KEY BLOCK-----",
]

CLEAN = [
    # prose
    "Chose PostgreSQL 16 for the billing-core service. MySQL 5.7 loses support in January.",
    "Maya prefers short answers with code first, explanation after. No bullet-point essays.",
    "Our token budget is 4,000 tokens per call and the secret to good migrations is rehearsal.",
    "Password resets go through the support portal; Jonas keeps the passwords in 1Password.",
    "Authorization is handled by the gateway. Bearer of bad news: CI is red again.",
    "We risk-assessed the rollout with the task-management board and the desk-booking tool.",
    "The key-value store keeps sessions for 30 days; the secret is stored in Vault, not in git.",
    "Use the AWS console in eu-north-1 and ask Jürgen for the IAM role.",
    "Basic Authentication is used for the legacy SOAP endpoint.",
    "The password is stored in the team vault and rotated every quarter.",
    # ids, hashes, uuids, shas
    "Root cause of BIL-1423 / `ERR_LEDGER_409`: the refund handler reuses the idempotency key.",
    "Merged 3f5c2a9e1b7d4c6f8a0e2b4d6f8a1c3e5b7d9f0a (fast-forward) and tagged v2.4.1 at a1b2c3d.",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5 of the export is d41d8cd98f00b204e9800998ecf8427e; image python@sha256:"
    "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    "request id 550e8400-e29b-41d4-a716-446655440000, UUIDv7 0190a3c2-7e1b-7cc0-9a3e-5b2f1d0c8e7a",
    "chatcmpl-9xYzAbC123 finished with finish_reason=stop; PR #2291 fixes INV-212.",
    "session_id=5e3b user=maya messages=14 redacted=1 exported_at=2026-11-21T19:45:12Z",
    "model=gpt-4o-mini tokens_in=2311 tokens_out=418 latency_ms=2140 finish_reason=stop",
    "2026-11-21T19:45:12Z INFO request_id=550e8400-e29b-41d4-a716-446655440000 status=200",
    "Ticket SK-1042, SKU AC-2231 and the AC power adapter; 0x7fffffffffffffff is the max.",
    "the video id is dQw4w9WgXcQ and the short link is https://youtu.be/dQw4w9WgXcQ",
    # base64 images
    "![dot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfD"
    "wAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHR8e"
    "Hx0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/2wBDAQkJCQwLDBgNDRgyIRwhMjIyMjIyMjIyMjIyMjIy",
    # URLs and addresses
    "git@github.com:ledgerly/billing-core.git and ssh://git@github.com/ledgerly/billing-core.git",
    "https://github.com/ledgerly/billing-core/pull/2291 and http://localhost:8080/health?verbose=1",
    "DATABASE_URL=postgres://localhost:5432/billing (no credentials, peer auth)",
    "mail maya@ledgerly.io or mailto:ops@ledgerly.io; the wiki is at https://wiki.ledgerly.io/a@b",
    # code
    "def login(username: str, password: str) -> Token:\n"
    "    token = issue_token(username)\n"
    "    password_hash = bcrypt.hashpw(password.encode(), salt)\n"
    "    max_tokens = 256\n"
    "    secret_name = 'billing/db'\n"
    "    api_key = os.environ.get('OPENAI_API_KEY')\n"
    "    headers = {'Authorization': f'Bearer {token}'}\n"
    "    return token",
    "password = settings.db_password\nsecret = None\ntoken: str | None = None\nif token == '':",
    "env:\n  DB_PASSWORD: ${DB_PASSWORD}\n  token: ${{ secrets.GITHUB_TOKEN }}\n"
    "  secretName: billing-tls\n  secretKeyRef: {name: db, key: password}",
    "npm_config_cache=/tmp/npm and hf_transfer is enabled; sk-learn is not a package name",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n"
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUe\n-----END CERTIFICATE-----",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 maya@laptop; integrity sha512-Zm9vYmFyYmF6cXV4",
    "arn:aws:iam::123456789012:role/billing-deployer; Authorization: Bearer $TOKEN; "
    "api_key=<YOUR_KEY>",
    "@@ -12,7 +12,9 @@ class Ledger:\n-    key = row.key\n+    key = f'{row.key}:{suffix}'",
    "password: <your-password>\napi_key: '***'\ntoken = \"xxxxxxxx\"\nsecret: '${SECRET}'",
]


@pytest.mark.parametrize(
    ("kind", "text", "secret"), SECRETS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(SECRETS)]
)
def test_each_secret_format_is_redacted_in_place(kind: str, text: str, secret: str) -> None:
    result = redact(text)
    assert result.text == text.replace(secret, f"[REDACTED:{kind}]"), result.text
    assert result.counts == {kind: 1}
    assert secret not in result.text


@pytest.mark.parametrize("block", PEM_BLOCKS, ids=["rsa", "ec", "openssh", "pkcs8", "pgp"])
def test_private_key_blocks_are_redacted_whole(block: str) -> None:
    text = f"Here is the deploy key:\n{block}\nKeep it safe."
    result = redact(text)
    assert result.text == "Here is the deploy key:\n[REDACTED:private-key]\nKeep it safe."
    assert result.counts == {"private-key": 1}


def test_a_truncated_private_key_block_is_redacted_to_its_last_key_line() -> None:
    text = f"pasted:\n-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}and then the paste broke"
    result = redact(text)
    assert result.text == "pasted:\n[REDACTED:private-key]\nand then the paste broke"


def test_the_corpus_covers_at_least_twenty_formats_and_every_pattern() -> None:
    kinds = {kind for kind, _, _ in SECRETS} | {"private-key"}
    assert len(SECRETS) + len(PEM_BLOCKS) >= 40
    assert len(kinds) >= 25
    # the other credential formats are covered by the corpus of tests/support/secrets_corpus.py
    kinds |= {kind for _, text, _ in CORPUS for kind in redact(text).counts}
    untested = {p.kind for p in PATTERNS} - kinds
    # these three are covered by their own tests below
    assert untested <= {
        "stripe-webhook-secret",
        "google-oauth-secret",
        "azure-sas-signature",
        "databricks-token",
        "discord-webhook",
    }, untested


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("STRIPE_WEBHOOK_SECRET=whsec_3kT9pLm2VxQ7rN8sYb1ZcW4d", "stripe-webhook-secret"),
        ("client secret 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", "google-oauth-secret"),
        (
            "https://acct.blob.core.windows.net/c/f.pdf?sv=2022-11-02&sig=AbC123dEf456GhI789jKl0MnOpQ"
            "rStUvWxYz%2B%3D",
            "azure-sas-signature",
        ),
        ("DATABRICKS_TOKEN dapi0123456789abcdef0123456789abcdef", "databricks-token"),
        (
            "https://discord.com/api/webhooks/112233445566778899/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
            "-_abcd",
            "discord-webhook",
        ),
    ],
)
def test_more_formats(text: str, kind: str) -> None:
    result = redact(text)
    assert f"[REDACTED:{kind}]" in result.text
    assert result.counts.get(kind) == 1


@pytest.mark.parametrize("text", CLEAN, ids=[f"clean-{i}" for i in range(len(CLEAN))])
def test_clean_text_passes_untouched(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.counts == {}


def test_redaction_is_idempotent_and_counts_every_secret() -> None:
    text = "\n".join(t for _, t, _ in SECRETS) + "\n" + "\n".join(PEM_BLOCKS)
    once = redact(text)
    assert once.total == len(SECRETS) + len(PEM_BLOCKS)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}
    for _, _, secret in SECRETS:
        assert secret not in once.text
