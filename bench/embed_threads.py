"""Embedding speed of the bundled model for different onnxruntime thread counts.

Usage: python bench/embed_threads.py [--texts 500] [--runs 3]
       python bench/embed_threads.py --sessions [--rounds 5]

--sessions compares the two onnxruntime sessions the query encoder uses (unoptimised: quick
to open, slower per query; fully optimised: slow to open, fast per query), each in fresh
processes: open time, first query, median of 20 further queries.

Each setting runs in a fresh process, so the import and load times are what a CLI start pays.
Throughput is chunks/s (median of --runs passes over the texts, batch size 32), after one
warm-up batch; query latency is the median of 50 single queries.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness  # noqa: F401 - this checkout's vault_memory first on sys.path

SETTINGS = ["1", "2", "default"]

# fmt: off
SUBJECTS = [
    "the billing service", "our PostgreSQL cluster", "the nightly backup job", "Alice",
    "the onboarding doc", "the search index", "the mobile app release", "Bob from finance",
    "the staging server", "the API rate limiter", "the dentist appointment", "the quarterly plan",
    "the CI pipeline", "the customer support queue", "the Kubernetes upgrade", "my running plan",
]
VERBS = [
    "needs", "was moved to", "depends on", "should wait for", "broke after", "is blocked by",
    "prefers", "was fixed by", "will switch to", "keeps failing because of",
]
OBJECTS = [
    "a new connection pool", "the Friday deploy window", "short answers with code first",
    "error E1042 in the logs", "a cheaper storage tier", "the vendor's new contract",
    "a retry with exponential backoff", "the design review on Tuesday", "more test coverage",
    "the timezone bug in the scheduler", "a two-week freeze", "the migration script",
]
TAILS = [
    "", " #decision", " #todo", " #important", " (see [[Architecture]])", " — confirmed by email.",
    " We agreed to revisit next month.", " Nobody objected.", " Ask again if it happens twice.",
]
# fmt: on


def make_texts(n: int, seed: int = 7) -> list[str]:
    """`n` note-like chunks of 1-5 lines, 50-400 characters, the same on every run."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < n:
        lines = []
        for _ in range(rng.randint(1, 5)):
            sentence = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}."
            lines.append("- " + sentence[0].upper() + sentence[1:] + rng.choice(TAILS))
        text = "\n".join(lines)
        if 50 <= len(text) <= 400:
            texts.append(text)
    return texts


def measure(threads: str, n_texts: int, runs: int) -> dict[str, object]:
    t0 = time.perf_counter()
    import fastembed  # noqa: F401  (timed on its own: it dominates a cold start)

    t1 = time.perf_counter()
    from vault_memory.index import embedder as emb

    onnx = emb.bundled_onnx_path()
    t = time.perf_counter()
    emb.verify_sha256(onnx)
    sha_s = time.perf_counter() - t

    with tempfile.TemporaryDirectory() as cache:
        model_dir = Path(cache) / emb.BUNDLED_DIR_NAME
        t = time.perf_counter()
        emb.assemble(model_dir, onnx)
        links_first_s = time.perf_counter() - t
        t = time.perf_counter()
        emb.assemble(model_dir, onnx)
        links_again_s = time.perf_counter() - t

        t2 = time.perf_counter()
        model = emb.load_embedder(
            cache_dir=Path(cache), threads=None if threads == "default" else int(threads)
        )
        t3 = time.perf_counter()

    texts = make_texts(n_texts)
    model.embed(texts[:32])  # warm-up
    rates, cpu_ms = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        model.embed(texts, batch_size=32)
        rates.append(len(texts) / (time.perf_counter() - t))
        cpu_ms.append((time.process_time() - c) * 1000 / len(texts))
    latencies = []
    for i in range(50):
        t = time.perf_counter()
        model.embed_query(f"what did we decide about {SUBJECTS[i % len(SUBJECTS)]}?")
        latencies.append(time.perf_counter() - t)
    return {
        "import_s": t1 - t0,
        "load_s": t3 - t2,
        "sha256_ms": sha_s * 1000,
        "links_ms": [links_first_s * 1000, links_again_s * 1000],
        "chunks_per_s": rates,
        "cpu_ms_per_chunk": cpu_ms,
        "query_ms": statistics.median(latencies) * 1000,
    }


def measure_query(threads: int) -> dict[str, float]:
    """The query path as `vault search` and the watcher run it (index/embedder.py
    QueryEncoder), in this fresh process: import + open + first query (a one-shot search),
    then, once the optimised session answers, the median of 40 queries (a watcher's)."""
    c0, w0 = time.process_time(), time.perf_counter()
    from vault_memory.index import embedder as emb

    encoder = emb.QueryEncoder(threads=threads)
    encoder.embed_query("what did we decide about the billing service?")
    cold_cpu, cold_wall = time.process_time() - c0, time.perf_counter() - w0
    encoder.embed_query("and the nightly backup job?")
    encoder.optimize()
    encoder.optimized.wait(60)
    walls, cpus = [], []
    for i in range(40):
        t, c = time.perf_counter(), time.process_time()
        encoder.embed_query(f"what did we decide about {SUBJECTS[i % len(SUBJECTS)]}?")
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return {
        "cold_cpu_s": cold_cpu,
        "cold_wall_s": cold_wall,
        "warm_ms": statistics.median(walls) * 1000,
        "warm_cpu_ms": statistics.median(cpus) * 1000,
    }


