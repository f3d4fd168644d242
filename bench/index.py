"""Indexing benchmark: full-index throughput beside raw fastembed, and the no-op `vault index`.

Usage: python bench/index.py [--files 10000] [--throughput-files 300] [--runs 5] [--rounds 3]
                             [--keep DIR] [--profile]

On synthetic vaults of realistic daily logs and notes, generated the same way on every run:

1. Throughput. A vault of --throughput-files files (about 1,500-2,000 distinct units) is
   indexed from scratch, and the same unit texts are embedded by fastembed directly, with the
   same loaded model and the same batch size: in file order, and sorted by length (the
   order the indexer embeds them in: a batch is padded to its longest text). They alternate
   for --rounds rounds; medians are reported. Target: index >= 0.9 x raw.
2. No-op. A vault of --files files (daily logs drawing on a pool of entries, so building it
   embeds a few thousand distinct texts, not 50,000) is indexed once; then `Vault.index()` runs
   --runs times in this process (a new Vault each time) and `vault index` runs --runs times as
   a child process. Each must embed nothing and leave .vault/ byte-for-byte as it was.
   Target: median <= 1 s.
3. Peak RSS (ru_maxrss) of this process after each phase and of each `vault index` child.

--profile prints a cProfile of one in-process no-op run.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import hashlib
import io
import json
import os
import pstats
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness  # noqa: F401 - this checkout's vault_memory first on sys.path

from vault_memory import Vault  # noqa: E402
from vault_memory.files.notes import parse_note  # noqa: E402
from vault_memory.index.embedder import BUNDLED_MODEL  # noqa: E402
from vault_memory.index.indexer import shared_embedder  # noqa: E402
from vault_memory.index.units import make_units  # noqa: E402

BATCH_SIZE = 32  # vault.toml's index.batch_size default, used by both sides

# fmt: off
PEOPLE = ["Jonas", "Priya", "Zoë", "Jürgen", "Tomás", "Maya", "Ana", "Kenji", "Lena", "Omar"]
SYSTEMS = [
    "billing-core", "the invoice renderer", "the PostgreSQL primary", "the nightly backup job",
    "the search index", "the mobile release", "the staging cluster", "the API rate limiter",
    "the CI runners", "the customer support queue", "the Kubernetes upgrade", "the ledger export",
]
ACTIONS = [
    "needs", "was moved to", "depends on", "should wait for", "broke after", "is blocked by",
    "was fixed by", "will switch to", "keeps failing because of", "got faster after",
]
OBJECTS = [
    "a new connection pool", "the Friday deploy window", "error {code} in the logs",
    "a cheaper storage tier", "the vendor's new contract", "a retry with exponential backoff",
    "the design review on {day}", "more test coverage", "the timezone bug in the scheduler",
    "a two-week freeze", "the migration script", "ticket {ticket}", "the {n} ms p95 budget",
]
TAILS = [
    "", "", "", " #decision", " #todo", " #important", " (see [[Architecture]])",
    " Confirmed by email.", " We agreed to revisit next month.", " {person} agrees.",
    " Ask {person} again if it happens twice.",
]
SOURCES = ["note", "flush · session {session}", "note", "meeting"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
# fmt: on


def bullet(rng: random.Random) -> str:
    fill = {
        "code": f"E{rng.randint(1000, 9999)}",
        "day": rng.choice(DAYS),
        "ticket": f"BIL-{rng.randint(100, 3000)}",
        "n": rng.choice([200, 350, 500, 800]),
        "person": rng.choice(PEOPLE),
    }
    who = rng.choice(PEOPLE + SYSTEMS)
    text = f"{who} {rng.choice(ACTIONS)} {rng.choice(OBJECTS)}.{rng.choice(TAILS)}".format(**fill)
    if rng.random() < 0.15:  # a continuation line
        text += f"\n  Follow-up with {rng.choice(PEOPLE)} on {rng.choice(DAYS)}."
    return "- " + text[0].upper() + text[1:]


def daily_log(day: dt.date, rng: random.Random, pick: Any) -> str:
    parts = [f"# {day.isoformat()}\n"]
    for _ in range(rng.randint(1, 3)):
        source = rng.choice(SOURCES).format(session=f"{rng.randrange(16**4):04x}")
        parts.append(f"\n## {rng.randint(7, 22):02d}:{rng.randint(0, 59):02d} · {source}\n")
        parts.extend(pick() + "\n" for _ in range(rng.randint(1, 4)))
    return "".join(parts)


def note(title: str, rng: random.Random, pick: Any) -> str:
    tags = ", ".join(rng.sample(["project", "runbook", "billing", "ops", "people"], 2))
    parts = [f"---\ntitle: {title}\ntags: [{tags}]\n---\n\n# {title}\n\n"]
    parts.append(
        f"Owner: {rng.choice(PEOPLE)}. Background for {rng.choice(SYSTEMS)}, kept "
        "up to date by hand.\nRead this before changing anything in production.\n"
    )
    for section in ("Context", "Decisions", "Open questions"):
        parts.append(f"\n## {section}\n")
        parts.extend(pick() + "\n" for _ in range(rng.randint(2, 5)))
    return "".join(parts)


def generate(root: Path, files: int, pool: int | None, seed: int) -> None:
    """A vault of `files` Markdown files: daily logs from 2000 on, and one note in ten.
    With `pool`, entries are drawn from `pool` distinct ones (as in a long-lived vault where
    much recurs); without, nearly every entry is new."""
    rng = random.Random(seed)
    entries = [bullet(rng) for _ in range(pool)] if pool else []

    def pick() -> str:
        return rng.choice(entries) if entries else bullet(rng)

    Vault.init(root)
    day = dt.date(2000, 1, 1)
    for number in range(files):
        if number % 10 == 9:
            folder = root / "notes" / f"project-{number % 37:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"note-{number:05d}.md").write_text(note(f"Note {number}", rng, pick))
        else:
            (root / "memory" / f"{day.isoformat()}.md").write_text(daily_log(day, rng, pick))
            day += dt.timedelta(days=1)


def unit_texts(root: Path) -> list[str]:
    """The distinct unit texts of a vault, in file order (files sorted by path)."""
    texts: dict[str, str] = {}
    for path in sorted(root.rglob("*.md")):
        relpath = path.relative_to(root).as_posix()
        for unit in make_units(parse_note(relpath, path.read_text(encoding="utf-8"))):
            texts.setdefault(unit.sha256, unit.text)
    return list(texts.values())


def rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # kB on Linux


def tree_digest(folder: Path) -> dict[str, tuple[str, int]]:
    state = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            state[path.relative_to(folder).as_posix()] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                path.stat().st_mtime_ns,
            )
    return state


# Started from a small launcher process: Linux counts the memory of the process that forks
# (this one holds the model) in the child's ru_maxrss, so the launcher must be small.
LAUNCHER = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
seconds = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps([seconds, rss, done.returncode, done.stdout, done.stderr]))
"""


