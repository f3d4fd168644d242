"""The hostile-input harness (bench/hostile.py), family by family: every case passes (no
traceback, one `Error:` line for bad input, Markdown byte-identical or completely written,
nothing left behind, peak RSS within 1.5 GB). Slow: minutes per family."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "bench" / "hostile.py"


#: Left to `python bench/hostile.py --family scaling`: minutes of imports whose claim (cost
#: linear in the conversations of one day) the slow test of transfer/test_import_scaling.py
#: holds at a size CI can afford.
ON_DEMAND = {"scaling"}


def families() -> list[str]:
    """The families of the case modules, read from their text (collecting the default suite
    loads no case module), but those run on demand."""
    found = set()
    for path in (ROOT / "bench" / "hostile_cases").glob("*.py"):
        if not path.name.startswith("_"):
            match = re.search(r'^FAMILY = "([^"]+)"', path.read_text(encoding="utf-8"), re.M)
            if match:
                found.add(match[1])
    return sorted(found - ON_DEMAND)


@pytest.mark.slow
@pytest.mark.parametrize("family", families())
def test_every_case_of_the_family_passes(family: str, tmp_path: Path) -> None:
    results = tmp_path / "hostile.json"
    done = subprocess.run(
        [sys.executable, str(HARNESS), "--family", family, "--results", str(results)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=3600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    figures = json.loads(results.read_text(encoding="utf-8"))["figures"]
    assert figures["failed"] == 0 and figures["cases"] > 0
