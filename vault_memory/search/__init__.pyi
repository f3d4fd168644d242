"""What `search` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from . import hitlog as hitlog, searcher as searcher
from .context import (
    DEFAULT_BUDGET as DEFAULT_BUDGET,
    ContextBlock as ContextBlock,
    build_context as build_context,
)
from .dates import told_ranges as told_ranges
from .deep import DeepUnavailableError as DeepUnavailableError
from .hitlog import line_hash as line_hash, record as record
from .query import (
    OPERATORS as OPERATORS,
    ParsedQuery as ParsedQuery,
    QuerySyntaxError as QuerySyntaxError,
    parse_query as parse_query,
)
from .ranking import RankSettings as RankSettings
from .request import search_request as search_request
from .searcher import (
    MODES as MODES,
    Filters as Filters,
    Hit as Hit,
    Searcher as Searcher,
    SearchResults as SearchResults,
)
from .subjects import Fact as Fact, read_facts as read_facts, relation as relation
from .supersede import (
    SUPERSEDED_BY as SUPERSEDED_BY,
    Dated as Dated,
    Supersession as Supersession,
    current_of as current_of,
    order_superseded as order_superseded,
    supersedes as supersedes,
)
from .tokens import TokenCounter as TokenCounter, load_counter as load_counter
