"""`vault dream`: consolidating the daily logs into MEMORY.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..text import one_line

if TYPE_CHECKING:
    from ..vault import Vault

from .app import _print_json, cli, pass_vault, scope_option


@cli.command()
@click.option("--dry-run", is_flag=True, help="Print the diff of MEMORY.md; write nothing at all.")
@click.option(
    "--force",
    is_flag=True,
    help="Apply a result that drops over 25% of the entries or exceeds the size budget.",
)
@click.option(
    "--days",
    type=click.IntRange(1, 3660),
    metavar="N",
    help="Read the daily logs of the last N days (default: [dream] lookback_days).",
)
@click.option("--undo", is_flag=True, help="Restore MEMORY.md from before the last dream.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@scope_option
@pass_vault
def dream(
    vault: Vault, dry_run: bool, force: bool, days: int | None, undo: bool, as_json: bool
) -> None:
    """Consolidate recent daily logs into MEMORY.md and record it in the dream diary.

    New entries of memory/YYYY-MM-DD.md that recur, are tagged #important/#decision/#pin or
    are often found by search join MEMORY.md with their source; duplicates are merged, junk
    is never promoted, entries tagged #pin never change. Each dream appends to
    dreams/YYYY-MM-DD.md; in a git repository it is one commit of exactly those files.

    \b
    Example:
      vault dream --dry-run
      vault dream
      vault dream --undo
    """
    if undo and (dry_run or force or days):
        raise click.UsageError("--undo cannot be combined with --dry-run, --force or --days.")
    if undo:
        report = vault.undo_dream()
    else:
        report = vault.dream(dry_run=dry_run, force=force, lookback_days=days)
    if as_json:
        _print_json(report.to_dict())
        return
    if report.dry_run:
        click.echo(report.diff, nl=False)
        click.echo(report.message, err=True)
        return
    click.echo(report.message)
    for added in report.added:
        click.echo(f"  + {added['section']}: {_short(added['text'])}{_cited(added['sources'])}")
    for edited in report.edited:
        click.echo(f"  ~ {edited['section']}: {_short(edited['text'])}{_cited(edited['sources'])}")
    for marked in report.superseded:
        click.echo(f"  > {marked['section']}: {_short(marked['text'])}  (to ## History)")
    for archived in report.archived:
        click.echo(f"  - {archived['section']}: {_short(archived['text'])}  (archived)")
    for refused in report.refused_items:
        click.echo(
            f"  ! refused {refused['what']}: {_short(refused['text'], 50)} — {refused['reason']}"
        )
    if report.diary:
        click.echo(f"diary: {report.diary}")
    if report.commit:
        click.echo(f"commit: {report.commit[:12]}")


def _cited(sources: list[str]) -> str:
    """The sources an entry cites, as the report shows them ("" when it cites none: a
    rewording may cite nothing)."""
    return f"  ({', '.join(sources)})" if sources else ""


def _short(text: str, width: int = 72) -> str:
    return one_line(text, width)
