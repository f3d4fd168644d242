"""`python -m bench NAME [ARGS...]` runs bench/NAME.py with ARGS, as `python bench/NAME.py` would;
`python -m bench` lists the benchmarks with the first line of each one's docstring.

Benchmarks are never run as tests: the machines are shared and noisy. Each one prints its
figures and writes them to bench/results/NAME.json (see bench/_harness.py)."""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def benchmarks() -> dict[str, str]:
    """Each benchmark script's name and the first line of its docstring."""
    found = {}
    for path in sorted(BENCH.glob("*.py")):
        if path.name.startswith("_"):
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        found[path.stem] = doc.strip().split("\n", 1)[0]
    return found


def main(argv: list[str]) -> int:
    known = benchmarks()
    if not argv or argv[0] in ("-h", "--help", "list"):
        width = max(map(len, known))
        print("usage: python -m bench NAME [ARGS...]   (NAME --help for its options)\n")
        for name, summary in known.items():
            print(f"  {name:<{width}}  {summary}")
        return 0
    name, args = argv[0], argv[1:]
    if name not in known:
        print(f"Error: no benchmark named {name!r}; `python -m bench` lists them.", file=sys.stderr)
        return 2
    script = BENCH / f"{name}.py"
    # As if run as a script: its folder first on the path (for `_harness` and its siblings),
    # its own name in argv[0] (several start themselves again in a child process).
    sys.argv = [str(script), *args]
    sys.path.insert(0, str(BENCH))
    runpy.run_path(str(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
