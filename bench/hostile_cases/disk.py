"""A full disk, a read-only file system, a file-size limit, for real: a small tmpfs mounted
for the case (skipped where mounting is not permitted), filled to a few kilobytes free. Every
write (add, flush, import, index, export, dream) is all or nothing: a line is complete or
absent, the one `Error:` line names the path and what was kept, nothing is left behind, and
the index keeps its vectors (searches stay hybrid)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _support import (
    ROOT,
    Result,
    changed_or_whole,
    cut_lines,
    fill,
    hybrid_answer,
    indexed_vault,
    init_vault,
    leftovers,
    one_error,
    remount_read_only,
    snapshot,
    succeeded,
    tmpfs,
    unfill,
    vault,
)

FAMILY = "disk"
KB = 1024
ENTRY = "Decided: " + "the billing cutover plan is long. " * 420  # about 14 KB
NOW = {"VAULT_NOW": "2026-11-22T10:00"}


def at_free_sizes(
    disk: Path, root: Path, sizes: range, run: Callable[[int], Result], *needles: str
) -> str | None:
    """`run(free)` at each free size (KB): it succeeds with its files grown by whole lines,
    or fails in one error holding `needles` with the files byte-identical; never leaves a
    temp file; and the sizes reach both outcomes."""
    outcomes = set()
    for free in sizes:
        fill(disk, free * KB)
        before = snapshot(root)
        result = run(free)
        if result.code != 0:
            problem = one_error(result, *needles)
        else:
            problem = succeeded(result) or changed_or_whole(before, root)
        if result.code != 0 and problem is None and snapshot(root) != before:
            problem = "files changed although the command failed"
        if problem := problem or _left(root):
            return f"{free} KB free: {problem}"
        outcomes.add(result.code)
    return None if outcomes == {0, 1} else f"the sizes did not reach both outcomes ({outcomes})"


def add_when_full(scratch: Path) -> str | None:
    with tmpfs(scratch / "disk", "256k") as disk:
        root = init_vault(disk / "vault")
        assert vault(root, "add", "first entry", env=NOW).code == 0

        def add(free: int) -> Result:
            return vault(root, "add", ENTRY, env=NOW)

        return at_free_sizes(
            disk, root, range(4, 44, 4), add, "memory/2026-11-22.md", "Nothing was changed"
        )


def _left(*folders: Path) -> str | None:
    found = leftovers(*folders)
    return f"left behind: {found}" if found else None


def flush_when_full(scratch: Path) -> str | None:
    talk = json.dumps(
        [
            {"role": "user", "content": f"We decided to move billing to PostgreSQL. {ENTRY}"},
            {"role": "assistant", "content": "Noted."},
        ]
    )
    with tmpfs(scratch / "disk", "256k") as disk:
        root = init_vault(disk / "vault")

        def flush(free: int) -> Result:
            return vault(root, "flush", "-", "--session", f"s{free}", input=talk, env=NOW)

        return at_free_sizes(disk, root, range(0, 64, 4), flush, "cannot write")


def import_when_full(scratch: Path) -> str | None:
    """An import the disk stops says what it kept; run again with room, it completes to what
    a clean import writes."""
    source = scratch / "conversations.json"
    source.write_text(json.dumps([_chat(n) for n in range(60)]), encoding="utf-8")
    clean = init_vault(scratch / "clean")
    if (problem := succeeded(vault(clean, "import", str(source)))) is not None:
        return f"clean import: {problem}"
    with tmpfs(scratch / "disk", "1m") as disk:
        root = init_vault(disk / "vault")
        fill(disk, 40 * KB)
        result = vault(root, "import", str(source))
        problem = one_error(result, "The import stopped there", "written before it are kept")
        if problem:
            return problem
        if cut := cut_lines(root):
            return f"cut lines in {cut}"
        if problem := _left(root):
            return problem
        unfill(disk)
        if (problem := succeeded(vault(root, "import", str(source)))) is not None:
            return f"second import: {problem}"
        logs = {p: d for p, d in snapshot(root).items() if p.startswith("memory/")}
        want = {p: d for p, d in snapshot(clean).items() if p.startswith("memory/")}
        if logs != want:
            return "the completed import wrote other daily logs than a clean one"
    return None


def _chat(number: int) -> dict[str, object]:
    stamp = 1757066400.0 + number * 60
    nodes = {"r": {"id": "r", "message": None, "parent": None, "children": ["u"]}}
    text = f"I prefer tool {number} over tool {number + 1} for project {number}. {ENTRY[:600]}"
    message = {
        "author": {"role": "user"},
        "content": {"content_type": "text", "parts": [text]},
        "create_time": stamp,
    }
    nodes["u"] = {"id": "u", "message": message, "parent": "r", "children": []}
    return {"title": f"T{number}", "mapping": nodes, "current_node": "u", "id": f"{number:08x}"}


def index_when_full(scratch: Path) -> str | None:
    """`vault index` on a full disk: one error, and the index keeps its vectors (a search
    answers hybrid); with room again, the new file is indexed."""
    with tmpfs(scratch / "disk", "4m") as disk:
        for free in (0, 64):
            root = indexed_vault(disk / f"vault-{free}")
            (root / "notes" / "new.md").write_text(
                "# New\n\n" + "".join(f"- migration step {n} of the ledger\n" for n in range(300)),
                encoding="utf-8",
            )
            fill(disk, free * KB)
            result = vault(root, "index", cap_gb=None)
            if result.code != 0 and (problem := one_error(result, "cannot write", ".vault")):
                return f"{free} KB free: {problem}"
            if problem := hybrid_answer(root):
                return f"{free} KB free, after the index: {problem}"
            unfill(disk)
            if (problem := succeeded(vault(root, "index", cap_gb=None))) is not None:
                return f"{free} KB free, index with room again: {problem}"
            if problem := hybrid_answer(root, "ledger migration step"):
                return f"{free} KB free, with room again: {problem}"
            shutil.rmtree(root)
    return None


def export_when_full(scratch: Path) -> str | None:
    root = indexed_vault(scratch / "vault")
    with tmpfs(scratch / "disk", "64k") as disk:
        kept = disk / "kept.jsonl"
        kept.write_text("an earlier export\n", encoding="utf-8")
        for free in (0, 1, 2):
            fill(disk, free * KB)
            for target in (disk / "new.jsonl", kept):
                result = vault(root, "export", "-o", str(target))
                if problem := one_error(result, target.name, "Nothing was written"):
                    return f"{free} KB free, {target.name}: {problem}"
            if (disk / "new.jsonl").exists():
                return "a partial export was left at the target"
            if kept.read_text(encoding="utf-8") != "an earlier export\n":
                return "the earlier export at the target was changed"
            if problem := _left(disk):
                return problem
    return None


def export_folder_moved(scratch: Path) -> str | None:
    """The target folder is moved away while the export is written: one error, and nothing
    left behind, neither where the folder was nor where it went."""
    root = init_vault(scratch / "vault")
    for day in range(400):  # enough sections that the export takes a while
        path = root / "memory" / f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}.md"
        blocks = "".join(
            f"\n## 10:{n:02d} · note\n- Entry {day}.{n} of the log.\n" for n in range(60)
        )
        path.write_text(f"# {path.stem}\n{blocks}", encoding="utf-8")
    folder, moved = scratch / "out", scratch / "moved"
    folder.mkdir()
    command = [sys.executable, "-m", "vault_memory.cli", "--vault", str(root), "export"]
    child = subprocess.Popen(
        command + ["-o", str(folder / "memory.jsonl")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 60
    while not any(p.name.endswith(".tmp") for p in folder.iterdir()):
        if child.poll() is not None or time.monotonic() > deadline:
            child.wait()
            return "the export ended before its temp file could be seen"
        time.sleep(0.001)
    folder.rename(moved)
    _, stderr = child.communicate(timeout=300)
    if child.returncode == 0:
        return "the export finished before the folder was moved (the vault is too small)"
    lines = [line for line in stderr.decode().splitlines() if line.strip()]
    if len(lines) != 1 or not lines[0].startswith("Error: ") or "moved" not in lines[0]:
        return f"not one error about the moved folder: {lines[:3]!r}"
    if folder.exists() or list(moved.iterdir()):
        return f"left behind: {list(moved.iterdir())}"
    return None


def dream_when_full(scratch: Path) -> str | None:
    """A dream on a full disk: MEMORY.md byte-identical or completely written, the diary and
    the backups whole, one error."""
    sample = ROOT / "sample_vault"
    env = {"VAULT_NOW": "2026-10-29T09:00"}
    with tmpfs(scratch / "disk", "1m") as disk:
        outcomes = set()
        for free in range(0, 40, 4):
            root = disk / "vault"
            shutil.rmtree(root, ignore_errors=True)
            unfill(disk)
            # the files only: a checkout's sample_vault/.vault/ (an index built by an earlier
            # command) would fill the small disk before the dream runs
            shutil.copytree(sample, root, ignore=shutil.ignore_patterns(".vault"))
            fill(disk, free * KB)
            before = snapshot(root)
            result = vault(root, "dream", env=env)
            outcomes.add(result.code)
            if result.code != 0:
                if problem := one_error(result, "cannot write"):
                    return f"{free} KB free: {problem}"
                if snapshot(root) != before:
                    return f"{free} KB free: files changed although the dream failed"
            elif problem := succeeded(result):
                return f"{free} KB free: {problem}"
            if cut := cut_lines(root):
                return f"{free} KB free: cut lines in {cut}"
            if problem := _left(root):
                return f"{free} KB free: {problem}"
        if outcomes != {0, 1}:
            return f"the free sizes did not reach both outcomes ({outcomes})"
    return None


def read_only(scratch: Path) -> str | None:
    """A read-only file system: every write refused in one line, nothing changed, searches
    still answer hybrid from the index."""
    talk = json.dumps([{"role": "user", "content": "We decided to use PostgreSQL."}])
    with tmpfs(scratch / "disk", "4m") as disk:
        root = indexed_vault(disk / "vault")
        (root / "notes" / "late.md").write_text("# Late\n\nA note after the index.\n")
        remount_read_only(disk)
        try:
            before = snapshot(root)
            commands: list[tuple[list[str], str | None]] = [
                (["add", "an entry"], None),
                (["flush", "-"], talk),
                (["index"], None),
                (["dream"], None),
                (["export", "-o", str(root / "out.jsonl")], None),
            ]
            for args, stdin in commands:
                result = vault(root, *args, input=stdin, cap_gb=None, env=NOW)
                if problem := one_error(result, "read-only"):
                    return f"vault {args[0]}: {problem}"
            if snapshot(root) != before:
                return "files changed on a read-only file system"
            if problem := hybrid_answer(root):
                return problem
        finally:
            remount_read_only(disk, False)
    return None


def file_size_limit(scratch: Path) -> str | None:
    """EFBIG: an append that would take the daily log past the file-size limit is refused
    whole (the log cut back), in one line."""
    root = init_vault(scratch / "vault")
    for _ in range(3):
        assert vault(root, "add", ENTRY[:6000], env=NOW).code == 0
    log = root / "memory" / "2026-11-22.md"
    size = log.stat().st_size
    before = snapshot(root)
    # room for the journal (the entry alone), not for the log grown by it
    result = vault(root, "add", ENTRY, env=NOW, file_limit=size + 8 * KB)
    if problem := one_error(result, "2026-11-22.md", "Nothing was changed"):
        return problem
    if snapshot(root) != before:
        return "the log changed"
    return _left(root)


CASES: list[tuple[str, Callable[[Path], str | None]]] = [
    ("add: a 14 KB entry at 4-40 KB free", add_when_full),
    ("flush: at 0-60 KB free", flush_when_full),
    ("import: the disk fills midway, then room again", import_when_full),
    ("index: at 0 and 64 KB free, vectors kept", index_when_full),
    ("export -o: onto a full disk", export_when_full),
    ("export -o: target folder moved away mid-write", export_folder_moved),
    ("dream: at 0-36 KB free", dream_when_full),
    ("read-only file system: every write", read_only),
    ("add: past the file-size limit (EFBIG)", file_size_limit),
]
