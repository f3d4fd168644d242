"""Search latency: in-process queries at 10,000 and 100,000 units, the whole cold `vault search`
process, and `vault --help`. A benchmark, not a test.

    python bench/search.py                    # everything; vaults cached under /tmp/vault-bench/
    python bench/search.py --sizes 10000      # one size only
    python bench/search.py --skip-cli         # in-process latency only

Embedding 100,000 units with the real model takes hours on 2 cores, so the synthetic vaults
are indexed keyword-only (VAULT_MODEL_DISABLED=1) by the real indexer, and then given random
unit vectors (normal, normalised float32, 384 dims) under the bundled model's id, one per
distinct unit text, so that hybrid search scores them as it would real ones. Queries are
still embedded by the real model. Rankings are therefore meaningless here; latencies are not.

Targets: in-process p95 <= 20 ms at 10k and <= 60 ms at 100k units; cold `vault search` p50
<= 0.6 s at 10k; `vault --help` <= 0.15 s.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import pstats
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

GENERATOR_VERSION = 1
DEFAULT_ROOT = Path("/tmp/vault-bench")
TARGETS_MS = {10_000: 20.0, 100_000: 60.0}
CLI_TARGET_S = 0.6
HELP_TARGET_S = 0.15
END_DATE = dt.date(2026, 11, 22)

# -- a synthetic vault of realistic daily logs ------------------------------------------------

PEOPLE = [
    "Maya",
    "Jonas",
    "Zoë",
    "Priya",
    "Tomás",
    "Jürgen",
    "Aino",
    "Lars",
    "Sofia",
    "Omar",
    "Henrik",
    "Ingrid",
    "Kenji",
    "Fatima",
    "Elif",
    "Mateo",
    "Nadia",
    "Oskar",
    "Ravi",
    "Signe",
    "Björn",
    "Chiara",
    "Dmitri",
    "Freja",
    "Hassan",
    "Ida",
    "Leo",
    "Mira",
]
SERVICES = [
    "billing-core",
    "invoice-renderer",
    "ledger-api",
    "payments-gateway",
    "auth-service",
    "reporting",
    "export-worker",
    "notifications",
    "tax-engine",
    "onboarding-flow",
    "customer-portal",
    "search-indexer",
    "webhook-relay",
    "pricing-service",
]
TECH = [
    "PostgreSQL",
    "MySQL",
    "Redis",
    "Kafka",
    "FastAPI",
    "Celery",
    "Kubernetes",
    "Terraform",
    "wkhtmltopdf",
    "S3",
    "Grafana",
    "Sentry",
    "GitHub Actions",
    "pgbouncer",
    "Alembic",
    "OpenTelemetry",
    "Nginx",
    "RabbitMQ",
    "DuckDB",
    "Playwright",
]
PROJECTS = ["BIL", "INV", "PAY", "OPS", "CI", "AUTH", "REP", "TAX"]
ERRORS = [
    "ERR_LEDGER_409",
    "RENDER_E_FONT_MISSING",
    "ERR_AUTH_TOKEN_EXPIRED",
    "ERR_PAY_DECLINED_51",
    "E_EXPORT_TIMEOUT",
    "ERR_TAX_RATE_UNKNOWN",
    "ERR_WEBHOOK_410",
]
THINGS = [
    "the idempotency key",
    "the retry budget",
    "the VAT rounding",
    "the refund handler",
    "the cutover runbook",
    "the migration script",
    "the nightly export",
    "the rate limiter",
    "the feature flag",
    "the connection pool",
    "the invoice template",
    "the audit log",
    "the API edge",
    "the staging data",
    "the backfill job",
    "the on-call rotation",
    "the release notes",
    "the dashboard",
    "the SLA report",
    "the schema change",
]
EVENTS = [
    "the cutover",
    "the Friday release",
    "the quarterly review",
    "the board meeting",
    "the audit",
    "the customer demo",
    "the next sprint",
    "the holiday freeze",
]
PREFS = [
    "short answers with code first",
    "a three-minute Loom video",
    "written one-page proposals",
    "pairing on a call",
    "async review comments",
    "a checklist",
    "plain-language release notes",
    "diagrams over prose",
    "small pull requests",
]
TOPICS = [
    "event sourcing",
    "row-level security",
    "CRDTs",
    "zero-downtime migrations",
    "structured logging",
    "property-based testing",
    "SLOs and error budgets",
    "the outbox pattern",
    "Postgres partitioning",
    "idempotent consumers",
]
CUSTOMERS = [
    "Nordhavn Logistik",
    "Fjällbacka Bageri",
    "Kontor Nord",
    "Lumo Energy",
    "Sävsjö Trä",
    "Brightline Dental",
    "Aurora Fitness",
    "Kvarn & Co",
]
SOURCES = ["note", "flush", "note", "standup", "meeting", "note"]

TEMPLATES = [
    "{p} wants {t} reviewed before {e}.",
    "Decided to move {s} from {x} to {y} after {k}. #decision",
    "Root cause of {k} / `{err}`: {s} reuses {t} for the retry, so {x} rejects the second row.",
    "Standup: {p} is on {k}, {q} pairs with {r} on {s}.",
    "`{err}` showed up {n} times in {s} logs between {h}:{m:02d} and {h2}:{m2:02d}.",
    "{p}'s birthday is on {d}. {q} organises the cake.",
    "Read about {topic}; worth trying in {s} once {k} lands.",
    "Deployed {s} v{a}.{b}.{c} to staging; p95 stayed under {n} ms.",
    "{p} prefers {pref} when someone explains {t}.",
    "1:1 with {p}: wants a rollback plan for {t}, not only the forward plan.",
    "Filed {k}: {t} in {s} times out under load ({n} requests/s).",
    "{cust} escalated through {p}: invoices show the wrong VAT total after {t} changed.",
    "Benchmark: {x} handles {n}k rows/s for {t}; {y} about half that.",
    "Agreed with {p} that {t} stays as it is until {e}. #decision",
    "TODO: ask {p} about {t} in {s}.",
    "Incident {k}: {s} down for {n} minutes; {x} failover did not trigger.",
    "{p} is out until {d} ({cust} visit).",
    "Migrated {t} to {x}; {q} checked the numbers against {y}.",
    "Reviewed {q}'s pull request for {s}: fine, but {t} needs a test.",
    "Postmortem for {k} is up; {p} wants it shared with {cust}.",
]
CONTINUATIONS = [
    "  Follow-up owner: {p}, due {d}.",
    "  Context: {x} never had that constraint, which is why nobody noticed.",
    "  Numbers: {n} affected invoices across {n2} tenants.",
    "  Link: {k} has the details and the SQL.",
]


def _fill(template: str, rnd: random.Random, day: dt.date) -> str:
    people = rnd.sample(PEOPLE, 3)
    tech = rnd.sample(TECH, 2)
    return template.format(
        p=people[0],
        q=people[1],
        r=people[2],
        s=rnd.choice(SERVICES),
        x=tech[0],
        y=tech[1],
        k=f"{rnd.choice(PROJECTS)}-{rnd.randint(100, 4999)}",
        err=rnd.choice(ERRORS),
        t=rnd.choice(THINGS),
        e=rnd.choice(EVENTS),
        pref=rnd.choice(PREFS),
        topic=rnd.choice(TOPICS),
        cust=rnd.choice(CUSTOMERS),
        n=rnd.randint(2, 900),
        n2=rnd.randint(2, 40),
        h=rnd.randint(7, 17),
        m=rnd.randint(0, 59),
        h2=rnd.randint(7, 18),
        m2=rnd.randint(0, 59),
        a=rnd.randint(1, 4),
        b=rnd.randint(0, 20),
        c=rnd.randint(0, 9),
        d=(day + dt.timedelta(days=rnd.randint(1, 40))).strftime("%-d %B"),
    )


def generate_vault(root: Path, units: int, seed: int = 1) -> dict[str, int]:
    """Daily logs (`## HH:MM · source` entries of 1–5 bullets) going back from END_DATE until
    about `units` list items exist, plus MEMORY.md and a few notes."""
    from vault_memory import Vault

    rnd = random.Random(seed)
    Vault.init(root)
    memory = [
        "# MEMORY",
        "",
        "## About Maya #pin",
        "- Maya Lindqvist, senior backend engineer at Ledgerly.",
        "",
        "## People",
    ]
    memory += [
        f"- {p}: works on {rnd.choice(SERVICES)}; prefers {rnd.choice(PREFS)}." for p in PEOPLE
    ]
    memory += ["", "## Decisions"]
    memory += [f"- {_fill(rnd.choice(TEMPLATES), rnd, END_DATE)}" for _ in range(40)]
    (root / "MEMORY.md").write_text("\n".join(memory) + "\n", encoding="utf-8")
    written = len(PEOPLE) + 41
    notes = root / "notes"
    notes.mkdir(exist_ok=True)
    for service in SERVICES:
        body = [f"# {service}", "", "## Overview"]
        body += [f"- {_fill(rnd.choice(TEMPLATES), rnd, END_DATE)}" for _ in range(25)]
        (notes / f"{service}.md").write_text("\n".join(body) + "\n", encoding="utf-8")
        written += 25
    day = END_DATE
    files = 0
    while written < units:
        lines = [f"# {day.isoformat()}", ""]
        minute = rnd.randint(8 * 60, 10 * 60)
        for _ in range(rnd.randint(3, 8)):
            source = rnd.choice(SOURCES)
            session = f" · session {rnd.getrandbits(16):04x}" if source == "flush" else ""
            lines.append(f"## {minute // 60:02d}:{minute % 60:02d} · {source}{session}")
            for _ in range(rnd.randint(1, 5)):
                lines.append(f"- {_fill(rnd.choice(TEMPLATES), rnd, day)}")
                if rnd.random() < 0.15:
                    lines.append(_fill(rnd.choice(CONTINUATIONS), rnd, day))
                written += 1
            lines.append("")
            minute = min(minute + rnd.randint(15, 120), 23 * 60 + 59)
        (root / "memory" / f"{day.isoformat()}.md").write_text("\n".join(lines), encoding="utf-8")
        files += 1
        day -= dt.timedelta(days=1)
    return {"daily_files": files, "list_items": written}


def add_vectors(store: Any, seed: int = 2) -> int:
    """A random normalised 384-d vector per distinct unit text under the bundled model id, and
    the meta rows that make the index count as fully embedded, through any index backend's
    interface (bench/postgres.py gives it the server's store)."""
    import numpy as np

    from vault_memory.index.embedder import BUNDLED_DIMS, BUNDLED_MODEL_ID

    shas = sorted({sha for _, _, _, sha in store.unit_digests()})
    rng = np.random.default_rng(seed)
    for start in range(0, len(shas), 5000):
        batch = shas[start : start + 5000]
        vectors = rng.standard_normal((len(batch), BUNDLED_DIMS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with store.transaction() as conn:
            store.add_embeddings(
                conn,
                BUNDLED_MODEL_ID,
                [(sha, vec.tobytes()) for sha, vec in zip(batch, vectors, strict=True)],
            )
    with store.transaction() as conn:
        store.set_meta(conn, "model_id", BUNDLED_MODEL_ID)
        store.set_meta(conn, "dims", BUNDLED_DIMS)
        store.set_meta(conn, "embeddings_complete", 1)
    return len(shas)


def add_synthetic_vectors(root: Path, seed: int = 2) -> int:
    """`add_vectors` for the SQLite index of the vault at `root`."""
    from vault_memory.index.store import Store

    store = Store(root / ".vault" / "index.sqlite")
    try:
        return add_vectors(store, seed)
    finally:
        store.close()


def prepare(base: Path, units: int) -> tuple[Path, dict[str, Any]]:
    """The cached vault of about `units` units, generated and indexed on first use."""
    from vault_memory import Vault

    root = base / f"vault-{units}"
    manifest_path = base / f"vault-{units}.json"
    if manifest_path.exists() and root.is_dir():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("generator") == GENERATOR_VERSION:
            with Vault(root) as vault:
                drift = vault.status()["drift"]
            if drift == {"new": 0, "changed": 0, "deleted": 0}:
                return root, manifest
            print(f"  {root}: files drifted from the index ({drift}); regenerating")
    shutil.rmtree(root, ignore_errors=True)
    print(f"  generating {root} (about {units:,} units) ...", flush=True)
    started = time.perf_counter()
    shape = generate_vault(root, units)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    os.environ["VAULT_MODEL_DISABLED"] = "1"
    try:
        with Vault(root) as vault:
            report = vault.index()
    finally:
        del os.environ["VAULT_MODEL_DISABLED"]
    indexed = time.perf_counter() - started
    started = time.perf_counter()
    vectors = add_synthetic_vectors(root)
    vectored = time.perf_counter() - started
    manifest = {
        "generator": GENERATOR_VERSION,
        "units": report.units,
        "files": report.files,
        **shape,
        "distinct_texts": vectors,
        "generate_s": round(generated, 1),
        "index_keyword_only_s": round(indexed, 1),
        "synthetic_vectors_s": round(vectored, 1),
    }
    manifest_path.write_text(json.dumps(manifest, indent=1))
    return root, manifest


# -- measuring --------------------------------------------------------------------------------

QUERIES = [
    "which database did we pick for billing?",
    "what does Zoë prefer when someone explains a product change?",
    "when is Priya's birthday",
    "why did the invoice renderer fail on fonts",
    "who owns the cutover runbook",
    "what did Jonas say about the rollback plan",
    "how many invoices were affected by the VAT rounding bug",
    "which customer escalated the wrong VAT total",
    "what is the retry budget for the payments gateway",
    "did we move reporting from MySQL to PostgreSQL",
    "what happened during the incident with the webhook relay",
    "who pairs with Omar on the tax engine",
    "what was decided about the idempotency key",
    "how fast is DuckDB for the nightly export",
    "what are Maya's preferences for code review",
    "is anyone out next week",
    "what should I ask Henrik about",
    "what did we learn about zero-downtime migrations",
    "which deploy went to staging last",
    "why does the rate limiter time out under load",
    "what does the audit log need before the audit",
    "who organises the cake",
    "which postmortem should be shared with Lumo Energy",
    "what broke in the connection pool",
    "how do we handle refunds twice",
    "kafka consumer lag",
    "wkhtmltopdf fonts",
    "staging deploy p95",
    "pgbouncer connection pool",
    "feature flag rollout",
    "celery retry",
    "terraform state",
    "release notes plain language",
    "outbox pattern",
    "schema change SQL review",
    "Nordhavn Logistik",
    "backfill job",
    "on-call rotation",
    "Grafana dashboard SLA",
    "Sentry alerts auth-service",
    "ERR_LEDGER_409",
    "RENDER_E_FONT_MISSING",
    "BIL-1423",
    "ERR_PAY_DECLINED_51 spike",
    "INV-212",
    "v2.3.1",
    "Jürgen",
    "decision PostgreSQL",
    "Loom video",
    "one-page proposal",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


WARM_PARTS = [  # (module, function, label); missing ones (search.py changes) are skipped
    ("vault_memory.search.table", "FieldPostings.bm25", "keyword BM25F (postings arrays)"),
    ("vault_memory.index.embedder", "QueryEncoder.embed_query", "query embedding (ONNX)"),
    ("vault_memory.index.embedder", "Embedder.embed_query", "query embedding (ONNX)"),
    ("vault_memory.search.searcher", "Searcher.table", "unit table (check/reload)"),
    ("vault_memory.search.stages", "window_context", "context windows"),
    ("vault_memory.index.store", "Store.units_by_id", "hit rows from SQLite"),
    ("vault_memory.search.ranking", "coalesce", "coalescing spans"),
    ("vault_memory.index.indexer", "Index.stale_paths", "freshness scan (stat every file)"),
]
WARM_LABELS = list(
    dict.fromkeys(label for _, _, label in WARM_PARTS if not label.startswith("freshness"))
)


def _wrap(module_name: str, qualnames: str, sink: dict[str, list[float]], label: str) -> None:
    """Replace module.qualname (the first of `a|b` that exists) by a wrapper adding its wall
    time to sink[label]. Nothing when none exists: search.py is still changing."""
    import importlib

    module = importlib.import_module(module_name)
    for qualname in qualnames.split("|"):
        owner: Any = module
        *path, attr = qualname.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        inner = getattr(owner, attr, None)
        if inner is not None:
            break
    else:
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            sink.setdefault(label, []).append(time.perf_counter() - started)

    setattr(owner, attr, wrapper)


ALL_CONFIGS = (("hybrid", False), ("hybrid", True), ("keyword", False))


def measure(
    root: Path, runs: int, configs: tuple[tuple[str, bool], ...] = ALL_CONFIGS
) -> dict[str, Any]:
    """Run inside a child process (--measure): latency of `Vault.search` in one warm process
    (model, vectors and Whoosh loaded by a warm-up pass over every query), wall and CPU time,
    then the same hybrid queries again with their parts timed."""
    from vault_memory import Vault

    out: dict[str, Any] = {"configs": []}
    with Vault(root) as vault:
        for number, (mode, fresh) in enumerate(configs):
            for query in QUERIES if number == 0 else QUERIES[:10]:
                vault.search(query, mode=mode, fresh=fresh)
            walls, cpus = [], []
            for number in range(runs):
                query = QUERIES[number % len(QUERIES)]
                started, cpu = time.perf_counter(), time.process_time()
                vault.search(query, mode=mode, fresh=fresh)
                walls.append((time.perf_counter() - started) * 1000)
                cpus.append((time.process_time() - cpu) * 1000)
            out["configs"].append(
                {
                    "mode": mode,
                    "fresh": fresh,
                    "p50": statistics.median(walls),
                    "p95": percentile(walls, 95),
                    "max": max(walls),
                    "cpu_p50": statistics.median(cpus),
                    "cpu_p95": percentile(cpus, 95),
                }
            )
        sink: dict[str, list[float]] = {}
        for module_name, qualname, label in WARM_PARTS:
            _wrap(module_name, qualname, sink, label)
        parts_runs = min(runs, 100)
        started = time.perf_counter()
        for number in range(parts_runs):
            vault.search(QUERIES[number % len(QUERIES)], fresh=False)
        total = (time.perf_counter() - started) * 1000 / parts_runs
    out["parts"] = {label: sum(v) * 1000 / parts_runs for label, v in sink.items()}
    out["parts_total"] = total
    return out


def in_process(
    root: Path, runs: int, env_extra: dict[str, str], only_hybrid: bool
) -> dict[str, Any]:
    env = {**cli_env(), **env_extra}
    cmd = [sys.executable, __file__, "--measure", str(root), str(runs)]
    done = subprocess.run(
        cmd + (["--only-hybrid"] if only_hybrid else []), capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def profile_warm(root: Path, runs: int, fresh: bool) -> str:
    """cProfile of warm queries: where the time of one query goes."""
    from vault_memory import Vault

    with Vault(root) as vault:
        for query in QUERIES:
            vault.search(query, fresh=fresh)
        profile = cProfile.Profile()
        profile.enable()
        for number in range(runs):
            vault.search(QUERIES[number % len(QUERIES)], fresh=fresh)
        profile.disable()
    text = []
    for order, count in (("cumulative", 18), ("tottime", 12)):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).strip_dirs().sort_stats(order).print_stats(count)
        text.append(f"  by {order}:\n" + _trim_pstats(out.getvalue(), per=runs))
    return "\n".join(text)


def _trim_pstats(text: str, per: int = 1) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    body = lines[start:]
    if per > 1:
        body[0] += f"   (cumtime per query = cumtime / {per})"
    return "\n".join("    " + line for line in body)


def vault_command() -> list[str]:
    script = Path(sys.executable).parent / "vault"
    return [str(script)] if script.exists() else [shutil.which("vault") or "vault"]


def wall(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, Any]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - started, done


def cli_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}


def cold_cli(root: Path, runs: int) -> dict[str, float]:
    """`vault --vault ROOT search Q --json` as new processes (freshness on, as users run it)."""
    env = cli_env()
    times = []
    wall(vault_command() + ["--vault", str(root), "search", "warm the OS cache", "--json"], env)
    for number in range(runs):
        query = QUERIES[(number * 7) % len(QUERIES)]
        seconds, done = wall(
            vault_command() + ["--vault", str(root), "search", query, "--json"], env
        )
        if done.returncode != 0 or done.stderr.strip():
            raise SystemExit(f"vault search failed ({done.returncode}): {done.stderr}")
        json.loads(done.stdout)
        times.append(seconds)
    return {"p50": statistics.median(times), "p95": percentile(times, 95), "runs": runs}


def importtime(args: list[str], top: int = 14) -> tuple[float, list[tuple[int, str]]]:
    """`python -X importtime` of one `vault ARGS` process: the slowest imports (cumulative,
    top-level packages only) and the total."""
    cmd = [sys.executable, "-X", "importtime", "-m", "vault_memory.cli", *args]
    _, done = wall(cmd, cli_env())
    rows = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if match and len(match[3]) <= 1:  # top-level imports only
            rows.append((int(match[2]), match[4]))
    total = sum(us for us, _ in rows)
    return total / 1e6, sorted(rows, reverse=True)[:top]


PHASES = [
    ("vault_memory.index.embedder", "load_query_encoder", "model load, total"),
    ("vault_memory.index.embedder", "load_embedder", "model load, total"),
    ("vault_memory.index.embedder", "verify_sha256", "  of which: sha256 of the ONNX file"),
    (
        "vault_memory.index.embedder",
        "_text_embedding",
        "  of which: fastembed import + ONNX session",
    ),
    ("vault_memory.index.embedder", "QueryEncoder.embed_query", "query embedding"),
    ("vault_memory.index.embedder", "Embedder.embed_query", "query embedding"),
    ("vault_memory.search.searcher", "Searcher.table", "unit table load, total"),
    ("vault_memory.index.store", "Store.unit_rows", "  of which: rows + vectors from SQLite"),
    ("vault_memory.index.arrays", "read_arrays", "  of which: mapped from .vault/"),
    ("vault_memory.search.table", "UnitTable.build", "  of which: arrays, sections, windows"),
    ("vault_memory.search.table", "FieldPostings.bm25", "keyword BM25F (postings arrays)"),
    ("vault_memory.index.fulltext", "FullText.open", "Whoosh open (should not happen)"),
    ("vault_memory.index.indexer", "Index.stale_paths", "freshness scan (stat every file)"),
    ("vault_memory.vault", "Vault.search", "Vault.search, total"),
]


def cold_phases(root: Path, query: str) -> None:
    """Run inside a fresh process (--cold-phases): one search as the CLI does it, with the wall
    time of its phases (inclusive: lazy imports count in the phase that triggers them)."""
    started = time.perf_counter()
    from vault_memory.cli import cli  # noqa: F401 - what `vault` imports before any command

    import_cli = time.perf_counter() - started
    sink: dict[str, list[float]] = {}
    for module_name, qualname, label in PHASES:
        _wrap(module_name, qualname, sink, label)
    from vault_memory import Vault

    with Vault(root) as vault:
        vault.config  # noqa: B018
        vault.search(query)
    print(
        json.dumps(
            {"import_cli": import_cli, "phases": {label: sum(v) for label, v in sink.items()}}
        )
    )


def cold_profile(root: Path, query: str) -> None:
    profile = cProfile.Profile()
    profile.enable()
    from vault_memory import Vault

    with Vault(root) as vault:
        vault.search(query)
    profile.disable()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).strip_dirs().sort_stats("cumulative").print_stats(28)
    print(_trim_pstats(out.getvalue()))


def startup(runs: int = 15) -> dict[str, float]:
    env = cli_env()
    python = [wall([sys.executable, "-c", "pass"], env)[0] for _ in range(runs)]
    python_s = [wall([sys.executable, "-S", "-c", "pass"], env)[0] for _ in range(runs)]
    help_ = []
    for _ in range(runs):
        seconds, done = wall(vault_command() + ["--help"], env)
        assert done.returncode == 0, done.stderr
        help_.append(seconds)
    return {
        "help_p50": statistics.median(help_),
        "help_p95": percentile(help_, 95),
        "python_p50": statistics.median(python),
        "python_S_p50": statistics.median(python_s),
    }


# -- report -----------------------------------------------------------------------------------


def verdict(value: float, target: float) -> str:
    return "ok" if value <= target else "MISSED"


def machine() -> str:
    load = os.getloadavg()
    return (
        f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"Python {sys.version.split()[0]}"
    )


def run_child(flag: str, root: Path, query: str) -> str:
    done = subprocess.run(
        [sys.executable, __file__, flag, str(root), query],
        capture_output=True,
        text=True,
        env=cli_env(),
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=200, help="timed queries per measurement")
    parser.add_argument("--cli-runs", type=int, default=12)
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--skip-in-process", action="store_true")
    parser.add_argument(
        "--profile", action="store_true", help="also cProfile warm queries at every size"
    )
    hidden = argparse.SUPPRESS  # the child processes' entry points
    parser.add_argument("--cold-phases", nargs=2, metavar=("ROOT", "QUERY"), help=hidden)
    parser.add_argument("--cold-profile", nargs=2, metavar=("ROOT", "QUERY"), help=hidden)
    parser.add_argument("--measure", nargs=2, metavar=("ROOT", "RUNS"), help=hidden)
    parser.add_argument("--only-hybrid", action="store_true", help=hidden)
    args = parser.parse_args()
    if args.measure:
        configs = ALL_CONFIGS[:1] if args.only_hybrid else ALL_CONFIGS
        print(json.dumps(measure(Path(args.measure[0]), int(args.measure[1]), configs)))
        return None
    if args.cold_phases:
        return cold_phases(Path(args.cold_phases[0]), args.cold_phases[1])
    if args.cold_profile:
        return cold_profile(Path(args.cold_profile[0]), args.cold_profile[1])
    for name in [n for n in os.environ if n.startswith("VAULT_")]:
        del os.environ[name]

    sizes = [int(s) for s in args.sizes.split(",")]
    args.root.mkdir(parents=True, exist_ok=True)
    print(f"vault-memory search benchmark — {machine()}")
    print(
        "Synthetic vaults: daily logs indexed keyword-only by the real indexer, then RANDOM "
        "unit vectors\n(normal, normalised float32, 384 d) inserted under the bundled model "
        "id; queries are embedded\nby the real model. Latency is real, ranking is not.\n"
    )
    vaults: dict[int, Path] = {}
    for size in sizes:
        root, manifest = prepare(args.root, size)
        vaults[size] = root
        print(
            f"  {root}: {manifest['units']:,} units in {manifest['files']:,} files, "
            f"{manifest['distinct_texts']:,} distinct texts (generated in "
            f"{manifest['generate_s']} s, keyword-only index {manifest['index_keyword_only_s']}"
            f" s, vectors {manifest['synthetic_vectors_s']} s)"
        )

    if not args.skip_in_process:
        report_in_process(vaults, args.runs)
    if args.profile:
        for size, root in vaults.items():
            print(f"\ncProfile of 100 warm hybrid queries, fresh=False, {size:,} units:")
            print(profile_warm(root, 100, fresh=False))
    if not args.skip_cli:
        report_cli(vaults, args.cli_runs)


def report_in_process(vaults: dict[int, Path], runs: int) -> None:
    print(
        f"\nIn-process Vault.search, {len(QUERIES)} queries cycled, {runs} timed runs "
        "after one warm-up pass,\none child process per row; wall ms (and CPU ms of the "
        "process, all threads)"
    )
    print(
        f"  {'units':>8} {'BLAS threads':12} {'mode':8} {'fresh':6} {'p50':>6} {'p95':>6} "
        f"{'max':>6} {'cpu p50':>8} {'cpu p95':>8}  target p95"
    )
    breakdowns = []
    for size, root in vaults.items():
        target = TARGETS_MS.get(size)
        for blas, env_extra in (("default", {}), ("1", {"OPENBLAS_NUM_THREADS": "1"})):
            result = in_process(root, runs, env_extra, only_hybrid=blas != "default")
            for r in result["configs"]:
                mark = (
                    f"<= {target:.0f} ms {verdict(r['p95'], target)}"
                    if target and r["mode"] == "hybrid"
                    else ""
                )
                print(
                    f"  {size:>8,} {blas:12} {r['mode']:8} {str(r['fresh']):6} "
                    f"{r['p50']:6.1f} {r['p95']:6.1f} {r['max']:6.1f} {r['cpu_p50']:8.1f} "
                    f"{r['cpu_p95']:8.1f}  {mark}",
                    flush=True,
                )
            breakdowns.append((size, blas, result))
    print("\nWhere a warm hybrid query's time goes (fresh=False, mean wall ms per query)")
    labels = WARM_LABELS
    print(
        f"  {'units':>8} {'BLAS':7} "
        + " ".join(f"{lab[:14]:>14}" for lab in labels)
        + f" {'rest':>7} {'total':>7}"
    )
    for size, blas, result in breakdowns:
        parts = result["parts"]
        rest = result["parts_total"] - sum(parts.get(lab, 0.0) for lab in labels)
        print(
            f"  {size:>8,} {blas:7} "
            + " ".join(f"{parts.get(lab, 0.0):14.1f}" for lab in labels)
            + f" {rest:7.1f} {result['parts_total']:7.1f}"
        )
    print("  (" + "; ".join(f"{lab[:14]} = {lab}" for lab in labels) + ")")


def report_cli(vaults: dict[int, Path], cli_runs: int) -> None:
    small = vaults[min(vaults)]
    units = min(vaults)
    print(
        f"\nCold `vault --vault DIR search Q --json` processes on {units:,} units "
        f"({cli_runs} runs, freshness check on)"
    )
    r = cold_cli(small, cli_runs)
    print(
        f"  p50 {r['p50']:.3f} s   p95 {r['p95']:.3f} s   target p50 <= {CLI_TARGET_S} s "
        f"{verdict(r['p50'], CLI_TARGET_S)}"
    )

    s = startup()
    print(
        f"\n`vault --help`: p50 {s['help_p50']:.3f} s, p95 {s['help_p95']:.3f} s   target <= "
        f"{HELP_TARGET_S} s {verdict(s['help_p50'], HELP_TARGET_S)}"
    )
    print(
        f"  beside it, bare interpreter start-up: `python -c pass` {s['python_p50']:.3f} s, "
        f"`python -S -c pass` {s['python_S_p50']:.3f} s (no site / .pth files)"
    )
    print(
        f"  => `vault --help` costs {s['help_p50'] - s['python_p50']:.3f} s over `python -c pass`"
    )

    query = "which database did we pick for billing?"
    phases = json.loads(run_child("--cold-phases", small, query).strip().splitlines()[-1])
    print(
        f"\nWhere a cold search's time goes ({units:,} units, one fresh process, wall time, "
        "inclusive; lazy imports count in the phase that triggers them)"
    )
    print(f"  {'interpreter start-up (python -c pass)':48} {s['python_p50'] * 1000:7.0f} ms")
    label = "import vault_memory.cli (click, the CLI)"
    print(f"  {label:48} {phases['import_cli'] * 1000:7.0f} ms")
    for label in dict.fromkeys(label for _, _, label in PHASES):
        if label in phases["phases"]:
            print(f"  {label:48} {phases['phases'][label] * 1000:7.0f} ms")
    print("  (phases overlap: the model loads inside Vault.search)")
    for what, cli_args, top in (
        ("vault search", ["--vault", str(small), "search", query, "--json"], 14),
        ("vault --help", ["--help"], 6),
    ):
        total, rows = importtime(cli_args, top)
        print(
            f"\n`python -X importtime` of one `{what}` process: {total:.3f} s of imports; "
            "slowest top-level imports (cumulative):"
        )
        for us, name in rows:
            print(f"  {us / 1000:7.1f} ms  {name}")
    print(f"\ncProfile of one cold in-process search ({units:,} units, fresh process):")
    print(run_child("--cold-profile", small, query))


if __name__ == "__main__":
    main()
