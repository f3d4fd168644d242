"""`vault search`, `vault context`: finding what memory says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..vault import Vault

from .app import _print_json, cli, pass_vault, scope_option


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", type=click.IntRange(1, 1000), help="How many results (default 10).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as one JSON object.")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "keyword", "semantic"]),
    default="hybrid",
    show_default=True,
    help="keyword works without the model.",
)
@click.option("--since", metavar="DATE", help="Only dated files from DATE (YYYY-MM-DD) on.")
@click.option("--until", metavar="DATE", help="Only dated files up to DATE.")
@click.option("--in", "within", metavar="PATH", help="Only this file or folder of the vault.")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(["memory", "daily", "note", "diary", "session"]),
    help="Only this kind (repeatable).",
)
@click.option("--explain", is_flag=True, help="Show each score component.")
@scope_option
@pass_vault
def search(
    vault: Vault,
    query: tuple[str, ...],
    limit: int | None,
    as_json: bool,
    mode: str,
    since: str | None,
    until: str | None,
    within: str | None,
    kinds: tuple[str, ...],
    explain: bool,
) -> None:
    """Find the lines of the vault that answer QUERY, with citations.

    \b
    Example:
      vault search "which database did we pick for billing?"
      vault search ERR_LEDGER_409 --json
      vault search standup --since 2026-11-01 --kind daily -n 5
    """
    text = " ".join(query)
    hits = vault.search(
        text,
        limit=limit,
        mode=mode,
        since=since,
        until=until,
        within=within,
        kinds=kinds,
        via_watcher=True,
    )
    if as_json:
        found: dict[str, Any] = {"query": text, "mode": mode,
                                 "results": [h.to_dict() for h in hits]}
        if getattr(hits, "warnings", None):  # e.g. keywords only: the embedding provider failed
            found["warning"] = " ".join(hits.warnings)
        _print_json(found)
        return
    if not hits:
        click.echo("no results", err=True)
        return
    for hit in hits:
        span = (
            f"{hit.start_line}"
            if hit.start_line == hit.end_line
            else f"{hit.start_line}-{hit.end_line}"
        )
        click.secho(f"{hit.path}:{span}", fg="cyan", nl=False)
        click.echo(f"  {hit.heading}" if hit.heading else "", nl=False)
        click.secho(f"  ({hit.score:.3f}{', weak match' if 'weak' in hit.flags else ''})",
                    dim=True)
        for line in hit.text.split("\n"):
            click.echo(f"    {line}")
        if explain:
            parts = ", ".join(f"{k}={v:.3f}" for k, v in hit.scores.items())
            click.secho(f"    [{parts}]", dim=True)

@cli.command()
@click.option(
    "--budget",
    type=click.IntRange(1, 1_000_000),
    default=2000,
    show_default=True,
    help="Most tokens the block may take (counted offline by the bundled tokenizer).",
)
@click.option("--query", metavar="TEXT", help="Also add the most relevant search hits.")
@click.option("--json", "as_json", is_flag=True, help="Print the block with what went in as JSON.")
@scope_option
@pass_vault
def context(vault: Vault, budget: int, query: str | None, as_json: bool) -> None:
    """Print a memory block for a system prompt, within a token budget.

    MEMORY.md, today's and yesterday's daily logs and, with --query, the most relevant hits
    not already shown. When MEMORY.md does not fit, the block says which lines were cut.

    \b
    Example:
      vault context --budget 1500
      vault context --query "billing migration" --json
    """
    block = vault.context_block(budget, query)
    if as_json:
        _print_json(block.to_dict())
    else:
        click.echo(block.text)