def cli_command() -> list[str]:
    """The `vault` console script beside this interpreter (a pyenv or asdf shim on PATH
    would add its own start-up to every run), else `python -m vault_memory.cli`."""
    script = Path(sys.executable).with_name("vault")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "vault_memory.cli"]


def run_cli_index(root: Path) -> tuple[float, float, str]:
    """`vault index` as a child process: wall seconds, peak RSS (MB), stdout."""
    command = cli_command()
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command, "index"],
        env=dict(os.environ, VAULT_PATH=str(root)),
        check=True,
        capture_output=True,
        text=True,
    )
    seconds, rss_kb, code, out, err = json.loads(launched.stdout)
    if code != 0:
        raise SystemExit(f"vault index failed ({code}): {err}")
    return seconds, rss_kb / 1024, out


def run_python_pass() -> float:
    """Wall seconds of `python -c pass` through the same launcher: the interpreter's share."""
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, "-c", "pass"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(launched.stdout)[0]


def throughput(work: Path, args: argparse.Namespace, embedder: Any) -> dict[str, Any]:
    source = work / "throughput"
    generate(source, args.throughput_files, pool=None, seed=11)
    texts = unit_texts(source)
    print(
        f"throughput vault: {args.throughput_files} files, {len(texts)} distinct units",
        file=sys.stderr,
    )
    list(embedder._model.embed(texts[:BATCH_SIZE], batch_size=BATCH_SIZE))  # warm-up
    by_length = sorted(texts, key=len)
    raw, raw_sorted, full, seconds_index = [], [], [], []
    for round_number in range(1, args.rounds + 1):
        started = time.perf_counter()
        vectors = list(embedder._model.embed(texts, batch_size=BATCH_SIZE))
        raw.append(len(vectors) / (time.perf_counter() - started))
        started = time.perf_counter()
        vectors = list(embedder._model.embed(by_length, batch_size=BATCH_SIZE))
        raw_sorted.append(len(vectors) / (time.perf_counter() - started))
        root = work / f"throughput-{round_number}"
        shutil.copytree(source, root)
        with Vault(root, {"index.batch_size": BATCH_SIZE}) as vault:
            started = time.perf_counter()
            # The model raw fastembed runs (one thread), not a second one with spare threads.
            report = vault.index(spare_cores=False)
            elapsed = time.perf_counter() - started
        assert report.units_embedded == len(texts), (report, len(texts))
        full.append(report.units_embedded / elapsed)
        seconds_index.append(elapsed)
        shutil.rmtree(root)
        print(
            f"  round {round_number}: raw fastembed {raw[-1]:6.1f} units/s "
            f"({raw_sorted[-1]:6.1f} sorted by length), vault index {full[-1]:6.1f} units/s",
            file=sys.stderr,
        )
    return {
        "units": len(texts),
        "units_total": report.units,
        "files": report.files,
        "raw": raw,
        "raw_sorted": raw_sorted,
        "index": full,
        "index_seconds": seconds_index,
        "rss": rss_mb(),
    }


