"""`vault flush`, `vault sessions`: conversations into daily logs."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..vault import Vault

from .app import _print_json, cli, pass_vault, scope_option


@cli.command()
@click.argument(
    "source",
    required=False,
    metavar="[FILE|-]",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True),
)
@click.option("--session", metavar="ID", help="The conversation's id (default: derived from it).")
@click.option("--date", metavar="DATE", help="Append to this day's log (YYYY-MM-DD), not today's.")
@click.option("--dry-run", is_flag=True, help="Print the block it would append; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the flush report as JSON.")
@scope_option
@pass_vault
def flush(
    vault: Vault,
    source: str | None,
    session: str | None,
    date: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Append what matters in a conversation to the day's log (FILE, or stdin).

    Reads OpenAI-style messages (a JSON list or {"messages": [...]}, with tool calls and
    results), JSONL, or a plain `User: ... / Assistant: ...` transcript. Secrets are redacted
    first. Run it again on the same or a longer conversation: only new entries are added.

    \b
    Example:
      vault flush chat.json --session support-42
      my-agent --dump-messages | vault flush - --json
      vault flush transcript.txt --dry-run
    """
    limit = vault.config.flush.max_input_bytes
    if source and source != "-":
        with open(source, "rb") as fh:
            raw = fh.read(limit + 1)
    elif source == "-" or not sys.stdin.isatty():
        raw = sys.stdin.buffer.read(limit + 1)
    else:
        raise click.UsageError("give the conversation as FILE, or pipe it on stdin (FILE = -).")
    report = vault.flush(raw, session=session, dry_run=dry_run, date=date)
    if as_json:
        _print_json(report.to_dict())
        return
    redacted = sum(report.redactions.values())
    theirs = ""  # entries another session flushed: say which, so the count is not a puzzle
    if report.already_in_other_sessions:
        names = report.other_sessions
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        theirs = (
            f"{report.already_in_other_sessions} of them in session"
            f"{'s' if len(names) != 1 else ''} {shown}"
        )
    refused = ""
    if report.refused:  # a model's entries that were not written: count them, then each one
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(report.refusals.items()))
        refused = f", {len(report.refused)} refused ({reasons})"
        for item in report.refused:
            detail = f": {item.detail}" if item.detail else ""
            click.echo(f"refused ({item.reason}{detail}): {item.text}", err=True)
    summary = (
        f"{len(report.entries)} new, {report.already_flushed} already flushed"
        f"{f' ({theirs})' if theirs else ''}, "
        f"{redacted} secret{'s' if redacted != 1 else ''} redacted{refused} ({report.mode})"
    )
    if dry_run:
        click.echo(report.text.lstrip("\n"), nl=False)
        click.echo(f"dry run: {summary}; would append to {report.path}; nothing written", err=True)
    elif report.written:
        click.echo(f"{report.path}:{report.start_line}-{report.end_line}  {report.heading}")
        click.echo(summary)
    elif report.already_flushed:
        entries = "entry" if report.already_flushed == 1 else "entries"
        click.echo(
            f"session {report.session}: nothing new ({report.already_flushed} {entries} "
            f"already flushed{f', {theirs}' if theirs else ''}{refused}); nothing written"
        )
    else:
        messages = "message" if report.messages == 1 else "messages"
        click.echo(
            f"session {report.session}: nothing worth keeping in {report.messages} "
            f"{messages}{refused}; nothing written"
        )


@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@click.option(
    "--transcripts",
    is_flag=True,
    help="List the transcripts (sessions/) instead, the one updated last first.",
)
@scope_option
@click.pass_context
def sessions(ctx: click.Context, as_json: bool, transcripts: bool, scope: str | None) -> None:
    """List the flushed sessions found in the daily logs, the most recent first.

    \b
    Example:
      vault sessions
      vault sessions --json
      vault sessions --transcripts
      vault sessions show support-42
    """
    ctx.meta["scope"] = scope
    if ctx.invoked_subcommand is None:
        if transcripts:
            _list_transcripts(as_json)
        else:
            _list_sessions(as_json)


@pass_vault
def _list_transcripts(vault: Vault, as_json: bool) -> None:
    found = vault.transcripts()
    if as_json:
        _print_json([{k: v for k, v in t.to_dict().items() if k != "messages"} for t in found])
        return
    if not found:
        click.echo("no transcripts", err=True)
    for head in found:
        click.echo(
            f"{head.session}  {head.started[:16]}..{head.updated[:16]}  {head.path}  {head.title}"
        )


@pass_vault
def _list_sessions(vault: Vault, as_json: bool) -> None:
    found = vault.sessions()
    if as_json:
        _print_json([s.to_dict() for s in found])
        return
    if not found:
        click.echo("no flushed sessions", err=True)
    for info in found:
        dates = info.dates[0] if len(info.dates) == 1 else f"{info.dates[0]}..{info.dates[-1]}"
        entries = f"{info.entries} {'entry' if info.entries == 1 else 'entries'}"
        click.echo(f"{info.id}  {dates}  {entries}  {', '.join(info.locations)}")


@sessions.command("show")
@click.argument("session_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the session and its entries as JSON.")
@click.option(
    "--transcript",
    is_flag=True,
    help="Print the conversation itself (sessions/DATE-ID.md); ID may be `last`.",
)
@scope_option
@pass_vault
def sessions_show(vault: Vault, session_id: str, as_json: bool, transcript: bool) -> None:
    """Print the entries a session flushed, with where they are.

    \b
    Example:
      vault sessions show support-42
      vault sessions show support-42 --transcript
    """
    if transcript:
        found = vault.transcript(session_id)
        if as_json:
            _print_json(found.to_dict())
        else:
            click.echo(found.text, nl=False)
        return
    info = vault.session(session_id)
    if as_json:
        _print_json(info.to_dict(with_entries=True))
        return
    for block in info.blocks:
        click.echo(f"{block.location}  {block.time} · flush · session {block.session}")
        for line, text in block.entries:
            click.echo(f"  {line:>4}  {text}")
