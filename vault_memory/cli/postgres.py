"""`vault postgres start|stop|status`: a PostgreSQL server with pgvector on this machine, to
try the shared index (index/pglocal.py). No vault is needed: the server lives outside any.
`vault postgres clones`: the clones of this vault that share its index server, and removing
a stale one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from .app import _print_json, cli, pass_vault

DIR_OPTION = click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="VAULT_PG_DIR",
    help="The server's folder (default: the user's data folder, "
    "~/.local/share/vault-memory/postgres; env VAULT_PG_DIR).",
)


if TYPE_CHECKING:
    from ..index import CloneRow, LocalServer, PgStore
    from ..vault import Vault


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


@postgres.command()
@click.option("--json", "as_json", is_flag=True, help="Print the clones as JSON.")
@click.option(
    "--remove",
    "remove",
    type=int,
    metavar="ID",
    help="Remove the clone ID (a checkout that is gone): its view and the content only it holds.",
)
@click.option("--yes", is_flag=True, help="Remove without asking.")
@pass_vault
def clones(vault: Vault, as_json: bool, remove: int | None, yes: bool) -> None:
    """List the clones of this vault that index into its server; remove a stale one.

    Every checkout (clone) of a vault that indexes into one server keeps its own view of
    its files there, over content shared by all. A checkout that is deleted leaves its
    view behind: `--remove ID` drops it, with the units, vectors and names no other clone
    holds. Another clone's rows are never touched; the clone running the command cannot be
    removed (`vault index --rebuild` starts it afresh).

    \b
    Example:
      vault postgres clones
      vault postgres clones --remove 3 --yes
    """
    from ..errors import VaultError
    from ..index import capabilities_of, clone_name, open_backend

    if not capabilities_of(vault.config).shared:  # an index of its own: no clone shares it
        where = f"[index] backend is {vault.config.index.backend!r}"
        if remove is not None:
            raise VaultError(
                f"this vault's index is not on a server ({where}): no clone to remove."
            )
        if as_json:
            _print_json([])
        else:
            click.echo(f"no clones: this vault's index is not on a server ({where})")
        return
    store = cast("PgStore", open_backend(vault.config, readonly=True))
    here = clone_name(vault.config)
    try:
        found = store.clones()
        if remove is not None:
            _remove_clone(store, {c.id: c for c in found}, remove, here, yes)
            found = store.clones()
    finally:
        store.close()
    if as_json:
        _print_json([c._asdict() | {"this": c.name == here} for c in found])
        return
    if not found:
        click.echo(f"no clone of vault {store.vault!r} has indexed into {store.server}")
    for clone in found:
        click.echo(_describe_clone(clone, clone.name == here))


def _remove_clone(
    store: PgStore, found: dict[int, CloneRow], remove: int, here: str, yes: bool
) -> None:
    """Remove the clone `remove` after the user says so (or `yes`); not this checkout's."""
    from ..errors import VaultError

    clone = found.get(remove)
    if clone is not None and clone.name == here:
        raise VaultError(
            f"clone {remove} is this checkout ({here}); remove it from another one, or "
            "`vault index --rebuild` to start its view afresh."
        )
    if clone is not None and not yes:
        click.echo(_describe_clone(clone, False), err=True)
        if not click.confirm(
            f"Remove clone {remove} and the {clone.own_units} units only it holds?", err=True
        ):
            raise VaultError("nothing removed (give --yes to remove without asking).")
    gone = store.forget_clone(remove)  # an unknown id: one Error line listing the known
    click.echo(
        f"removed clone {gone.id} ({gone.name}): {gone.files} files in its view, "
        f"{gone.own_units} units no other clone held",
        err=True,
    )


def _describe_clone(clone: CloneRow, this: bool) -> str:
    """`3  host:/path  last index 2026-12-07T03:00:00  26 files, 40 units (2 only here)`."""
    import datetime as dt

    def when(t: float | None) -> str:
        return dt.datetime.fromtimestamp(t).isoformat(timespec="seconds") if t else "never"

    details: dict[str, Any] = {
        "last index": when(clone.last_index_at),
        "since": when(clone.created_at),
    }
    return (
        f"{clone.id:>4}  {clone.name or '(before clones were told apart)'}"
        f"{'  (this checkout)' if this else ''}\n      "
        + "  ".join(f"{k} {v}" for k, v in details.items())
        + f"  {clone.files} files, {clone.units} units ({clone.own_units} only its own)"
    )
