"""A second secrets corpus, by families: credentials as people write them in chats and notes
(in many languages, in prose, on command lines, in config files, split across lines, hidden by
look-alike letters), and look-alikes that must pass untouched (placeholders, `${VAR}`
references, password managers' names, password-policy prose, IMEIs, hashes, UUIDs, git SHAs,
version strings, public keys and addresses).

Every value is made up; random parts come from a seeded generator, keys with a checksum
(Bitcoin WIF, BIP-32 xprv, Nostr nsec, BIP-39 phrases, cards, IBANs) are built valid.

Held-out discipline: each family's cases alternate between a development half (`split ==
"dev"`) and a held-out half (`"held"`), and so do the look-alikes of each group; rules are
written against the development half and both halves are reported (bench/redaction.py,
tests/test_redact_families.py).
"""

from __future__ import annotations

import base64
import hashlib
import random
import string
import uuid
from typing import NamedTuple

from mnemonic import Mnemonic

_rng = random.Random(4141)
ALNUM = string.ascii_letters + string.digits
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


class Secret(NamedTuple):
    family: str
    text: str
    secret: str
    split: str  # "dev" or "held"


class LookAlike(NamedTuple):
    family: str
    text: str
    split: str


def _s(n: int, alphabet: str = ALNUM) -> str:
    """A random string of `alphabet` that mixes letters and digits when the alphabet has both."""
    while True:
        out = "".join(_rng.choice(alphabet) for _ in range(n))
        digits = any(c.isdigit() for c in alphabet)
        letters = any(c.isalpha() for c in alphabet)
        if (not digits or any(c.isdigit() for c in out)) and (
            not letters or any(c.isalpha() for c in out)
        ):
            return out


def _hex(n: int) -> str:
    return "".join(_rng.choice("0123456789abcdef") for _ in range(n))


def _bytes(n: int) -> bytes:
    return bytes(_rng.getrandbits(8) for _ in range(n))


