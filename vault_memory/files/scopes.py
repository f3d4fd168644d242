"""Scopes: one vault, many agents and users, each with memory of its own and shared memory above.

A scope is a path of names, ("org", "acme", "agent-alpha"); its files live in the folder of
the same path under `scopes/`: `scopes/org/acme/agent-alpha/MEMORY.md`, its `memory/` daily
logs, its `dreams/` diary and any other notes. Everything outside `scopes/` is the root scope
(), so a vault without scopes is what it always was.

A file's scope is a pure function of its path (`split_scope`): below `scopes/`, every folder
is a scope except `memory/`, `dreams/`, `sessions/` and `notes/` (the reserved names), which
hold the files of the scope they are in. So `scopes/alice/notes/recipes/pasta.md` belongs to
alice, while `scopes/alice/bob/MEMORY.md` belongs to alice/bob. A folder whose name could not
be given as a scope (`scopes/Maya Lindqvist/`, with a space) is still a scope of its own, one
nobody can bind to: its files are private to it, never shared by accident with the root.

Visibility (`sees`): a scope sees its own files and those of its ancestors, up to the root,
never a sibling's or a descendant's. It writes only its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..config import CACHE_DIR, CONFIG_FILE, DAILY_DIR, DIARY_DIR, MEMORY_FILE, SCOPES_DIR
from ..errors import ScopeNameError

Scope = tuple[str, ...]

MAX_NAME = 64
#: Folder names inside a scope that are not scopes (compared case-insensitively, since
#: `Memory/` and `memory/` are one folder on macOS and Windows).
RESERVED = frozenset(
    {
        DAILY_DIR,
        DIARY_DIR,
        "sessions",
        "notes",
        SCOPES_DIR,
        MEMORY_FILE.lower(),
        CONFIG_FILE,
        CACHE_DIR,
    }
)
_NAME = re.compile(r"^\w[\w.@+-]*$")
_FILE_LIKE = (".md", ".markdown", ".canvas")


def name_problem(name: object) -> str | None:
    """Why `name` cannot be a scope name, or None when it can."""
    if not isinstance(name, str):
        return f"a name is a string, not {type(name).__name__}"
    if not name:
        return "a name is empty"
    if name in (".", ".."):
        return f"{name!r} is not a folder of its own"
    if "/" in name or "\\" in name:
        return "a name holds no '/' or '\\\\' (give the names one by one)"
    if name.startswith("."):
        return "a name does not start with a dot (hidden folders are never read)"
    if len(name) > MAX_NAME:
        return f"a name has at most {MAX_NAME} characters"
    if not _NAME.match(name):
        return "a name holds only letters, digits and . _ - @ + (no spaces)"
    if name.lower() in RESERVED:
        return f"{name!r} is the name of a vault's own folder or file"
    if name.endswith(".") or name.lower().endswith(_FILE_LIKE):
        return "a name does not end like a file name or with a dot"
    return None


def is_scope_name(name: str) -> bool:
    return name_problem(name) is None


def check_scope(names: Iterable[object]) -> Scope:
    """`names` as a scope, or `ScopeNameError` saying what is wrong."""
    checked = []
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            raise ScopeNameError(name, problem)
        checked.append(str(name))
    return tuple(checked)


def parse_scope(text: str) -> Scope:
    """`org/acme/agent-alpha` -> ("org", "acme", "agent-alpha"); `/` is the root scope ()."""
    stripped = text.strip()
    if stripped == "/":
        return ()
    if not stripped:
        raise ScopeNameError(text, "the scope is empty; give / for the root scope")
    return check_scope(stripped.strip("/").split("/"))


def scope_text(scope: Scope) -> str:
    """("org", "acme") -> "org/acme"; the root scope is ""."""
    return "/".join(scope)


def scope_prefix(scope: Scope) -> str:
    """The vault-relative folder of a scope's files, with its final slash ("" for the root)."""
    return f"{SCOPES_DIR}/{'/'.join(scope)}/" if scope else ""


def split_scope(relpath: str) -> tuple[Scope, str]:
    """A vault-relative path as (its scope, the path inside the scope's folder). Pure."""
    parts = relpath.split("/")
    if len(parts) < 3 or parts[0] != SCOPES_DIR:
        return (), relpath
    end = 1
    while end < len(parts) - 1 and parts[end].lower() not in RESERVED:
        end += 1
    if end == 1:
        return (), relpath
    return tuple(parts[1:end]), "/".join(parts[end:])


def scope_of(relpath: str) -> Scope:
    return split_scope(relpath)[0]


def folder_scope(relpath: str) -> Scope:
    """The scope of the files directly in the folder `relpath` ("" is the vault root)."""
    return scope_of(f"{relpath}/x" if relpath else "x")


def sees(viewer: Scope | None, owner: Scope) -> bool:
    """Whether a scope bound to `viewer` may see a file of `owner`: its own and its ancestors'
    (None, an unbound vault, sees everything)."""
    return viewer is None or owner == viewer[: len(owner)]


def visible_scopes(viewer: Scope) -> list[Scope]:
    """The scopes `viewer` sees, the root first: (), ("org",), ("org", "acme"), …"""
    return [viewer[:depth] for depth in range(len(viewer) + 1)]


def lexical_scopes(given: str) -> Iterator[Scope]:
    """The scope of every folder a user-given path passes through (`..` applied as written),
    so that `scopes/b/../a/x.md` is seen to pass through b."""
    stack: list[str] = []
    yield ()
    for part in given.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if stack:
                stack.pop()
        else:
            stack.append(part)
        yield folder_scope("/".join(stack))


def link_problem(link_relpath: str, target_relpath: str) -> str | None:
    """Why a symlink at `link_relpath` leading to `target_relpath` must not be followed: it
    would show a file of a scope the link's own scope may not see."""
    owner, target = scope_of(link_relpath), scope_of(target_relpath)
    if sees(owner, target):
        return None
    return f"a symlink into {_label(target)}, which {_label(owner)} may not see"


def _label(scope: Scope) -> str:
    return f"scope {scope_text(scope)}" if scope else "the root scope"


def find_scopes(root: Path) -> list[Scope]:
    """Every scope with a folder under `root/scopes/` (symlinked and hidden folders are not
    entered), sorted; the root scope is not listed."""
    found: list[Scope] = []
    pending: list[tuple[str, Scope]] = [(os.path.join(root, SCOPES_DIR), ())]
    while pending:
        folder, scope = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_folder and not entry.name.startswith(".") and entry.name.lower() not in RESERVED:
                child = (*scope, entry.name)
                found.append(child)
                pending.append((entry.path, child))
    return sorted(found)
