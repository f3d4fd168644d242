"""Checksums of the credential formats that carry one: a match that fails its checksum is a
look-alike (an order number, a typo in the docs, a public address), not a secret."""

from __future__ import annotations

import hashlib
import re

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_INDEX = {c: i for i, c in enumerate(_BECH32)}


def luhn_ok(digits: str) -> bool:
    """The Luhn check digit of a digit string (cards, IMEIs)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def luhn(text: str) -> bool:
    """A payment card number: 13-19 digits (spaces and dashes aside) of a card network's
    ranges, passing the Luhn check."""
    digits = re.sub(r"[ -]", "", text)
    if not 13 <= len(digits) <= 19 or not re.match(r"4|5[1-5]|2[2-7]|3[47]|6(?:011|5)|35", digits):
        return False
    return luhn_ok(digits)


def iban(text: str) -> bool:
    """An IBAN: country, check digits, 11-30 more letters and digits, mod 97 = 1."""
    compact = text.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    number = "".join(str(int(c, 36)) for c in compact[4:] + compact[:4])
    return int(number) % 97 == 1


def base58check(text: str) -> bytes | None:
    """The payload of a Base58Check string (Bitcoin WIF keys, BIP-32 extended keys), or None
    when a character or the double-SHA-256 checksum is wrong."""
    number = 0
    for ch in text:
        index = _B58_INDEX.get(ch)
        if index is None:
            return None
        number = number * 58 + index
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    raw = b"\0" * (len(text) - len(text.lstrip("1"))) + raw
    if len(raw) < 5:
        return None
    payload, check = raw[:-4], raw[-4:]
    if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] != check:
        return None
    return payload


def bech32_hrp(text: str) -> str | None:
    """The human-readable part of a valid Bech32 or Bech32m string (`nsec`, `age-secret-key-`),
    or None when its checksum fails."""
    lowered = text.lower()
    if lowered != text and text.upper() != text:
        return None
    hrp, sep, data = lowered.rpartition("1")
    if not sep or not hrp or len(data) < 6:
        return None
    values = [_BECH32_INDEX.get(c, -1) for c in data]
    if -1 in values:
        return None
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return hrp if chk in (1, 0x2BC830A3) else None
