"""Which files a Python process touches, seen by an audit hook (PEP 578): every file opened (to
read or write), renamed, replaced, removed, created, linked or changed, with the path it really
is (symlinks followed). The scope isolation tests count those that fall under forbidden paths.

In-process: `watching(paths)` records while its block runs. For a whole program (the MCP server
in a subprocess): `python tests/support/audit.py LOG PATH... -- -m vault_memory ...` records into
LOG, one JSON line per touch, then runs the program.

Listing a folder is not recorded: the vault's one index stats every scope's files (see the
README, "Many agents"); what a scope must never do is read or write another's.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

EVENTS = {  # event -> the positions of its arguments that are paths
    "open": (0,),
    "os.rename": (0, 1),
    "os.replace": (0, 1),  # not an audit event of its own in every version: os.rename covers it
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.link": (0, 1),
    "os.symlink": (0, 1),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "shutil.copyfile": (0, 1),
    "shutil.rmtree": (0,),
}


class Recorder:
    def __init__(self, forbidden: Sequence[str | os.PathLike[str]]) -> None:
        self.forbidden = [os.path.realpath(p) for p in forbidden]
        self.touched: list[tuple[str, str]] = []  # (event, real path) under a forbidden path
        self.seen = 0  # events looked at
        self._busy = threading.local()

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        positions = EVENTS.get(event)
        if positions is None or getattr(self._busy, "on", False):
            return
        self._busy.on = True
        try:
            for position in positions:
                if position >= len(args):
                    continue
                path = args[position]
                if isinstance(path, int) or path is None:
                    continue  # a file descriptor: its opening was seen
                real = os.path.realpath(os.fsdecode(path))
                self.seen += 1
                if any(real == f or real.startswith(f + os.sep) for f in self.forbidden):
                    self.touched.append((event, real))
        except Exception:  # an audit hook must never break the program it watches
            pass
        finally:
            self._busy.on = False


_active: list[Recorder] = []
_installed = False


def _dispatch(event: str, args: tuple[Any, ...]) -> None:
    for recorder in list(_active):
        recorder.hook(event, args)


def install() -> None:
    """Add the process's audit hook once (a hook cannot be removed: it stays inert)."""
    global _installed
    if not _installed:
        sys.addaudithook(_dispatch)
        _installed = True


@contextlib.contextmanager
def watching(forbidden: Sequence[str | os.PathLike[str]]) -> Iterator[Recorder]:
    install()
    recorder = Recorder(forbidden)
    _active.append(recorder)
    try:
        yield recorder
    finally:
        _active.remove(recorder)


def _main() -> None:
    log, *rest = sys.argv[1:]
    split = rest.index("--")
    forbidden, program = rest[:split], rest[split + 1 :]
    recorder = Recorder(forbidden)
    out = open(log, "a", encoding="utf-8")  # noqa: SIM115 - open for the program's whole life
    lock = threading.Lock()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        before = len(recorder.touched)
        recorder.hook(event, args)
        if len(recorder.touched) > before:
            with lock:
                out.write(json.dumps(recorder.touched[-1]) + "\n")
                out.flush()

    sys.addaudithook(hook)
    if program[:1] != ["-m"]:
        raise SystemExit("usage: audit.py LOG PATH... -- -m MODULE ARGS...")
    import runpy

    sys.argv = [program[1], *program[2:]]
    runpy.run_module(program[1], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _main()
