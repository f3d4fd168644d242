"""Coding agents' own session files for `vault import`: Claude Code (claude_code.py) and the
OpenAI Codex CLI (codex.py), given as files or whole folders (`~/.claude/projects`,
`~/.codex/sessions`). Which files make a session, which format a path holds (`--format
auto`), and the sessions read one at a time.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import claude_code, codex
from .agentlog import AgentChat, BadLine, SessionFiles, read_jsonl
from .formats import ChatProblem, ImportFormatError

AGENT_FORMATS = (claude_code.FORMAT, codex.FORMAT)
PEEK_FILES = 20  # JSONL files of a folder looked at to tell its format


@dataclass(frozen=True)
class AgentSessions:
    """The sessions found under one path, as the importer reads them."""

    path: Path
    format: str
    sessions: tuple[SessionFiles, ...]

    @property
    def name(self) -> str:
        return self.path.name + ("/" if self.path.is_dir() else "")


def find_sessions(path: Path, fmt: str) -> AgentSessions:
    """The sessions of format `fmt` under `path`; `ImportFormatError` when there are none."""
    if not path.exists():
        raise ImportFormatError(str(path), "there is no such file or folder")
    module = claude_code if fmt == claude_code.FORMAT else codex
    found = module.session_files(path)
    if not found:
        where = "folder" if path.is_dir() else "file"
        raise ImportFormatError(path.name, f"the {where} holds no {fmt} session (*.jsonl)")
    return AgentSessions(path, fmt, tuple(found))


def read_sessions(found: AgentSessions) -> Iterator[AgentChat | ChatProblem]:
    """Each session, read when its turn comes (one in memory at a time)."""
    module = claude_code if found.format == claude_code.FORMAT else codex
    for number, files in enumerate(found.sessions, 1):
        yield module.read_session(files, number)


def agent_format(path: Path) -> str | None:
    """claude-code or codex when `path` (a file, or a folder of session files at any depth)
    holds that agent's sessions, else None."""
    if path.is_file():
        return _format_of_file(path)
    if not path.is_dir() or (path / "conversations.json").is_file():
        return None
    for candidate in itertools.islice(sorted(path.rglob("*.jsonl")), PEEK_FILES):
        found = _format_of_file(candidate)
        if found is not None:
            return found
    return None


def _format_of_file(path: Path) -> str | None:
    try:
        for _, value in read_jsonl(path, 1 << 20):
            if isinstance(value, BadLine):
                return None
            if claude_code.first_record_is_claude_code(value):
                return claude_code.FORMAT
            if codex.first_line_is_codex(value):
                return codex.FORMAT
            return None
    except OSError:
        return None
    return None
