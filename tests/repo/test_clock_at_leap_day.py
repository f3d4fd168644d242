"""The whole default suite passes with the clock at a leap day in UTC-12."""

from __future__ import annotations

import pytest

from ..support.clock_proof import whole_suite_passes_at


@pytest.mark.slow
def test_the_whole_suite_passes() -> None:
    whole_suite_passes_at("2028-02-29T12:00", "Etc/GMT+12")