def _b58(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    out = ""
    while number:
        number, rest = divmod(number, 58)
        out = B58[rest] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def _b58check(data: bytes) -> str:
    return _b58(data + hashlib.sha256(hashlib.sha256(data).digest()).digest()[:4])


def _bech32(hrp: str, data: bytes) -> str:
    charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
    bits = "".join(f"{b:08b}" for b in data)
    bits += "0" * (-len(bits) % 5)
    values = [int(bits[i : i + 5], 2) for i in range(0, len(bits), 5)]
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)

    def polymod(vs: list[int]) -> int:
        chk = 1
        for v in vs:
            top = chk >> 25
            chk = (chk & 0x1FFFFFF) << 5 ^ v
            for i in range(5):
                chk ^= gen[i] if (top >> i) & 1 else 0
        return chk

    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = polymod(expanded + values + [0] * 6) ^ 1
    checksum = [(mod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(charset[v] for v in values + checksum)


def _luhn_complete(body: str) -> str:
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


def _card(prefix: str, length: int) -> str:
    return _luhn_complete(
        prefix + "".join(_rng.choice(string.digits) for _ in range(length - 1 - len(prefix)))
    )


def _iban(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def _group(text: str, size: int = 4, sep: str = " ") -> str:
    return sep.join(text[i : i + size] for i in range(0, len(text), size))


def _wif(compressed: bool = True) -> str:
    return _b58check(b"\x80" + _bytes(32) + (b"\x01" if compressed else b""))


def _xprv() -> str:
    return _b58check(b"\x04\x88\xad\xe4" + b"\x01" + _bytes(8) + _bytes(32) + b"\x00" + _bytes(32))


def _phrase(words: int = 12, language: str = "english") -> str:
    return Mnemonic(language).to_mnemonic(_bytes(words * 4 // 3))


def _password() -> str:
    """A password as a person makes one: a word, digits, a symbol."""
    word = _rng.choice(["Sommer", "Winter", "Kaffee", "Tulpe", "Falcon", "Mango", "River", "Nube"])
    return f"{word}{_rng.randint(10, 9999)}{_rng.choice('!#$%&*?+')}"


def _random_password(n: int = 14) -> str:
    return _s(n, ALNUM + "!#%&*+-=?@^_")


SECRETS: list[Secret] = []
_counts: dict[str, int] = {}


def _add(family: str, template: str, secret: str) -> None:
    index = _counts.get(family, 0)
    _counts[family] = index + 1
    split = "dev" if index % 2 == 0 else "held"
    SECRETS.append(Secret(family, template.replace("@@", secret), secret, split))


# -- passwords in prose, many languages -------------------------------------------------------
_add("pw-en", "Reset the staging box: the new password for deploy is @@ as of today.", _password())
_add("pw-en", "Heads up, Ana changed the router password to @@", _password())
_add("pw-en", "password for the NAS → @@ (don't share)", _random_password())
_add("pw-es", "La contraseña del servidor de pruebas es @@ hasta el lunes.", _password())
_add("pw-es", "Contraseña: @@", _random_password(12))
_add("pw-es", "te paso la clave del correo: @@", _password())
_add("pw-de", "Das Passwort für den Jenkins lautet @@, bitte nicht weitergeben.", _password())
_add("pw-de", "Kennwort: @@ (gilt bis Freitag)", _random_password(11))
_add("pw-de", "Ich habe das WLAN-Passwort auf @@ geändert.", _password())
_add("pw-fr", "Le mot de passe de la base de prod est @@ pour l'instant.", _password())
_add("pw-fr", "mdp : @@", _random_password(10))
_add("pw-fr", "Voici le mot de passe provisoire : « @@ »", _password())
_add("pw-pt", "A senha do painel é @@, troca depois.", _password())
_add("pw-pt", "senha nova: @@", _random_password(12))
_add("pw-it", "La password dell'account di test è @@", _password())
_add("pw-it", "password provvisoria: @@ — cambiala al primo accesso", _random_password(12))
_add("pw-nl", "Het wachtwoord van de beheerder is @@.", _password())
_add("pw-nl", "wachtwoord: @@", _random_password(12))
_add("pw-ja", "サーバーのパスワードは@@です。", _password())
_add("pw-ja", "パスワード：@@", _random_password(12))
_add("pw-zh", "数据库密码是@@，请勿外传。", _password())
_add("pw-zh", "密码：@@", _random_password(12))
_add("pw-ru", "пароль от сервера: @@", _password())
_add("pw-ru", "Пароль администратора — @@", _random_password(12))
_add("pw-pl", "Hasło do serwera to @@", _password())
_add("pw-sv", "Lösenordet till routern är @@", _password())
_add("pw-tr", "şifre: @@", _random_password(12))
_add("pw-ko", "비밀번호는 @@ 입니다", _password())
_add("pw-abbrev", "ssh in as ops, pw @@", _password())
_add("pw-abbrev", "pwd: @@", _random_password(12))
_add("pw-abbrev", "user ana / pass @@ for the demo tenant", _password())
_add("pw-pair", "Login for the admin panel: admin / @@", _random_password(12))
_add("pw-pair", "creds are root:@@ on the old box", _password())
_add("pw-pair", "Zugang: Benutzer backup, Passwort @@", _password())
_add("pw-pair", "username: jorge.m\npassword: @@", _random_password(13))
_add("pw-cli", "mysql -h db1 -u root -p'@@' billing < dump.sql", _random_password(12))
_add("pw-cli", "run: mysqldump -uapp -p@@ ledger > ledger.sql", _s(12))
_add("pw-cli", 'sshpass -p "@@" ssh pi@raspberry.local', _password())
_add("pw-cli", "curl -u ana:@@ https://ci.example.net/api/json", _password())
_add("pw-cli", "redis-cli -h cache1 -a @@ ping", _s(20))
_add("pw-cli", "pg_dump with PGPASSWORD=@@ pg_dump -h db billing", _password())
_add("netrc", "~/.netrc:\nmachine api.example.net\n  login ana@example.net\n  password @@", _s(18))
_add("netrc", "machine ftp.example.org login mirror password @@", _password())
_add("wifi", "WIFI:T:WPA;S:Office-5G;P:@@;;", _random_password(14))
_add("wifi", "Guest Wi-Fi is 'Cafe Nord', key @@", _password())
_add("wifi", "WLAN-Schlüssel für das Büro: @@", _s(20))
_add("wifi", "the wifi pass at the cabin: @@", _password())
_add(
    "ldap-bind",
    'ldapsearch -x -H ldap://dc1 -D "cn=admin,dc=corp,dc=example" -w @@ -b dc=corp',
    _random_password(12),
)
_add("ldap-bind", "the LDAP bind password is @@", _password())
_add("vpn-psk", "IPsec pre-shared key: @@", _s(24))
_add("vpn-psk", "VPN PSK = @@ (site-to-site with Lisbon)", _random_password(16))
_add("vpn-psk", "the WireGuard preshared key is @@", _s(43, ALNUM + "+/") + "=")
_add(
    "app-password",
    "Gmail app password for the scanner: @@",
    " ".join(_s(4, string.ascii_lowercase) for _ in range(4)),
)
_add(
    "app-password",
    "Apple app-specific password @@ for Thunderbird",
    "-".join(_s(4, string.ascii_lowercase) for _ in range(4)),
)
_add("app-password", "App-Passwort: @@", " ".join(_s(4, string.ascii_lowercase) for _ in range(4)))
_add(
    "pw-quoted",
    'The password is "@@" (with the quotes stripped)',
    "blue horse " + str(_rng.randint(10, 99)),
)
_add("pw-quoted", "use `@@` as the password for the kiosk", _password())
_add("pw-quoted", "Passwort „@@“ gilt nur heute", _password())
_add("pw-confusable", "p\u0430ssword: @@", _password())  # a Cyrillic a in the label
_add("pw-confusable", "the root passw\u043erd is @@", _random_password(12))  # a Cyrillic o
_add("pw-confusable", "ｐａｓｓｗｏｒｄ： @@", _password())
_add("pw-reversed", "Use @@ as the password when it asks.", _password())
_add("pw-reversed", "@@ is the admin password for now", _random_password(12))
_add(
    "passphrase",
    "SSH key passphrase: @@",
    "orbit-" + _s(5, string.ascii_lowercase) + "-" + str(_rng.randint(100, 999)),
)
_add("passphrase", "GPG-Passphrase ist @@", _password())
_add("keystore", "Android keystore password @@, key password the same", _password())
_add("keystore", "storePassword=@@", _s(16))
_add("pgpass", "~/.pgpass has db.internal:5432:billing:app:@@", _random_password(14))
_add("pgpass", "add this line to .pgpass: *:*:*:postgres:@@", _password())
_add("config", '<property name="password">@@</property>', _random_password(12))
_add("config", "spring.datasource.password=@@", _s(16))
_add("config", "Server=sql1;Database=crm;User Id=sa;Password=@@;", _random_password(12))
_add("config", "SECRET_KEY = 'django-insecure-@@'", _s(50, ALNUM + "!@#%^&*(-_=+)"))
# -- PINs, card codes, recovery and backup codes ----------------------------------------------
_add("pin-bank", "My bank card PIN is @@, remind me if I forget.", str(_rng.randint(1000, 9999)))
_add("pin-bank", "Geheimzahl der EC-Karte: @@", str(_rng.randint(1000, 9999)))
_add("pin-bank", "el PIN de la tarjeta es @@", str(_rng.randint(1000, 9999)))
_add("pin-phone", "phone unlock PIN @@", str(_rng.randint(100000, 999999)))
_add("pin-phone", "SIM PIN: @@", str(_rng.randint(1000, 9999)))
_add("pin-phone", "code PIN du téléphone : @@", str(_rng.randint(1000, 9999)))
_add("door-code", "the alarm code for the office is @@", str(_rng.randint(1000, 9999)))
_add("door-code", "Türcode @@#", str(_rng.randint(1000, 9999)))
_add("cvv", "card ends 4412, exp 08/29, CVV @@", str(_rng.randint(100, 999)))
_add("cvv", "CVC: @@", str(_rng.randint(100, 999)))
_add("cvv", "código de seguridad @@", str(_rng.randint(100, 999)))
_add(
    "backup-codes",
    "GitHub 2FA backup codes: @@",
    " ".join(f"{_hex(5)}-{_hex(5)}" for _ in range(4)),
)
_add(
    "backup-codes",
    "recovery codes:\n@@",
    "\n".join(f"- {_rng.randint(10000000, 99999999)}" for _ in range(5)),
)
_add(
    "backup-codes",
    "Backup-Codes für Google: @@",
    "  ".join(f"{_rng.randint(1000, 9999)} {_rng.randint(1000, 9999)}" for _ in range(4)),
)
_add(
    "bitlocker",
    "BitLocker recovery key: @@",
    "-".join(f"{_rng.randint(0, 999999):06d}" for _ in range(8)),
)
_add(
    "bitlocker",
    "the recovery key for the laptop is @@",
    "-".join(f"{_rng.randint(0, 999999):06d}" for _ in range(8)),
)
_add(
    "otpauth",
    "QR payload: @@",
    f"otpauth://totp/Acme:ana@example.net?secret={_s(32, B32)}&issuer=Acme",
)
_add(
    "otpauth",
    "otpauth URI @@ from the enrolment page",
    f"otpauth://hotp/vpn?secret={_s(16, B32)}&counter=1",
)
_add("totp-seed", "TOTP secret: @@", _s(32, B32))
_add("totp-seed", "Authenticator setup key @@", _group(_s(32, B32).lower()))
_add("totp-seed", "2FA seed for the shared account is @@", _s(16, B32))
# -- crypto wallets ---------------------------------------------------------------------------
_add("bip39", "seed phrase: @@", _phrase(12))
_add("bip39", "wallet recovery words, in order: @@", _phrase(24))
_add(
    "bip39",
    "Seed-Phrase der Ledger:\n@@",
    "\n".join(f"{i}. {w}" for i, w in enumerate(_phrase(12).split(), 1)),
)
_add("bip39", "here it is @@ keep offline", _phrase(12))
_add("bip39-other", "frase semilla: @@", _phrase(12, "spanish"))
_add("bip39-other", "phrase de récupération : @@", _phrase(12, "french"))
_add("eth-key", "MetaMask private key: 0x@@", _hex(64))
_add("eth-key", "Privater Schlüssel der Wallet: @@", _hex(64))
_add("eth-key", "eth priv key @@", "0x" + _hex(64))
_add("btc-wif", "import the key @@ into Electrum", _wif())
_add("btc-wif", "paper wallet WIF @@", _wif(False))
_add("btc-wif", "@@", _wif())
_add("xprv", "the extended private key is @@", _xprv())
_add("xprv", "xprv for the test wallet: @@", _xprv())
_add("nsec", "my nostr key @@", _bech32("nsec", _bytes(32)))
_add("nsec", "@@ (nsec for the bot)", _bech32("nsec", _bytes(32)))
_add("solana-key", "Phantom private key: @@", _b58(_bytes(64)))
_add("solana-key", "exported the Solana secret key @@", _b58(_bytes(64)))
# -- keys with no well-known prefix, named in prose -------------------------------------------
_add("twilio-auth", "Twilio auth token: @@", _hex(32))
_add("twilio-auth", "the twilio auth token is @@ (account AC side)", _hex(32))
_add("aws-secret", "secret access key @@", _s(40, ALNUM + "/+"))
_add("aws-secret", "AWS secret: @@", _s(40, ALNUM + "/+"))
_add("aws-secret", "aws_secret_access_key: @@", _s(40, ALNUM + "/+"))
_add("mailgun", "Mailgun API key @@", f"{_hex(32)}-{_hex(8)}-{_hex(8)}")
_add("mailgun", "the mailgun sending key is @@", f"{_hex(32)}-{_hex(8)}-{_hex(8)}")
_add("datadog", "Datadog API key is @@", _hex(32))
_add("datadog", "DD app key: @@", _hex(40))
_add("vercel", "Vercel token @@", _s(24))
_add("vercel", "vercel deploy --token @@", _s(24))
_add("cloudflare", "Cloudflare API token: @@", _s(40, ALNUM + "_-"))
_add("cloudflare", "CF global API key = @@", _hex(37))
_add("rails-master", "config/master.key contains @@", _hex(32))
_add("rails-master", "Rails master key is @@", _hex(32))
_add("sentry-dsn", "Sentry DSN: https://@@@o4505.ingest.sentry.io/4506", _hex(32))
_add("sentry-dsn", "SENTRY_DSN=https://@@@o12.ingest.us.sentry.io/99", _hex(32))
_add("heroku", "Heroku API key: @@", str(uuid.UUID(int=_rng.getrandbits(128), version=4)))
_add("heroku", "heroku auth token is @@", str(uuid.UUID(int=_rng.getrandbits(128), version=4)))
_add("okta", "Okta API token @@", "00" + _s(40, ALNUM + "_-"))
_add("okta", "okta token: @@", "00" + _s(40, ALNUM + "_-"))
_add("airtable", "Airtable personal access token @@", f"pat{_s(14)}.{_hex(64)}")
_add("airtable", "airtable key @@", "key" + _s(14))
_add(
    "supabase",
    "Supabase service role key: @@",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + _s(120, ALNUM + "_-") + "." + _s(43, ALNUM + "_-"),
)
_add(
    "supabase",
    "SUPABASE_SERVICE_ROLE_KEY @@",
    "eyJhbGciOiJIUzI1NiJ9." + _s(100, ALNUM + "_-") + "." + _s(43, ALNUM + "_-"),
)
_add("jwt-secret", "JWT signing secret: @@", _s(48))
_add("jwt-secret", "the HS256 secret for tokens is @@", _s(32, ALNUM + "_-"))
_add("session-cookie", "Cookie: sessionid=@@; csrftoken=abc", _s(32).lower())
_add("session-cookie", "my session cookie is @@", _s(40, ALNUM + "%"))
_add(
    "session-cookie",
    "connect.sid=@@ in the browser devtools",
    "s%3A" + _s(32, ALNUM + "_-") + "." + _s(43, ALNUM + "+/"),
)
_add("api-key-prose", "The API key for the sandbox is @@", _s(32))
_add("api-key-prose", "Clave API: @@", _s(36, ALNUM + "_-"))
_add("api-key-prose", "API-Schlüssel @@", _hex(40))
_add("api-key-prose", "clé API : @@", _s(32))
_add("token-prose", "access token: @@", _s(40, ALNUM + "._-"))
_add("token-prose", "refresh token @@ (valid 30 days)", _s(64, ALNUM + "_-"))
_add("token-prose", "here's the bot token @@", _s(45, ALNUM + "_-"))
_add("client-secret", "OAuth client secret @@", _s(40, ALNUM + "_-"))
_add("client-secret", "client_secret: @@", _s(34))
_add("webhook-secret", "the webhook signing secret is @@", _s(32))
_add("webhook-secret", "Webhook-Secret @@", _hex(64))
_add("encryption-key", "encryption key (AES-256, base64): @@", _s(43, ALNUM + "+/") + "=")
_add("encryption-key", "Fernet key @@", _s(43, ALNUM + "-_") + "=")
_add("license-server-key", "the license server shared secret: @@", _s(28))
_add("license-server-key", "shared secret = @@", _random_password(20))
# -- structured credentials -------------------------------------------------------------------
_add(
    "docker-auth",
    '{"auths": {"ghcr.io": {"auth": "@@"}}}',
    base64.b64encode(f"ana:{_s(24)}".encode()).decode(),
)
_add(
    "docker-auth",
    '"https://index.docker.io/v1/": {\n  "auth": "@@"\n}',
    base64.b64encode(f"ci-bot:{_password()}".encode()).decode(),
)
_add("url-userinfo", "AMQP_URL=amqp://worker:@@@rabbit.internal:5672/", _password())
_add(
    "url-userinfo",
    "clone with https://oauth2:@@@gitlab.example.net/team/app.git",
    _s(20, ALNUM + "_-"),
)
_add("url-userinfo", "ftp://mirror:@@@files.example.org/pub", _random_password(10))
_add("url-userinfo", "mongodb://admin:@@@10.0.0.12:27017/?authSource=admin", _password())
_add("card", "Kreditkarte: @@, gültig bis 11/27", _group(_card("4", 16)))
_add("card", "número de tarjeta @@", _card("51", 16))
_add("card", "Amex @@", _card("34", 15))
_add("iban", "IBAN: @@", _group(_iban("ES", "2100" + "0418" + "4502" + "0005" + "1332")))
_add("iban", "virement sur le compte @@ demain", _iban("FR", "30006000011234567890189"))
_add("iban", "conto: @@", _group(_iban("IT", "X0542811101000000123456")))
# -- prefixed keys, broken across lines or hidden -------------------------------------------
_openai = "sk-proj-" + _s(80, ALNUM + "_-")
_add("key-split", "OPENAI_API_KEY=@@", _openai[:40] + "\n" + _openai[40:])
_anthropic = "sk-ant-api03-" + _s(90, ALNUM + "_-")
_add("key-split", "here is the key: @@ — don't commit it", _anthropic[:50] + "\n" + _anthropic[50:])
_ghp = "ghp_" + _s(36)
_add("key-split", "token\n@@\nthanks", _ghp[:20] + "\n" + _ghp[20:])
_openai2 = "sk-" + _s(48)
_add("key-split", "> my key is @@ ok?", _openai2[:25] + "\n> " + _openai2[25:])
_add("key-hidden", "token g\u200bhp_@@", _s(36))
_add("key-hidden", "key: s\u043a-proj-@@", _s(64, ALNUM + "_-"))  # a Cyrillic k
_add("key-hidden", "OPENAI_API_KEY=\uff53\uff4b-@@", _s(48))
_add("prefixed", "Stripe: @@", "sk_live_" + _s(99))
_add(
    "prefixed",
    "slack bot token @@",
    "xoxb-"
    + str(_rng.randint(10**11, 10**12))
    + "-"
    + str(_rng.randint(10**12, 10**13))
    + "-"
    + _s(24),
)
_add("prefixed", "npm publish with @@", "npm_" + _s(36))
_add(
    "private-key-block",
    "here:\n@@\n",
    "-----BEGIN EC PRIVATE KEY-----\n"
    + _s(64, ALNUM + "+/")
    + "\n"
    + _s(48, ALNUM + "+/")
    + "\n-----END EC PRIVATE KEY-----",
)
_add(
    "private-key-block",
    "key.pem = @@",
    "-----BEGIN PRIVATE KEY-----\\n" + _s(64, ALNUM + "+/") + "\\n-----END PRIVATE KEY-----",
)


# -- look-alikes: none may change -------------------------------------------------------------

LOOK_ALIKES: list[LookAlike] = []


def _look(family: str, *texts: str) -> None:
    for index, text in enumerate(texts):
        LOOK_ALIKES.append(LookAlike(family, text, "dev" if index % 2 == 0 else "held"))


_look(
    "placeholder",
    "password: <your-password-here>",
    "OPENAI_API_KEY=sk-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "api_key = 'YOUR_API_KEY'",
    "token: ****************",
    "AWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "Passwort: ********",
    "la contraseña es •••••••• en la captura",
    "set GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in your shell",
    "api key: [redacted]",
    "secret: REPLACE_ME",
    "password=<PASSWORD> in the template",
    "mot de passe : (voir le coffre)",
)
_look(
    "variable",
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
    "password: ${{ secrets.DB_PASSWORD }}",
    "export API_KEY=$(cat /run/secrets/api_key)",
    "curl -u admin:$ADMIN_PASS https://ci.example.net",
    "token = os.environ['SLACK_TOKEN']",
    "password: {{ vault_db_password }}",
    'mysql -u root -p"$MYSQL_ROOT_PASSWORD" billing',
    "const key = process.env.STRIPE_SECRET_KEY;",
    "redis://:%(redis_password)s@cache:6379/0",
    "amqp://guest:${RABBIT_PW}@rabbit:5672",
    'sshpass -p "$PI_PASSWORD" ssh pi@raspberry.local',
    'PGPASSWORD="$(pass show db/billing)" psql -h db',
)
_look(
    "password-manager",
    "my password manager is 1Password",
    "We moved the team passwords to Bitwarden last spring.",
    "Das Passwort liegt in KeePassXC, Eintrag 'NAS'.",
    "La contraseña está en LastPass, carpeta Compartido.",
    "password store: pass (passwordstore.org) with a GPG key",
    "le mot de passe est dans Dashlane",
    "the wifi password is in the Proton Pass vault",
    "senha guardada no Keychain do Mac",
)
_look(
    "password-prose",
    "the password is case-sensitive",
    "Passwords must be at least 12 characters long.",
    "The password expired on 2026-03-01; ask IT to reset it.",
    "Das Passwort ist abgelaufen.",
    "la contraseña es incorrecta",
    "le mot de passe est trop court",
    "a senha expirou ontem",
    "la password è sbagliata",
    "het wachtwoord is verlopen",
    "パスワードを忘れました",
    "I forgot my password again, reset link sent.",
    "password reset emails go through SendGrid",
    "Password: see the runbook, section 4.2",
    "the password field is hidden until you click 'show'",
    "Your password was changed 3 days ago.",
    "the password is 16 characters, mixed case",
    "password123 is the classic example of a bad password",
    "pw reset done for Ana and Jorge",
    "Kennwort vergessen? Link anfordern.",
    "the wifi password is on the fridge",
    "ask Ana for the VPN password",
    "pass the salt, please; the pass at 2,100 m was closed",
    "she passed the exam; the bus pass costs 40 EUR",
    "the password hint says 'first pet'",
)
_look(
    "pin-prose",
    "pin the dependency to 4.2.1",
    "GPIO pin 18 drives the relay",
    "Enter your PIN at the terminal.",
    "the PIN must have 6 digits",
    "pinned 2 messages in #ops",
    "Pin 3 of the header is ground.",
    "PIN-Eingabe wurde 3 mal falsch",
    "pip install 'numpy==1.26.4' and pin it",
)
_look(
    "cvv-prose",
    "CVV is the 3-digit code on the back of the card",
    "never store the CVC; PCI DSS 3.2 says so",
    "the security code is printed on the back",
)
_look(
    "seed-prose",
    "random seed 42 for the split",
    "seed=1337 and epochs=10",
    "the seed phrase is kept offline on a steel plate",
    "write down the 24 recovery words and never type them",
    "We talked about the garden, then about the kitchen window and the old oak by the lake.",
    "abandon ship, they said, but the captain stayed calm and kept the crew on deck until dawn.",
    "Seed the database with 100 fake users.",
    "frase semilla: nunca la compartas",
)
_look(
    "backup-prose",
    "backup codes are single-use; generate new ones in Settings → Security",
    "recovery codes: stored in the safe, printed",
    "backup ran at 02:00, 14 GB, 3 files skipped",
    "the recovery key is escrowed in Intune",
)
for _ in range(4):
    imei = _luhn_complete("35" + "".join(_rng.choice(string.digits) for _ in range(12)))
    _look(
        "imei",
        f"IMEI {imei} is the work phone",
        f"phone IMEI: {imei[:2]} {imei[2:8]} {imei[8:14]} {imei[14]}",
    )
for n in range(6):
    sha256 = hashlib.sha256(f"artifact {n}".encode()).hexdigest()
    _fingerprint = base64.b64encode(bytes.fromhex(sha256)).decode().rstrip("=")
    sha1 = hashlib.sha1(f"commit {n}".encode()).hexdigest()
    md5 = hashlib.md5(f"f {n}".encode()).hexdigest()  # noqa: S324 - a look-alike
    _look(
        "hash",
        f"sha256 {sha256} release.tar.gz",
        f"checksum: {md5}",
        f'ETag: "{sha1}"',
        f"the key fingerprint is SHA256:{_fingerprint}",
    )
for _n in range(5):
    u = uuid.UUID(int=_rng.getrandbits(128), version=4)
    _look(
        "uuid",
        f"request id {u} failed",
        f"idempotency key {u} reused",
        f"trace_id={str(u).replace('-', '')}",
    )
for n in range(5):
    sha = hashlib.sha1(f"rev {n}".encode()).hexdigest()
    _look(
        "git-sha",
        f"fixed in {sha[:7]}, see commit {sha}",
        f"git checkout {sha} -- src/app.py",
        f"the token refresh bug was fixed in {sha}",
    )
_look(
    "version",
    "upgraded to v2.14.3-rc.1+build.5",
    "Python 3.12.4, node v20.11.1, pnpm 9.1.0",
    "image tag 2026.03.1-alpine3.19",
    "API key rotation shipped in 4.8.0",
    "token budget raised to 128k in release 1.9",
    "the secret sauce is caching; see v3 notes",
)
_look(
    "public-key",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _s(43, ALNUM + "+/") + " ana@laptop",
    "my npub is " + _bech32("npub", _bytes(32)),
    "age public key " + _bech32("age", _bytes(32)),
    "send BTC to " + _bech32("bc", bytes([0]) + _bytes(20)),
    "ETH address 0x" + _hex(40),
    "tx hash 0x" + _hex(64),
    "legacy address " + _b58check(b"\x00" + _bytes(20)),
    "the wallet address is " + _b58(_bytes(32)),
    "IPFS CID Qm" + _s(44, B58),
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE"
    + _s(40, ALNUM + "+/")
    + "\n-----END PUBLIC KEY-----",
    "GPG key ID 0x" + _hex(16).upper() + ", fingerprint " + _group(_hex(40).upper()),
    "publishable key pk_live_" + _s(24) + " is fine in the browser",
)
_look(
    "identifier",
    "tracking number 1Z" + _s(16, string.ascii_uppercase + string.digits),
    "serial number C02" + _s(9, string.ascii_uppercase + string.digits),
    "booking reference X7K9P2, flight LH2034 at 14:05",
    "VIN 1HGCM82633A004352",
    "order #A1B2C3D4E5 shipped",
    "call +49 170 1234567 or +1 (415) 555-0133",
    "ISBN 978-3-16-148410-0",
    "Kundennummer 4711-0815-2023",
    "the ticket is OPS-4471 and the PR is #9921",
    "S3 bucket arn:aws:s3:::ledger-prod-exports-2026",
    "AKIAIOSFODNN7EXAMPLE is the AWS docs example key id",
    "container 3f2a9c1b7e4d restarted",
    "lat 52.5200, lon 13.4050",
    "IPv6 2001:db8:85a3::8a2e:370:7334",
    "MAC 3c:22:fb:9a:1e:07",
    "Luhn-valid but no card: 1234 5678 9012 3452",
)
_look(
    "password-hash",
    "stored as $2b$12$" + _s(53, ALNUM + "./"),
    "argon2: $argon2id$v=19$m=65536,t=3,p=4$" + _s(22, ALNUM + "+/") + "$" + _s(43, ALNUM + "+/"),
    "the hash in /etc/shadow starts with $6$rounds=5000$",
)
_look(
    "code",
    "def check(password: str) -> bool:\n    return bcrypt.checkpw(password.encode(), stored)",
    "password = getpass.getpass('Password: ')",
    "if (token === undefined) throw new Error('token missing');",
    "api_key: str = Field(..., min_length=32)",
    "secret = secrets.token_urlsafe(32)",
    "const pin = form.get('pin'); if (pin.length !== 4) return;",
    "ALTER USER app WITH PASSWORD :'pw';",
    "login(user='ana', password=password)",
    "- name: set password\n  ansible.builtin.user:\n"
    "    password: \"{{ pw | password_hash('sha512') }}\"",
    'ldapsearch -x -D "cn=admin,dc=corp" -W -b dc=corp',
    "docker run -p 8080:80 -p 443:443 nginx",
    "ssh -p 2222 ana@bastion.example.net",
    "grep -w password config/*.yml",
)
_look(
    "url",
    "https://ana@git.example.net/team/app.git",
    "ssh://git@github.com:22/ana/app.git",
    "http://localhost:8080/login?next=/admin",
    "https://user:****@proxy.example.net:3128",
    "https://example.net/reset-password?step=2&lang=de",
    "ftp://anonymous@ftp.example.org/pub",
    "https://o4505.ingest.sentry.io/api/4506/envelope/",
)
_look(
    "token-prose",
    "CSRF token missing from the form post",
    "the access token expired at 10:30, refresh worked",
    "token count 4096, max_tokens=1024",
    "api key rotation happens every 90 days",
    "Bearer tokens go in the Authorization header.",
    "the session cookie is HttpOnly and SameSite=Lax",
    "JWT header eyJhbGciOiJIUzI1NiJ9 means HS256",
    "client secret is stored in Azure Key Vault",
    "the Sentry DSN lives in the project settings",
    "Heroku API key is under Account settings",
    "cache key user:42:profile expired",
    "primary key (tenant_id, invoice_id)",
    "the secret key for the backup user lives in SSM Parameter Store",
    "Twilio auth token rotated by Jorge on Monday",
    "the API-Schlüssel ist im Tresor",
    "la clave API está en el gestor de secretos",
)
_look(
    "numbers",
    "Invoice 2026-000123 total 1,234.56 EUR",
    "the build took 1234 s, 4321 tests",
    "room 4012, code of conduct §3",
    "Order 4111 1111 1111 1112 was declined.",
    "IBAN DE00 3704 0044 0532 0130 00 is the typo from the docs",
    "epoch 1732435200 and 1700000000000 ms",
    "support PIN code length changed from 4 to 6 in v2.3",
    "12 words are enough for a 128-bit seed",
)
