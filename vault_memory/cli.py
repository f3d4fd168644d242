"""The `vault` command: a thin click layer over the `Vault` facade.

Each command parses its options, makes one facade call and prints the result. Data goes to
stdout; progress, warnings and errors go to stderr. `VaultError` becomes `Error: …` with exit
status 1 in exactly one place (`VaultGroup.invoke`); usage errors exit with 2.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from .errors import VaultError

if TYPE_CHECKING:
    from .vault import Vault


scope_option = click.option(
    "--scope", metavar="SCOPE", envvar="VAULT_SCOPE",
    help="Bind to a scope, e.g. org/acme/agent-alpha (/: the root scope; env VAULT_SCOPE): "
    "see its files and those above it, write only its own.",
)


def pass_vault(f: Callable[..., Any]) -> Callable[..., Any]:
    """Pass the `Vault` as the first argument, found when the command runs rather than in the
    group, so `vault add --help` and usage errors (exit 2) work outside a vault too; bound to
    the scope of `--scope` (of the command, or of its group) when one is given."""

    @functools.wraps(f)
    def new_func(*args: Any, **kwargs: Any) -> Any:
        from .vault import Vault  # the library loads only when a command runs

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
            from .files import parse_scope

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
    ctx.meta["quiet"] = quiet


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
    from .vault import Vault

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
    from .vault import parse_location

    path, start, end = parse_location(location)
    result = vault.get(path, start, end)
    if as_json:
        _print_json(result.to_dict())
    else:
        click.echo(result.text, nl=False)


@cli.command()
@click.option("--rebuild", is_flag=True, help="Throw the cache away and rebuild it from the files.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_vault
def index(vault: Vault, rebuild: bool, as_json: bool) -> None:
    """Bring the search cache (.vault/) in line with the files.

    Only changed files are read; moved files and unchanged text are never re-embedded.

    \b
    Example:
      vault index
      vault index --rebuild --json
    """
    report = vault.index(rebuild=rebuild)
    if as_json:
        _print_json(report.to_dict())
        return
    if report.rebuilt:
        click.echo(f"rebuilt: {report.rebuilt}")
    click.echo(
        f"{report.new} new, {report.modified} modified, {report.moved} moved, "
        f"{report.deleted} deleted, {report.unchanged} unchanged"
        + (f", {skipped} skipped" if (skipped := report.unreadable + report.skipped_links) else "")
    )
    click.echo(
        f"{report.files} files, {report.units} units, {report.embedded_units} embedded "
        f"({report.units_embedded} new) with {report.model or 'no model: keyword search only'} "
        f"in {report.seconds:.2f} s"
    )


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
            self.bar = tqdm(total=total, desc=phase, unit=self.UNITS.get(phase, "it"),
                            file=sys.stderr, leave=False, dynamic_ncols=True)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
            self.phase = ""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@scope_option
@pass_vault
def status(vault: Vault, as_json: bool) -> None:
    """Show what the cache holds, the model, drift since the last index, and the settings.

    Writes nothing.

    \b
    Example:
      vault status --json
    """
    info = vault.status()
    if as_json:
        _print_json(info)
        return
    import datetime as dt

    last = info["last_index_at"]
    when = dt.datetime.fromtimestamp(last).isoformat(timespec="seconds") if last else "never"
    drift = info["drift"] or {}
    lines = [
        f"vault         {info['vault']}",
        f"cache         {info['cache']} ({info['cache_bytes'] / 1e6:.1f} MB)",
        f"files         {info['files']}",
        f"units         {info['units']} ({info['embedded_units']} embedded)",
        f"model         {info['model'] or 'none (keyword search only)'}",
        f"last index    {when}",
        "drift         " + (", ".join(f"{v} {k}" for k, v in drift.items()) or "none"),
    ]
    if info.get("pending_embeddings"):
        lines.append(f"pending       {info['pending_embeddings']} units wait for their vectors "
                     f"({info['embedding_error']}); `vault index` adds them")
    if "scope" in info:
        own, above = info["scope"], ", ".join(n or "/" for n in info["scope"]["sees"][:-1])
        lines.insert(1, f"scope         {own['name'] or '/'} ({own['files']} files, "
                        f"{own['units']} units of its own; sees {above or 'nothing above'})")
    if info["problem"]:
        lines.append(f"problem       {info['problem']}")
    for path, why in sorted(info["skipped"].items()):
        lines.append(f"skipped       {path}: {why}")
    lines.append(f"watcher       {_describe_watcher(info['watcher'])}")
    lines.append(f"queue         {_describe_queue(info['queue'])}")
    for key, source in sorted(info["settings_sources"].items()):
        section, _, name = key.partition(".")
        lines.append(f"setting       {key} = {info['settings'][section][name]!r} ({source})")
    click.echo("\n".join(lines))


def _describe_queue(queue: dict[str, Any]) -> str:
    from .text import plural

    text = f"{queue['pending']} pending"
    if queue["pending"]:
        text += f" ({plural(queue['sessions'], 'session')}"
        if queue["abandoned"]:
            text += f", {queue['abandoned']} left by stopped processes"
        text += ")"
    if queue["failed"]:
        text += (f", {plural(queue['failed'], 'update')} failed: {queue['last_error']} "
                 "(kept in .vault/queue/failed.jsonl)")
    return text


def _describe_watcher(watcher: dict[str, Any]) -> str:
    import datetime as dt

    if not watcher["running"]:
        return "not running" + (" (a killed one left its state file)" if watcher["stale"] else "")
    up = int(watcher["uptime_seconds"] or 0)
    text = f"running (pid {watcher['pid']}, up {up // 3600}h {up % 3600 // 60:02d}m"
    if watcher["last_event_at"]:
        last = dt.datetime.fromtimestamp(watcher["last_event_at"]).isoformat(timespec="seconds")
        text += f", last event {last}"
    if watcher["next_dream_at"]:
        text += f", next dream {watcher['next_dream_at'][:16].replace('T', ' ')}"
    return text + ")"


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
    type=click.Choice(["memory", "daily", "note", "diary"]),
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


@cli.command()
@scope_option
@pass_vault
def mcp(vault: Vault) -> None:
    """Serve the memory tools over MCP on stdin/stdout (for Claude, Cursor and others).

    Tools: search_memory, manage_memory, get_memory. Resources: vault://MEMORY.md,
    vault://today, vault://context. Runs until the client disconnects. Answers at once: the
    index is brought up to date in the background, and a search meanwhile says so.

    \b
    Example:
      vault --vault ~/agent-memory mcp
      claude mcp add memory -- vault --vault ~/agent-memory mcp
    """
    from .agents import serve_stdio

    serve_stdio(vault)


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
        click.echo(f"  + {added['section']}: {_short(added['text'])}  ({added['sources'][0]})")
    for edited in report.edited:
        click.echo(f"  ~ {edited['section']}: {_short(edited['text'])}  ({edited['sources'][-1]})")
    for archived in report.archived:
        click.echo(f"  - {archived['section']}: {_short(archived['text'])}  (archived)")
    if report.diary:
        click.echo(f"diary: {report.diary}")
    if report.commit:
        click.echo(f"commit: {report.commit[:12]}")


def _short(text: str, width: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


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
    summary = (
        f"{len(report.entries)} new, {report.already_flushed} already flushed"
        f"{f' ({theirs})' if theirs else ''}, "
        f"{redacted} secret{'s' if redacted != 1 else ''} redacted ({report.mode})"
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
            f"already flushed{f', {theirs}' if theirs else ''}); nothing written"
        )
    else:
        messages = "message" if report.messages == 1 else "messages"
        click.echo(
            f"session {report.session}: nothing worth keeping in {report.messages} "
            f"{messages}; nothing written"
        )


@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@scope_option
@click.pass_context
def sessions(ctx: click.Context, as_json: bool, scope: str | None) -> None:
    """List the flushed sessions found in the daily logs, the most recent first.

    \b
    Example:
      vault sessions
      vault sessions --json
      vault sessions show support-42
    """
    ctx.meta["scope"] = scope
    if ctx.invoked_subcommand is None:
        _list_sessions(as_json)


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


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the scopes as JSON.")
@pass_vault
def scopes(vault: Vault, as_json: bool) -> None:
    """List the scopes of the vault (folders under scopes/) with their files and units.

    A scope sees its own files and those of the scopes above it, never a sibling's or a
    child's; bind a command to one with --scope. Writes nothing.

    \b
    Example:
      vault scopes
      vault search "billing" --scope org/acme/agent-alpha
    """
    from .text import plural

    found = vault.scopes()
    if as_json:
        _print_json([info.to_dict() for info in found])
        return
    for info in found:
        notes = [what for what, flag in (("MEMORY.md", info.memory), ("own vault.toml",
                 info.settings), ("not bindable: rename the folder", not info.bindable)) if flag]
        click.echo(f"{info.name or '/':<28} {plural(info.files, 'file'):>10} "
                   f"{plural(info.units, 'unit'):>11}  {plural(info.daily_logs, 'daily log')}"
                   + (f"  ({', '.join(notes)})" if notes else ""))


@sessions.command("show")
@click.argument("session_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the session and its entries as JSON.")
@scope_option
@pass_vault
def sessions_show(vault: Vault, session_id: str, as_json: bool) -> None:
    """Print the entries a session flushed, with where they are.

    \b
    Example:
      vault sessions show support-42
    """
    info = vault.session(session_id)
    if as_json:
        _print_json(info.to_dict(with_entries=True))
        return
    for block in info.blocks:
        click.echo(f"{block.location}  {block.time} · flush · session {block.session}")
        for line, text in block.entries:
            click.echo(f"  {line:>4}  {text}")


@cli.command()
@click.option("--no-dream", is_flag=True, help="Do not run the scheduled dream.")
@click.option(
    "--quiet-ms",
    type=click.IntRange(0, 600_000),
    metavar="N",
    help="Apply changes once the files were quiet for N ms (default: watch.quiet_ms, 300).",
)
@click.option("-v", "--verbose", count=True, help="Log each batch to stderr too.")
@click.option(
    "--stop",
    is_flag=True,
    help="Stop the watcher that runs for this vault and wait (up to 30 s) until it has stopped.",
)
@click.option("--json", "as_json", is_flag=True, help="With --stop: print what happened as JSON.")
@pass_vault
def watch(
    vault: Vault, no_dream: bool, quiet_ms: int | None, verbose: int, stop: bool, as_json: bool
) -> None:
    """Keep the search cache in line with the files until stopped (Ctrl-C, SIGTERM, or
    `vault watch --stop` from another terminal).

    Edits, atomic saves, moves and git checkouts are indexed a moment after they happen;
    `vault search` is answered by this process while it runs; the dream runs on the
    `[dream] schedule` of vault.toml. Logs go to .vault/logs/watch.log.

    \b
    Example:
      vault watch
      vault watch --no-dream --quiet-ms 500 -v
      vault watch --stop
    """
    import logging

    from .text import plural

    if as_json and not stop:
        raise click.UsageError("--json goes with --stop: `vault watch --stop --json`.")
    if stop:
        if no_dream or quiet_ms is not None:
            raise click.UsageError("--stop takes no --no-dream or --quiet-ms.")
        stopped = vault.stop_watcher()
        if as_json:
            _print_json({"vault": str(vault.root), **stopped.to_dict()})
        elif not stopped.running:
            left = " (a killed one left its state file)" if stopped.stale else ""
            click.echo(f"no watcher runs for {vault.root}{left}; nothing to stop")
        else:
            how = {"socket": "asked over its socket", "SIGTERM": "sent SIGTERM"}.get(
                stopped.via or "", "it was stopping already"
            )
            click.echo(
                f"stopped the watcher of {vault.root} (pid {stopped.pid}; {how}) "
                f"in {stopped.seconds:.1f} s"
            )
        return

    logger = logging.getLogger("vault_memory")
    if logger.level < logging.ERROR:  # not --quiet: the batches on stderr only with -v
        shown = logging.INFO if verbose or logger.level <= logging.INFO else logging.WARNING
        logger.setLevel(min(logger.level, shown))
        for handler in logger.handlers:
            if getattr(handler, "vault_cli", False):
                handler.setLevel(shown)

    def ready(watcher: Any) -> None:
        click.echo(f"watching {vault.root} (pid {os.getpid()}); Ctrl-C to stop", err=True)

    report = vault.watch(dream=not no_dream, quiet_ms=quiet_ms, on_ready=ready)
    click.echo(
        f"stopped: {plural(report.batches, 'batch')} ({plural(report.paths, 'path')}), "
        f"{plural(report.reconciles, 'reconcile')}, "
        f"{plural(report.searches, 'search')} answered",
        err=True,
    )


def main() -> None:
    # numpy's OpenBLAS spins a waiting thread per core; on small machines it takes the other
    # core away from onnxruntime and Whoosh (bench/search.py: a 10k-unit matrix-vector product
    # 23 ms -> 2 ms under load). One thread is plenty for one query vector.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    one_search = "search" in sys.argv[1:]
    if one_search:  # one query, then exit: no optimised model session is worth building
        from .index import settings

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


if __name__ == "__main__":
    main()