def noop(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    root = work / "noop"
    if args.keep and (Path(args.keep) / "noop" / ".vault").is_dir():
        root = Path(args.keep) / "noop"
        print(f"no-op vault: reusing {root}", file=sys.stderr)
    else:
        generate(root, args.files, pool=args.pool, seed=23)
        print(f"no-op vault: {args.files} files, building its index ...", file=sys.stderr)
        started = time.perf_counter()
        with Vault(root) as vault:
            built = vault.index()
        print(
            f"  built in {time.perf_counter() - started:.1f} s: {built.files} files, "
            f"{built.units} units, {built.units_embedded} distinct texts embedded",
            file=sys.stderr,
        )
    before = tree_digest(root)
    in_process, cli, startup = [], [], []
    for _ in range(args.runs):  # interleaved, so that both kinds meet the same machine load
        started = time.perf_counter()
        with Vault(root) as vault:
            report = vault.index()
        in_process.append(time.perf_counter() - started)
        assert report.units_embedded == 0 and report.unchanged == report.files, report
        cli.append(run_cli_index(root))
        startup.append(run_python_pass())
    rss_in_process = rss_mb()
    for _, _, out in cli:
        assert out.startswith(f"0 new, 0 modified, 0 moved, 0 deleted, {report.files} unchanged")
        assert "(0 new)" in out
    unchanged = tree_digest(root) == before
    profile = None
    if args.profile:
        profiler = cProfile.Profile()
        with Vault(root) as vault:
            profiler.runcall(vault.index)
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(25)
        profile = stream.getvalue()
    return {
        "files": report.files,
        "units": report.units,
        "in_process": in_process,
        "startup": startup,
        "cli": [s for s, _, _ in cli],
        "cli_rss": [r for _, r, _ in cli],
        "rss": rss_in_process,
        "cache_unchanged": unchanged,
        "profile": profile,
        "cache_bytes": sum(p.stat().st_size for p in (root / ".vault").rglob("*") if p.is_file()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=10_000, help="files of the no-op vault")
    parser.add_argument(
        "--pool", type=int, default=1_500, help="distinct entries the no-op vault draws on"
    )
    parser.add_argument("--throughput-files", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5, help="no-op runs of each kind")
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="work in DIR and keep it (reuses the no-op vault's index on the next run)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile one no-op run")
    args = parser.parse_args()

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="vault-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    for leftover in work.glob("throughput*"):
        shutil.rmtree(leftover)
    try:
        rss_start = rss_mb()
        started = time.perf_counter()
        embedder = shared_embedder(BUNDLED_MODEL)
        load_seconds = time.perf_counter() - started
        rss_model = rss_mb()
        tp = throughput(work, args, embedder)
        nop = noop(work, args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    med = statistics.median
    ratio = med(tp["index"]) / med(tp["raw"])
    ratio_sorted = med(tp["index"]) / med(tp["raw_sorted"])  # the pipeline's own overhead
    noop_in, noop_cli = med(nop["in_process"]), med(nop["cli"])
    print()
    print(
        f"vault-memory indexing benchmark ({os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}, model load {load_seconds:.2f} s)"
    )
    print()
    print(f"{'measure':58} {'median':>10} {'runs':>30}  target")
    rows = [
        (
            f"raw fastembed, {tp['units']} unit texts in file order, batch {BATCH_SIZE}",
            f"{med(tp['raw']):.1f} u/s",
            tp["raw"],
            "",
        ),
        (
            "raw fastembed, the same texts sorted by length",
            f"{med(tp['raw_sorted']):.1f} u/s",
            tp["raw_sorted"],
            "",
        ),
        (
            f"full vault index, {tp['files']} files / {tp['units_total']} units",
            f"{med(tp['index']):.1f} u/s",
            tp["index"],
            "",
        ),
        (
            "  ratio index / raw in file order",
            f"{ratio:.3f}",
            [],
            "≥ 0.9 " + ("ok" if ratio >= 0.9 else "MISSED"),
        ),
        (
            "  ratio index / raw sorted by length",
            f"{ratio_sorted:.3f}",
            [],
            "≥ 0.9 " + ("ok" if ratio_sorted >= 0.9 else "MISSED"),
        ),
        (
            f"no-op Vault.index(), {nop['files']} files / {nop['units']} units",
            f"{noop_in:.3f} s",
            nop["in_process"],
            "≤ 1 s " + ("ok" if noop_in <= 1 else "MISSED"),
        ),
        (
            f"no-op `{' '.join(Path(c).name for c in cli_command())} index` child process, "
            f"{nop['files']} files",
            f"{noop_cli:.3f} s",
            nop["cli"],
            "≤ 1 s " + ("ok" if noop_cli <= 1 else "MISSED"),
        ),
        (
            "  of which `python -c pass` (interpreter start-up)",
            f"{med(nop['startup']):.3f} s",
            nop["startup"],
            "",
        ),
        (
            "  .vault/ byte-for-byte unchanged by the no-op runs",
            str(nop["cache_unchanged"]),
            [],
            "",
        ),
    ]
    for label, median, runs, target in rows:
        shown = " ".join(f"{r:.3f}" if r < 10 else f"{r:.1f}" for r in runs)
        print(f"{label:58} {median:>10} {shown:>30}  {target}")
    print()
    print("peak RSS (ru_maxrss)")
    print(f"  {'this process at start (imports)':56} {rss_start:8.0f} MB")
    print(f"  {'after loading the model':56} {rss_model:8.0f} MB")
    print(f"  {'after the throughput rounds':56} {tp['rss']:8.0f} MB")
    print(f"  {'after building and no-op indexing the big vault':56} {nop['rss']:8.0f} MB")
    print(f"  {'`vault index` child, no-op (median of runs)':56} {med(nop['cli_rss']):8.0f} MB")
    print(f"  .vault/ of the {nop['files']}-file vault: {nop['cache_bytes'] / 1e6:.1f} MB")
    if nop["profile"]:
        print()
        print(nop["profile"])


if __name__ == "__main__":
    main()
