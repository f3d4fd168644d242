"""Damage that used to end in a traceback or silence. `vault doctor` never crashes: on each
damaged artefact of the cache it says what is wrong and what repairs it (and repairs it: the
status after it is healthy, searches answer hybrid). Special files where notes should be (a
named pipe, a socket, a device, a folder named `*.md`) are reported by `status` and `doctor`,
human and `--json`, and never opened: no command hangs on them."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
from collections.abc import Callable
from pathlib import Path

from _support import hybrid_answer, indexed_vault, one_error, succeeded, vault

FAMILY = "damage"
NOW = {"VAULT_NOW": "2026-11-22T10:00"}


def _cut(path: Path) -> None:
    with path.open("r+b") as fh:
        fh.truncate(path.stat().st_size // 2)


def _random(path: Path) -> None:
    path.write_bytes(os.urandom(max(path.stat().st_size, 4096)))


def _replace_by_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "x").write_text("x")


def _replace_by_pipe(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _segments(cache: Path) -> list[Path]:
    return sorted((cache / "whoosh").glob("*.seg"))


def _arrays(root: Path) -> list[Path]:
    vault(root, "search", "billing", cap_gb=None)  # the unit tables are made by a search
    return sorted((root / ".vault").glob("units-*.arrays"))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "index.sqlite cut in half": lambda r: _cut(r / ".vault" / "index.sqlite"),
    "index.sqlite overwritten with random bytes": lambda r: _random(r / ".vault" / "index.sqlite"),
    "index.sqlite emptied": lambda r: (r / ".vault" / "index.sqlite").write_bytes(b""),
    "index.sqlite replaced by a folder": lambda r: _replace_by_folder(
        r / ".vault" / "index.sqlite"
    ),
    "index.sqlite replaced by a pipe": lambda r: _replace_by_pipe(r / ".vault" / "index.sqlite"),
    "a Whoosh segment cut in half": lambda r: [_cut(p) for p in _segments(r / ".vault")],
    "a Whoosh segment of random bytes": lambda r: [_random(p) for p in _segments(r / ".vault")],
    "the Whoosh tables of contents gone": lambda r: [
        p.unlink() for p in (r / ".vault" / "whoosh").glob("*.toc")
    ],
    "whoosh/ replaced by a file": lambda r: (
        shutil.rmtree(r / ".vault" / "whoosh"),
        (r / ".vault" / "whoosh").write_text("x"),
    ),
    ".vault replaced by a file": lambda r: (
        shutil.rmtree(r / ".vault"),
        (r / ".vault").write_text("x"),
    ),
    "write.lock replaced by a folder": lambda r: _replace_by_folder(r / ".vault" / "write.lock"),
    "the unit tables cut in half": lambda r: [_cut(p) for p in _arrays(r)],
}


def doctor_repairs(damage: Callable[[Path], None]) -> Callable[[Path], str | None]:
    def case(scratch: Path) -> str | None:
        for form in ("human", "json"):
            root = indexed_vault(scratch / f"vault-{form}")
            damage(root)
            args = ["doctor"] + (["--json"] if form == "json" else [])
            result = vault(root, *args, cap_gb=None, timeout=300)
            if problem := succeeded(result):
                return f"doctor ({form}): {problem}"
            if form == "json":
                report = json.loads(result.stdout)
                if not report["findings"] or any(
                    not (f["artefact"] and f["problem"] and f["repair"]) for f in report["findings"]
                ):
                    return f"doctor --json names no artefact, problem and repair: {report}"
            elif "found" not in result.stdout or "repair" not in result.stdout:
                return f"doctor says nothing of the damage: {result.stdout[:200]!r}"
            after = vault(root, "status", "--json", cap_gb=None)
            if problem := succeeded(after):
                return f"status after the doctor: {problem}"
            status = json.loads(after.stdout)
            if status.get("damaged") or status.get("problem"):
                return f"still damaged after the doctor: {status.get('problem')}"
            if problem := hybrid_answer(root):
                return f"after the doctor: {problem}"
        return None

    return case


def status_names_damage(damage: Callable[[Path], None]) -> Callable[[Path], str | None]:
    """`vault status` on the damage: no traceback, and a line that says what to run."""

    def case(scratch: Path) -> str | None:
        root = indexed_vault(scratch / "vault")
        damage(root)
        result = vault(root, "status", cap_gb=None)
        if problem := succeeded(result):
            return problem
        if "vault doctor" not in result.stdout and "vault index" not in result.stdout:
            return f"status names no command that repairs it: {result.stdout[:300]!r}"
        return None

    return case


def harmless_wal(scratch: Path) -> str | None:
    """A -wal of random bytes: SQLite ignores frames whose checksums fail; the doctor finds
    nothing to repair and everything answers as before."""
    root = indexed_vault(scratch / "vault")
    (root / ".vault" / "index.sqlite-wal").write_bytes(os.urandom(8192))
    for args in (["doctor"], ["doctor", "--json"], ["status", "--json"]):
        if problem := succeeded(vault(root, *args, cap_gb=None)):
            return f"vault {' '.join(args)}: {problem}"
    return hybrid_answer(root)


# -- special files where notes should be ---------------------------------------------------


def _pipe(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def _device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # like /dev/null
    except PermissionError:
        from _support import Skip

        raise Skip("cannot make a device file here") from None


def _folder(path: Path) -> None:
    path.mkdir()
    (path / "inside.md").write_text("# Inside\n\nA note in a folder named like a note.\n")


SPECIAL: dict[str, Callable[[Path], None]] = {
    "a named pipe": _pipe,
    "a socket": _socket,
    "a device": _device,
    "a folder named *.md": _folder,
}


def special_reported(make: Callable[[Path], None]) -> Callable[[Path], str | None]:
    def case(scratch: Path) -> str | None:
        root = indexed_vault(scratch / "vault")
        relpath = "memory/2026-11-22.md"  # where today's log should be
        make(root / relpath)
        for args in (["status"], ["status", "--json"], ["doctor"], ["doctor", "--json"]):
            result = vault(root, *args, cap_gb=None, timeout=120)
            if problem := succeeded(result):
                return f"vault {' '.join(args)}: {problem}"
            if relpath not in result.stdout:
                return f"vault {' '.join(args)} does not name {relpath}"
        result = vault(root, "add", "an entry", env=NOW, timeout=60)
        if problem := one_error(result, relpath, "not a regular file"):
            return f"vault add: {problem}"
        if problem := one_error(vault(root, "get", relpath, timeout=60), relpath):
            return f"vault get: {problem}"
        for args in (["index"], ["search", "billing"], ["export", "-o", str(scratch / "x")]):
            result = vault(root, *args, cap_gb=None, timeout=120)
            if problem := succeeded(result):
                return f"vault {args[0]}: {problem}"
        return None

    return case


CASES: list[tuple[str, Callable[[Path], str | None]]] = [
    *((f"doctor: {name}", doctor_repairs(fn)) for name, fn in DAMAGE.items()),
    ("doctor: index.sqlite-wal of random bytes", harmless_wal),
    *(
        (f"status: {name}", status_names_damage(DAMAGE[name]))
        for name in (
            "index.sqlite cut in half",
            "index.sqlite overwritten with random bytes",
            "a Whoosh segment cut in half",
            ".vault replaced by a file",
        )
    ),
    *(
        (f"special file: {name} for a daily log", special_reported(fn))
        for name, fn in SPECIAL.items()
    ),
]