def measure_session(level: str) -> dict[str, float]:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from vault_memory.index import embedder as emb

    tokenizer = Tokenizer.from_file(str(emb.TOKENIZER_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = {
        "unoptimised": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "optimised": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[level]
    t = time.perf_counter()
    session = ort.InferenceSession(
        str(emb.bundled_onnx_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    open_s = time.perf_counter() - t
    times = []
    for i in range(21):
        encoding = tokenizer.encode(f"what did we decide about {SUBJECTS[i % len(SUBJECTS)]}?")
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        t = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - t)
    return {
        "open_s": open_s,
        "first_ms": times[0] * 1000,
        "query_ms": statistics.median(times[1:]) * 1000,
    }


def sessions_main(rounds: int) -> None:
    results: dict[str, list[dict[str, float]]] = {"unoptimised": [], "optimised": []}
    for _ in range(rounds):
        for level in results:
            out = subprocess.run(
                [sys.executable, __file__, "--session", level],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            results[level].append(json.loads(out.strip().splitlines()[-1]))
    print(
        f"{'session':>12} {'open s':>7} {'first ms':>9} {'query ms':>9} {'open+first s':>13}"
        f"   ({rounds} fresh processes each, medians)"
    )
    for level, rs in results.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("open_s", "first_ms", "query_ms")}
        total = statistics.median(r["open_s"] + r["first_ms"] / 1000 for r in rs)
        print(
            f"{level:>12} {med['open_s']:>7.3f} {med['first_ms']:>9.1f} {med['query_ms']:>9.1f}"
            f" {total:>13.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3, help="passes over the texts per process")
    parser.add_argument(
        "--rounds", type=int, default=1, help="fresh processes per setting, interleaved"
    )
    parser.add_argument("--one", choices=SETTINGS, help=argparse.SUPPRESS)
    parser.add_argument("--sessions", action="store_true", help="compare the query sessions")
    parser.add_argument("--session", help=argparse.SUPPRESS)
    parser.add_argument("--query-one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.query_one:
        print(json.dumps(measure_query(args.query_one)))
        sys.stdout.flush()
        os._exit(0)  # as the CLI ends (onnxruntime's threads are not waited for)

    if args.session:
        print(json.dumps(measure_session(args.session)))
        return
    if args.sessions:
        sessions_main(args.rounds)
        return

    if args.one:
        print(json.dumps(measure(args.one, args.texts, args.runs)))
        return

    texts = make_texts(args.texts)
    lengths = sorted(len(t) for t in texts)
    print(
        f"{len(texts)} texts, {lengths[0]}-{lengths[-1]} chars (median "
        f"{lengths[len(lengths) // 2]}), batch 32, {args.runs} runs x {args.rounds} rounds, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start"
    )
    results: dict[str, list[dict[str, Any]]] = {setting: [] for setting in SETTINGS}
    root = Path(__file__).resolve().parent.parent
    for _ in range(args.rounds):  # interleaved, so drifting background load hits all alike
        for setting in SETTINGS:
            command = [sys.executable, __file__, "--one", setting]
            command += ["--texts", str(args.texts), "--runs", str(args.runs)]
            out = subprocess.run(
                command, check=True, capture_output=True, text=True, cwd=root
            ).stdout
            results[setting].append(json.loads(out.strip().splitlines()[-1]))

    print(
        f"{'threads':>8} {'chunks/s':>9} {'cpu ms/chunk':>13} {'query ms':>9} {'load s':>7} "
        f"{'import s':>9} {'sha256 ms':>10}  all runs (chunks/s)"
    )
    for setting, rs in results.items():
        rates = [x for r in rs for x in r["chunks_per_s"]]
        cpu = [x for r in rs for x in r["cpu_ms_per_chunk"]]
        med = {k: statistics.median(r[k] for r in rs) for k in ("query_ms", "load_s", "import_s")}
        sha = statistics.median(r["sha256_ms"] for r in rs)
        print(
            f"{setting:>8} {statistics.median(rates):>9.1f} {statistics.median(cpu):>13.2f} "
            f"{med['query_ms']:>9.2f} {med['load_s']:>7.3f} {med['import_s']:>9.3f} "
            f"{sha:>10.1f}  {' '.join(f'{x:.0f}' for x in rates)}"
        )
    links = statistics.median(r["links_ms"][0] for rs in results.values() for r in rs)
    again = statistics.median(r["links_ms"][1] for rs in results.values() for r in rs)
    print(f"model folder: {links:.2f} ms to link, {again:.2f} ms to re-check")
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
