"""What the hostile cases share (a helper, not a case module): running `vault` as users do,
the checks a case makes, a small file system to fill, a vault already indexed.

    from _support import Skip, vault, one_error, snapshot, leftovers, tmpfs, fill
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
LEFTOVER_ENDINGS = (".tmp", ".partial", ".append")
GB = 1 << 30


class Skip(Exception):
    """The case cannot run here (the harness reports `skip: reason`)."""


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    cpu_s: float  # user + system seconds of the command

    def __str__(self) -> str:
        return f"exit {self.code}; stderr {self.stderr.strip()[:300]!r}"


def vault(
    root: Path | None,
    *args: str,
    input: bytes | str | None = None,
    timeout: float = 300.0,
    cap_gb: float | None = 2.0,
    file_limit: int | None = None,
    env: dict[str, str] | None = None,
) -> Result:
    """`vault ARGS` in a process of its own (`--vault root` when given), under an address-space
    cap (`cap_gb`, as `ulimit -v`), optionally a file-size limit (`file_limit` bytes, as
    `ulimit -f`: writes past it fail with EFBIG), and a timeout."""

    def limits() -> None:
        if cap_gb is not None:
            cap = int(cap_gb * GB)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    command = [sys.executable, "-m", "vault_memory.cli"]
    if root is not None:
        command += ["--vault", str(root)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    data = input.encode("utf-8") if isinstance(input, str) else input
    done = subprocess.run(
        command + list(args),
        input=data,
        capture_output=True,
        timeout=timeout,
        preexec_fn=limits,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        cwd=str(root) if root is not None and root.is_dir() else None,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Result(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        cpu,
    )


def no_traceback(result: Result) -> str | None:
    if "Traceback" in result.stderr or "Traceback" in result.stdout:
        last = [line for line in result.stderr.splitlines() if line.strip()][-1:]
        return f"a traceback: {last[0][:200] if last else ''}"
    return None


def one_error(result: Result, *needles: str) -> str | None:
    """None when the command failed (exit 1) with exactly one line on stderr, `Error: ...`,
    holding every needle; else why not."""
    problem = no_traceback(result)
    if problem:
        return problem
    if result.code != 1:
        return f"exit {result.code}, not 1 ({result.stderr.strip()[:200]!r})"
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error: ")]
    if len(errors) != 1 or len(lines) != 1:
        return f"{len(lines)} lines on stderr, {len(errors)} of them errors: {lines[:3]!r}"
    missing = [n for n in needles if n.lower() not in errors[0].lower()]
    if missing:
        return f"the error does not say {missing!r}: {errors[0][:300]!r}"
    return None


def succeeded(result: Result) -> str | None:
    problem = no_traceback(result)
    if problem:
        return problem
    if result.code != 0:
        return f"exit {result.code}: {result.stderr.strip()[:300]!r}"
    return None


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault outside `.vault/` (the cache), by path, with its bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        relpath = path.relative_to(root).as_posix()
        if relpath == ".vault" or relpath.startswith(".vault/"):
            continue
        if path.is_file() and not path.is_symlink():
            found[relpath] = path.read_bytes()
    return found


def leftovers(*folders: Path) -> list[str]:
    """Temp files, partial outputs and append journals left under `folders`."""
    found = []
    for folder in folders:
        if not folder.exists():
            continue
        for path in folder.rglob("*"):
            if path.name.endswith(LEFTOVER_ENDINGS):
                found.append(str(path))
    return found


def cut_lines(root: Path) -> list[str]:
    """Markdown files of the vault that do not end with a complete line."""
    return [
        path.relative_to(root).as_posix()
        for path in root.rglob("*.md")
        if ".vault" not in path.parts and path.is_file() and not _whole(path.read_bytes())
    ]


def _whole(data: bytes) -> bool:
    return not data or data.endswith(b"\n")


def changed_or_whole(before: dict[str, bytes], root: Path) -> str | None:
    """Markdown byte-identical to `before`, or each changed file only longer by whole lines
    (what an all-or-nothing append leaves); None when so."""
    after = snapshot(root)
    for relpath, data in after.items():
        old = before.get(relpath)
        if old == data:
            continue
        if old is not None and not data.startswith(old):
            return f"{relpath} was rewritten, not appended to"
        if not _whole(data):
            return f"{relpath} ends with a cut line"
    gone = sorted(set(before) - set(after))
    return f"files gone: {gone}" if gone else None


def init_vault(root: Path) -> Path:
    result = vault(None, "init", str(root))
    if result.code != 0:
        raise RuntimeError(f"vault init failed: {result}")
    return root


# -- a small file system -----------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` (e.g. "256k") mounted on `folder`, unmounted after; `Skip` where
    mounting is not permitted (not root, a container without the capability)."""
    folder.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        raise Skip("no mount command")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise Skip(f"cannot mount a tmpfs here ({done.stderr.strip()[:100]})")
    try:
        yield folder
    finally:
        for _ in range(50):  # a process of the case may still hold it for a moment
            if subprocess.run(["umount", str(folder)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def free_bytes(folder: Path) -> int:
    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize


def fill(folder: Path, leave: int) -> None:
    """Take the space of the file system of `folder` down to `leave` bytes free (a filler file
    at its top; `unfill` gives it back)."""
    filler = folder / "filler"
    filler.unlink(missing_ok=True)
    take = max(free_bytes(folder) - leave, 0)
    with filler.open("wb") as fh:
        while take > 0:
            chunk = min(take, 1 << 20)
            try:
                fh.write(b"\0" * chunk)
                fh.flush()
            except OSError:
                break
            take -= chunk


def unfill(folder: Path) -> None:
    (folder / "filler").unlink(missing_ok=True)


def remount_read_only(folder: Path, read_only: bool = True) -> None:
    mode = "ro" if read_only else "rw"
    done = subprocess.run(
        ["mount", "-o", f"remount,{mode}", str(folder)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise Skip(f"cannot remount {mode} ({done.stderr.strip()[:100]})")


# -- a vault already indexed, made once per harness run ----------------------------------------

NOTES = {
    "memory/2026-11-20.md": "# 2026-11-20\n\n## 09:12 · note\n- Chose PostgreSQL for the billing "
    "service. #decision\n\n## 14:03 · note\n- Priya owns the ledger migration.\n",
    "memory/2026-11-21.md": "# 2026-11-21\n\n## 10:00 · note\n- The renderer ships on Friday.\n"
    "- Staging runs out of disk every Monday; ERR_LEDGER_409 comes back then.\n",
    "notes/billing.md": "# Billing\n\nInvoices are sent on the first of the month.\n\n"
    "## Runbook\n\nRestart the ledger worker before the cutover.\n",
}


def indexed_vault(dest: Path) -> Path:
    """A copy (at `dest`) of a small vault indexed with the bundled model, made the first time
    a case asks within a harness run (kept in `$HOSTILE_CACHE`)."""
    cache = Path(os.environ.get("HOSTILE_CACHE") or (dest.parent / ".hostile-cache"))
    cache.mkdir(parents=True, exist_ok=True)
    template = cache / "indexed-vault"
    with (cache / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (template / ".vault" / "index.sqlite").exists():
            shutil.rmtree(template, ignore_errors=True)
            init_vault(template)
            for relpath, text in NOTES.items():
                (template / relpath).parent.mkdir(parents=True, exist_ok=True)
                (template / relpath).write_text(text, encoding="utf-8")
            result = vault(template, "index", cap_gb=None)
            if result.code != 0:
                raise RuntimeError(f"vault index failed: {result}")
    shutil.copytree(template, dest, symlinks=True)
    return dest


def hybrid_answer(root: Path, query: str = "which database for billing") -> str | None:
    """None when a search answers with vector scores (hybrid, the vectors kept); else why not."""
    import json

    result = vault(root, "search", query, "--json", cap_gb=None)
    problem = succeeded(result)
    if problem:
        return f"search: {problem}"
    answer = json.loads(result.stdout)
    hits = answer.get("results") or []
    if answer.get("mode") != "hybrid" or not hits:
        return f"search answered {answer.get('mode')} with {len(hits)} hits"
    if not any((hit.get("scores") or {}).get("vector", 0) > 0 for hit in hits):
        return "search answered without vector scores (the vectors were lost)"
    return None
