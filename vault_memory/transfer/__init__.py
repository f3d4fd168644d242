"""Memory in and out: `vault export` (the vault as JSON records, one per section of each file)
and `vault import` (ChatGPT and Claude.ai data exports, OpenAI-style messages, and an export
of this project, written back byte for byte). Streamed, idempotent, nothing half-written.

    formats (what a file is, read incrementally) -> importer (conversations through the flush)
                                                  -> restore (an export's files, back on disk)
    export (the files as records)

Names are loaded on first use, so importing the package costs nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .export import ExportReport, export_vault, parse_kinds, split_sections
    from .formats import FORMATS, ImportFormatError
    from .importer import ImportReport, import_history
    from .restore import RestoreReport

_OFFERS = {  # name -> (submodule, attribute; None: the submodule itself)
    "ExportReport": ("export", "ExportReport"),
    "FORMATS": ("formats", "FORMATS"),
    "ImportFormatError": ("formats", "ImportFormatError"),
    "ImportReport": ("importer", "ImportReport"),
    "RestoreReport": ("restore", "RestoreReport"),
    "export_vault": ("export", "export_vault"),
    "import_history": ("importer", "import_history"),
    "parse_kinds": ("export", "parse_kinds"),
    "split_sections": ("export", "split_sections"),
}
__all__ = [
    "ExportReport",
    "FORMATS",
    "ImportFormatError",
    "ImportReport",
    "RestoreReport",
    "export_vault",
    "import_history",
    "parse_kinds",
    "split_sections",
]


def __getattr__(name: str) -> Any:
    if name not in _OFFERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _OFFERS[name]
    loaded = import_module(f".{module}", __name__)
    return loaded if attribute is None else getattr(loaded, attribute)
