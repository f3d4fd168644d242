"""What `transfer` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .agentsessions import AGENT_FORMATS as AGENT_FORMATS, agent_format as agent_format
from .export import (
    ExportReport as ExportReport,
    export_vault as export_vault,
    parse_kinds as parse_kinds,
    split_sections as split_sections,
)
from .follow import (
    QUIET_SECONDS as QUIET_SECONDS,
    NothingToFollowError as NothingToFollowError,
    SessionFollower as SessionFollower,
)
from .formats import FORMATS as FORMATS, ImportFormatError as ImportFormatError
from .importer import ImportReport as ImportReport, import_history as import_history
from .restore import RestoreReport as RestoreReport
