"""PostgreSQL full-text values built from our own analyzed terms (postgres backend;
docs/postgres-design.md §3). Pure: text in, text out.

The keyword scores of both backends must come from the same terms (`fulltext.terms_of`:
Whoosh's stemmer and stop list). PostgreSQL's `to_tsvector`, even with the `simple`
configuration, parses its input again and splits what our analyzer keeps whole
(`err_ledger_409`, `foo_bar`, `41.2m`): on the sample vault 18 of 26 files came out with other
lexemes. A tsvector or tsquery *literal* is not parsed into words: its quoted lexemes are kept
as they are. So the indexer writes the literal itself, with positions (`ts_rank_cd` needs them)
and weights (heading A, lead-in label B, text D, as the unit table's fields), and casts it
(`%s::tsvector`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

MAX_POSITION = 16383  # PostgreSQL's largest tsvector position; later ones are clamped to it
MAX_POSITIONS = 256  # positions PostgreSQL keeps per lexeme; more are an error on input
WEIGHTS = ("A", "B", "C", "D")


def quote(lexeme: str) -> str:
    """A lexeme as a quoted tsvector/tsquery token (quote and backslash escaped)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(fields: Sequence[tuple[Iterable[str], str]]) -> str:
    """The tsvector text of a unit's fields, each (analyzed terms, weight), in order: every
    term a lexeme with its positions (counted across the fields) and the field's weight."""
    positions: dict[str, list[str]] = {}
    number = 0
    for terms, weight in fields:
        if weight not in WEIGHTS:
            raise ValueError(f"a tsvector weight is one of {', '.join(WEIGHTS)}, not {weight!r}")
        for term in terms:
            if not term:
                continue
            number += 1
            held = positions.setdefault(term, [])
            if len(held) < MAX_POSITIONS:
                held.append(f"{min(number, MAX_POSITION)}{weight}")
    return " ".join(f"{quote(term)}:{','.join(held)}" for term, held in positions.items())


def tsquery_literal(terms: Iterable[str]) -> str:
    """A tsquery matching any of `terms` (OR, as our keyword search groups them); "" when
    there is none (the caller then asks for no keyword scores)."""
    return " | ".join(quote(term) for term in dict.fromkeys(terms) if term)
