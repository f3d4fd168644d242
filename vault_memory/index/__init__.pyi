"""What `index` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from . import indexer as indexer
from . import links as links
from . import settings as settings
from .arrays import read_arrays as read_arrays
from .arrays import write_arrays as write_arrays
from .census import ScopeInfo as ScopeInfo
from .census import list_scopes as list_scopes
from .embedder import (
    DISABLE_ENV as DISABLE_ENV,
)
from .embedder import (
    ModelUnavailable as ModelUnavailable,
)
from .embedder import (
    model_disabled as model_disabled,
)
from .fulltext import BM25_B as BM25_B
from .fulltext import BM25_K1 as BM25_K1
from .fulltext import terms_of as terms_of
from .indexer import (
    IGNORED_DIRS as IGNORED_DIRS,
)
from .indexer import (
    WRITE_LOCK as WRITE_LOCK,
)
from .indexer import (
    Index as Index,
)
from .indexer import (
    IndexReport as IndexReport,
)
from .indexer import (
    Progress as Progress,
)
from .indexer import (
    fingerprint as fingerprint,
)
from .indexer import (
    is_indexable as is_indexable,
)
from .indexer import (
    model_id_for as model_id_for,
)
from .indexer import (
    scope_counts as scope_counts,
)
from .indexer import (
    shared_embedder as shared_embedder,
)
from .indexer import (
    status as status,
)
from .links import LinkInfo as LinkInfo
from .remote import (
    EmbeddingProviderError as EmbeddingProviderError,
)
from .remote import (
    RemoteEmbedder as RemoteEmbedder,
)
from .store import CorruptIndexError as CorruptIndexError
