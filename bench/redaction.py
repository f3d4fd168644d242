"""Secrets benchmark: recall and look-alikes per family, detect-secrets beside our redactor,
and the redactor's throughput on a realistic log.

Corpora (both fabricated, in tests/):
- `secrets_families.py`: 181 secrets in 72 families and 222 look-alikes, as people write them
  (many languages, prose, command lines, config files, split lines, look-alike letters), cut
  into a development half and a held-out half; reported per half and per family;
- `secrets_corpus.py`: one credential of each of 97 provider formats, 301 look-alikes.

A secret counts as caught when no part of it (its words of three characters and more) is
left in the redacted text; a look-alike counts as redacted when the text changes at all.

detect-secrets (Yelp; every plugin of its default settings, as `scan_file` runs them): what
it catches alone, what it would add to ours, its look-alikes and its time. Install it to
compare: `pip install detect-secrets`.

Throughput: a synthetic log of a few hundred conversation messages (prose, code, commands,
URLs, ids, hashes, a few secrets), each message redacted as `flush` does, median of --runs,
wall and CPU. `--baseline REF` loads capture/redact.py as it was at git REF (a standalone
module before the families) and reports the ratio side by side.

Usage: python bench/redaction.py [--runs 5] [--baseline REF] [--no-detect-secrets]
Writes bench/results/redaction.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout

from tests import secrets_corpus, secrets_families  # noqa: E402
from vault_memory.capture.redact import fold, redact  # noqa: E402

Redactor = Callable[[str], str]


def pieces(secret: str) -> list[str]:
    return [p for p in (w.strip(".,;:()-") for w in fold(secret).split()) if len(p) >= 3]


def caught(redacted: str, text: str, secret: str) -> bool:
    """No part of the secret is left (more often than the text holds it elsewhere)."""
    out = fold(redacted)
    rest = fold(text.replace(secret, " ", 1))
    return all(out.count(p) <= rest.count(p) for p in pieces(secret))


def score(cases: list[tuple[str, str, str]], looks: list[tuple[str, str]], run: Redactor) -> dict:
    """Recall over `cases` (family, text, secret) and look-alikes changed, per family too."""
    families: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # caught, n, fp, looks
    missed = []
    for family, text, secret in cases:
        ok = caught(run(text), text, secret)
        families[family][0] += ok
        families[family][1] += 1
        if not ok:
            missed.append(family)
    changed = []
    for family, text in looks:
        bad = run(text) != text
        families[f"look-alike: {family}"][2] += bad
        families[f"look-alike: {family}"][3] += 1
        if bad:
            changed.append(text)
    return {
        "secrets": len(cases),
        "families": len({f for f, _, _ in cases}),
        "recall": round(1 - len(missed) / len(cases), 4),
        "look_alikes": len(looks),
        "look_alikes_redacted": len(changed),
        "missed": missed,
        "redacted_look_alikes": changed,
        "per_family": {
            k: {"caught": v[0], "of": v[1], "redacted": v[2], "looks": v[3]}
            for k, v in sorted(families.items())
        },
    }


def corpora() -> dict[str, tuple[list[tuple[str, str, str]], list[tuple[str, str]]]]:
    halves = {}
    for half in ("dev", "held"):
        cases = [(s.family, s.text, s.secret) for s in secrets_families.SECRETS if s.split == half]
        looks = [(x.family, x.text) for x in secrets_families.LOOK_ALIKES if x.split == half]
        halves[f"families-{half}"] = (cases, looks)
    halves["formats"] = (
        list(secrets_corpus.SECRETS),
        [("any", text) for text in secrets_corpus.LOOK_ALIKES],
    )
    return halves


# -- detect-secrets ------------------------------------------------------------------------


def detect_secrets() -> Callable[[str], list[int]] | None:
    """detect-secrets as it scans a repository: each text a file, every plugin of the default
    settings with their default filters. Returns the lines (1-based) it reports."""
    try:
        from detect_secrets.core.scan import scan_file
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    folder = tempfile.mkdtemp(prefix="secrets-bench-")
    path = os.path.join(folder, "note.txt")

    def lines(text: str) -> list[int]:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        with default_settings():
            return [s.line_number for s in scan_file(path)]

    return lines


def compare_detect_secrets(lines: Callable[[str], list[int]]) -> dict:
    """On the families corpus: what detect-secrets catches alone (a finding on a line of the
    secret: generous, it cannot redact part of a line), what it adds to ours, its look-alikes
    flagged, and its time per text beside ours."""
    cases = [(s.family, s.text, s.secret) for s in secrets_families.SECRETS]
    looks = [x.text for x in secrets_families.LOOK_ALIKES]
    alone, adds, ours_missed = 0, [], 0
    for family, text, secret in cases:
        first = text.count("\n", 0, text.index(secret)) + 1
        last = first + secret.count("\n")
        ds = any(first <= n <= last for n in lines(text))
        ours = caught(redact(text).text, text, secret)
        alone += ds
        ours_missed += not ours
        if ds and not ours:
            adds.append(family)
    flagged = sum(bool(lines(text)) for text in looks)
    texts = [t for _, t, _ in cases] + looks
    t_ds = timed(lambda: [lines(t) for t in texts], 3)
    t_ours = timed(lambda: [redact(t) for t in texts], 3)
    return {
        "recall_alone": round(alone / len(cases), 4),
        "secrets_it_adds_to_ours": adds,
        "secrets_ours_miss": ours_missed,
        "look_alikes_flagged": flagged,
        "look_alikes": len(looks),
        "ms_per_text": round(t_ds["wall"] * 1000 / len(texts), 3),
        "ours_ms_per_text": round(t_ours["wall"] * 1000 / len(texts), 3),
    }


# -- throughput ------------------------------------------------------------------------------

_PROSE = [
    "We decided to keep PostgreSQL for the billing service and move the queue to Redis.",
    "Maya prefers short answers with the code first; explanations after, if at all.",
    "The deploy on Friday failed because the migration 0042 locked the invoices table.",
    "Can you check why the nightly export is 20 minutes slower since v2.14.3?",
    "Jonas said the password reset emails are delayed again; SendGrid shows no errors.",
    "Let's pin numpy to 1.26.4 until the ONNX runtime catches up.",
    "I think the token budget of 4,000 per call is enough for the summariser.",
    "The meeting with the Lisbon team moved to Thursday 14:00, room 4012.",
    "Ticket OPS-4471: the cache key user:42:profile never expires, memory grows.",
    "Der Export nach S3 läuft jetzt jede Nacht um 02:00, Dauer etwa 14 Minuten.",
    "La réunion de lundi est annulée ; on reprend le sujet mercredi.",
    "El cliente pidió la factura de marzo otra vez, ya se la mandé dos veces.",
    "Remember that Ana is on holiday until the 28th, ask Jorge for reviews.",
    "the p95 latency went from 180 ms to 240 ms after enabling the new tracing",
]
_CODE = [
    "```python\ndef refund(invoice_id: str, amount: Decimal) -> Refund:\n    invoice = repo.get("
    "invoice_id)\n    if invoice.paid < amount:\n        raise RefundTooLarge(invoice_id)\n"
    "    return gateway.refund(invoice, amount, idempotency_key=uuid4().hex)\n```",
    "```bash\ndocker compose up -d db cache\npytest -q tests/test_refunds.py -k partial\n"
    "git log --oneline -5\n```",
    '```\nTraceback (most recent call last):\n  File "app/refund.py", line 88, in refund\n'
    "KeyError: 'currency'\n```",
    "```yaml\nservices:\n  api:\n    image: ghcr.io/ledgerly/api:2026.03.1\n    environment:\n"
    "      DB_PASSWORD: ${DB_PASSWORD}\n      LOG_LEVEL: info\n```",
]
_SECRETS = [
    "here's the staging password: Kaffee2026!",
    "OPENAI_API_KEY=sk-proj-a8Hk2LmQ9xZ7vB4nR1tY6wE3sD0fG5jK8lP2oI9uT7yR4eW1qA",
    "the wifi at the cabin is 'Tulpe-88', Passwort Tulpe88!",
]


def realistic_log(messages: int = 600, seed: int = 7) -> list[str]:
    """A conversation log as `flush` sees it: mostly prose, some code, ids and hashes, a
    secret every hundred messages or so."""
    rng = random.Random(seed)
    out = []
    for n in range(messages):
        parts = rng.sample(_PROSE, rng.randint(1, 4))
        if rng.random() < 0.2:
            parts.append(rng.choice(_CODE))
        if rng.random() < 0.15:
            sha, request = rng.getrandbits(160), rng.getrandbits(128)
            parts.append(f"commit {sha:040x} and request {request:032x}")
        if n % 97 == 13:
            parts.append(rng.choice(_SECRETS))
        out.append(" ".join(parts))
    return out


def timed(work: Callable[[], object], runs: int) -> dict[str, float]:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}


def baseline_redactor(ref: str) -> Redactor:
    """capture/redact.py as it was at git `ref` (a standalone module there)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:vault_memory/capture/redact.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="redact-baseline-")) / "redact_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("redact_baseline", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["redact_baseline"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return lambda text: module.redact(text).text


