"""Change planning: disk state vs index state -> what to do. Pure, no I/O.

Files are compared by (mtime_ns, size) first; only when those differ does the content hash
decide, or when the file is "racy" (git's rule: its recorded mtime was not older than the index
run that read it, so a same-size rewrite in the same file-time tick keeps the stat). Moves are
found by content hash. A file that could not be read is "modified" (its old units stay until it
can be read again), never "deleted".
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DiskFile:
    mtime_ns: int
    size: int
    sha256: str | None = None  # filled in by the caller for files whose stat changed
    unreadable: str | None = None  # the reason, when the file could not be read


@dataclass(frozen=True)
class IndexedFile:
    mtime_ns: int
    size: int
    sha256: str


@dataclass
class ChangePlan:
    new: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old path, new path)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)  # same bytes, new mtime: refresh the stat
    unreadable: list[str] = field(default_factory=list)  # new or modified files we cannot read
    #: Files that could not be read before and have not changed since: not read again (nor
    #: reported again) until they change (the index keeps what it had of them, if anything).
    held: list[str] = field(default_factory=list)

    @property
    def is_noop(self) -> bool:
        return not (self.new or self.modified or self.moved or self.deleted or self.touched)

    def counts(self) -> dict[str, int]:
        return {
            "new": len(self.new),
            "modified": len(self.modified),
            "moved": len(self.moved),
            "deleted": len(self.deleted),
            "unchanged": len(self.unchanged) + len(self.touched),
            "unreadable": len(self.unreadable),
        }


def stat_changed(disk: DiskFile, indexed: IndexedFile | None) -> bool:
    return indexed is None or (disk.mtime_ns, disk.size) != (indexed.mtime_ns, indexed.size)


def plan_changes(
    disk: Mapping[str, DiskFile],
    indexed: Mapping[str, IndexedFile],
    scope: set[str] | None = None,
    racy: Collection[str] = (),
) -> ChangePlan:
    """Classify every path of `disk` and `indexed`.

    `disk` must carry `sha256` (or `unreadable`) for each file whose stat differs from the
    index and for each `racy` path (compared by content even when its stat is the same).
    With `scope`, only those paths are planned (a partial update for a few files); a move is
    still recognised when both of its paths are in scope.
    """
    plan = ChangePlan()
    paths = set(disk) | set(indexed)
    if scope is not None:
        paths &= scope
    appeared: list[str] = []
    for path in sorted(paths):
        here, known = disk.get(path), indexed.get(path)
        if here is None:
            continue  # only in the index: deleted or the source of a move, decided below
        if (
            known is not None
            and not stat_changed(here, known)
            and (path not in racy or here.sha256 == known.sha256)
        ):
            plan.unchanged.append(path)
        elif here.unreadable is not None:
            if known is not None:
                plan.modified.append(path)
            plan.unreadable.append(path)
        elif known is None:
            appeared.append(path)
        elif here.sha256 == known.sha256:
            plan.touched.append(path)
        else:
            plan.modified.append(path)
    gone = {path: indexed[path].sha256 for path in sorted(paths) if path not in disk}
    by_hash: dict[str, list[str]] = {}
    for path, sha in gone.items():
        by_hash.setdefault(sha, []).append(path)
    for path in appeared:
        sources = by_hash.get(disk[path].sha256 or "")
        if sources:
            old = sources.pop(0)
            del gone[old]
            plan.moved.append((old, path))
        else:
            plan.new.append(path)
    plan.deleted.extend(gone)
    return plan
