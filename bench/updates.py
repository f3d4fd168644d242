"""Update queue and embeddings provider benchmark.

Usage: python bench/updates.py [--submits 1000] [--runs 3] [--no-provider]

1. `vault.updates.submit` latency: --submits submissions of a growing conversation (about
   300 characters a message, so the last one holds about 300 KB of messages), timed one by
   one in the caller's thread while the worker runs; p50 / p99 / max, and CPU seconds.
2. A burst against a real chat-completions server on 127.0.0.1 (tests/support/llm_server.py, in a
   process of its own): --submits submissions of one session's growing conversation (short
   turns, so that the whole of it is sent to the model) within the 1 s quiet period, then the
   wait for the flush; the number of LLM requests the burst cost.
3. Indexing throughput of the same texts (sample_vault/ x 4, about 800 units): the bundled
   model in-process against the same model served by /v1/embeddings from another process on
   127.0.0.1 (`[index] provider = "openai"`), alternately, --runs times; units/s (median),
   wall and CPU seconds of this process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import ROOT  # noqa: E402 - this checkout's vault_memory first

from vault_memory import Vault  # noqa: E402

SERVER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from tests.support.llm_server import ScriptedLLMServer
from vault_memory.index.embedder import BUNDLED_MODEL
from vault_memory.index.indexer import shared_embedder

server = ScriptedLLMServer()
server.embedder = shared_embedder(BUNDLED_MODEL)
server.reply_content(sys.argv[2])
server.start()
print(server.base_url, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
print(len(server.requests), flush=True)
server.close()
"""


def start_server(reply: str = '{"entries": []}') -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(ROOT), reply],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return process


def stop_server(process: subprocess.Popen[str]) -> int:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.close()
    requests = int(process.stdout.readline())
    process.wait()
    process.stdout.close()
    return requests


def message(i: int) -> dict[str, str]:
    role = "user" if i % 2 == 0 else "assistant"
    text = (
        f"Message {i}: we looked at the billing migration again and decided that step {i} "
        "waits for the ledger export, because the export still writes to the old schema "
        "and Tomás wants one more dry run before the cutover on Sunday morning."
    )
    return {"role": role, "content": text * 2}


def bench_submit(submits: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Vault.init(Path(tmp) / "v").root
        (root / "vault.toml").write_text("[queue]\ndebounce_seconds = 2\n")
        with Vault(root) as vault:
            updates = vault.updates
            talk: list[dict[str, str]] = []
            times = []
            cpu = time.process_time()
            wall = time.perf_counter()
            for i in range(submits):
                talk.append(message(i))
                started = time.perf_counter()
                updates.submit(talk, session="bench")
                times.append(time.perf_counter() - started)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            size = len(json.dumps(talk))
            spool = sum(p.stat().st_size for p in (vault.cache_dir / "queue").glob("*.jsonl"))
            times.sort()
            print(
                f"submit: {submits} submissions of one growing conversation "
                f"(last {size / 1e3:.0f} KB of messages; spool {spool / 1e3:.0f} KB)"
            )
            print(
                f"  p50 {times[len(times) // 2] * 1e6:.0f} us, "
                f"p99 {times[int(len(times) * 0.99) - 1] * 1e6:.0f} us, "
                f"max {times[-1] * 1e6:.0f} us; {wall:.3f} s wall, {cpu:.3f} s CPU in all"
            )
            updates.flush_now(timeout=60)


def bench_burst(submits: int) -> None:
    reply = json.dumps(
        {"entries": [{"text": "The export waits for one more dry run.", "category": "decision"}]}
    )
    server = start_server(reply)
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Vault.init(Path(tmp) / "v").root
            (root / "vault.toml").write_text(
                f'[queue]\ndebounce_seconds = 1\n[llm]\nbase_url = "{base_url}"\nmodel = "m"\n'
            )
            with Vault(root) as vault:
                talk: list[dict[str, str]] = []
                started = time.perf_counter()
                for i in range(submits):  # short turns: the whole talk fits what a model is sent
                    talk.append({"role": "user", "content": f"Step {i} waits for the export."})
                    vault.updates.submit(talk, session="burst")
                burst = time.perf_counter() - started
                while vault.updates.status().pending:
                    time.sleep(0.05)
                waited = time.perf_counter() - started
                stats = vault.updates.status()
    finally:
        requests = stop_server(server)
    print(
        f"burst: {submits} submissions in {burst:.2f} s, flushed {waited - burst:.2f} s "
        f"later: {stats.flushes} flush, {requests} LLM request(s)"
    )


def bench_provider(runs: int) -> None:
    server = start_server()
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    results: dict[str, list[tuple[float, float, int]]] = {"in-process": [], "http": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "source"
            source.mkdir()
            for copy in range(4):  # the same texts, four times over, each copy made distinct
                for path in (ROOT / "sample_vault").rglob("*.md"):
                    rel = path.relative_to(ROOT / "sample_vault")
                    target = source / f"c{copy}" / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(path.read_text("utf-8").replace("\n- ", f"\n- ({copy}) "))
            (source / "MEMORY.md").write_text("# MEMORY\n")
            from vault_memory.index.embedder import BUNDLED_MODEL
            from vault_memory.index.indexer import shared_embedder

            shared_embedder(BUNDLED_MODEL)  # loaded before timing, as the server's is
            for run in range(runs):
                for kind in ("in-process", "http") if run % 2 == 0 else ("http", "in-process"):
                    root = Path(tmp) / f"{kind}-{run}"
                    shutil.copytree(source, root)
                    if kind == "http":
                        (root / "vault.toml").write_text(
                            f'[index]\nprovider = "openai"\nbase_url = "{base_url}"\n'
                            f'model = "{BUNDLED_MODEL}"\n'
                        )
                    cpu, wall = time.process_time(), time.perf_counter()
                    with Vault(root) as vault:
                        report = vault.index()
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    assert report.pending_units == 0 and report.embedded_units == report.units
                    results[kind].append((wall, cpu, report.units_embedded))
    finally:
        stop_server(server)
    print(f"indexing the same texts ({results['http'][0][2]} units), median of {runs}:")
    for kind, rows in results.items():
        wall = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        units = rows[0][2]
        print(
            f"  {kind:10s} {units / wall:6.1f} units/s  ({wall:.2f} s wall, {cpu:.2f} s CPU "
            "in this process)"
        )
    ratio = statistics.median(r[0] for r in results["http"]) / statistics.median(
        r[0] for r in results["in-process"]
    )
    print(f"  http / in-process wall time: {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submits", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-provider", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}, {os.cpu_count()} cores")
    bench_submit(args.submits)
    bench_burst(args.submits)
    if not args.no_provider:
        bench_provider(args.runs)


if __name__ == "__main__":
    main()