def throughput(runs: int, baseline: Redactor | None) -> dict:
    log = realistic_log()
    size = sum(len(m.encode()) for m in log)
    redact("warm up: password Kaffee2026!")  # compile the patterns outside the timing
    ours = timed(lambda: [redact(m) for m in log], runs)
    figures: dict[str, Any] = {
        "messages": len(log),
        "bytes": size,
        "ours_wall_s": round(ours["wall"], 4),
        "ours_cpu_s": round(ours["cpu"], 4),
        "ours_mb_per_s": round(size / ours["wall"] / 1e6, 2),
    }
    if baseline is not None:
        baseline("warm up")
        base = timed(lambda: [baseline(m) for m in log], runs)
        figures |= {
            "baseline_wall_s": round(base["wall"], 4),
            "baseline_cpu_s": round(base["cpu"], 4),
            "baseline_mb_per_s": round(size / base["wall"] / 1e6, 2),
            "ratio_ours_to_baseline_wall": round(ours["wall"] / base["wall"], 2),
        }
    return figures


# -- report ----------------------------------------------------------------------------------


def print_score(name: str, result: dict, families: bool) -> None:
    print(
        f"{name:16} recall {result['recall']:.3f} ({result['secrets']} secrets, "
        f"{result['families']} families)  look-alikes redacted "
        f"{result['look_alikes_redacted']}/{result['look_alikes']}"
    )
    for family in result["missed"]:
        print(f"{'':16} missed: {family}")
    for text in result["redacted_look_alikes"]:
        print(f"{'':16} redacted look-alike: {text[:80]!r}")
    if families:
        for family, f in result["per_family"].items():
            if f["of"]:
                print(f"{'':18}{family:24} {f['caught']}/{f['of']}")
            else:
                print(f"{'':18}{family:24} {f['redacted']}/{f['looks']} redacted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", help="a git ref whose capture/redact.py to time beside")
    parser.add_argument("--no-detect-secrets", action="store_true")
    parser.add_argument("--families", action="store_true", help="print every family's figures")
    args = parser.parse_args()

    figures: dict[str, Any] = {}
    for name, (cases, looks) in corpora().items():
        result = score(cases, looks, lambda t: redact(t).text)
        print_score(name, result, args.families and name.startswith("families"))
        figures[name] = result
    lines = None if args.no_detect_secrets else detect_secrets()
    if lines is not None:
        ds = compare_detect_secrets(lines)
        figures["detect_secrets"] = ds
        print(
            f"detect-secrets   recall alone {ds['recall_alone']:.3f} on the families corpus; "
            f"adds {len(ds['secrets_it_adds_to_ours'])} secret(s) to ours "
            f"{ds['secrets_it_adds_to_ours']}; flags {ds['look_alikes_flagged']}/"
            f"{ds['look_alikes']} look-alikes; {ds['ms_per_text']} ms a text "
            f"(ours {ds['ours_ms_per_text']} ms)"
        )
    else:
        print("detect-secrets   not measured (`pip install detect-secrets` to compare)")
    baseline = baseline_redactor(args.baseline) if args.baseline else None
    speed = throughput(args.runs, baseline)
    figures["throughput"] = speed
    line = (
        f"throughput       {speed['messages']} messages, {speed['bytes'] / 1e3:.0f} kB: "
        f"{speed['ours_wall_s']:.3f} s wall, {speed['ours_cpu_s']:.3f} s CPU "
        f"({speed['ours_mb_per_s']} MB/s)"
    )
    if baseline is not None:
        line += (
            f"; {args.baseline}: {speed['baseline_wall_s']:.3f} s wall, "
            f"{speed['baseline_cpu_s']:.3f} s CPU; ratio {speed['ratio_ours_to_baseline_wall']}"
        )
    print(line + f" (median of {args.runs})")
    write_results(figures)


def write_results(figures: dict) -> None:
    out = ROOT / "bench" / "results" / "redaction.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    versions = {"python": platform.python_version()}
    try:
        from importlib.metadata import version

        versions["mnemonic"] = version("mnemonic")
        versions["detect-secrets"] = version("detect-secrets")
    except Exception:  # noqa: BLE001 - an optional comparison
        pass
    load = os.getloadavg()
    doc = {
        "name": "redaction",
        "date": dt.date.today().isoformat(),
        "machine": {
            "cores": os.cpu_count(),
            "load": [round(x, 2) for x in load],
            "platform": platform.platform(),
        },
        "versions": versions,
        "figures": figures,
    }
    out.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
