"""What `files` offers, read by lazy_loader (its `__init__.py`) and by type checkers."""

from . import (
    canvas as canvas,
    fsutil as fsutil,
    gitops as gitops,
    obsidian as obsidian,
    posix as posix,
    scopes as scopes,
)
from .canvas import Canvas as Canvas, CanvasError as CanvasError, parse_canvas as parse_canvas
from .entries import (
    MAX_ENTRY_BYTES as MAX_ENTRY_BYTES,
    AddReport as AddReport,
    Manager as Manager,
    ManageReport as ManageReport,
    append_note as append_note,
)
from .fsutil import sha256_text as sha256_text
from .injection import (
    Verdict as Verdict,
    defang as defang,
    flagged_lines as flagged_lines,
    is_instruction as is_instruction,
    judge_instruction as judge_instruction,
)
from .layout import Layout as Layout, template_dir as template_dir
from .memoryfile import (
    INBOX as INBOX,
    MemoryDoc as MemoryDoc,
    MemoryEntry as MemoryEntry,
    entry_lines as entry_lines,
    heading_key as heading_key,
    parse_memory as parse_memory,
    plain_text as plain_text,
    render_memory as render_memory,
)
from .notes import (
    DAILY_DIR as DAILY_DIR,
    DIARY_DIR as DIARY_DIR,
    KINDS as KINDS,
    LIST_ITEM as LIST_ITEM,
    MEMORY_FILE as MEMORY_FILE,
    TAG_NAME as TAG_NAME,
    Note as Note,
    date_from_name as date_from_name,
    format_entry as format_entry,
    iter_tags as iter_tags,
    note_kind as note_kind,
    parse_note as parse_note,
)
from .obsidian import Link as Link, LinkTargets as LinkTargets
from .posix import fcntl as fcntl  # the one import of fcntl: POSIX only, said in posix.py
from .scopes import (
    Scope as Scope,
    check_scope as check_scope,
    find_scopes as find_scopes,
    parse_scope as parse_scope,
    scope_of as scope_of,
    scope_text as scope_text,
    sees as sees,
    split_scope as split_scope,
    visible_scopes as visible_scopes,
)
