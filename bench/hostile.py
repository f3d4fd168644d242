"""The hostile-input harness: every case of every module in bench/hostile_cases/, each in a
child process with a timeout, its peak memory measured; a table, and bench/results/hostile.json.

Usage: python bench/hostile.py [--family NAME] [--case TEXT] [--timeout S] [--list]
                               [--results PATH]

A case module (a plain module, loaded by its file path) holds

    FAMILY = "links"
    CASES: list[tuple[str, Callable[[Path], str | None]]] = [("hard link to sibling scope", fn)]

Each callable gets an empty scratch folder, runs its scenario (preferably through `vault` CLI
subprocesses, what users run) and returns None when every check holds, or a one-line reason
when one fails; raising `Skip` (hostile_cases/_support.py) says it cannot run here (say, no
permission to mount a small file system). Modules whose names start with `_` are helpers,
not cases; the cases folder (and bench/) is on `sys.path`, so a case module imports them
(and the other benches) by name.

The verdict of a case: `pass`, `FAIL: reason` (its own, an exception, a timeout, or a peak
RSS over the bar), or `skip: reason`. Peak RSS is the largest of the child and every process
it waited for (the `vault` commands it ran). Exit status 1 when a case fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "bench" / "hostile_cases"
RESULT = ROOT / "bench" / "results" / "hostile.json"
RSS_BAR_MB = 1536  # 1.5 GB
TIMEOUT_S = 600.0


def case_modules() -> list[Path]:
    return sorted(p for p in CASES_DIR.glob("*.py") if not p.name.startswith("_"))


def load(path: Path) -> ModuleType:
    for folder in (CASES_DIR.parent, CASES_DIR):  # helpers, and the other benches
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"hostile_cases_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def peak_rss_mb() -> float:
    """The largest resident set of this process and of the children it waited for (KB on
    Linux)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def run_one(module_path: str, index: int, scratch: str, out: str) -> None:
    """In the child: run one case and write its outcome (JSON) to `out`."""
    started = time.perf_counter()
    outcome: dict[str, Any]
    try:
        module = load(Path(module_path))
        _, case = module.CASES[index]
        reason = case(Path(scratch))
        outcome = {"verdict": "pass" if reason is None else f"FAIL: {reason}"}
    except BaseException as exc:  # a case's bug is a failure of the case, with where
        if type(exc).__name__ == "Skip":
            outcome = {"verdict": f"skip: {exc}"}
        else:
            where = traceback.extract_tb(exc.__traceback__)[-1]
            outcome = {
                "verdict": f"FAIL: {type(exc).__name__}: {exc} "
                f"({Path(where.filename).name}:{where.lineno})"
            }
    outcome["wall_s"] = round(time.perf_counter() - started, 2)
    outcome["peak_rss_mb"] = round(peak_rss_mb(), 1)
    Path(out).write_text(json.dumps(outcome), encoding="utf-8")


def run_case(module_path: Path, index: int, timeout: float, cache: Path) -> dict[str, Any]:
    """In the harness: the case in a child process (its own session, so that a timeout ends
    the `vault` commands it started too), with an empty scratch folder."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        out = Path(tmp) / "outcome.json"
        env = {**os.environ, "HOSTILE_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, __file__, "--run-one", str(module_path), str(index), str(scratch)]
            + [str(out)],
            env=env,
            start_new_session=True,
        )
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return {
                "verdict": f"FAIL: timed out after {timeout:g} s",
                "wall_s": round(time.perf_counter() - started, 2),
                "peak_rss_mb": None,
            }
        finally:
            _unmount_under(scratch)
        if not out.exists():
            return {
                "verdict": f"FAIL: the case's process ended with status {child.returncode}",
                "wall_s": round(time.perf_counter() - started, 2),
                "peak_rss_mb": None,
            }
        outcome: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    rss = outcome.get("peak_rss_mb")
    if outcome["verdict"] == "pass" and rss is not None and rss > RSS_BAR_MB:
        outcome["verdict"] = f"FAIL: peak RSS {rss:.0f} MB is over {RSS_BAR_MB} MB"
    return outcome


def _unmount_under(folder: Path) -> None:
    """Small file systems a case mounted and left mounted (it was killed, say)."""
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    prefix = str(folder.resolve())
    for line in mounts:
        target = line.split()[1] if len(line.split()) > 1 else ""
        if target.startswith(prefix):
            subprocess.run(["umount", "-l", target], check=False, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--family", help="only the cases of this family")
    parser.add_argument("--case", help="only the cases whose name holds this text")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per case")
    parser.add_argument("--list", action="store_true", help="list the cases, run nothing")
    parser.add_argument(
        "--results", type=Path, default=RESULT, help=f"where to write the figures ({RESULT.name})"
    )
    parser.add_argument("--run-one", nargs=4, metavar=("MODULE", "INDEX", "SCRATCH", "OUT"))
    args = parser.parse_args()
    if args.run_one:
        module_path, index, scratch, out = args.run_one
        run_one(module_path, int(index), scratch, out)
        return
    chosen = []
    for path in case_modules():
        module = load(path)
        if args.family and args.family != module.FAMILY:
            continue
        for index, (name, _) in enumerate(module.CASES):
            if args.case and args.case.lower() not in name.lower():
                continue
            chosen.append((module.FAMILY, name, path, index))
    if args.list:
        for family, name, _, _ in chosen:
            print(f"{family:<10} {name}")
        return
    rows = []
    width = max((len(name) for _, name, _, _ in chosen), default=10)
    print(f"{'family':<10} {'case':<{width}}  {'RSS MB':>7} {'wall s':>7}  verdict", flush=True)
    with tempfile.TemporaryDirectory(prefix="hostile-cache-") as cache:
        for family, name, path, index in chosen:
            outcome = run_case(path, index, args.timeout, Path(cache))
            rss = outcome.get("peak_rss_mb")
            shown = f"{rss:7.0f}" if rss is not None else "      -"
            print(
                f"{family:<10} {name:<{width}}  {shown} {outcome['wall_s']:7.1f}  "
                f"{outcome['verdict']}",
                flush=True,
            )
            rows.append({"family": family, "case": name, **outcome})
    failed = [r for r in rows if r["verdict"].startswith("FAIL")]
    skipped = [r for r in rows if r["verdict"].startswith("skip")]
    print(
        f"{len(rows)} cases: {len(rows) - len(failed) - len(skipped)} passed, "
        f"{len(failed)} failed, {len(skipped)} skipped"
    )
    if not (args.family or args.case) or args.results != RESULT:  # a whole run's figures
        write_results(rows, args.results)
    sys.exit(1 if failed else 0)


def write_results(rows: list[dict[str, Any]], path: Path) -> None:
    from importlib.metadata import version

    path.parent.mkdir(parents=True, exist_ok=True)
    peaks = [r["peak_rss_mb"] for r in rows if r.get("peak_rss_mb") is not None]
    path.write_text(
        json.dumps(
            {
                "name": "hostile",
                "date": time.strftime("%Y-%m-%d"),
                "machine": {
                    "platform": platform.platform(),
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                },
                "versions": {"vault-memory": version("vault-memory")},
                "figures": {
                    "cases": len(rows),
                    "passed": sum(r["verdict"] == "pass" for r in rows),
                    "failed": sum(r["verdict"].startswith("FAIL") for r in rows),
                    "skipped": sum(r["verdict"].startswith("skip") for r in rows),
                    "max_peak_rss_mb": max(peaks, default=None),
                    "rss_bar_mb": RSS_BAR_MB,
                },
                "cases": rows,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
