"""The index on PostgreSQL + pgvector against SQLite, in one run: index throughput
and query latency at 100,000 synthetic units (1,000,000 with --million). A benchmark, not a
test.

    python bench/postgres.py                   # 100k units; starts its own server (pgserver)
    python bench/postgres.py --units 20000     # a quicker look
    python bench/postgres.py --backends sqlite,postgres,postgres-phase1   # both searches
    python bench/postgres.py --million --hnsw-memory 3GB --keep   # 1M units: long
    python bench/postgres.py --million --reuse --dsn URL --backends postgres  # queries again
    python bench/postgres.py --dsn postgresql://user@host/db   # a server of your own
    python bench/postgres.py --reuse --dsn URL --vs ../other-checkout \
        --results bench/results/postgres-side-by-side.json   # two versions, query by query
    python bench/postgres.py --reuse --dsn URL --vs ../main --vs-dsn URL2  # across a schema
        # change: URL2 a copy of the database made before this checkout migrated URL's

The vault is bench/search.py's synthetic daily logs, indexed keyword-only by the real indexer
(VAULT_MODEL_DISABLED=1), then given one random normalised 384-d vector per distinct unit text
under the bundled model's id, written through each backend's own `add_embeddings` (on the
server: into the pgvector column and its HNSW index). Queries are embedded by the real model.
What is loaded how, so that both indexes are the ones our own code builds:
- units: `vault index --rebuild` on each copy (SQLite: its batch of inserts a file; the
  server: one COPY of a file's units, so its term-count trigger runs once a file);
- vectors: 5,000 a transaction through `add_embeddings` (the server: one INSERT each,
  pipelined), then `dims` recorded, which builds the model's HNSW index once, in bulk, with
  `--hnsw-memory` (give it the graph's size: about 2 KB a vector) and the server's
  parallel maintenance workers (2 by PostgreSQL's default);
- the bench's own server gets `--shared-buffers` (1GB by default, PostgreSQL's is 128 MB):
  the HNSW index of 100,000 vectors is 172 MB. With --million, 4GB: a million units' HNSW
  index and vectors are 2.9 GB and their units 0.7 GB, and with 1GB the server read them
  again from the page cache as queries went (warm hybrid p50 153-200 ms from one run to the
  next, against 138-158 ms with 4GB once its buffers had filled). The results name the
  server's setting.
Where the time of a full run goes (2 shared cores, load 7 to 10): a 20,000-unit PostgreSQL
index takes 78 s (36 s of server CPU), its vectors 75 s, nearly all of it the HNSW build
(writing 5,000 vectors takes 1.7 s). A 1M run is about two hours on such a machine.

Measured, per backend: indexing (files -> units, wall and CPU seconds of this process; on the
server also the CPU of the PostgreSQL processes), vectors written, the first query, then warm
hybrid and keyword queries (p50/p95). "postgres" searches on the server (phase 2: candidates
from its HNSW and full-text indexes, one statement a query); "postgres-phase1" reads the whole
unit table into this process (`[search] on_server = false`). On the server also the bare
top-50 by HNSW and by `ts_rank_cd` over the GIN index, filtered by scope in SQL.

With --vs CHECKOUT (and --reuse: the indexes a --keep run left), no indexing: a process per
checkout and backend searches the same indexes, query by query in turn, so that both versions
see the same load; per pair the medians of wall and CPU time, the CPU of its server
connection, and how many top fives each PostgreSQL search shares with SQLite's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _harness import load_bench, write_results  # this checkout's vault_memory first

QUERIES = [
    "which database did we pick for billing?",
    "what does Zoë prefer when someone explains",
    "when is Priya's birthday",
    "why did the invoice renderer fail on fonts",
    "who owns the cutover runbook",
    "ERR_LEDGER_409 root cause",
    "VAT rounding escalation",
    "rollback plan for the schema change",
    "Kafka benchmark rows per second",
    "incident payments gateway failover",
    "pgbouncer connection pool",
    "Lumo Energy invoices",
    "feature flag for the refund handler",
    "postmortem shared with the customer",
    "retry budget in ledger-api",
    "who pairs on the export worker",
    "Grafana dashboard SLA",
    "tax-engine timeout under load",
    "Alembic migration script",
    "Terraform staging data",
]


def _load(name: str) -> Any:
    return load_bench(name)


def server_cpu() -> float:
    """CPU seconds used so far by the PostgreSQL processes of this machine (/proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)
            if not fields[0].endswith("(postgres"):
                continue
            parts = fields[1].split()
            total += (int(parts[11]) + int(parts[12]) + int(parts[13]) + int(parts[14])) / ticks
        except (OSError, IndexError, ValueError):
            continue
    return total


