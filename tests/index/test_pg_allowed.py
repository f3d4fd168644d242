"""The filters of a search on the PostgreSQL server (`allowed_sql`) read only the unit
columns `ALLOWED_READS` names: the keyword and instance candidates are ranked over a narrow
row of `units` that carries just those, and a condition on any other unit column would fail
there (pure: the SQL text, no server)."""

from __future__ import annotations

import re

from vault_memory.index.pgstore import ALLOWED_READS, allowed_sql

EVERY_CONDITION = {
    "since": "2026-01-01",
    "until": "2026-12-31",
    "kinds": ("daily",),
    "hidden_kinds": ("diary",),
    "hidden_files": ("session",),
    "within": "notes/runbooks",
}


def test_every_filter_reads_only_the_unit_columns_the_ranked_rows_carry() -> None:
    predicate, params = allowed_sql(EVERY_CONDITION)
    read = set(re.findall(r"\bu\.(\w+)", predicate))
    assert read, predicate  # the date and kind conditions are on the unit
    assert read <= set(ALLOWED_READS), read - set(ALLOWED_READS)
    assert {"since", "until", "kinds", "hidden", "hidden_files", "within"} <= set(params)


def test_no_condition_allows_every_unit() -> None:
    assert allowed_sql({}) == ("true", {})
