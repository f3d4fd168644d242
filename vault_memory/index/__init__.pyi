"""What `index` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from . import indexer as indexer, links as links, settings as settings
from .arrays import (
    read_arrays as read_arrays,
    read_stamped as read_stamped,
    write_arrays as write_arrays,
)
from .backend import (
    Capabilities as Capabilities,
    IndexBackend as IndexBackend,
    ServesCandidates as ServesCandidates,
)
from .census import ScopeInfo as ScopeInfo, list_scopes as list_scopes
from .embedder import (
    DISABLE_ENV as DISABLE_ENV,
    ModelUnavailable as ModelUnavailable,
    model_disabled as model_disabled,
)
from .fulltext import BM25_B as BM25_B, BM25_K1 as BM25_K1
from .indexer import (
    IGNORED_DIRS as IGNORED_DIRS,
    WRITE_LOCK as WRITE_LOCK,
    Index as Index,
    IndexReport as IndexReport,
    Progress as Progress,
    fingerprint as fingerprint,
    is_indexable as is_indexable,
    model_id_for as model_id_for,
    shared_embedder as shared_embedder,
)
from .integrity import (
    Finding as Finding,
    Verification as Verification,
    heal_cache_shape as heal_cache_shape,
    special_file_findings as special_file_findings,
)
from .links import LinkInfo as LinkInfo
from .pgconnect import IndexServerError as IndexServerError
from .pglocal import LocalServer as LocalServer, default_folder as default_folder
from .pgstore import PgStore as PgStore
from .registry import (
    capabilities_of as capabilities_of,
    clone_name as clone_name,
    index_file as index_file,
    open_backend as open_backend,
)
from .remote import (
    EmbeddingProviderError as EmbeddingProviderError,
    RemoteEmbedder as RemoteEmbedder,
)
from .rows import (
    CloneRow as CloneRow,
    FileStat as FileStat,
    LinkRow as LinkRow,
    ServedRows as ServedRows,
    StoredUnit as StoredUnit,
    UnitRow as UnitRow,
)
from .status import scope_counts as scope_counts, status as status
from .store import CorruptIndexError as CorruptIndexError, SchemaVersionError as SchemaVersionError
from .upkeep import SearchUpkeep as SearchUpkeep, UpkeepState as UpkeepState
from .words import (
    ANALYZER as ANALYZER,
    after_label as after_label,
    fold as fold,
    lead_label as lead_label,
    terms_of as terms_of,
    whole as whole,
)
