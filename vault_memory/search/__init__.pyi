"""What `search` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from . import hitlog as hitlog
from . import searcher as searcher
from .context import (
    DEFAULT_BUDGET as DEFAULT_BUDGET,
)
from .context import (
    ContextBlock as ContextBlock,
)
from .context import (
    build_context as build_context,
)
from .hitlog import line_hash as line_hash
from .hitlog import record as record
from .query import (
    OPERATORS as OPERATORS,
)
from .query import (
    ParsedQuery as ParsedQuery,
)
from .query import (
    QuerySyntaxError as QuerySyntaxError,
)
from .query import (
    parse_query as parse_query,
)
from .searcher import (
    MODES as MODES,
)
from .searcher import (
    Filters as Filters,
)
from .searcher import (
    Hit as Hit,
)
from .searcher import (
    RankSettings as RankSettings,
)
from .searcher import (
    Searcher as Searcher,
)
from .searcher import (
    SearchResults as SearchResults,
)
from .tokens import TokenCounter as TokenCounter
from .tokens import load_counter as load_counter
