"""Agent integration latency: `vault --help`, the context block, the memory tools and the MCP
server over stdio. A benchmark, not a test; medians of repeated runs.

    python bench/agent.py                 # everything, on a copy of sample_vault/
    python bench/agent.py --skip-mcp      # in-process figures only

The vault is a copy of sample_vault/ (25 files, about 200 units) in a temporary folder,
indexed by the real indexer with the bundled model, so searches are hybrid as users run them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import ROOT, median_ms, time_call  # noqa: E402 - this checkout's vault_memory first

from vault_memory import Vault  # noqa: E402
from vault_memory.agents.tools import call_tool, make_tools  # noqa: E402
from vault_memory.search.tokens import count_tokens, load_counter  # noqa: E402


def bench_help(repeat: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "vault_memory", "--help"],
            env=env,
            capture_output=True,
            check=True,
        )
        samples.append(time.perf_counter() - start)
    print(f"vault --help (python -m vault_memory --help), median of {repeat}: {median_ms(samples)}")


def bench_context(vault: Vault, repeat: int) -> None:
    start = time.perf_counter()
    load_counter()
    print(f"tokenizer load: {(time.perf_counter() - start) * 1000:.1f} ms")
    for budget in (500, 2000, 8000):
        for query in (None, "which database did we pick for billing?"):
            samples = time_call(lambda b=budget, q=query: vault.context(b, q), repeat).walls
            text = vault.context(budget, query)
            label = "with query" if query else "no query  "
            print(
                f"context budget {budget:>5} {label}: median {median_ms(samples)}, "
                f"{count_tokens(text)} tokens"
            )


def bench_tools(vault: Vault, repeat: int) -> None:
    tools = make_tools(vault)
    calls = {
        "search_memory": {"query": "ERR_LEDGER_409 refunds", "limit": 5},
        "get_memory": {"path": "MEMORY.md", "start_line": 1, "end_line": 40},
        "manage_memory (rejected delete)": {"action": "delete", "id": "../x#L1"},
    }
    for label, arguments in calls.items():
        name = label.split()[0]
        samples = time_call(lambda n=name, a=arguments: call_tool(tools, n, a), repeat).walls
        print(f"tool {label}: median {median_ms(samples)}")


def bench_mcp(root: Path, repeat: int) -> None:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vault_memory", "--vault", str(root), "mcp"],
        env={"PYTHONPATH": str(ROOT)},
    )
    starts: list[float] = []
    calls: dict[str, list[float]] = {"search_memory": [], "get_memory": []}

    async def once() -> None:
        start = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                starts.append(time.perf_counter() - start)
                for _ in range(10):
                    t = time.perf_counter()
                    await session.call_tool("search_memory", {"query": "billing cutover"})
                    calls["search_memory"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    await session.call_tool("get_memory", {"path": "MEMORY.md"})
                    calls["get_memory"].append(time.perf_counter() - t)

    for _ in range(repeat):
        anyio.run(once)
    print(f"vault mcp: spawn to initialized, median of {repeat}: {median_ms(starts)}")
    for name, samples in calls.items():
        print(f"vault mcp: {name} round trip, median of {len(samples)}: {median_ms(samples)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-mcp", action="store_true")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    bench_help(args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sample"
        shutil.copytree(ROOT / "sample_vault", root, ignore=shutil.ignore_patterns(".vault"))
        with Vault(root) as vault:
            report = vault.index()
            print(f"indexed {report.units} units ({report.embedded_units} embedded)")
            bench_context(vault, args.repeat)
            bench_tools(vault, args.repeat)
        if not args.skip_mcp:
            bench_mcp(root, 3)
    print(json.dumps({"python": sys.version.split()[0], "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
