"""What `files` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from . import canvas as canvas
from . import fsutil as fsutil
from . import gitops as gitops
from . import obsidian as obsidian
from . import scopes as scopes
from .canvas import Canvas as Canvas
from .canvas import CanvasError as CanvasError
from .canvas import parse_canvas as parse_canvas
from .entries import (
    MAX_ENTRY_BYTES as MAX_ENTRY_BYTES,
)
from .entries import (
    AddReport as AddReport,
)
from .entries import (
    Manager as Manager,
)
from .entries import (
    ManageReport as ManageReport,
)
from .entries import (
    append_note as append_note,
)
from .fsutil import sha256_text as sha256_text
from .layout import Layout as Layout
from .layout import template_dir as template_dir
from .memoryfile import (
    INBOX as INBOX,
)
from .memoryfile import (
    MemoryDoc as MemoryDoc,
)
from .memoryfile import (
    MemoryEntry as MemoryEntry,
)
from .memoryfile import (
    entry_lines as entry_lines,
)
from .memoryfile import (
    heading_key as heading_key,
)
from .memoryfile import (
    parse_memory as parse_memory,
)
from .memoryfile import (
    plain_text as plain_text,
)
from .memoryfile import (
    render_memory as render_memory,
)
from .notes import (
    DAILY_DIR as DAILY_DIR,
)
from .notes import (
    DIARY_DIR as DIARY_DIR,
)
from .notes import (
    KINDS as KINDS,
)
from .notes import (
    LIST_ITEM as LIST_ITEM,
)
from .notes import (
    MEMORY_FILE as MEMORY_FILE,
)
from .notes import (
    TAG_NAME as TAG_NAME,
)
from .notes import (
    Note as Note,
)
from .notes import (
    date_from_name as date_from_name,
)
from .notes import (
    format_entry as format_entry,
)
from .notes import (
    iter_tags as iter_tags,
)
from .notes import (
    note_kind as note_kind,
)
from .notes import (
    parse_note as parse_note,
)
from .obsidian import Link as Link
from .obsidian import LinkTargets as LinkTargets
from .scopes import (
    Scope as Scope,
)
from .scopes import (
    check_scope as check_scope,
)
from .scopes import (
    find_scopes as find_scopes,
)
from .scopes import (
    parse_scope as parse_scope,
)
from .scopes import (
    scope_of as scope_of,
)
from .scopes import (
    scope_text as scope_text,
)
from .scopes import (
    sees as sees,
)
from .scopes import (
    split_scope as split_scope,
)
from .scopes import (
    visible_scopes as visible_scopes,
)
