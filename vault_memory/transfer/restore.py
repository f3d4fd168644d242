"""`vault import` of a `vault export`: the files it holds, written back byte for byte.

Two passes over the export. The first reads all of it and checks it without writing: the
header (format, version), each file's sections (in order, complete, their texts joined
matching the file's sha256), the end record's counts (an export cut off between two files is
seen), and every path (inside the vault, Markdown the index reads, of the bound scope's own
files). A broken export writes nothing. The second pass writes, one file at a time, each
atomically:

- a file the vault lacks is written;
- the same bytes: unchanged;
- the vault's file is the start of the exported one (a daily log that grew since): extended;
- the exported file is the start of the vault's (the vault has more): unchanged;
- MEMORY.md still as `vault init` made it: replaced;
- a daily log that differs otherwise: the entry blocks it lacks are appended (merged);
- anything else is kept as it is and reported as a conflict: an import never removes a line.

So importing an export twice changes nothing the second time, a newer export adds only what
is new, and an import killed midway is completed by running it again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from ..errors import VaultError
from ..files import fsutil, note_kind, template_dir
from ..index import is_indexable
from .export import FORMAT, VERSION, split_sections
from .formats import ImportFormatError, Source, iter_items

if TYPE_CHECKING:
    from ..files import Layout

ACTIONS = ("written", "extended", "merged", "unchanged", "conflict")


@dataclass
class RestoreReport:
    files: int = 0
    sections: int = 0
    done: dict[str, list[str]] = field(default_factory=lambda: {a: [] for a in ACTIONS})

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "sections": self.sections,
            **{action: paths for action, paths in self.done.items()},
        }


def _records(source: Source) -> Iterator[tuple[str, Any]]:
    """(position, record) of an export in JSONL or as a JSON array."""
    with source.open() as fh:
        head = fh.read(64).lstrip()
    if head.startswith(b"["):
        for number, record in enumerate(iter_items(source), 1):
            yield f"record {number}", record
        return
    with source.open() as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                what = f"line {number} is not JSON ({exc}); the export is damaged or cut off"
                raise ImportFormatError(source.name, what) from None
            yield f"line {number}", record


def _fail(source: Source, where: str, what: str) -> ImportFormatError:
    return ImportFormatError(source.name, f"{where}: {what}")


def export_files(
    source: Source, check_path: Callable[[str], None] | None = None
) -> Iterator[tuple[str, str, int]]:
    """(path, text, sections) of each file of the export, checked as the module docstring
    says; `ImportFormatError` with the position of the first fault."""
    records = _records(source)
    first = next(records, None)
    if first is None:
        raise ImportFormatError(source.name, "it is empty")
    where, header = first
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise _fail(source, where, f"the first record is not the header of a {FORMAT}")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise _fail(
            source,
            where,
            f"format version {version!r} is newer than this vault-memory reads "
            f"({VERSION}); upgrade vault-memory",
        )
    files = sections = 0
    current: dict[str, Any] | None = None
    texts: list[str] = []
    ended = False
    for where, record in records:
        kind = record.get("type") if isinstance(record, dict) else None
        if ended:
            raise _fail(source, where, "a record after the end record")
        if kind == "section":
            if current is None or len(texts) >= current["sections"]:
                raise _fail(source, where, "a section that belongs to no file record")
            if record.get("path") != current["path"] or not isinstance(record.get("text"), str):
                raise _fail(source, where, f"a section that is not of {current['path']}")
            texts.append(record["text"])
            sections += 1
        elif kind in ("file", "end"):
            if current is not None:
                yield _complete(source, where, current, texts)
                current = None
            if kind == "end":
                ended = True
                if record.get("files") != files or record.get("sections") != sections:
                    raise _fail(
                        source,
                        where,
                        f"the end record counts {record.get('files')} files and "
                        f"{record.get('sections')} sections, but the export holds {files} and "
                        f"{sections}",
                    )
                continue
            path, count = record.get("path"), record.get("sections")
            if not isinstance(path, str) or not isinstance(count, int) or count < 0:
                raise _fail(source, where, "a file record without a path and a section count")
            if not isinstance(record.get("sha256"), str):
                raise _fail(source, where, f"the file record of {path} has no sha256")
            if not is_indexable(path):
                raise _fail(source, where, f"{path} is not a Markdown file of a vault")
            if check_path is not None:
                try:
                    check_path(path)
                except VaultError as exc:
                    raise _fail(source, where, str(exc).rstrip(".")) from None
            current, texts = record, []
            files += 1
        else:
            raise _fail(source, where, f"an unknown record type {kind!r}")
    if current is not None:
        yield _complete(source, "the end", current, texts)
    if not ended:
        raise ImportFormatError(
            source.name, "it ends without its end record: the export was cut off"
        )


def _complete(
    source: Source, where: str, file: dict[str, Any], texts: list[str]
) -> tuple[str, str, int]:
    path = file["path"]
    if len(texts) != file["sections"]:
        raise _fail(
            source,
            where,
            f"{path} has {len(texts)} of its {file['sections']} sections: the export was cut off",
        )
    text = "".join(texts)
    if fsutil.sha256_text(text) != file["sha256"]:
        raise _fail(source, where, f"the sections of {path} do not match its sha256")
    return path, text, len(texts)


@cache
def _memory_template() -> str:
    return (template_dir() / "vault" / "MEMORY.md").read_text(encoding="utf-8")


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def restore_file(layout: Layout, relpath: str, text: str, dry_run: bool) -> str:
    """Bring one file of the vault in line with `text` as the module docstring says; returns
    the action (written, extended, merged, unchanged, conflict)."""
    real, relpath = layout.resolve_own(relpath)
    if not real.exists():
        if not dry_run:
            real.parent.mkdir(parents=True, exist_ok=True)
            fsutil.write_atomic(real, text, None, relpath)
        return "written"
    links_ok = layout.allow_hardlinks
    current = fsutil.read_text(real, relpath, layout.config.index.max_file_bytes, links_ok)
    if current.text == text or current.text.startswith(text):
        return "unchanged"
    kind = note_kind(relpath)
    untouched = kind == "memory" and relpath == "MEMORY.md" and current.text == _memory_template()
    if untouched or text.startswith(current.text):
        if not dry_run:
            fsutil.write_atomic(real, text, current.sha256, relpath, links_ok)
        return "written" if untouched else "extended"
    if kind != "daily":
        return "conflict"
    have = {_normal(s["text"]) for s in split_sections(relpath, current.text)}
    missing = [
        s["text"]
        for s in split_sections(relpath, text)
        if s["time"] is not None and _normal(s["text"]) not in have
    ]
    if not missing:
        return "unchanged"
    if not dry_run:
        joined = current.text if current.text.endswith("\n") else current.text + "\n"
        if not joined.endswith("\n\n"):
            joined += "\n"
        blocks = [_normal(block) + "\n" for block in missing]
        fsutil.write_atomic(real, joined + "\n".join(blocks), current.sha256, relpath, links_ok)
    return "merged"


def check_export(layout: Layout, source: Source) -> int:
    """The first pass: read and check the whole export, write nothing; returns how many
    files it holds."""

    def check(path: str) -> None:
        layout.resolve_own(path)  # inside the vault, and the bound scope's own

    return sum(1 for _ in export_files(source, check))


def restore(
    layout: Layout,
    source: Source,
    dry_run: bool = False,
    report: RestoreReport | None = None,
    progress: Callable[[], None] | None = None,
) -> RestoreReport:
    """The second pass: bring each file of the export (checked by `check_export`) into the
    vault, see the module docstring."""
    report = report or RestoreReport()
    for path, text, sections in export_files(source):
        action = restore_file(layout, path, text, dry_run)
        report.done[action].append(path)
        report.files += 1
        report.sections += sections
        if progress is not None:
            progress()
    return report
