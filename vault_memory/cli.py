"""The `vault` command: a thin click layer over the `Vault` facade.

Each command parses its options, makes one facade call and prints the result. Data goes to
stdout; progress, warnings and errors go to stderr. `VaultError` becomes `Error: …` with exit
status 1 in exactly one place (`VaultGroup.invoke`); usage errors exit with 2.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import click

from .errors import VaultError
from .vault import Vault, parse_location

pass_vault = click.make_pass_decorator(Vault)


class _StderrHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        label = {logging.WARNING: "Warning", logging.ERROR: "Error"}.get(record.levelno)
        message = record.getMessage()
        click.echo(f"{label}: {message}" if label else message, err=True)


def _setup_logging(verbose: int, quiet: bool) -> None:
    logger = logging.getLogger("vault_memory")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
    logger.propagate = False
    if quiet:
        logger.setLevel(logging.ERROR)
    else:
        logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=None, default=str))


class VaultGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultError as exc:
            raise click.ClickException(str(exc)) from None


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
    if ctx.invoked_subcommand not in (None, "init"):
        ctx.obj = Vault.discover(vault_path)


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=str))
@click.option("--git", is_flag=True, help="Also run `git init` in the vault (if not a repo yet).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def init(ctx: click.Context, path: str | None, git: bool, as_json: bool) -> None:
    """Create a vault at PATH (default: --vault, VAULT_PATH or the current folder).

    Never overwrites an existing file: running it twice is harmless.

    \b
    Example:
      vault init ~/agent-memory --git
    """
    target = path or ctx.meta.get("vault_path") or "."
    report = Vault.init(target, git=git)
    if as_json:
        _print_json({"root": str(report.root), "created": report.created, "kept": report.kept,
                     "git_initialised": report.git_initialised})
        return
    for name in report.created:
        click.echo(f"created  {name}")
    for name in report.kept:
        click.echo(f"kept     {name} (already there)")
    if report.git_initialised:
        click.echo("git      initialised a repository")
    click.echo(f"Vault ready at {report.root}")


@cli.command()
@click.argument("text", nargs=-1)
@click.option("-t", "--tag", "tags", multiple=True, metavar="TAG", help="Add #TAG (repeatable).")
@click.option("--source", default="note", show_default=True, help="Source named in the heading.")
@click.option("--json", "as_json", is_flag=True, help="Print where the entry landed as JSON.")
@pass_vault
def add(vault: Vault, text: tuple[str, ...], tags: tuple[str, ...], source: str, as_json: bool) -> None:
    """Append an entry to today's daily log (TEXT, or stdin when no TEXT is given).

    \b
    Example:
      vault add "Prefers short answers with code first" --tag preference
      echo "Call the dentist on Friday" | vault add --tag todo
    """
    if text:
        body = " ".join(text)
    elif not sys.stdin.isatty():
        body = sys.stdin.read()
    else:
        raise click.UsageError("give the entry as TEXT or pipe it on stdin.")
    report = vault.add(body, tags=tuple(t.lstrip("#") for t in tags), source=source)
    if as_json:
        _print_json(report.__dict__)
    else:
        click.echo(f"{report.path}:{report.start_line}-{report.end_line}  {report.heading}")


@cli.command()
@click.argument("location")
@click.option("--json", "as_json", is_flag=True, help="Print path, lines and text as JSON.")
@pass_vault
def get(vault: Vault, location: str, as_json: bool) -> None:
    """Print a vault file, or a line range of it: PATH[:START[-END]].

    Paths are relative to the vault; nothing outside it can be read.

    \b
    Example:
      vault get MEMORY.md
      vault get memory/2026-11-22.md:4-9
    """
    path, start, end = parse_location(location)
    result = vault.get(path, start, end)
    if as_json:
        _print_json(result.to_dict())
    else:
        click.echo(result.text, nl=False)


def main() -> None:
    cli(prog_name="vault")


if __name__ == "__main__":
    main()
