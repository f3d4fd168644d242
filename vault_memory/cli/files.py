"""`vault init`, `vault add`, `vault get`: making a vault, appending to today's log, reading a
file."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..vault import Vault

from .app import _print_json, cli, pass_vault, scope_option


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
    from ..vault import Vault

    report = Vault.init(target, git=git)
    if as_json:
        _print_json(
            {
                "root": str(report.root),
                "created": report.created,
                "kept": report.kept,
                "git_initialised": report.git_initialised,
            }
        )
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
@scope_option
@pass_vault
def add(
    vault: Vault, text: tuple[str, ...], tags: tuple[str, ...], source: str, as_json: bool
) -> None:
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
@scope_option
@pass_vault
def get(vault: Vault, location: str, as_json: bool) -> None:
    """Print a vault file, or a line range of it: PATH[:START[-END]].

    Paths are relative to the vault; nothing outside it can be read.

    \b
    Example:
      vault get MEMORY.md
      vault get memory/2026-11-22.md:4-9
    """
    from ..vault import parse_location

    path, start, end = parse_location(location)
    result = vault.get(path, start, end)
    if as_json:
        _print_json(result.to_dict())
    else:
        click.echo(result.text, nl=False)
