"""`vault index`, `vault status`, `vault scopes`: the cache and what it holds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..vault import Vault

from .app import _print_json, cli, pass_vault, scope_option

UNRESOLVED_SHOWN = 20  # unresolved links listed by `vault status` (all with --json)


@cli.command()
@click.option("--rebuild", is_flag=True, help="Throw the cache away and rebuild it from the files.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--backend",
    type=click.Choice(["sqlite", "postgres"]),
    default=None,
    help="Where the index lives (default: [index] backend, else sqlite).",
)
@click.option(
    "--dsn",
    default=None,
    metavar="DSN",
    help="The PostgreSQL server's DSN, for --backend postgres (prefer [index] dsn_env: "
    "a password on a command line is seen by other users).",
)
@pass_vault
def index(
    vault: Vault, rebuild: bool, as_json: bool, backend: str | None = None, dsn: str | None = None
) -> None:
    """Bring the search cache (.vault/) in line with the files.

    Only changed files are read; moved files and unchanged text are never re-embedded.

    \b
    Example:
      vault index
      vault index --rebuild --json
      vault index --backend postgres --dsn postgresql://vault@db.example/vault
    """
    if backend is not None or dsn is not None:
        from ..vault import Vault as VaultClass

        settings = {"index.backend": backend or "postgres"} | ({"index.dsn": dsn} if dsn else {})
        vault = VaultClass(vault.root, settings, scope=vault.scope_path)
        click.get_current_context().call_on_close(vault.close)
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


@cli.command()
@click.option(
    "--verify",
    is_flag=True,
    help="Then prove the index equals the files (reads and parses every file).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_vault
def doctor(vault: Vault, verify: bool, as_json: bool) -> None:
    """Check the cache and the vault's files for damage, and repair it.

    Finishes writes a killed process left half-done (appends, dreams), rebuilds what of
    .vault/ is damaged (the SQLite index, missing vectors, the keyword index, the unit
    tables) and lists hard-linked files. Exits 1 when --verify finds the index differs.

    \b
    Example:
      vault doctor
      vault doctor --verify --json
    """
    report = vault.doctor(verify=verify)
    if as_json:
        _print_json(report.to_dict())
    else:
        for finding in report.findings:
            click.echo(f"found     {finding.artefact}: {finding.problem}")
            if finding.repair:
                click.echo(f"  repair  {finding.repair}")
        if not report.findings:
            click.echo("nothing damaged: the cache and the vault's files are whole")
        check = report.verification
        if check is not None:
            if check.equal:
                click.echo(
                    f"index equals the files ({check.files} files, {check.units} "
                    f"units, {check.embedded} with vectors; digest "
                    f"{check.files_digest[:16]})"
                )
            else:
                click.echo("index differs from the files:")
                for line in check.differences:
                    click.echo(f"  {line}")
    if report.verification is not None and not report.verification.equal:
        raise SystemExit(1)


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
        _fail_on_server_error(info)
        return
    import datetime as dt

    last = info["last_index_at"]
    when = dt.datetime.fromtimestamp(last).isoformat(timespec="seconds") if last else "never"
    drift = info["drift"] or {}
    lines = [
        f"vault         {info['vault']}",
        f"cache         {info['cache']} ({info['cache_bytes'] / 1e6:.1f} MB)",
        f"backend       {_describe_backend(info)}",
        f"files         {info['files']}",
        f"units         {info['units']} ({info['embedded_units']} embedded)",
        f"model         {info['model'] or 'none (keyword search only)'}",
        f"last index    {when}",
        "drift         " + (", ".join(f"{v} {k}" for k, v in drift.items()) or "none"),
    ]
    if info.get("flagged_units"):
        from ..text import plural

        n = info["flagged_units"]
        lines.append(
            f"flagged       {plural(n, 'unit')} {'reads' if n == 1 else 'read'} as "
            "an instruction to a model (search and context mark it; nothing is deleted)"
        )
    if info.get("pending_embeddings"):
        lines.append(
            f"pending       {info['pending_embeddings']} units wait for their vectors "
            f"({info['embedding_error']}); `vault index` adds them"
        )
    if "scope" in info:
        own, above = info["scope"], ", ".join(n or "/" for n in info["scope"]["sees"][:-1])
        lines.insert(
            1,
            f"scope         {own['name'] or '/'} ({own['files']} files, "
            f"{own['units']} units of its own; sees {above or 'nothing above'})",
        )
    if info.get("damaged"):
        lines.insert(1, "health        damaged: " + "; ".join(info["damaged"]))
    if info["problem"] and not info.get("server_error"):  # that one is the Error line
        lines.append(f"problem       {info['problem']}")
    for path, why in sorted(info["skipped"].items()):
        lines.append(f"skipped       {path}: {why}")
    if info.get("unresolved_links"):
        shown = info["unresolved"][:UNRESOLVED_SHOWN]
        more = info["unresolved_links"] - len(shown)
        from ..text import plural

        count = info["unresolved_links"]
        lines.append(
            f"unresolved    {plural(count, 'link')} lead{'s' if count == 1 else ''} "
            "to no file" + (f" ({more} more: `vault status --json`)" if more > 0 else "")
        )
        lines += [
            f"unresolved    {link['source']}:{link['line']} -> {link['target']}" for link in shown
        ]
    lines.append(f"watcher       {_describe_watcher(info['watcher'])}")
    lines.append(f"queue         {_describe_queue(info['queue'])}")
    for key, source in sorted(info["settings_sources"].items()):
        section, _, name = key.partition(".")
        lines.append(f"setting       {key} = {info['settings'][section][name]!r} ({source})")
    click.echo("\n".join(lines))
    _fail_on_server_error(info)


def _fail_on_server_error(info: dict[str, Any]) -> None:
    """An index server that cannot be reached (or refuses this vault) fails the command as
    any failure does: the status is printed, then one `Error:` line and exit status 1, so
    that a script or health check running `vault status` notices."""
    if info.get("server_error"):
        raise click.ClickException(info["server_error"])


def _describe_backend(info: dict[str, Any]) -> str:
    """`postgres at postgresql://…@host/db (PostgreSQL 16.4, pgvector 0.6.2; vault id x)`,
    or `sqlite (SQLite 3.45.1)`: where the index lives and what holds it."""
    names = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "pgvector": "pgvector"}
    versions = ", ".join(f"{names.get(k, k)} {v}" for k, v in info["versions"].items())
    if info["backend"] == "sqlite":
        return f"sqlite ({versions})"
    where = info.get("dsn") or info.get("server") or "no DSN set"
    details = "; ".join(
        part
        for part in (versions or "server not reached", f"vault id {info.get('vault_id')}")
        if part
    )
    return f"{info['backend']} at {where} ({details})"


def _describe_queue(queue: dict[str, Any]) -> str:
    from ..text import plural

    text = f"{queue['pending']} pending"
    if queue["pending"]:
        text += f" ({plural(queue['sessions'], 'session')}"
        if queue["abandoned"]:
            text += f", {queue['abandoned']} left by stopped processes"
        text += ")"
    if queue["failed"]:
        text += (
            f", {plural(queue['failed'], 'update')} failed: {queue['last_error']} "
            "(kept in .vault/queue/failed.jsonl)"
        )
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
    from ..text import plural

    found = vault.scopes()
    if as_json:
        _print_json([info.to_dict() for info in found])
        return
    for info in found:
        notes = [
            what
            for what, flag in (
                ("MEMORY.md", info.memory),
                ("own vault.toml", info.settings),
                ("not bindable: rename the folder", not info.bindable),
            )
            if flag
        ]
        click.echo(
            f"{info.name or '/':<28} {plural(info.files, 'file'):>10} "
            f"{plural(info.units, 'unit'):>11}  {plural(info.daily_logs, 'daily log')}"
            + (f"  ({', '.join(notes)})" if notes else "")
        )
