"""`vault search`, `vault context`: finding what memory says."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..vault import Vault

from .app import _print_json, cli, pass_vault, scope_option

_WORD_MARK = "\x00"  # marks a query word that starts with "-" while click reads the options


class QueryCommand(click.Command):
    """A command whose QUERY may hold `-word` (a search operator: leave it out), written as it
    is: `vault search -tag:#todo billing`. An argument starting with one "-" that is not one of
    the command's short options (`-n 5`, `-n5`, `-h`) is a word of the query."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        shorts = {
            opt
            for param in self.get_params(ctx)
            for opt in param.opts
            if opt.startswith("-") and not opt.startswith("--")
        }
        marked: list[str] = []
        rest = False
        for arg in args:
            rest = rest or arg == "--"
            is_word = (
                not rest
                and arg.startswith("-")
                and not arg.startswith("--")
                and len(arg) > 1
                and arg not in shorts
                and not any(arg.startswith(s) and arg[len(s) :].isdigit() for s in shorts)
            )
            marked.append(_WORD_MARK + arg if is_word else arg)
        return super().parse_args(ctx, marked)


def query_text(words: tuple[str, ...]) -> str:
    return " ".join(word.removeprefix(_WORD_MARK) for word in words)


@cli.command(cls=QueryCommand)
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
@click.option(
    "--deep",
    is_flag=True,
    help="A small local model first names words an answer would use (the `deep` extra).",
)
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
    deep: bool,
) -> None:
    """Find the lines of the vault that answer QUERY, with citations.

    QUERY may use Obsidian's search operators (tag:#decision, path:projects/, file:, section:,
    line:, "exact phrase", -word, OR, parentheses, [property:value]) and date:A..B, kind:,
    scope:; they select what the rest of the query is ranked among (README: "Using it with
    Obsidian").

    \b
    Example:
      vault search "which database did we pick for billing?"
      vault search ERR_LEDGER_409 --json
      vault search standup --since 2026-11-01 --kind daily -n 5
      vault search 'tag:#decision [status:active] billing -draft'
      vault search "what hobbies does Sam have?" --deep
    """
    text = query_text(query)
    serve = vault.config.search.server.strip().lower() != "off"
    if serve:
        from ..live import watch_client

        watch_client.server_mode(vault.config)  # a bad value is said before searching
    hits = vault.search(
        text,
        limit=limit,
        mode=mode,
        since=since,
        until=until,
        within=within,
        kinds=kinds,
        via_watcher=True,
        deep=deep,
    )
    if as_json:
        found: dict[str, Any] = {
            "query": text,
            "mode": mode,
            "results": [h.to_dict() for h in hits],
        }
        if getattr(hits, "warnings", None):  # e.g. keywords only: the embedding provider failed
            found["warning"] = " ".join(hits.warnings)
        _print_json(found)
    elif not hits:
        click.echo("no results", err=True)
    else:
        _print_hits(hits, explain)
    if serve:  # [search] server = "auto": the next searches are answered by it
        watch_client.start_server(vault.config)


def _print_hits(hits: Any, explain: bool) -> None:
    for hit in hits:
        span = (
            f"{hit.start_line}"
            if hit.start_line == hit.end_line
            else f"{hit.start_line}-{hit.end_line}"
        )
        click.secho(f"{hit.path}:{span}", fg="cyan", nl=False)
        click.echo(f"  {hit.heading}" if hit.heading else "", nl=False)
        click.secho(f"  ({hit.score:.3f}{', weak match' if 'weak' in hit.flags else ''})", dim=True)
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
