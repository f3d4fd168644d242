"""The `vault` command: a thin click layer over the `Vault` facade, one module per command
group in data-flow order (files, index, search, links, capture, sessions, transfer, dream, live,
agents).

Each command parses its options, makes one facade call and prints the result. Data goes to
stdout; progress, warnings and errors go to stderr. `VaultError` becomes `Error: …` with exit
status 1 in exactly one place (`app.VaultGroup.invoke`); usage errors exit with 2. The library
is imported only when a command runs, so `vault --help` stays fast.
"""

# (sessions after capture: it adds commands to capture's `sessions` group)
from . import agents, capture, dream, files, index, links, live, search, sessions, transfer  # noqa: F401
from .app import cli, main

__all__ = ["cli", "main"]
