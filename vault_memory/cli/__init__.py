"""The `vault` command: a thin click layer over the `Vault` facade, one module per command
group in data-flow order (files, index, search, links, capture, sessions, transfer, dream, live,
agents).

Each command parses its options, makes one facade call and prints the result. Data goes to
stdout; progress, warnings and errors go to stderr. `VaultError` becomes `Error: …` with exit
status 1 in exactly one place (`app.VaultGroup.invoke`); usage errors exit with 2. The library
is imported only when a command runs, so `vault --help` stays fast.

`main` (the console script) is the thin client (`thin.py`): `vault search`, `context` and `get`
answered by a running watcher import neither click nor the library; click and the commands
load on first use of `cli` or when the full CLI runs.
"""

import sys

from .thin import main

TYPE_CHECKING = False  # not typing's: a thin client's start-up does not import typing
if TYPE_CHECKING:
    from .app import cli as cli

__all__ = ["cli", "full_main", "main"]


def _command_name(argv: list[str]) -> str | None:
    """The command of `vault ARGV` when the group options before it are plain ones."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "--vault":
            i += 1
        elif not (
            argv[i].startswith("--vault=")
            or argv[i] in ("-q", "--quiet", "--verbose")
            or argv[i].lstrip("-v") == ""
            and argv[i] != "-"
        ):
            return None
        i += 1
    return argv[i] if i < len(argv) else None


def _commands() -> None:
    # (sessions after capture: it adds commands to capture's `sessions` group)
    from . import (  # noqa: F401
        agents,
        capture,
        dream,
        files,
        index,
        links,
        live,
        postgres,
        search,
        sessions,
        transfer,
    )


def full_main() -> None:
    """The whole `vault` command (click), as `main` runs it when no watcher answers. For
    `vault search` and `vault context` only their module is loaded (a cold search pays for
    every import); any other command line loads them all."""
    if _command_name(sys.argv[1:]) in ("search", "context"):
        from . import search  # noqa: F401
    else:
        _commands()
    from .app import main as app_main

    app_main()


def __getattr__(name: str) -> object:
    if name == "cli":
        _commands()
        from .app import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