class Timer:
    def __enter__(self) -> Timer:
        self.wall, self.cpu, self.server = time.perf_counter(), time.process_time(), server_cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu
        self.server = server_cpu() - self.server


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


def rss_mb() -> float:
    """This process's resident memory now, in MB (/proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def say(text: str) -> None:
    print(text, flush=True)  # as it is measured: a long run shows how far it got


FIGURES: dict[str, Any] = {}  # what bench/results/postgres.json records, by backend


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _reader(
    root: Path, settings: dict[str, Any], offset: int, runs: int, start: Any, out: Any
) -> None:
    """One reader process: a `Vault` (and a server connection) of its own, one untimed
    query, then `runs` timed ones once every reader is ready; puts (times, CPU seconds)."""
    from vault_memory import Vault

    with Vault(root, settings) as vault:
        vault.search(QUERIES[offset % len(QUERIES)], fresh=False)  # warm: not timed
        start.wait()
        cpu = time.process_time()
        times = []
        for i in range(runs):
            began = time.perf_counter()
            vault.search(QUERIES[(offset + i) % len(QUERIES)], fresh=False)
            times.append(time.perf_counter() - began)
        out.put((times, time.process_time() - cpu))


def concurrent_readers(
    root: Path, settings: dict[str, Any], readers: int, runs: int
) -> tuple[list[float], float, float]:
    """Warm hybrid query times of `readers` processes at once (as agents run: a process
    each, so no reader waits for another's Python), each running `runs` queries; also the
    CPU seconds per query of the readers and of the server's processes meanwhile."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # no fork of a process holding a model
    start, out = context.Barrier(readers + 1), context.Queue()
    procs = [
        context.Process(target=_reader, args=(root, settings, n, runs, start, out))
        for n in range(readers)
    ]
    for proc in procs:
        proc.start()
    start.wait()
    server = server_cpu()
    results = [out.get() for _ in procs]
    server = server_cpu() - server
    for proc in procs:
        proc.join()
    times = [t for got, _ in results for t in got]
    return times, sum(cpu for _, cpu in results) / len(times), server / len(times)


def measure(
    name: str,
    root: Path,
    settings: dict[str, Any],
    runs: int,
    reuse: bool = False,
    readers: int = 0,
) -> None:
    """Index `root` (unless `reuse`: it and the server hold an index of it already), add the
    vectors, then time queries; each figure printed when it is measured."""
    from vault_memory import Vault

    say(f"\n{name}{' (indexed before)' if reuse else ''}: load {os.getloadavg()[0]:.1f}")
    if not reuse:
        os.environ["VAULT_MODEL_DISABLED"] = "1"
        try:
            with Vault(root, settings) as vault, Timer() as indexing:
                report = vault.index(rebuild=True)
        finally:
            del os.environ["VAULT_MODEL_DISABLED"]
        say(f"  {report.files:,} files, {report.units:,} units")
        say(
            f"  index (keyword-only)  {indexing.wall:8.1f} s wall  {indexing.cpu:7.1f} s CPU"
            f" here  {indexing.server:7.1f} s CPU server  {report.units / indexing.wall:8.0f}"
            " units/s"
        )
    with Vault(root, settings) as vault:
        store = vault.cache.store
        if not reuse:
            with Timer() as vectoring:
                distinct = (_load("search")).add_vectors(store)
            say(
                f"  vectors written       {vectoring.wall:8.1f} s wall  {vectoring.cpu:7.1f} s"
                f" CPU here  {vectoring.server:7.1f} s CPU server"
                f"  {distinct / vectoring.wall:8.0f} vectors/s ({distinct:,} distinct texts)"
            )
        vault.cache.query_embedder().embed_query("warm the model up")  # not timed
        with Timer() as first:
            vault.search(QUERIES[0], fresh=False)
        say(
            f"  first query                 {first.wall * 1000:8.0f} ms wall"
            f"  {first.cpu * 1000:6.0f} ms CPU  (process RSS {rss_mb():,.0f} MB)"
        )
        figures = FIGURES.setdefault(name, {})
        figures["first_query_ms"] = round(first.wall * 1000, 1)
        if settings:  # what the server may keep in memory decides how much it reads again
            figures["shared_buffers"] = store.conn.execute("SHOW shared_buffers").fetchone()[0]
        for mode in ("hybrid", "keyword"):
            samples = []
            cpu, server = time.process_time(), server_cpu()
            for i in range(runs):
                started = time.perf_counter()
                vault.search(QUERIES[i % len(QUERIES)], mode=mode, fresh=False)
                samples.append(time.perf_counter() - started)
            # a query this process has not asked before (the first pass; the mode's first
            # query aside) and one asked again: a server search keeps what it derived of
            # the candidates' texts, the unit table derived it for every unit when built
            first_pass = samples[1 : len(QUERIES)] if mode == "hybrid" else []
            again = samples[len(QUERIES) :] if mode == "hybrid" else []
            figures[f"warm_{mode}_ms"] = {
                "p50": round(statistics.median(samples) * 1000, 1),
                "p95": round(percentile(samples, 0.95) * 1000, 1),
                "cpu_here_per_query": round((time.process_time() - cpu) / runs * 1000, 1),
                "cpu_server_per_query": round((server_cpu() - server) / runs * 1000, 1),
            }
            if first_pass and again:
                figures[f"warm_{mode}_ms"] |= {
                    "p50_asked_first": round(statistics.median(first_pass) * 1000, 1),
                    "p50_asked_again": round(statistics.median(again) * 1000, 1),
                }
            say(
                f"  warm {mode:<17} {percentiles(samples)}   ({runs} queries, load"
                f" {os.getloadavg()[0]:.1f}, RSS {rss_mb():,.0f} MB)"
            )
            if first_pass and again:
                say(
                    f"    asked first p50 {statistics.median(first_pass) * 1000:7.1f} ms,"
                    f" asked again p50 {statistics.median(again) * 1000:7.1f} ms"
                )
        if readers:
            together, cpu, server = concurrent_readers(
                root, settings, readers, max(5, runs // readers)
            )
            one = figures["warm_hybrid_ms"]["p95"]
            figures[f"{readers}_readers_hybrid_ms"] = {
                "p50": round(statistics.median(together) * 1000, 1),
                "p95": round(percentile(together, 0.95) * 1000, 1),
                "queries": len(together),
                "cpu_readers_per_query": round(cpu * 1000, 1),
                "cpu_server_per_query": round(server * 1000, 1),
                "p95_over_one_reader_p95": round(percentile(together, 0.95) * 1000 / one, 2),
            }
            say(
                f"  {readers} readers at once hybrid {percentiles(together)}  ({cpu * 1000:.0f} ms"
                f" CPU readers + {server * 1000:.0f} ms CPU server a query; p95"
                f" {figures[f'{readers}_readers_hybrid_ms']['p95_over_one_reader_p95']}x one"
                f" reader's; {os.cpu_count()} cores)"
            )
        if settings:  # the server's bare top-k lists, without ranking
            import numpy as np

            from vault_memory.index import terms_of
            from vault_memory.index.pgtext import tsquery_literal

            encoder = vault.cache.query_embedder()
            model = vault.cache.model_id
            extra: dict[str, list[float]] = {"HNSW top-50": [], "ts_rank_cd top-50": []}
            for i in range(runs):
                query = QUERIES[i % len(QUERIES)]
                vector = np.asarray(encoder.embed_query(query), dtype=np.float32).tobytes()
                started = time.perf_counter()
                store.nearest(model, vector, [""], 50)
                extra["HNSW top-50"].append(time.perf_counter() - started)
                started = time.perf_counter()
                store.keyword(tsquery_literal(terms_of(query, query=True)), [""], 50)
                extra["ts_rank_cd top-50"].append(time.perf_counter() - started)
            for what, samples in extra.items():
                say(f"  server {what:<15} {percentiles(samples)}")


def _version_worker(code: str, root: Path, settings: dict[str, Any], pipe: Any) -> None:
    """One searcher process running the checkout at `code` (its `vault_memory` first on the
    path): two untimed passes over the queries, then the query and mode it is sent, each
    answered with (wall, CPU here, CPU of its server connection's process, top five)."""
    sys.path[:0] = [code]
    from vault_memory import Vault

    with Vault(root, settings) as vault:
        for query in QUERIES * 2:  # warm: not timed
            vault.search(query, fresh=False)
        pid = None
        if settings:
            conn = vault.cache.store.conn
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            conn.rollback()
        pipe.send(str(Path(sys.modules["vault_memory"].__file__ or "").parent.parent))
        while (asked := pipe.recv()) is not None:
            query, mode = asked
            server = _process_cpu(pid)
            cpu, began = time.process_time(), time.perf_counter()
            hits = vault.search(query, mode=mode, fresh=False)
            wall = time.perf_counter() - began
            pipe.send(
                (
                    wall,
                    time.process_time() - cpu,
                    _process_cpu(pid) - server,
                    [(h.path, h.start_line, h.end_line) for h in hits[:5]],
                )
            )


def _process_cpu(pid: int | None) -> float:
    """CPU seconds of process `pid` so far (0 for none): a server connection's backend."""
    if pid is None:
        return 0.0
    parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def side_by_side(
    versions: dict[str, Path],
    roots: dict[str, tuple[Path, dict[str, Any]]],
    runs: int,
    vs_dsn: str = "",
) -> None:
    """Warm queries of every (checkout, backend) pair, round-robin, query by query, so that
    all of them see the same load: a process each, reading the same indexes (a --keep run's).
    With `vs_dsn`, the other checkout's PostgreSQL index is the one there (a copy of the
    database at that checkout's schema, when this one migrated its own). Records medians
    (wall, CPU here) and the server connection's CPU a query, and how many top fives each
    PostgreSQL search shares with SQLite of the same checkout."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    workers: dict[tuple[str, str], tuple[Any, Any]] = {}
    for label, code in versions.items():
        for backend, (root, settings) in roots.items():
            if settings and vs_dsn and label == "vs":
                settings = {**settings, "index.dsn": vs_dsn}
            mine, theirs = context.Pipe()
            proc = context.Process(target=_version_worker, args=(str(code), root, settings, theirs))
            proc.start()
            workers[label, backend] = (proc, mine)
    for (label, backend), (_, pipe) in workers.items():
        say(f"  {label} {backend}: vault_memory of {pipe.recv()}")
    got: dict[tuple[str, str, str], list[tuple[float, float, float, Any]]] = {}
    for mode in ("hybrid", "keyword"):
        for i in range(runs):
            for key, (_, pipe) in workers.items():
                pipe.send((QUERIES[i % len(QUERIES)], mode))
                got.setdefault((*key, mode), []).append(pipe.recv())
    for proc, pipe in workers.values():
        pipe.send(None)
        proc.join()
    figures = FIGURES.setdefault("side_by_side", {"runs": runs})
    figures["checkouts"] = {label: _commit_of(code) for label, code in versions.items()}
    for (label, backend, mode), samples in got.items():
        walls = [w for w, _, _, _ in samples]
        figures.setdefault(f"{backend} ({label})", {})[f"warm_{mode}_ms"] = entry = {
            "p50": round(statistics.median(walls) * 1000, 1),
            "p95": round(percentile(walls, 0.95) * 1000, 1),
            "cpu_here_p50": round(statistics.median(c for _, c, _, _ in samples) * 1000, 1),
            "cpu_server_per_query": round(statistics.mean(s for _, _, s, _ in samples) * 1000, 1),
        }
        say(
            f"  {backend + ' (' + label + ')':<28} {mode:<8} {percentiles(walls)}"
            f"  CPU here p50 {entry['cpu_here_p50']:6.1f} ms"
            f"  server {entry['cpu_server_per_query']:6.1f} ms a query"
        )
        if backend != "sqlite" and ("sqlite", label) in {(b, v) for v, b in workers}:
            local = got[label, "sqlite", mode][: len(QUERIES)]
            tops = list(zip(samples[: len(QUERIES)], local, strict=True))
            entry["top5_as_sqlite"] = sum(a[3] == b[3] for a, b in tops)
            entry["top5_shared_with_sqlite"] = sum(len(set(a[3]) & set(b[3])) for a, b in tops)
            say(
                f"    top five as SQLite's: {entry['top5_as_sqlite']} of {len(tops)} queries,"
                f" {entry['top5_shared_with_sqlite']} of {5 * len(tops)} hits shared"
            )


def _commit_of(code: Path) -> str:
    """The commit a checkout is at (what a result records of it: never a path of this
    machine), or "unknown" for a folder outside git (an exported tree)."""
    import subprocess

    done = subprocess.run(
        ["git", "-C", str(code), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def configure(server: Any, dsn: str, shared_buffers: str) -> None:
    """The bench's own server with `shared_buffers` (then restarted): PostgreSQL's 128 MB
    default holds less than the HNSW index of 100,000 vectors (172 MB), so each search
    would copy thousands of its pages in from the OS cache."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
    server.pause()
    server.resume()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--million", action="store_true", help="1,000,000 units (long)")
    parser.add_argument("--dsn", default="", help="a PostgreSQL server with pgvector")
    parser.add_argument("--root", type=Path, default=Path("/tmp/vault-pg-bench"))
    parser.add_argument("--runs", type=int, default=60, help="timed queries per mode")
    parser.add_argument(
        "--readers", type=int, default=10, help="concurrent readers measured (0: none)"
    )
    parser.add_argument(
        "--results", type=Path, default=None, help="JSON out (default bench/results/postgres.json)"
    )
    parser.add_argument(
        "--backends", default="sqlite,postgres", help="which to measure, in this order"
    )
    parser.add_argument(
        "--hnsw-memory",
        default="",
        help="the server's build memory for the HNSW index (e.g. 3GB at 1M)",
    )
    parser.add_argument(
        "--shared-buffers",
        default=None,
        help="the bench's own server's shared_buffers (default 1GB, 4GB with --million;"
        " '' keeps PostgreSQL's 128MB)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="leave the server and the indexed copies (then time queries again with --reuse --dsn)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="time the queries of the copies indexed by a --keep run",
    )
    parser.add_argument(
        "--vs",
        type=Path,
        default=None,
        metavar="CHECKOUT",
        help="with --reuse: time this checkout and the one at CHECKOUT side by side",
    )
    parser.add_argument(
        "--vs-dsn",
        default="",
        help="with --vs: the other checkout's server (a copy of the database made before this"
        " checkout migrated it: CREATE DATABASE ... TEMPLATE ...)",
    )
    args = parser.parse_args()
    if args.hnsw_memory:
        from vault_memory.index import pgstore

        pgstore.HNSW_BUILD_MEMORY = args.hnsw_memory
    units = 1_000_000 if args.million else args.units
    search_bench = _load("search")
    base = args.root / f"vault-{units}"
    if not (base / "MEMORY.md").exists():
        shutil.rmtree(base, ignore_errors=True)
        print(f"generating {base} (about {units:,} units) ...", flush=True)
        search_bench.generate_vault(base, units)
    copies = {}
    for name in ("sqlite", "postgres"):
        copies[name] = args.root / f"{name}-{units}"
        if not args.reuse:
            shutil.rmtree(copies[name], ignore_errors=True)
            shutil.copytree(base, copies[name], ignore=shutil.ignore_patterns(".vault"))
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on the way out
    server = None
    dsn = args.dsn
    if not dsn:
        from tests.support import pg_server as pg

        folder = pg.binaries()
        if folder is None:
            raise SystemExit("no --dsn and no pgserver wheel: pip install pgserver")
        server = pg.start_server(folder)
        dsn = server.dsn
        buffers = args.shared_buffers
        if buffers is None:
            buffers = "4GB" if args.million else "1GB"
        if buffers:
            configure(server, dsn, buffers)
        if args.keep:
            print(f"server: {dsn} (data in {server.folder}; kept)", flush=True)
    say(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    try:
        if args.vs is not None:
            if not args.reuse:
                raise SystemExit("--vs times the indexes of a --keep run: give --reuse --dsn")
            server_settings = {
                "index.backend": "postgres",
                "index.dsn": dsn,
                "index.vault_id": f"bench-{units}",
            }
            roots = {
                backend: (copies[backend], {} if backend == "sqlite" else server_settings)
                for backend in args.backends.split(",")
            }
            versions = {"this": Path(__file__).resolve().parent.parent, "vs": args.vs.resolve()}
            side_by_side(versions, roots, args.runs, args.vs_dsn)
            return record(units, args)
        for backend in args.backends.split(","):
            if backend == "sqlite":
                measure("SQLite", copies["sqlite"], {}, args.runs, args.reuse, args.readers)
            elif backend in ("postgres", "postgres-phase1"):
                # phase 1 reads the unit table into this process; it reuses what the
                # server holds (give it after "postgres", or with --reuse)
                phase1 = backend == "postgres-phase1"
                measure(
                    "PostgreSQL + pgvector"
                    + (", phase 1 (the whole table here)" if phase1 else ""),
                    copies["postgres"],
                    {
                        "index.backend": "postgres",
                        "index.dsn": dsn,
                        "index.vault_id": f"bench-{units}",
                        "search.on_server": not phase1,
                    },
                    args.runs,
                    args.reuse or phase1,
                    args.readers,
                )
    finally:
        if server is not None and not args.keep:
            server.stop()
    print(f"load after: {os.getloadavg()}")
    record(units, args)


def record(units: int, args: argparse.Namespace) -> None:
    """bench/results/postgres.json (or --results): this run's figures, machine and versions."""
    figures = {"units": units, "runs": args.runs, "readers": args.readers, **FIGURES}
    out = write_results(
        "postgres",
        figures,
        extra_versions=("psycopg", "pgserver"),
        path=args.results,
        load_after=[round(x, 1) for x in os.getloadavg()],
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
