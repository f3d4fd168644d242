"""The secrets corpus (tests/support/secrets_corpus.py): recall of at least 0.97 over at least 80
formats (cards with a Luhn check, IBANs with their checksum, named passwords in prose, every
token family the attack found missing, secrets hidden by zero-width or fullwidth characters),
and not one change to at least 300 look-alikes."""

from __future__ import annotations

import pytest

from vault_memory.capture.redact import fold, iban, luhn, redact

from ..support.secrets_corpus import LOOK_ALIKES, SECRETS


def _caught(text: str, secret: str) -> bool:
    out = redact(text).text
    return secret not in out and fold(secret) not in out


def test_recall_is_at_least_097_over_at_least_80_formats() -> None:
    assert len({family for family, _, _ in SECRETS}) >= 80
    missed = [family for family, text, secret in SECRETS if not _caught(text, secret)]
    recall = 1 - len(missed) / len(SECRETS)
    assert recall >= 0.97, missed


def test_no_look_alike_changes() -> None:
    assert len(LOOK_ALIKES) >= 300
    changed = [(text, redact(text).text) for text in LOOK_ALIKES if redact(text).text != text]
    assert changed == []


@pytest.mark.parametrize(
    "family",
    [
        "card-visa",
        "card-amex",
        "iban-de",
        "iban-gb",
        "prose-named-password",
        "aws-secret-prose",
        "discord-bot",
        "hashicorp-vault",
        "age",
        "postman",
        "linear",
        "doppler",
        "square-access",
        "twitter-bearer",
        "zero-width-github",
        "fullwidth-github",
        "fullwidth-aws",
    ],
)
def test_the_formats_the_attack_found_missing_are_caught(family: str) -> None:
    ((text, secret),) = [(t, s) for f, t, s in SECRETS if f == family]
    assert _caught(text, secret), redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "PWD=/home/maya/projects/billing-core",
        "OLDPWD=/home/maya",
        "Token: 2026-11-24 rotation done",
    ],
)
def test_the_false_positives_of_shell_dumps_are_gone(text: str) -> None:
    assert redact(text).text == text


def test_checksums_decide_cards_and_ibans() -> None:
    assert luhn("4111 1111 1111 1111") and not luhn("4111 1111 1111 1112")
    assert not luhn("1234 5678 9012 3456")  # no card network's range
    assert iban("GB82 WEST 1234 5698 7654 32") and not iban("GB00 WEST 1234 5698 7654 32")
    assert redact("card 4111 1111 1111 1111 ok").text == "card [REDACTED:card-number] ok"
    assert redact("card 4111 1111 1111 1112 ok").text == "card 4111 1111 1111 1112 ok"


def test_a_hidden_secret_comes_back_normalised_and_plain_text_as_it_was() -> None:
    plain = "café ﬁne and naïve, no secret"  # NFKC would change the ligature: kept as is
    assert redact(plain).text == plain
    hidden = "token ghp_" + "\u200b" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 ok"
    assert redact(hidden).text == "token [REDACTED:github-token] ok"


def test_many_texts_at_once_find_the_hidden_secrets_too() -> None:
    """`redact_texts` (a whole conversation, for its transcript) looks for the patterns'
    needles first; it must look in the text as `redact` sees it, or a zero-width space inside
    `gh_p` or fullwidth letters would hide a secret from the transcript (sessions/)."""
    from vault_memory.capture import redact_texts

    zero_width = "token g\u200bhp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 ok"
    fullwidth = "key \uff53\uff4b-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8s9" + " ok"
    texts = ["hello", zero_width, fullwidth, "no secret here"]
    out = redact_texts(texts)
    assert out == [redact(t).text for t in texts]
    assert "[REDACTED:github-token]" in out[1] and "[REDACTED:openai-key]" in out[2]
    assert out[0] == "hello" and out[3] == "no secret here"
