"""The context words that name a secret, in many languages, by family.

Each phrase is written once in lower case; its words may be joined by a space, a hyphen, an
underscore or nothing (`api key`, `API-Key`, `api_key`, `apikey`, `SERVICE_ROLE_KEY`). All of
them are compiled into one trie-shaped regex run over the lower-cased text: one pass, with
the longest phrase winning at each place.

Strength: a *strong* phrase names a secret by itself ("password", "Passwort", "API key"); a
*medium* one usually does ("token", "secret", "cookie"); a *weak* one often means something
else ("pw" a page width, "pass" a mountain pass, "key" a cache key), so the value after it
must be clearly a secret.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import product
from typing import Any

_PASSWORD = """
password, passwords, passwd, passphrase, passphrases, passcode, passcodes, pass phrase, passwort,
passwörter, passworte, kennwort, kennwörter, contraseña, contraseñas, contrasena, contrasenas,
mot de passe, mots de passe, mdp, senha, senhas, palavra passe, wachtwoord, wachtwoorden,
lösenord, lösenordet, losenord, hasło, hasła, haslo, hasla, heslo, hesla, salasana, adgangskode,
passord, passordet, kodeord, jelszó, jelszo, şifre, şifresi, sifre, parola d'ordine, κωδικός,
пароль, пароля, паролі, паролем, pwd, psk, pre shared key, pre shared keys, preshared key,
shared secret, shared secrets, network key, netzwerkschlüssel, wlan schlüssel, wlan passwort,
wifi passwort, wpa key, wpa2 key, wpa passphrase, wpa2 passphrase, パスワード, 暗証, 密码, 密碼,
口令, 비밀번호, 암호, كلمة المرور, סיסמה, पासवर्ड
"""
_APP_PASSWORD = """
app password, app passwords, app specific password, app specific passwords,
application password, app passwort, contraseña de aplicación, contraseña de aplicacion,
mot de passe d'application, senha de app, senha de aplicativo
"""
_CARD_CODE = """
cvv, cvv2, cvc, cvc2, csc, card security code, security code, código de seguridad,
codigo de seguridad, prüfnummer, kartenprüfnummer, cryptogramme, cryptogramme visuel,
code de sécurité, codice di sicurezza
"""
_PIN = """
pin, puk, pin code, pin codes, pincode, pin number, pin nummer, pin nr, geheimzahl, código pin,
codigo pin, 暗証番号, türcode, tür code, alarmcode, zahlencode, entsperrcode, digicode,
code de porte, code de la porte, code d'accès, code de déverrouillage, code de l'alarme,
código de la puerta, código de acceso, código de la alarma, código de desbloqueo
"""
_BACKUP = """
wiederherstellungscodes, sicherungscodes, notfallcodes, códigos de respaldo, código de respaldo,
códigos de recuperación, códigos de backup, codes de secours, codes de récupération,
codes de sauvegarde, codici di backup, codici di recupero, バックアップコード, 备用码,
リカバリーコード
"""
_SEED = """
mnemonic, seedphrase, wiederherstellungsphrase, frase semilla, frase semente,
frase de recuperación, frase de recuperação, phrase de récupération, phrase mnémonique,
phrase secrète, frase mnemonica, 助记词, ニーモニック, シードフレーズ
"""
_TOTP = "setup key, einrichtungsschlüssel, clave de configuración, clé de configuration"
_CREDENTIAL = """
api schlüssel, clave api, clave de api, clé api, cle api, clé d'api, chave de api, chave api,
chiave api, api sleutel, apiキー, api 키, api 密钥, master.key, privater schlüssel, clave privada,
clé privée, cle privee, chave privada, chiave privata, 秘密鍵, 私钥, 密钥, session cookie,
session cookies, zugangstoken, zugriffstoken, zugriffs token, token de acceso, jeton d'accès,
token di accesso, токен, トークン, 토큰, 令牌, wif, xprv, extended private key, nostr key
"""
_MEDIUM = "token tokens secret secrets cookie cookies dsn geheimnis secreto"
_WEAK_CREDENTIAL = "key keys schlüssel clé clés cle chave chiave sleutel ключ"
_WEAK_PASSWORD = "pw pass clave claves contra"


def _split_block(block: str) -> list[str]:
    return [" ".join(p.split()) for p in block.split(",") if p.strip()]


def _combine(firsts: str, seconds: str) -> list[str]:
    return [f"{a} {b}" for a, b in product(firsts.split(), seconds.split())]


def _phrases() -> dict[str, tuple[str, str]]:
    families: list[tuple[str, str, list[str]]] = [
        ("password", "strong", _split_block(_PASSWORD)),
        ("app-password", "strong", _split_block(_APP_PASSWORD)),
        ("card-code", "strong", _split_block(_CARD_CODE)),
        (
            "pin",
            "strong",
            _split_block(_PIN)
            + _combine("alarm door gate entry keypad garage safe unlock access", "code codes"),
        ),
        (
            "backup",
            "strong",
            _split_block(_BACKUP)
            + _combine("backup recovery scratch 2fa mfa emergency", "code codes"),
        ),
        (
            "seed",
            "strong",
            _split_block(_SEED)
            + _combine("seed recovery backup mnemonic wallet", "phrase words")
            + ["secret recovery phrase", "seed phrase"],
        ),
        (
            "totp",
            "strong",
            _split_block(_TOTP)
            + _combine("totp 2fa mfa otp two-factor authenticator", "secret seed key"),
        ),
        (
            "credential",
            "strong",
            _split_block(_CREDENTIAL)
            + _combine("api", "key keys token tokens secret secrets")
            + _combine(
                "access private priv signing master encryption auth app application service "
                "wallet account",
                "key keys",
            )
            + [
                "secret access key",
                "secret key",
                "secret keys",
                "service role key",
                "service account key",
                "privkey",
            ]
            + _combine(
                "auth authentication access refresh bearer bot session app service",
                "token tokens",
            )
            + ["personal access token", "personal access tokens", "id token"]
            + _combine(
                "client app consumer webhook session jwt cookie hmac signing", "secret secrets"
            )
            + ["jwt signing secret", "webhook signing secret", "session key", "session secret"],
        ),
        ("credential", "medium", _MEDIUM.split()),
        ("credential", "weak", _WEAK_CREDENTIAL.split()),
        ("password", "weak", _WEAK_PASSWORD.split()),
    ]
    table: dict[str, tuple[str, str]] = {}
    for family, strength, phrases in families:
        for phrase in phrases:
            for variant in _variants(phrase):
                table.setdefault(variant, (family, strength))
    return table


def _variants(phrase: str) -> list[str]:
    """The phrase with each gap between its words a space or none (`api key`, `apikey`); the
    text is matched with its hyphens and underscores read as spaces (`SEPARATORS`)."""
    words = re.split(r"[ \-_]", phrase)
    variants = [words[0]]
    for word in words[1:]:
        variants = [v + sep + word for v in variants for sep in (" ", "")]
    return variants


def _trie(words: list[str]) -> str:
    root: dict[str, dict[str, Any]] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:  # the longer phrase first: greedy
            return f"(?:{body})?"
        return body

    return emit(root)


PHRASES = _phrases()
# Hyphens and underscores between the words of a phrase read as spaces (one for one, so the
# offsets stay): `API-Key`, `api_key`, `app-specific password` all match `api key`.
SEPARATORS = str.maketrans("-_", "  ")


@cache
def trie() -> re.Pattern[str]:
    """One pass over the lower-cased text finds every phrase (the caller checks boundaries).
    Compiled on first use."""
    return re.compile(_trie(sorted(PHRASES)))


# Phrases written in scripts with no spaces between words: no word boundary around them.
UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
