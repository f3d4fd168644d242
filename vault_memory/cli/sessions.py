"""`vault sessions continue|prune`, `vault sessions show --transcript`, `vault graph`: the
conversations themselves (sessions/), picked up again, pruned and drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..vault import Vault

from .app import _print_json, cli, pass_vault, scope_option
from .capture import sessions


@sessions.command("continue")
@click.argument("session_id", metavar="ID|last", default="last")
@click.option(
    "--budget",
    type=int,
    default=8000,
    show_default=True,
    metavar="N",
    help="The tokens the messages may take (counted by the bundled tokenizer).",
)
@click.option("--threaded", is_flag=True, help="Only the current thread's messages.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the session, the cut and the messages as JSON (`.messages` is the list to resend).",
)
@scope_option
@pass_vault
def sessions_continue(
    vault: Vault, session_id: str, budget: int, threaded: bool, as_json: bool
) -> None:
    """Print a session's conversation to pick it up again: the newest messages that fit the
    budget, the older part as a running summary (what a ConversationWindow keeps).

    \b
    Example:
      vault sessions continue last --budget 4000
      vault sessions continue support-42 --json | jq .messages > messages.json
    """
    found = vault.continue_session(session_id, budget, threaded=threaded)
    if as_json:
        _print_json(found.to_dict())
        return
    for message in found.messages:
        from ..sessions import content_text

        click.echo(f"### {message['role']}")
        click.echo(content_text(message))
        click.echo()
    click.echo(
        f"session {found.session} ({found.path}): {len(found.recent)} recent messages, "
        f"{found.summarised} older summarised; {found.tokens} of {found.max_tokens} tokens",
        err=True,
    )


@sessions.command("prune")
@click.option(
    "--older-than",
    "older_than",
    required=True,
    metavar="AGE",
    help="Delete transcripts last updated longer ago than this: 30d, 4w.",
)
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@scope_option
@pass_vault
def sessions_prune(vault: Vault, older_than: str, dry_run: bool, as_json: bool) -> None:
    """Delete old transcripts (sessions/), never a daily log or MEMORY.md. In a git vault the
    deletion is one commit, so `git revert` brings them back.

    \b
    Example:
      vault sessions prune --older-than 30d --dry-run
      vault sessions prune --older-than 30d
    """
    report = vault.prune_sessions(older_than, dry_run=dry_run)
    if as_json:
        _print_json(report.to_dict())
        return
    for path in report.deleted:
        click.echo(path)
    verb = "would delete" if dry_run else "deleted"
    count = len(report.deleted)
    commit = f"; git commit {report.commit[:10]}" if report.commit else ""
    click.echo(
        f"{verb} {count} transcript{'s' if count != 1 else ''} last updated before "
        f"{report.cutoff}, kept {report.kept}{commit}",
        err=True,
    )


@cli.command()
@click.option(
    "--session",
    "session_id",
    metavar="ID|last",
    help="One session's thread tree (default: the whole vault).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mermaid", "json"]),
    default="mermaid",
    show_default=True,
    help="Mermaid flowchart or JSON nodes and edges.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE",
    help="Write to FILE (a .md file gets a ```mermaid block) instead of stdout.",
)
@click.option("--since", metavar="DATE", help="Only sessions (messages) since this day.")
@click.option(
    "-n",
    "--limit",
    type=int,
    default=None,
    metavar="N",
    help="At most N nodes (default 200); a cut graph says so.",
)
@scope_option
@pass_vault
def graph(
    vault: Vault,
    session_id: str | None,
    fmt: str,
    out: str | None,
    since: str | None,
    limit: int | None,
) -> None:
    """Draw what conversations left behind: sessions -> the daily entries they flushed ->
    the MEMORY.md items dreams promoted from them, and [[wikilinks]] between notes; or one
    session's thread tree. Mermaid renders as is in Obsidian and on GitHub.

    \b
    Example:
      vault graph --out graph.md
      vault graph --session last
      vault graph --format json --since 2026-11-01
    """
    import json

    found = vault.graph(session_id, since=since, limit=limit)
    if fmt == "json":
        text = json.dumps(found.to_dict(), ensure_ascii=False, indent=2) + "\n"
    elif out and out.lower().endswith((".md", ".markdown")):
        text = found.markdown()
    else:
        text = found.mermaid()
    for note in found.notes if found.cut else []:
        click.echo(f"Warning: {note}", err=True)
    if out:
        from pathlib import Path

        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"{out}: {len(found.nodes)} nodes, {len(found.edges)} edges", err=True)
    else:
        click.echo(text, nl=False)
