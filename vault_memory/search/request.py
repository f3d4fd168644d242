"""A search as it is asked for (a query, a mode, dates, a path, kinds), checked and turned into
the `Filters` a searcher applies: what the facade hands on, with a clear error for what
cannot be searched."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from .. import clock
from ..errors import DateRangeError, NoSuchPathError, VaultError
from ..files import DIARY_DIR, KINDS, scope_text, split_scope, visible_scopes
from .query import ParsedQuery, parse_query
from .searcher import MODES, Filters

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..files import Layout, Scope


def search_request(
    layout: Layout,
    scope: Scope | None,
    query: str,
    mode: str,
    since: dt.date | str | None,
    until: dt.date | str | None,
    within: str | None,
    kinds: Sequence[str],
) -> tuple[ParsedQuery, Filters]:
    """The query parsed (its operators apart from its free text) and the filters of a search
    of the vault `layout` (bound to `scope`, or None). `VaultError` for an unknown mode or
    kind, an empty query, a path that is not in the vault, a date range that holds no day;
    `QuerySyntaxError` for operators that cannot be read."""
    if mode not in MODES:
        raise VaultError(f"unknown search mode {mode!r}; use one of: {', '.join(MODES)}.")
    if not query.strip():
        raise VaultError("the query is empty. Ask a question or give some keywords.")
    parsed = parse_query(query)  # operators alone (no free text): the searcher lists
    for kind in kinds:
        if kind not in KINDS:
            raise VaultError(f"unknown kind {kind!r}; use one of: {', '.join(KINDS)}.")
    within_rel = None
    if within:
        real, within_rel = layout.resolve(within)
        if not real.exists():
            raise NoSuchPathError(within)
        within_rel = None if within_rel == "." else within_rel
    first, last = clock.as_day(since, "since"), clock.as_day(until, "until")
    if first and last and first > last:
        raise DateRangeError(first, last)
    return parsed, Filters(
        first,
        last,
        within_rel,
        tuple(kinds),
        hidden_kinds=hidden_kinds(parsed, within_rel, kinds),
        scopes=None if scope is None else tuple(scope_text(s) for s in visible_scopes(scope)),
        select=parsed.filter,
    )


def hidden_kinds(
    parsed: ParsedQuery, within_rel: str | None, kinds: Sequence[str]
) -> tuple[str, ...]:
    """The kinds a search leaves out unless asked for (by `kinds`, a path inside their folder
    or an operator): the dream diary, an audit trail, not memory (in a scope too: `--in
    scopes/a/dreams`); the transcripts, the raw conversations whose keepers the daily logs
    already hold (README "Sessions": measured on the dev benchmark)."""
    inside = split_scope(within_rel + "/x")[1] if within_rel else ""
    folder = inside.split("/")[0]
    asked_for_diary = bool(kinds) or folder == DIARY_DIR or parsed.diary
    asked_for_sessions = bool(kinds) or folder == "sessions" or parsed.sessions
    return (() if asked_for_diary else ("diary",)) + (() if asked_for_sessions else ("session",))
