"""What every benchmark shares: this checkout's `vault_memory` first on the path, timing (medians,
CPU seconds beside wall time, a command's CPU with its children's), sibling scripts loaded by
path, the sample vault, and the results file `bench/results/NAME.json` the docs' evaluation page
is generated from ({"name", "date", "machine", "versions", "figures"}).

A benchmark imports it as `from _harness import ...`: run as `python -m bench NAME` or as
`python bench/NAME.py`, the folder of the script is first on `sys.path` either way.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
SAMPLE_VAULT = ROOT / "sample_vault"

# The checkout's package, not an installed copy, is what a benchmark measures (and what the
# processes it starts import: they get ROOT on PYTHONPATH from `checkout_env`).
if str(ROOT) not in sys.path:
    sys.path.insert(1, str(ROOT))

# The packages whose versions a result records when they are installed.
VERSIONED = ("vault-memory", "numpy", "fastembed", "onnxruntime", "whoosh-reloaded")


@dataclass
class Timing:
    """Runs of one piece of work: wall and CPU seconds of each, and the last run's result."""

    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    result: Any = None

    @property
    def wall(self) -> float:
        """Median wall seconds."""
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        """Median CPU seconds (user + system)."""
        return statistics.median(self.cpus)

    def ms(self, digits: int = 1) -> str:
        return f"{self.wall * 1000:.{digits}f} ms wall, {self.cpu * 1000:.{digits}f} ms CPU"

    def figures(self) -> dict[str, float]:
        return {"wall_s": round(self.wall, 6), "cpu_s": round(self.cpu, 6), "runs": len(self.walls)}


def time_call(work: Callable[[], Any], runs: int = 1, warmup: int = 0) -> Timing:
    """Call `work` `warmup` times untimed, then `runs` times, timing each (this process's CPU)."""
    for _ in range(warmup):
        work()
    timing = Timing()
    for _ in range(runs):
        cpu, wall = time.process_time(), time.perf_counter()
        timing.result = work()
        timing.walls.append(time.perf_counter() - wall)
        timing.cpus.append(time.process_time() - cpu)
    return timing


def time_command(
    cmd: Sequence[str],
    runs: int = 1,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    check: bool = True,
    output: bool = False,
) -> Timing:
    """Run `cmd` `runs` times; the CPU of each is the process's and its waited-for children's
    (from wait4, so threads elsewhere in this process do not count). With `output`, the last
    run's stdout is the result; otherwise its exit status."""
    timing = Timing()
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if output else subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            text=True,
        )
        out = proc.stdout.read() if proc.stdout is not None else None
        _, status, usage = os.wait4(proc.pid, 0)
        timing.walls.append(time.perf_counter() - started)
        timing.cpus.append(usage.ru_utime + usage.ru_stime)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait
        if check and proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, list(cmd))
        timing.result = out if output else proc.returncode
    return timing


def median_ms(samples: Sequence[float], digits: int = 1) -> str:
    """The median of seconds, said in milliseconds."""
    return f"{statistics.median(samples) * 1000:.{digits}f} ms"


def checkout_env(**extra: str) -> dict[str, str]:
    """The environment for a process that must import this checkout's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def load_bench(name: str) -> ModuleType:
    """A sibling benchmark script (bench/NAME.py) as a module, for the builders it offers."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec and spec.loader, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def copy_sample(target: Path) -> Path:
    """A copy of the checkout's sample_vault/ without its `.vault/` (a fresh cache)."""
    shutil.copytree(SAMPLE_VAULT, target, ignore=shutil.ignore_patterns(".vault"))
    return target


def machine() -> dict[str, Any]:
    """Where a result was measured: the platform, the cores, the load while it ran."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load": [round(x, 2) for x in os.getloadavg()],
    }


def versions(*names: str) -> dict[str, str]:
    """The installed versions of `names` (and of VERSIONED), those present."""
    found = {}
    for name in (*VERSIONED, *names):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def write_results(
    name: str,
    figures: Mapping[str, Any],
    *,
    extra_versions: Sequence[str] = (),
    path: Path | None = None,
    **more: Any,
) -> Path:
    """Write `bench/results/NAME.json` (or `path`) and return where it went. `more` adds keys
    of its own (a `command`, the data sets) beside the standard ones."""
    doc = {
        "name": name,
        "date": dt.date.today().isoformat(),
        "machine": machine(),
        "versions": versions(*extra_versions),
        **more,
        "figures": dict(figures),
    }
    out = path or RESULTS / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out
