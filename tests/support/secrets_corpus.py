"""The secrets corpus: one real-shaped (made-up) credential of each format, in the
sentence it would arrive in, and look-alikes that must pass untouched (hashes, UUIDs, SHAs,
base64 images, env dumps without secrets, numbers that fail a card's Luhn check or an IBAN's
checksum). Shared by tests/capture/test_redact_corpus.py (the hand-written patterns) and
bench/redaction.py (which measures detect-secrets on the same corpus).

Deterministic: the random parts come from a seeded generator.
"""

from __future__ import annotations

import base64
import hashlib
import random
import string
import uuid

_rng = random.Random(24)
ALNUM = string.ascii_letters + string.digits


def _s(n: int, alphabet: str = ALNUM) -> str:
    while True:
        out = "".join(_rng.choice(alphabet) for _ in range(n))
        # a generated secret mixes letters and digits (when its alphabet has both)
        if any(c.isdigit() for c in out) >= any(c.isdigit() for c in alphabet) and any(
            c.isalpha() for c in out
        ) >= any(c.isalpha() for c in alphabet):
            return out


def _hex(n: int) -> str:
    return "".join(_rng.choice("0123456789abcdef") for _ in range(n))


def _luhn_complete(prefix: str, length: int) -> str:
    body = prefix + "".join(_rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        number = body + check
        total = 0
        for i, ch in enumerate(reversed(number)):
            d = int(ch)
            if i % 2:
                d = d * 2 - 9 if d > 4 else d * 2
            total += d
        if total % 10 == 0:
            return number
    raise AssertionError


def _iban(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(digits) % 97
    return f"{country}{check:02d}{bban}"


def _group(number: str, size: int = 4) -> str:
    return " ".join(number[i : i + size] for i in range(0, len(number), size))


ZW = "\u200b"


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


_aws_secret = _s(40, ALNUM + "/+")
_ghp = "ghp_" + _s(36)

# (family, text holding the secret, the secret): recall counts a case as caught when the
# secret no longer appears in the redacted text.
SECRETS: list[tuple[str, str, str]] = []


def _add(family: str, template: str, secret: str) -> None:
    SECRETS.append((family, template.replace("@@", secret), secret))


_add("openai", "export OPENAI_API_KEY=@@", "sk-" + _s(48))
_add("openai-project", "my key is @@ please keep it", "sk-proj-" + _s(64, ALNUM + "_-"))
_add("anthropic", 'client = Anthropic(api_key="@@")', "sk-ant-api03-" + _s(60, ALNUM + "-_"))
_add("openrouter", "OPENROUTER_API_KEY @@", "sk-or-v1-" + _hex(64))
_add("groq", "groq key: @@", "gsk_" + _s(52))
_add("perplexity", "the pplx key @@ is for search", "pplx-" + _s(48))
_add("xai", "grok uses @@", "xai-" + _s(80))
_add("replicate", "REPLICATE_API_TOKEN=@@", "r8_" + _s(37))
_add("huggingface", "huggingface-cli login --token @@", "hf_" + _s(34))
_add("github-classic", "GH_TOKEN=@@ gh pr list", _ghp)
_add("github-oauth", "the OAuth app returned @@.", "gho_" + _s(36))
_add("github-app", "installation token @@", "ghs_" + _s(36))
_add("github-fine-grained", "use @@ for the bot", "github_pat_11" + _s(20) + "_" + _s(59))
_add("gitlab", "CI token @@ expires in May", "glpat-" + _s(20, ALNUM + "-_"))
_add("gitlab-runner", "register with @@", "glrt-" + _s(20, ALNUM + "-_"))
_add("bitbucket", "Bitbucket app password ATBB@@", _s(32))
_add("atlassian", "Jira API token @@ for the bot", "ATATT3xFfGF0" + _s(180, ALNUM + "-_=")[:180])
_add("slack-bot", "SLACK_BOT_TOKEN: @@", "xoxb-" + "163726516761-2220297299752-" + _s(24))
_add(
    "slack-app",
    "app-level token @@",
    "xapp-1-A0" + _s(9).upper() + "-4623" + _s(9, string.digits) + "-" + _hex(64),
)
_add(
    "slack-webhook",
    "post to @@ when done",
    "https://hooks.slack.com/services/T" + _s(8).upper() + "/B" + _s(10).upper() + "/" + _s(24),
)
_add(
    "discord-bot",
    "the Discord bot token is @@",
    "MTE" + _s(21) + "." + _s(6, ALNUM + "-_") + "." + _s(38, ALNUM + "-_"),
)
_add(
    "discord-webhook",
    "alerts go to @@",
    "https://discord.com/api/webhooks/112233445566778899/" + _s(68, ALNUM + "-_"),
)
_add("telegram", "bot token @@ is live", "1234567890:AA" + _s(33, ALNUM + "_-"))
_add("stripe-live", "stripe.api_key = '@@'", "sk_live_" + _s(24))
_add("stripe-restricted", "restricted key @@ for reporting", "rk_live_" + _s(24))
_add("stripe-webhook", "STRIPE_WEBHOOK_SECRET=@@", "whsec_" + _s(32))
_add("square-access", "Square access token @@", "EAAA" + _s(60, ALNUM + "-_"))
_add("square-oauth", "square oauth secret @@", "sq0csp-" + _s(43, ALNUM + "-_"))
_add("square-app", "sandbox token @@", "sq0atp-" + _s(22, ALNUM + "-_"))
_add(
    "paypal-braintree", "braintree token @@", "access_token$production$" + _hex(16) + "$" + _hex(32)
)
_add("aws-access-key", "aws_access_key_id = @@", "AKIA" + _s(16, string.ascii_uppercase + "234567"))
_add("aws-sts", "temporary creds @@ from STS", "ASIA" + _s(16, string.ascii_uppercase + "234567"))
_add("aws-secret-assignment", "aws_secret_access_key = @@", _aws_secret)
_add(
    "aws-secret-prose",
    "the AWS secret key for the backup user is @@ (rotate it)",
    _s(40, ALNUM + "/+"),
)
_add("google-api", "maps key @@ in the web app", "AIza" + _s(35, ALNUM + "_-"))
_add("google-oauth", "client secret @@", "GOCSPX-" + _s(28, ALNUM + "_-"))
_add("gcp-key-id", '"private_key_id": "@@",', _hex(40))
_add("firebase-fcm", "FCM server key @@", "AAAA" + _s(7) + ":APA91b" + _s(134, ALNUM + "-_"))
_add(
    "azure-storage",
    "DefaultEndpointsProtocol=https;AccountName=ledgerly;AccountKey=@@;",
    _s(86, ALNUM + "+/") + "==",
)
_add(
    "azure-sas",
    "https://acct.blob.core.windows.net/c/f.pdf?sv=2022-11-02&sig=@@",
    _s(43, ALNUM) + "%3D",
)
_add(
    "azure-ad-secret",
    "the app registration's client secret is @@",
    _s(3) + "8Q~" + _s(34, ALNUM + "_.~-"),
)
_add("alibaba", "aliyun AccessKey @@", "LTAI" + _s(20))
_add("digitalocean", "doctl auth init -t @@", "dop_v1_" + _hex(64))
_add("heroku", "HEROKU_API_KEY=@@", "HRKU-AA" + _s(58, ALNUM + "_-"))
_add("hashicorp-vault", "VAULT_TOKEN @@", "hvs." + _s(90, ALNUM + "_-"))
_add("terraform-cloud", "TFE token @@", _s(14) + ".atlasv1." + _s(67))
_add("pulumi", "PULUMI_ACCESS_TOKEN=@@", "pul-" + _hex(40))
_add("docker-hub", "docker login -p @@", "dckr_pat_" + _s(27, ALNUM + "-_"))
_add("npm", "//registry.npmjs.org/:_authToken=@@", "npm_" + _s(36))
_add("pypi", "upload with @@", "pypi-AgEIcHlwaS5vcmc" + _s(60, ALNUM + "-_"))
_add("rubygems", "GEM_HOST_API_KEY: @@", "rubygems_" + _hex(48))
_add("nuget", "nuget push -k @@", "oy2" + _s(43).lower())
_add("databricks", "DATABRICKS_TOKEN @@", "dapi" + _hex(32))
_add("planetscale", "pscale password @@", "pscale_pw_" + _s(43, ALNUM + "_"))
_add("supabase", "supabase access token @@", "sbp_" + _hex(40))
_add("sentry", "SENTRY_AUTH_TOKEN=@@", "sntrys_" + _s(80))
_add("grafana", "Grafana service account token @@", "glsa_" + _s(32) + "_" + _hex(8))
_add("new-relic", "NEW_RELIC_API_KEY @@", "NRAK-" + _s(27).upper())
_add("linear", "Linear API key @@", "lin_api_" + _s(40))
_add("notion", "Notion integration @@", "ntn_" + _s(46))
_add("figma", "figma token @@", "figd_" + _s(40, ALNUM + "_-"))
_add("postman", "Postman API key @@", "PMAK-" + _hex(24) + "-" + _hex(34))
_add("doppler", "DOPPLER_TOKEN=@@", "dp.st.prd." + _s(43))
_add("doppler-personal", "personal doppler token @@", "dp.pt." + _s(43))
_add(
    "age", "the age identity is @@", "AGE-SECRET-KEY-1" + _s(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
)
_add("shopify", "X-Shopify-Access-Token @@", "shpat_" + _hex(32))
_add("mailgun", "mailgun: @@", "key-" + _hex(32))
_add("mailchimp", "MAILCHIMP_KEY=@@", _hex(32) + "-us6")
_add("sendgrid", "SENDGRID_API_KEY=@@", "SG." + _s(22, ALNUM + "_-") + "." + _s(43, ALNUM + "_-"))
_add("twilio", "Twilio API key @@ for SMS", "SK" + _hex(32))
_add("twitter-bearer", "Twitter bearer token @@", "AAAAAAAAAAAAAAAAAAAAA" + _s(20) + "%3D" + _s(50))
_add("facebook", "FB page token @@", "EAACEdEose0cBA" + _s(60))
_add("mapbox", "mapbox secret @@", "sk.eyJ1Ijoi" + _s(40) + "." + _s(22, ALNUM + "_-"))
_add(
    "jwt",
    "the session cookie was @@ until logout",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ik1heWEiLCJpYXQiOj"
    "E1MTYyMzkwMjJ9.OEVHzc0X0AWIRh-JUqBlIFXZ53Ncqe28_ajY75FnCtt",
)
_add("authorization-bearer", "curl -H 'Authorization: Bearer @@' https://api.ledgerly.io", _s(40))
_add(
    "authorization-basic",
    'headers = {"Authorization": "Basic @@"}',
    base64.b64encode(b"maya:hunter22!").decode(),
)
_add("bearer-prose", "I pasted Bearer @@ into the console", _s(26))
_add(
    "url-password-postgres",
    "DATABASE_URL=postgres://billing:@@@db.internal:5432/billing",
    "Xq7-vP2m!s",
)
_add("url-password-redis", "REDIS_URL=redis://:@@@cache.internal:6379/0", "s3cr3tRedis")
_add("assignment-password", "the staging db user is app and password=@@ for now", "hunter22")
_add("assignment-quoted", 'config.yaml has  secret: "@@"  under [smtp]', "Tr0ub4dor&3")
_add("prose-my-password", "My password is @@ and I know it is weak.", "Winter2026#x")
_add("prose-named-password", "the root password for db-01 is @@", "Xq7!pv92kL")
_add("prose-named-password-2", "FYI the wifi password in the office is now @@", "Kaffe-2026!")
_add("prose-passphrase", "the passphrase for the GPG key is @@", "tango-7-umbrella-42")
_add(
    "private-key",
    "deploy key:\n@@\nkeep it safe",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB\n"
    + _s(64, ALNUM + "+/")
    + "\n-----END OPENSSH PRIVATE KEY-----",
)
_add("card-visa", "card on file: @@ exp 09/28", _group(_luhn_complete("4", 16)))
_add("card-mastercard", "charge it to @@", _luhn_complete("53", 16))
_add(
    "card-amex",
    "Amex @@ for travel",
    "-".join([(n := _luhn_complete("37", 15))[:4], n[4:10], n[10:]]),
)
_add("iban-de", "pay to IBAN @@ by Friday", _group(_iban("DE", "37040044" + "0532013000")))
_add("iban-gb", "refund to @@", _iban("GB", "NWBK" + "60161331926819"))
_add("iban-nl", "rekening @@", _group(_iban("NL", "ABNA" + "0417164300")))
_add("iban-fr", "virement sur @@", _iban("FR", "20041010050500013M02606"))
_add("zero-width-github", "GH_TOKEN=@@", _ghp[:10] + ZW + _ghp[10:])
_add("zero-width-openai", "key @@ in the notebook", "sk-" + ZW.join([_s(16), _s(16), _s(16)]))
_add("fullwidth-github", "token @@ from the screenshot", _fullwidth("ghp_" + _s(36)))
_add("fullwidth-aws", "id @@", _fullwidth("AKIA" + _s(16, string.ascii_uppercase + "234567")))


# -- look-alikes: none may change --------------------------------------------------------------

LOOK_ALIKES: list[str] = []


def _look(text: str) -> None:
    LOOK_ALIKES.append(text)


for n in range(40):
    sha = hashlib.sha1(f"commit {n}".encode()).hexdigest()
    _look(f"Merged {sha} into main; tagged v2.{n}.0 at {sha[:7]}.")
for n in range(30):
    digest = hashlib.sha256(f"file {n}".encode()).hexdigest()
    _look(f"sha256: {digest}  dist/billing-core-{n}.tar.gz")
for n in range(30):
    u = uuid.UUID(int=_rng.getrandbits(128), version=4)
    _look(f"request id {u} finished with status=200 in {n * 7 + 3} ms")
for n in range(20):
    md5 = hashlib.md5(f"export {n}".encode()).hexdigest()  # noqa: S324 - a look-alike
    _look(f"md5 of export-{n}.csv is {md5}")
for n in range(20):
    digest = hashlib.sha256(f"image {n}".encode()).hexdigest()
    _look(f"image ghcr.io/ledgerly/billing@sha256:{digest} deployed to eu-north-1")
for n in range(20):
    png = base64.b64encode(bytes(_rng.getrandbits(8) for _ in range(90))).decode()
    _look(f"![chart {n}](data:image/png;base64,iVBORw0KGgoAAAANSUhEUg{png})")
ENV_DUMP = [
    "PWD=/home/maya/projects/billing-core",
    "OLDPWD=/home/maya",
    "HOME=/home/maya",
    "SHELL=/bin/zsh",
    "PATH=/usr/local/bin:/usr/bin:/bin:/home/maya/.cargo/bin",
    "LANG=en_US.UTF-8",
    "TERM=xterm-256color",
    "USER=maya",
    "LOGNAME=maya",
    "HOSTNAME=build-runner-07",
    "EDITOR=nvim",
    "VIRTUAL_ENV=/home/maya/.venvs/billing",
    "PYTHONPATH=/home/maya/projects/billing-core/src",
    "XDG_RUNTIME_DIR=/run/user/1000",
    "SSH_AUTH_SOCK=/tmp/ssh-XXXXab12/agent.4242",
    "GPG_TTY=/dev/pts/3",
    "TMUX=/tmp/tmux-1000/default,4242,0",
    "AWS_REGION=eu-north-1",
    "AWS_PROFILE=billing-prod",
    "KUBECONFIG=/home/maya/.kube/config",
    "NODE_ENV=production",
    "TZ=Europe/Stockholm",
    "LC_ALL=C.UTF-8",
    "COLUMNS=120",
    "SHLVL=2",
    "DOCKER_HOST=unix:///run/user/1000/docker.sock",
    "GOPATH=/home/maya/go",
    "JAVA_HOME=/usr/lib/jvm/java-21-openjdk",
    "CI=true",
    "GITHUB_SHA=" + hashlib.sha1(b"ci").hexdigest(),
]
for line in ENV_DUMP:
    _look(line)
_look("\n".join(ENV_DUMP))
PROSE = [
    "Token: 2026-11-24 rotation done",
    "Token rotation: 2026-11-24T09:30 done, next one 2027-02-24",
    "Password: see the team vault (1Password, item 'db-01 root')",
    "password policy: 12 characters minimum, rotated every 90 days",
    "The password is stored in the team vault and rotated every quarter.",
    "Our token budget is 4,000 tokens per call and the secret to good migrations is rehearsal.",
    "Authorization is handled by the gateway. Bearer of bad news: CI is red again.",
    "The key-value store keeps sessions for 30 days; the secret is stored in Vault, not in git.",
    "Root cause of BIL-1423 / `ERR_LEDGER_409`: the refund handler reuses the idempotency key.",
    "chatcmpl-9xYzAbC123 finished with finish_reason=stop; PR #2291 fixes INV-212.",
    "session_id=5e3b user=maya messages=14 redacted=1 exported_at=2026-11-21T19:45:12Z",
    "model=gpt-4o-mini tokens_in=2311 tokens_out=418 latency_ms=2140 finish_reason=stop",
    "Ticket SK-1042, SKU AC-2231 and the AC power adapter; 0x7fffffffffffffff is the max.",
    "the video id is dQw4w9WgXcQ and the short link is https://youtu.be/dQw4w9WgXcQ",
    "git@github.com:ledgerly/billing-core.git and ssh://git@github.com/ledgerly/billing-core.git",
    "DATABASE_URL=postgres://localhost:5432/billing (no credentials, peer auth)",
    "mail maya@ledgerly.io or mailto:ops@ledgerly.io; the wiki is at https://wiki.ledgerly.io/a@b",
    "password = settings.db_password\nsecret = None\ntoken: str | None = None",
    "env:\n  DB_PASSWORD: ${DB_PASSWORD}\n  token: ${{ secrets.GITHUB_TOKEN }}",
    "password: <your-password>\napi_key: '***'\ntoken = \"xxxxxxxx\"\nsecret: '${SECRET}'",
    "npm_config_cache=/tmp/npm and hf_transfer is enabled; sk-learn is not a package name",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 maya@laptop; integrity sha512-Zm9vYmFyYmF6cXV4",
    "arn:aws:iam::123456789012:role/billing-deployer; Authorization: Bearer $TOKEN",
    "Order 4111 1111 1111 1112 was declined (a test number that fails its check digit).",
    "Invoice INV-2026-000123-4567 paid; phone +46 70 123 45 67; org.nr 556677-8899",
    "ISBN 978-0-13-468599-1 and ISSN 0317-8471 are in the bibliography.",
    "The Luhn-invalid 5500 0000 0000 0005 is not a card; neither is 1234 5678 9012 3456.",
    "IBAN-like DE00 3704 0044 0532 0130 00 fails its checksum (a typo in the docs).",
    "GB00NWBK60161331926819 is the example with a wrong check; copy the real one from the bank.",
    "Timestamps 1700000000000 and 1732435200 are epoch milliseconds and seconds.",
    "The build number 20261124093012 and the run id 9876543210123 are not secrets.",
    "AKIA is the prefix of AWS access key ids; ASIA of temporary ones.",
    "We compared hvs tokens with batch tokens in HashiCorp Vault's docs.",
    "The age tool prints AGE-SECRET-KEY-1 followed by Bech32 characters for an identity.",
    "lin_api keys, PMAK keys and dp.st tokens are documented in the onboarding wiki.",
    "Passcode reset: ask IT at it@ledgerly.io; the passcode policy is 6 digits.",
    "the root password for db-01 is in 1Password under 'db-01 root'",
    "the wifi password is written on the whiteboard in room 3",
    "the AWS secret key for the backup user lives in SSM Parameter Store",
    "pk_live_ publishable keys are meant for the browser; sk_live_ keys are not.",
]
for text in PROSE:
    _look(text)
for n in range(25):
    ver = f"{_rng.randint(0, 9)}.{_rng.randint(0, 40)}.{_rng.randint(0, 99)}"
    _look(f"upgraded numpy to {ver} and onnxruntime to 1.{n}.{n * 3 % 7}")
for n in range(25):
    _look(f"Container {_hex(12)} restarted {n} times; pod billing-core-{_hex(10)}-{_s(5).lower()}")
for n in range(20):
    word = "".join(_rng.choice(string.ascii_lowercase) for _ in range(8))
    _look(f"key {word} is missing from the cache (lookup {n}) and the token count was {n * 37}")
