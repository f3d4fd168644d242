"""Input that used to take an afternoon: many conversations on one day. Four times the
conversations must cost at most five times as much (CPU seconds of `vault import`, measured
side by side); a flush that read and parsed the day's whole log for each conversation made
it eleven times. bench/import_scaling.py measures 500 against 2,000."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from _support import init_vault, succeeded, vault
from import_scaling import write_export  # bench/import_scaling.py: the same conversations

FAMILY = "scaling"
SMALL, LARGE = 250, 1000
BOUND = 5.0


def linear(scratch: Path) -> str | None:
    small, large = scratch / "small.json", scratch / "large.json"
    write_export(small, SMALL)
    write_export(large, LARGE)
    cpu: dict[int, list[float]] = {SMALL: [], LARGE: []}
    for run in range(2):  # side by side: small, large, small, large
        for count, source in ((SMALL, small), (LARGE, large)):
            root = init_vault(scratch / f"vault-{count}-{run}")
            result = vault(root, "import", str(source), timeout=900)
            problem = succeeded(result)
            if problem:
                return problem
            cpu[count].append(result.cpu_s)
    ratio = min(cpu[LARGE]) / min(cpu[SMALL])
    if ratio > BOUND:
        return f"t({LARGE})/t({SMALL}) = {ratio:.2f} CPU seconds, over {BOUND:g} ({cpu})"
    return None


CASES: list[tuple[str, Callable[[Path], str | None]]] = [
    (f"import: {LARGE} on one day cost <= {BOUND:g}x {SMALL}", linear),
]
