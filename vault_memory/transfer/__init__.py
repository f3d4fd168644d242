"""Memory in and out: `vault export` (the vault as JSON records, one per section of each file)
and `vault import` (ChatGPT and Claude.ai data exports, OpenAI-style messages, and an export
of this project, written back byte for byte). Streamed, idempotent, nothing half-written.

    formats (what a file is, read incrementally) -> importer (conversations through the flush)
                                                  -> restore (an export's files, back on disk)
    agentsessions (coding agents' session files: claude_code, codex, agentlog) -> importer
    follow (those sessions imported again as they are written)
    export (the files as records)

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
