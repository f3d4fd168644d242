"""Finding and assembling what memory says: the unit table, pure scoring and fusion, the searcher,
the log of what search returned (a hint for the dream), and the context block built within a
token budget.

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import hitlog, searcher
    from .context import DEFAULT_BUDGET, ContextBlock, build_context
    from .hitlog import line_hash, record
    from .searcher import MODES, Filters, Hit, RankSettings, Searcher, SearchResults
    from .tokens import TokenCounter, load_counter

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "ContextBlock": ("context", "ContextBlock"),
    "DEFAULT_BUDGET": ("context", "DEFAULT_BUDGET"),
    "Filters": ("searcher", "Filters"),
    "Hit": ("searcher", "Hit"),
    "MODES": ("searcher", "MODES"),
    "RankSettings": ("searcher", "RankSettings"),
    "SearchResults": ("searcher", "SearchResults"),
    "Searcher": ("searcher", "Searcher"),
    "TokenCounter": ("tokens", "TokenCounter"),
    "build_context": ("context", "build_context"),
    "hitlog": ("hitlog", None),
    "line_hash": ("hitlog", "line_hash"),
    "load_counter": ("tokens", "load_counter"),
    "record": ("hitlog", "record"),
    "searcher": ("searcher", None),
}
__all__ = [
    "ContextBlock",
    "DEFAULT_BUDGET",
    "Filters",
    "Hit",
    "MODES",
    "RankSettings",
    "SearchResults",
    "Searcher",
    "TokenCounter",
    "build_context",
    "hitlog",
    "line_hash",
    "load_counter",
    "record",
    "searcher",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
