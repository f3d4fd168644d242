"""Prune: transcripts older than a number of days are deleted, and nothing else ever is.

Only files named as transcripts (`sessions/YYYY-MM-DD-ID.md`, of the root or of a scope) can
be chosen; a daily log, MEMORY.md or any other note cannot, whatever their dates. A
transcript's age is that of its last message (`updated:` in its frontmatter; the file's
mtime when that is missing or unreadable). In a git vault the deletion is one commit of
exactly those files (a transcript git did not track yet is committed first), so
`git revert` brings them back. `[sessions] keep_days` makes `vault watch` prune once a day.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import clock
from ..errors import ArgumentError, VaultError
from ..files import fsutil, note_kind
from .identity import Pruned, pruned_record, remember_pruned
from .transcript import (
    MAX_TRANSCRIPT_BYTES,
    session_of_name,
    transcript_files,
    transcript_head,
)

log = logging.getLogger("vault_memory")

STATE_FILE = "sessions-prune.json"  # in .vault/: the day the watcher last pruned
_AGE = re.compile(r"^\s*(\d+)\s*([dw]?)\s*$")


def parse_age(text: str) -> int:
    """`30d`, `30`, `2w` -> days. `ArgumentError` for anything else."""
    match = _AGE.match(str(text).lower())
    if not match:
        raise ArgumentError(
            "older_than_days", text, " is not an age; give days, e.g. 30d (or weeks: 4w)."
        )
    return int(match[1]) * (7 if match[2] == "w" else 1)


@dataclass
class PruneReport:
    older_than_days: int
    cutoff: str  # transcripts last updated before this moment are deleted
    dry_run: bool
    deleted: list[str] = field(default_factory=list)  # vault-relative paths
    kept: int = 0
    commit: str | None = None  # the git commit of the deletion
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "older_than_days": self.older_than_days,
            "cutoff": self.cutoff,
            "dry_run": self.dry_run,
            "deleted": self.deleted,
            "kept": self.kept,
            "commit": self.commit,
            "warnings": self.warnings,
        }


def _last_update(path: Path, relpath: str, session: str, day: str) -> dt.datetime:
    head = transcript_head(path, relpath, session, day)
    for value in (head.updated, head.started):
        try:
            return dt.datetime.fromisoformat(value).replace(tzinfo=None)
        except (TypeError, ValueError):
            continue
    return dt.datetime.fromtimestamp(path.stat().st_mtime)


def prune_transcripts(
    root: Path,
    folders: Sequence[str],
    older_than_days: int,
    dry_run: bool = False,
    git_commit: bool = True,
    now: dt.datetime | None = None,
    allow_hardlinks: bool = False,
) -> PruneReport:
    """Delete the transcripts in `folders` last updated more than `older_than_days` ago (one
    with several hard links is neither read nor deleted, unless `allow_hardlinks`)."""
    if older_than_days < 0:
        raise ArgumentError("older_than_days", older_than_days, ": give 0 days or more.")
    now = (now or clock.now()).replace(tzinfo=None)
    cutoff = now - dt.timedelta(days=older_than_days)
    report = PruneReport(older_than_days, cutoff.isoformat(timespec="seconds"), dry_run)
    chosen: list[tuple[Path, str]] = []
    for folder in folders:
        for path, relpath, session, day in transcript_files(root, folder, allow_hardlinks):
            if note_kind(relpath) != "session":  # never anything but a transcript
                continue
            if _last_update(path, relpath, session, day) < cutoff:
                chosen.append((path, relpath))
            else:
                report.kept += 1
    report.deleted = [relpath for _, relpath in chosen]
    if dry_run or not chosen:
        return report
    from ..files import gitops

    tracked: list[str] = []
    commit = git_commit and gitops.in_repository(root)
    if commit:
        relpaths = [r for _, r in chosen]
        ignored = set(gitops.ignored(root, relpaths))
        tracked = [r for r in relpaths if r not in ignored]
        untracked = [r for r in tracked if not gitops.tracked(root, r)]
        if untracked:  # into history first, so that the deletion can be undone
            try:
                gitops.commit_only(
                    root,
                    untracked,
                    "vault sessions: keep transcripts in history before pruning them",
                )
            except gitops.GitError as exc:
                report.warnings.append(f"git: {exc}")
                tracked = [r for r in tracked if r not in untracked]
    records = _records_of(root, chosen, now)
    for path, relpath in chosen:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            report.warnings.append(f"could not delete {relpath}: {exc.strerror}")
            report.deleted.remove(relpath)
            tracked = [r for r in tracked if r != relpath]
            records.pop(relpath, None)
    remembered = _remember(root, records.values(), report)
    if commit and tracked:
        try:
            report.commit = gitops.commit_only(
                root,
                tracked + remembered,
                f"vault sessions prune: {len(tracked)} transcript"
                f"{'s' if len(tracked) != 1 else ''} older than {older_than_days} days\n\n"
                + "\n".join(tracked),
            )
        except gitops.GitError as exc:
            report.warnings.append(f"git: {exc}")
    for warning in report.warnings:
        log.warning("%s", warning)
    return report


def _records_of(
    root: Path, chosen: Sequence[tuple[Path, str]], now: dt.datetime
) -> dict[str, Pruned]:
    """What to remember of each transcript about to be deleted (see identity.py): read now,
    while it is there."""
    records = {}
    for path, relpath in chosen:
        try:
            text = fsutil.read_text(path, relpath, MAX_TRANSCRIPT_BYTES).text
        except VaultError:
            continue
        session = session_of_name(relpath.rsplit("/", 1)[-1])
        record = pruned_record(session, relpath, text, now)
        if record is not None:
            records[relpath] = record
    return records


def _remember(root: Path, records: Iterable[Pruned], report: PruneReport) -> list[str]:
    """Append the records of the deleted transcripts to their folders' `.pruned.jsonl` (so
    that a later flush of those conversations does not write them again); the files written,
    for the commit."""
    by_folder: dict[str, list[Pruned]] = {}
    for record in records:
        by_folder.setdefault(record.path.rsplit("/", 1)[0], []).append(record)
    written = []
    for folder, found in sorted(by_folder.items()):
        try:
            relpath = remember_pruned(root, folder, found)
        except VaultError as exc:
            report.warnings.append(
                f"could not record the pruned transcripts ({exc}); a later flush of their "
                "conversations writes them again"
            )
            continue
        if relpath is not None:
            written.append(relpath)
    return written


def prune_if_due(cache_dir: Path, run: Any, keep_days: int, today: dt.date) -> PruneReport | None:
    """What `vault watch` calls on each reconcile: `run()` (a prune) once a day when
    `keep_days` is set, the day of the last one kept in `.vault/sessions-prune.json`."""
    if keep_days <= 0:
        return None
    state = cache_dir / STATE_FILE
    try:
        last = json.loads(state.read_text(encoding="utf-8")).get("day")
    except (OSError, ValueError, AttributeError):
        last = None
    if last == today.isoformat():
        return None
    report = run()
    cache_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"day": today.isoformat(), "deleted": len(report.deleted)})
    try:
        current = fsutil.sha256_bytes(state.read_bytes())
    except FileNotFoundError:
        current = None
    try:
        fsutil.write_atomic(state, text + "\n", current)
    except VaultError as exc:
        log.warning("could not record the prune: %s", exc)
    return report
