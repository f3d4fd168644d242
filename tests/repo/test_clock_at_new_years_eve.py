"""The whole default suite passes with the clock at a new year's eve, a minute before
midnight in UTC+14."""

from __future__ import annotations

import pytest

from ..support.clock_proof import whole_suite_passes_at


@pytest.mark.slow
def test_the_whole_suite_passes() -> None:
    whole_suite_passes_at("2026-12-31T23:59:00+14:00", "Pacific/Kiritimati")
