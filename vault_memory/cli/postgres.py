"""`vault postgres start|stop|status`: a PostgreSQL server with pgvector on this machine, to
try the shared index (index/pglocal.py). No vault is needed: the server lives outside any."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from .app import _print_json, cli

DIR_OPTION = click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="VAULT_PG_DIR",
    help="The server's folder (default: the user's data folder, "
    "~/.local/share/vault-memory/postgres; env VAULT_PG_DIR).",
)


if TYPE_CHECKING:
    from ..index import LocalServer


def _server(folder: Path | None) -> LocalServer:
    from ..index import LocalServer, default_folder

    return LocalServer((folder or default_folder()).expanduser().absolute())


@cli.group()
def postgres() -> None:
    """Run a PostgreSQL server with pgvector on this machine, for the shared index.

    The server is the one the test suite uses (the `postgres` extra's pgserver wheel:
    PostgreSQL 16 with pgvector), kept in a folder outside any vault, listening on
    127.0.0.1. For a team, run the docker compose file or a server of your own
    (docs: PostgreSQL).

    \b
    Example:
      vault postgres start
      vault postgres status --json
      vault postgres stop
    """


@postgres.command()
@DIR_OPTION
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    help="Listen on this port (default: the one used before, else 5433, else a free one).",
)
def start(folder: Path | None, port: int | None) -> None:
    """Start the server (set up on first use) and print its DSN on stdout.

    \b
    Example:
      export VAULT_PG_DSN=$(vault postgres start)
    """
    server = _server(folder)
    started = server.start(port)
    if not started and port is not None and port != server.port:
        raise click.UsageError(
            f"the server in {server.folder} already runs on port {server.port}; "
            "`vault postgres stop` first to move it."
        )
    click.echo(server.dsn)
    state = "started" if started else "already running"
    click.echo(
        f"PostgreSQL with pgvector {state} in {server.folder} (port {server.port}). "
        "Point a vault at it in vault.toml:\n"
        '  [index]\n  backend = "postgres"\n  dsn_env = "VAULT_PG_DSN"\n'
        f"and export VAULT_PG_DSN={server.dsn}",
        err=True,
    )


@postgres.command()
@DIR_OPTION
def stop(folder: Path | None) -> None:
    """Stop the server; its data stays for the next start.

    \b
    Example:
      vault postgres stop
    """
    server = _server(folder)
    if server.stop():
        click.echo(f"stopped the server in {server.folder} (its data kept)")
    else:
        click.echo(f"no server runs in {server.folder}")


@postgres.command()
@DIR_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the state as JSON.")
def status(folder: Path | None, as_json: bool) -> None:
    """Say whether the server runs, where, and its DSN. Exit status 3 when it does not run
    (with --json: 0, and `running` says).

    \b
    Example:
      vault postgres status --json
    """
    server = _server(folder)
    running = server.running()
    info = {
        "folder": str(server.folder),
        "set_up": server.initialised,
        "running": running,
        "pid": server.pid() if running else None,
        "port": server.port,
        "dsn": server.dsn if server.initialised else None,
    }
    if as_json:
        _print_json(info)
    elif running:
        click.echo(f"running (pid {info['pid']}) in {server.folder}\ndsn {server.dsn}")
    elif server.initialised:
        click.echo(f"not running; its data is in {server.folder} (`vault postgres start`)")
    else:
        click.echo(f"not set up in {server.folder} (`vault postgres start` sets it up)")
    if not running and not as_json:
        raise SystemExit(3)
