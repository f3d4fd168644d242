"""The `vault` group: options every command shares, how a command finds its `Vault`, errors
to `Error: ...` (exit 1) in one place, logging to stderr, JSON output, progress bars, and `main`.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ..errors import VaultError

if TYPE_CHECKING:
    pass


scope_option = click.option(
    "--scope",
    metavar="SCOPE",
    envvar="VAULT_SCOPE",
    help="Bind to a scope, e.g. org/acme/agent-alpha (/: the root scope; env VAULT_SCOPE): "
    "see its files and those above it, write only its own.",
)


def pass_vault(f: Callable[..., Any]) -> Callable[..., Any]:
    """Pass the `Vault` as the first argument, found when the command runs rather than in the
    group, so `vault add --help` and usage errors (exit 2) work outside a vault too; bound to
    the scope of `--scope` (of the command, or of its group) when one is given."""

    @functools.wraps(f)
    def new_func(*args: Any, **kwargs: Any) -> Any:
        from ..vault import Vault  # the library loads only when a command runs

        ctx = click.get_current_context()
        scope = kwargs.pop("scope", None)
        scope = ctx.meta.get("scope") if scope is None else scope
        vault = ctx.find_object(Vault)
        if vault is None:
            root = ctx.find_root()
            vault = root.obj = Vault.discover(ctx.meta.get("vault_path"))
            # Closing SQLite checkpoints and removes its -wal/-shm files: a no-op leaves
            # .vault/ exactly as it was.
            root.call_on_close(vault.close)
            if ProgressBars.wanted(ctx.meta.get("quiet", False)):
                bars = vault.progress = ProgressBars()
                root.call_on_close(bars.close)
            vault.config  # noqa: B018 - a broken vault.toml is reported before anything runs
        if scope is not None:
            from ..files import parse_scope

            vault = vault.scope(*parse_scope(scope))
            vault.config  # noqa: B018 - and a broken vault.toml of the scope
        return ctx.invoke(f, vault, *args, **kwargs)

    return new_func


def _setup_logging(verbose: int, quiet: bool) -> None:
    """Library warnings go to stderr as `Warning: ...` (logging is imported here, not at
    start-up: `vault --help` never needs it)."""
    import logging

    class StderrHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            label = {logging.WARNING: "Warning", logging.ERROR: "Error"}.get(record.levelno)
            message = record.getMessage()
            click.echo(f"{label}: {message}" if label else message, err=True)

    logger = logging.getLogger("vault_memory")
    for handler in list(logger.handlers):
        if getattr(handler, "vault_cli", False):
            logger.removeHandler(handler)
    handler = StderrHandler()
    handler.vault_cli = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.propagate = False
    if quiet:
        logger.setLevel(logging.ERROR)
    else:
        logger.setLevel(
            logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING
        )


def _print_json(data: Any) -> None:
    import json

    click.echo(json.dumps(data, ensure_ascii=False, indent=None, default=str))


class VaultGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultError as exc:
            from .errors import cli_message

            raise click.ClickException(cli_message(exc)) from None
        except OSError as exc:
            # The disk, not a bug: permissions, a read-only or full file system, a path that
            # is not what it should be. One line, never a traceback.
            where = f" {exc.filename}" if exc.filename else ""
            raise click.ClickException(
                f"cannot use{where}: {exc.strerror or exc}. Check that the vault's files and "
                "folders exist and are readable (and writable, for a command that writes); "
                "`vault doctor` repairs the cache."
            ) from None


@click.group(cls=VaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    "vault_path",
    envvar="VAULT_PATH",
    metavar="PATH",
    help="The vault folder (env VAULT_PATH). Default: the nearest folder upward with vault.toml.",
)
@click.option("-v", "--verbose", count=True, help="More detail on stderr (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
@click.version_option(package_name="vault-memory", prog_name="vault")
@click.pass_context
def cli(ctx: click.Context, vault_path: str | None, verbose: int, quiet: bool) -> None:
    """A durable memory for AI agents made of plain Markdown files.

    MEMORY.md and the daily logs in memory/ are the truth; .vault/ is a search cache that
    can always be rebuilt.

    \b
    Example:
      vault init ~/notes/agent-memory
      cd ~/notes/agent-memory
      vault add "Chose PostgreSQL for the billing service" --tag decision
      vault search "which database did we pick for billing?"
    """
    _setup_logging(verbose, quiet)
    ctx.meta["vault_path"] = vault_path
    ctx.meta["quiet"] = quiet


class ProgressBars:
    """Long work (a full index, the first search's index) as tqdm bars on stderr, one per
    phase, with counts, rate and ETA. Only on a terminal and without --quiet: piped output
    and JSON stay exactly as they are. tqdm is imported when the first bar is drawn."""

    UNITS = {"files": "file", "embedding": "unit"}

    def __init__(self) -> None:
        self.bar: Any = None
        self.phase = ""

    @staticmethod
    def wanted(quiet: bool) -> bool:
        return not quiet and sys.stderr.isatty()

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self.phase:
            self.close()
            from tqdm import tqdm

            self.phase = phase
            self.bar = tqdm(
                total=total,
                desc=phase,
                unit=self.UNITS.get(phase, "it"),
                file=sys.stderr,
                leave=False,
                dynamic_ncols=True,
            )
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
            self.phase = ""


def main() -> None:
    # numpy's OpenBLAS spins a waiting thread per core; on small machines it takes the other
    # core away from onnxruntime and Whoosh (bench/search.py: a 10k-unit matrix-vector product
    # 23 ms -> 2 ms under load). One thread is plenty for one query vector.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    one_search = "search" in sys.argv[1:]
    if one_search:  # one query, then exit: no optimised model session is worth building
        from ..index import settings

        settings.optimize_query_session = False
    try:
        cli.main(prog_name="vault")
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    if one_search or "watch" in sys.argv[1:]:
        # A search has written everything it will write (its results, any freshness update,
        # committed). Interpreter shutdown after loading numpy, Whoosh and onnxruntime costs
        # about 0.2 s of a cold search, so it is skipped. A stopped watcher has closed
        # everything too, and onnxruntime's threads sometimes abort a normal shutdown
        # ("terminate called without an active exception").
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 1)
    sys.exit(code)
