"""What `transfer` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from .export import (
    ExportReport as ExportReport,
)
from .export import (
    export_vault as export_vault,
)
from .export import (
    parse_kinds as parse_kinds,
)
from .export import (
    split_sections as split_sections,
)
from .formats import FORMATS as FORMATS
from .formats import ImportFormatError as ImportFormatError
from .importer import ImportReport as ImportReport
from .importer import import_history as import_history
from .restore import RestoreReport as RestoreReport
