"""`vault watch`: keeping the cache exact while files change."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..vault import Vault

from .app import _print_json, cli, pass_vault


@cli.command()
@click.option("--no-dream", is_flag=True, help="Do not run the scheduled dream.")
@click.option(
    "--quiet-ms",
    type=click.IntRange(0, 600_000),
    metavar="N",
    help="Apply changes once the files were quiet for N ms (default: watch.quiet_ms, 300).",
)
@click.option("-v", "--verbose", count=True, help="Log each batch to stderr too.")
@click.option(
    "--stop",
    is_flag=True,
    help="Stop the watcher that runs for this vault and wait (up to 30 s) until it has stopped.",
)
@click.option("--json", "as_json", is_flag=True, help="With --stop: print what happened as JSON.")
@click.option(
    "--server-idle",
    type=click.FloatRange(min=0, min_open=True),
    metavar="MINUTES",
    hidden=True,
    help='Run as the search server [search] server = "auto" starts.',
)
@pass_vault
def watch(
    vault: Vault,
    no_dream: bool,
    quiet_ms: int | None,
    verbose: int,
    stop: bool,
    as_json: bool,
    server_idle: float | None,
) -> None:
    """Keep the search cache in line with the files until stopped (Ctrl-C, SIGTERM, or
    `vault watch --stop` from another terminal).

    Edits, atomic saves, moves and git checkouts are indexed a moment after they happen;
    `vault search` is answered by this process while it runs; the dream runs on the
    `[dream] schedule` of vault.toml. Logs go to .vault/logs/watch.log.

    \b
    Example:
      vault watch
      vault watch --no-dream --quiet-ms 500 -v
      vault watch --stop
    """
    import logging

    from ..text import plural

    if as_json and not stop:
        raise click.UsageError("--json goes with --stop: `vault watch --stop --json`.")
    if stop:
        if no_dream or quiet_ms is not None:
            raise click.UsageError("--stop takes no --no-dream or --quiet-ms.")
        stopped = vault.stop_watcher()
        if as_json:
            _print_json({"vault": str(vault.root), **stopped.to_dict()})
        elif not stopped.running:
            left = " (a killed one left its state file)" if stopped.stale else ""
            click.echo(f"no watcher runs for {vault.root}{left}; nothing to stop")
        else:
            how = {"socket": "asked over its socket", "SIGTERM": "sent SIGTERM"}.get(
                stopped.via or "", "it was stopping already"
            )
            click.echo(
                f"stopped the watcher of {vault.root} (pid {stopped.pid}; {how}) "
                f"in {stopped.seconds:.1f} s"
            )
        return

    logger = logging.getLogger("vault_memory")
    if logger.level < logging.ERROR:  # not --quiet: the batches on stderr only with -v
        shown = logging.INFO if verbose or logger.level <= logging.INFO else logging.WARNING
        logger.setLevel(min(logger.level, shown))
        for handler in logger.handlers:
            if getattr(handler, "vault_cli", False):
                handler.setLevel(shown)

    def ready(watcher: Any) -> None:
        click.echo(f"watching {vault.root} (pid {os.getpid()}); Ctrl-C to stop", err=True)

    report = vault.watch(
        dream=not no_dream, quiet_ms=quiet_ms, on_ready=ready, idle_minutes=server_idle
    )
    click.echo(
        f"stopped: {plural(report.batches, 'batch')} ({plural(report.paths, 'path')}), "
        f"{plural(report.reconciles, 'reconcile')}, "
        f"{plural(report.searches, 'search')} answered",
        err=True,
    )
