"""The dream diary, `dreams/YYYY-MM-DD.md`: one entry per dream or undo, for people to read,
ending with one machine-readable line that makes the dream's state recoverable from the vault:

    <!-- vault-dream {"action": "dream", "id": "…", "consumed": {"memory/…md": ["3f2a…"]}, …} -->

It records what the dream consumed (content hashes of daily-log items), the sha256 of
MEMORY.md before and after, the backup of the previous MEMORY.md and the archive's state, so
`.vault/` can be deleted without forgetting anything and `vault dream --undo` works without git.
Pure: rendering and parsing only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..text import one_line as one_line  # the diary's quotes of lines

DIARY_TITLE = "# Dream diary {date}\n"
_MARKER = re.compile(r"^<!-- vault-dream (\{.*\}) -->[ \t]*\r?$", re.M)


@dataclass
class Record:
    """The machine-readable part of one diary entry."""

    action: str  # "dream" or "undo"
    id: str
    memory_before: str | None = None  # sha256 of MEMORY.md before (None: it did not exist)
    memory_after: str | None = None
    backup: str | None = None  # vault-relative path of the copy of MEMORY.md before
    archive: dict[str, Any] | None = None  # path, before_size, before_sha256, after_sha256
    consumed: dict[str, list[str]] = field(default_factory=dict)
    undoes: str | None = None  # for an undo: the id of the dream it undid
    diary: str = ""  # the diary file it was read from (not stored)

    @property
    def changed_memory(self) -> bool:
        return self.memory_before != self.memory_after

    def marker(self) -> str:
        data = {k: v for k, v in self.__dict__.items() if k != "diary" and v not in (None, {})}
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        # `-->` must not end the comment early; JSON allows `>` escaped.
        escaped = text.replace(">", "\\u003e")
        return f"<!-- vault-dream {escaped} -->"


def parse_records(relpath: str, text: str) -> list[Record]:
    """The records of a diary file, in file order. Foreign or damaged markers are skipped."""
    found = []
    for match in _MARKER.finditer(text):
        try:
            data = json.loads(match[1])
            record = Record(
                action=str(data["action"]),
                id=str(data["id"]),
                memory_before=data.get("memory_before"),
                memory_after=data.get("memory_after"),
                backup=data.get("backup"),
                archive=data.get("archive"),
                consumed={
                    str(k): [str(h) for h in v] for k, v in dict(data.get("consumed") or {}).items()
                },
                undoes=data.get("undoes"),
                diary=relpath,
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        found.append(record)
    return found


def fence(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{info}\n{body}{ticks}\n"


def render_entry(
    heading: str,
    facts: Sequence[tuple[str, str]],
    sections: Sequence[tuple[str, Sequence[str]]],
    diff: str,
    record: Record,
) -> str:
    """A diary entry: `## heading`, a list of facts, titled lists, the diff, the marker."""
    out = [f"\n## {heading}\n\n"]
    out.extend(f"- **{name}:** {value}\n" for name, value in facts)
    for title, lines in sections:
        if not lines:
            continue
        out.append(f"\n### {title}\n\n")
        out.extend(f"- {line}\n" for line in lines)
    out.append("\n### Diff\n\n")
    out.append(fence(diff, "diff") if diff else "No change to MEMORY.md.\n")
    out.append(f"\n{record.marker()}\n")
    return "".join(out)
