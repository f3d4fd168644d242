"""The whole default suite passes with the clock at the first new year's eve a year or more
ahead, a minute before midnight in UTC+14."""

from __future__ import annotations

import pytest

from ..support.clock_proof import new_years_eve_a_year_ahead, whole_suite_passes_at


@pytest.mark.slow
def test_the_whole_suite_passes() -> None:
    whole_suite_passes_at(new_years_eve_a_year_ahead(), "Pacific/Kiritimati")
