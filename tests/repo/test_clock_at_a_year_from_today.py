"""The whole default suite passes with the clock at a year from today in UTC+05:45."""

from __future__ import annotations

import pytest

from ..support.clock_proof import a_year_from_today, whole_suite_passes_at


@pytest.mark.slow
def test_the_whole_suite_passes() -> None:
    whole_suite_passes_at(a_year_from_today(), "Asia/Kathmandu")
