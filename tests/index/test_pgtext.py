"""index/pgtext.py: the tsvector and tsquery literals of the postgres backend (pure; the
server reads them back in tests/index/test_pg_server.py)."""

from __future__ import annotations

import pytest

from vault_memory.index.pgtext import MAX_POSITION, quote, tsquery_literal, tsvector_literal


def test_positions_count_across_fields_and_carry_each_fields_weight() -> None:
    literal = tsvector_literal([(["payment", "retri"], "A"), (["payment", "foo_bar"], "D")])
    assert literal == "'payment':1A,3D 'retri':2A 'foo_bar':4D"


def test_quotes_and_backslashes_are_escaped() -> None:
    assert quote("o'brien") == "'o''brien'"
    assert quote("back\\slash") == "'back\\\\slash'"


def test_positions_past_the_last_are_clamped() -> None:
    terms = [f"t{i}" for i in range(MAX_POSITION + 2)]
    last = tsvector_literal([(terms, "D")]).split(" ")[-1]
    assert last == f"'t{MAX_POSITION + 1}':{MAX_POSITION}D"


def test_at_most_256_positions_a_lexeme() -> None:
    assert tsvector_literal([(["x"] * 300, "D")]).count(",") == 255


def test_bad_weight_is_refused() -> None:
    with pytest.raises(ValueError, match="weight"):
        tsvector_literal([(["x"], "E")])


def test_query_ors_distinct_terms() -> None:
    assert tsquery_literal(["err_ledger_409", "payment", "payment", ""]) == (
        "'err_ledger_409' | 'payment'"
    )
    assert tsquery_literal([]) == ""
