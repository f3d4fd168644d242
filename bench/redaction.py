"""Secrets benchmark: the hand-written patterns of capture/redact.py against a well-kept
detector, detect-secrets (Yelp; every plugin of its default settings), on the same corpus
(tests/secrets_corpus.py: one credential of each of 97 formats in the sentence it would arrive
in, 301 look-alikes that must pass).

Usage: python bench/redaction.py [--runs 5]   (detect-secrets: `pip install detect-secrets`)

Recall: a case counts as caught when detect-secrets reports a finding on a line holding the
secret (generous: it flags lines), for redact when the secret is gone from the redacted text.
False positives: look-alikes on which the detector reports anything. Time: the whole corpus,
median of --runs, wall and CPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout

from tests.secrets_corpus import LOOK_ALIKES, SECRETS  # noqa: E402
from vault_memory.capture.redact import fold, redact  # noqa: E402


def redact_catches(text: str, secret: str) -> bool:
    out = redact(text).text
    return secret not in out and fold(secret) not in out


def redact_flags(text: str) -> bool:
    return redact(text).text != text


def detect_secrets_functions() -> tuple[Callable[[str, str], bool], Callable[[str], bool]]:
    """detect-secrets as it scans a repository: each text a file (`scan_file`: every plugin of
    the default settings, with its default filters; `scan_line` is its ad-hoc mode, which
    reports every word as a high-entropy string)."""
    import os
    import tempfile

    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    folder = tempfile.mkdtemp(prefix="secrets-bench-")
    path = os.path.join(folder, "note.txt")

    def found(text: str) -> list[int]:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        with default_settings():
            return [s.line_number for s in scan_file(path)]

    def catches(text: str, secret: str) -> bool:
        # a line-based detector: caught when it reports a finding on a line of the secret
        # (its reported value is not always the secret: the GitHub plugin reports "ghp")
        start = text.index(secret)
        first = text.count("\n", 0, start) + 1
        last = first + secret.count("\n")
        return any(first <= line <= last for line in found(text))

    def flags(text: str) -> bool:
        return bool(found(text))

    return catches, flags


def measure(
    name: str, catches: Callable[[str, str], bool], flags: Callable[[str], bool], runs: int
) -> None:
    missed = [family for family, text, secret in SECRETS if not catches(text, secret)]
    false = [text for text in LOOK_ALIKES if flags(text)]
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        for _, text, _ in SECRETS:
            flags(text)
        for text in LOOK_ALIKES:
            flags(text)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    recall = 1 - len(missed) / len(SECRETS)
    print(
        f"{name:16} recall {recall:.3f} ({len(SECRETS) - len(missed)}/{len(SECRETS)})  "
        f"false positives {len(false)}/{len(LOOK_ALIKES)}  corpus in "
        f"{statistics.median(walls) * 1000:.1f} ms wall, "
        f"{statistics.median(cpus) * 1000:.1f} ms CPU (median of {runs})"
    )
    if missed:
        print(f"{'':16} missed: {', '.join(missed)}")
    for text in false[:8]:
        print(f"{'':16} false positive: {text[:90]!r}")
    if len(false) > 8:
        print(f"{'':16} … and {len(false) - 8} more false positives")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(
        f"corpus: {len(SECRETS)} secrets of {len({f for f, _, _ in SECRETS})} formats, "
        f"{len(LOOK_ALIKES)} look-alikes"
    )
    measure("redact.py", redact_catches, redact_flags, args.runs)
    try:
        catches, flags = detect_secrets_functions()
    except ImportError:
        print("detect-secrets       not installed: `pip install detect-secrets` to compare")
        return
    measure("detect-secrets", catches, flags, args.runs)


if __name__ == "__main__":
    main()
