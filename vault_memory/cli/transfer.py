"""`vault import`, `vault export`: memory in from other tools, and out as JSON records."""

from __future__ import annotations

import sys
import threading
from io import TextIOWrapper
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..transfer import ImportReport
    from ..vault import Vault

from ..live import stopping_on_signals
from .app import _print_json, cli, pass_vault, scope_option

IMPORT_FORMATS = ("auto", "chatgpt", "claude", "openai", "jsonl", "claude-code", "codex")
SHOWN = 5  # positions of what was left out, on stderr


@cli.command("import")
@click.argument(
    "sources", metavar="FILE|DIR...", nargs=-1, required=True, type=click.Path(exists=True)
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(IMPORT_FORMATS),
    default="auto",
    show_default=True,
    help="chatgpt / claude: a data export; openai: messages as `vault flush` reads them; "
    "jsonl: a `vault export` file; claude-code / codex: a coding agent's session files "
    "(files or folders: ~/.claude/projects, ~/.codex/sessions).",
)
@click.option("--dry-run", is_flag=True, help="Report what would be added; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
@click.option(
    "--follow",
    is_flag=True,
    help="Claude Code / Codex: keep importing sessions as they are written (Ctrl-C stops).",
)
@scope_option
@pass_vault
def import_(
    vault: Vault, sources: tuple[str, ...], fmt: str, dry_run: bool, as_json: bool, follow: bool
) -> None:
    """Bring your history: conversations from ChatGPT, Claude.ai, Claude Code, Codex or any
    OpenAI-style message file into the daily logs, or a `vault export` back into a vault.

    Each conversation is flushed (secrets redacted, what matters extracted) into the log of
    the day it happened, under its title. Run it again, or on a newer export: only what is
    new is added. A file that cannot be read as a whole is refused before anything is
    written; a conversation that cannot be read is skipped and named on stderr.

    \b
    Example:
      vault import ~/Downloads/chatgpt-export.zip
      vault import conversations.json --format claude --dry-run
      vault import backup.jsonl          # a `vault export` of another vault
      vault import ~/.claude/projects --format claude-code
      vault import ~/.codex/sessions/2026/03 --format codex
      vault import ~/.claude/projects --follow
    """
    if follow:
        _follow(vault, sources, fmt, dry_run, as_json)
        return
    report = vault.import_history(list(sources), format=fmt, dry_run=dry_run)
    if as_json:
        _print_json(report.to_dict())
        return
    for line in _summary(report):
        click.echo(line)
    if report.left_out:
        what = ", ".join(f"{n} × {kind}" for kind, n in report.left_out.most_common(6))
        click.echo(f"left out (not text): {what}", err=True)
        for where in report.left_out_at[:SHOWN]:
            click.echo(f"  {where}", err=True)
        if sum(report.left_out.values()) > SHOWN:
            click.echo("  … (--json lists the first 20)", err=True)


def _follow(vault: Vault, sources: tuple[str, ...], fmt: str, dry_run: bool, as_json: bool) -> None:
    if len(sources) != 1 or dry_run:
        raise click.UsageError("--follow takes one file or folder, and no --dry-run.")

    def show(report: ImportReport) -> None:
        if as_json:
            _print_json(report.to_dict())
        else:
            for line in _summary(report):
                click.echo(line)

    def started(found: str) -> None:
        click.echo(f"following the {found} sessions of {sources[0]} (Ctrl-C stops)", err=True)

    stop = threading.Event()
    try:
        with stopping_on_signals(stop):
            vault.follow_sessions(sources[0], fmt, stop=stop, on_import=show, on_start=started)
    except KeyboardInterrupt:  # a second Ctrl-C, in the middle of an import
        pass
    click.echo("stopped", err=True)


def _summary(report: ImportReport) -> list[str]:
    lines = []
    if report.files is not None:
        done = report.files.done
        lines.append(
            f"{report.files.files} files: {len(done['written'])} written, "
            f"{len(done['extended'])} extended, {len(done['merged'])} merged, "
            f"{len(done['unchanged'])} unchanged, {len(done['conflict'])} kept (they differ)"
            + ("; dry run, nothing written" if report.dry_run else "")
        )
        lines.extend(f"kept {path}: the vault's copy differs" for path in done["conflict"])
    if report.conversations or report.files is None:
        logs = len(report.logs)
        lines.append(
            f"{report.conversations} conversations ({', '.join(sorted(set(report.formats)))}): "
            f"{report.entries} new entries in {logs} daily log{'s' if logs != 1 else ''} "
            f"from {report.imported}, {report.unchanged} with nothing new, "
            f"{len(report.skipped)} skipped; {report.already_flushed} entries already there, "
            f"{report.redactions} secrets redacted"
            + ("; dry run, nothing written" if report.dry_run else "")
        )
    return lines


@cli.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "json"]),
    default="jsonl",
    show_default=True,
    help="One record a line, or one JSON array.",
)
@click.option(
    "--kind",
    "kinds",
    metavar="KINDS",
    help="Only these, comma-separated: daily, memory, notes, diary, sessions.",
)
@click.option("--since", metavar="DATE", help="Only dated files of this day or later.")
@click.option("--until", metavar="DATE", help="Only dated files of this day or earlier.")
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Write to FILE (complete or not at all) instead of stdout.",
)
@scope_option
@pass_vault
def export(
    vault: Vault,
    fmt: str,
    kinds: str | None,
    since: str | None,
    until: str | None,
    output: str | None,
) -> None:
    """Take it with you: the vault's Markdown as JSON records on stdout, one per section of
    each file (path, line range, date, heading, text, tags, kind, scope, session, sha256),
    after a header with the format versions. `vault import` of it into an empty vault writes
    the same files back, byte for byte.

    \b
    Example:
      vault export > memory.jsonl
      vault export --kind daily,memory --since 2026-01-01 -o 2026.jsonl
      vault export --scope acme/support-bot --format json
    """
    if output:
        from ..files import fsutil

        with fsutil.output_file(Path(output)) as out:  # complete, or not there at all
            report = vault.export(out, fmt, kinds, since, until)
    else:
        sys.stdout.flush()
        stream = TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="")
        try:
            report = vault.export(stream, fmt, kinds, since, until)
        finally:
            stream.flush()
            stream.detach()  # stdout stays open for click
    skipped = f", {len(report.skipped)} unreadable skipped" if report.skipped else ""
    click.echo(
        f"exported {report.files} files, {report.sections} sections "
        f"({report.bytes:,} bytes of Markdown){skipped}",
        err=True,
    )
