"""`vault links`, `vault backlinks`: the links between notes, as Obsidian resolves them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..index import LinkInfo
    from ..vault import Vault

from .app import _print_json, cli, pass_vault, scope_option


def _written(link: LinkInfo) -> str:
    """The link as its note writes it (in short)."""
    if link.kind == "markdown":
        return f"{'!' if link.embed else ''}[{link.display}]({link.target}{link.subpath})"
    if link.kind == "canvas":
        return f"file node {link.target}{link.subpath}"
    shown = f"|{link.display}" if link.display else ""
    return f"{'!' if link.embed else ''}[[{link.target}{link.subpath}{shown}]]"


def _print(found: list[LinkInfo], as_json: bool, incoming: bool, note: str) -> None:
    if as_json:
        _print_json({"note": note, "links": [link.to_dict() for link in found]})
        return
    if not found:
        click.echo("no backlinks" if incoming else "no links", err=True)
        return
    for link in found:
        if incoming:
            click.secho(f"{link.source}:{link.line}", fg="cyan", nl=False)
            click.echo(f"  {link.text}")
        else:
            where = link.resolved or "unresolved: no file answers to it"
            click.secho(f"{link.line:>5}  ", fg="cyan", nl=False)
            click.echo(f"{_written(link)}  -> {where}")


@cli.command()
@click.argument("note")
@click.option("--json", "as_json", is_flag=True, help="Print the links as JSON.")
@scope_option
@pass_vault
def links(vault: Vault, note: str, as_json: bool) -> None:
    """List the links of NOTE (a path, or a name as a [[link]] names it) and where they lead.

    Wikilinks, embeds, Markdown links to files of the vault, links in properties and a
    canvas's file nodes, resolved as Obsidian resolves them.

    \b
    Example:
      vault links "notes/billing-migration.md"
      vault links "Jonas Berg" --json
    """
    found = vault.links(note)
    _print(found, as_json, False, note)


@cli.command()
@click.argument("note")
@click.option("--json", "as_json", is_flag=True, help="Print the backlinks as JSON.")
@scope_option
@pass_vault
def backlinks(vault: Vault, note: str, as_json: bool) -> None:
    """List the lines that link to NOTE (a path, or a name as a [[link]] names it).

    \b
    Example:
      vault backlinks "Jonas Berg"
      vault backlinks notes/billing-migration.md --json
    """
    found = vault.backlinks(note)
    _print(found, as_json, True, note)
