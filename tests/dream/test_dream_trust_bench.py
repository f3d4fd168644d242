"""bench/dream_trust.py end to end: its fabricated vaults, one dream each under the offline
rules, a well-behaved model and a hostile one (a real HTTP server on 127.0.0.1), and the
targets the dream must meet. Slow: about three minutes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..support.vaults import load_script

BENCH = Path(__file__).resolve().parents[2] / "bench" / "dream_trust.py"

#: Hostile lines the shared detectors (capture.trust.unsafe_kind: the injection cues and the
#: redactor's families) do not recognise yet: an instruction opening "Note to the AI
#: assistant:", and a password after "password for the guest network:". Any other miss fails.
KNOWN_DETECTOR_GAPS = {"instruction in a log", "a password"}


@pytest.mark.slow
def test_the_dream_meets_its_targets_under_three_endpoints(tmp_path: Path) -> None:
    bench = load_script(BENCH, "dream_trust_under_test")
    out = tmp_path / "dream_trust.json"
    bench.main(["--json-out", str(out), "--show"])
    figures = json.loads(out.read_text())["figures"]
    assert set(figures) == {"offline", "model", "hostile"}
    for endpoint, row in figures.items():
        assert row["preservation"]["share"] == 1.0, endpoint
        assert row["supersede"]["share"] >= 0.90, endpoint
        assert row["near_miss"]["share"] >= 0.95, endpoint
        assert row["relative_time"]["share"] == 1.0 and row["relative_time"]["promoted"] > 0
        assert row["forget"]["share"] == 1.0, endpoint
        for failure in row["failures"]:
            family, name = failure.split(":")[0].split(" / ")
            assert family == "hostile" and name in KNOWN_DETECTOR_GAPS, failure
    assert figures["hostile"]["hostile_parts"]["share"] == 1.0
