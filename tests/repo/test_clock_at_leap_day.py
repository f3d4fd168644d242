"""The whole default suite passes with the clock at the first leap day a year or more ahead,
at noon in UTC-12."""

from __future__ import annotations

import pytest

from ..support.clock_proof import leap_day_a_year_ahead, whole_suite_passes_at


@pytest.mark.slow
def test_the_whole_suite_passes() -> None:
    whole_suite_passes_at(leap_day_a_year_ahead(), "Etc/GMT+12")
