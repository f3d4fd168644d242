"""Reference pages generated from the code, so that the docs cannot drift from it.

- `cli_markdown()`: every `vault` command and option, from the click objects themselves (the
  same option strings and help `vault CMD --help` prints).
- `config_markdown()`: every `vault.toml` key with its type, default and environment variable,
  from the section dataclasses of `vault_memory/config.py`, described by the comments written
  beside each field.
- `evaluation_markdown(results_dir)`: the tables of `bench/results/*.json`, whatever files are
  there (a file that cannot be read is named on the page, not a failed build).

The MkDocs hook (`hooks.py`) puts each where a page holds its marker, e.g.
`<!-- generated: cli -->`; `tests/repo/test_docs.py` checks that nothing the code offers is missing.
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import json
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# A tracker's numbers mean nothing to a reader of the docs: a code comment that still names one
# is shown without it.
_TRACKER = re.compile(r"\s*\(issue #?\d+\)|[;,]\s*issue #?\d+|\bissue #?\d+[;,]?\s*", re.IGNORECASE)


def _md_cell(text: str) -> str:
    """Text safe inside a Markdown table cell (pipes escaped, one line)."""
    return " ".join(text.split()).replace("|", "\\|")


# -- the command line --------------------------------------------------------------------------


def walk_commands() -> Iterator[tuple[str, Any]]:
    """("vault sessions show", command) for the group and every command under it, the group
    first, then commands in alphabetical order (subcommands after their group)."""
    import click

    from vault_memory.cli import cli

    def walk(name: str, command: click.Command) -> Iterator[tuple[str, click.Command]]:
        yield name, command
        if isinstance(command, click.Group):
            for sub in sorted(command.commands):
                yield from walk(f"{name} {sub}", command.commands[sub])

    yield from walk("vault", cli)


def _anchor(path: str) -> str:
    return path.replace(" ", "-")


def _help_blocks(text: str) -> list[str]:
    """Click help text as Markdown: paragraphs as prose, a `\\b` paragraph (the `Example:`
    blocks every command ends with) as a shell block."""
    blocks: list[str] = []
    for para in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        lines = para.splitlines()
        if lines and lines[0].strip() == "\b":
            lines = lines[1:]
            title = lines[0].strip() if lines and lines[0].strip().endswith(":") else ""
            body = lines[1:] if title else lines
            code = inspect.cleandoc("\n".join(body))
            blocks.append((f"{title}\n\n" if title else "") + f"```sh\n{code}\n```")
        else:
            blocks.append(" ".join(line.strip() for line in lines))
    return blocks


def _option_rows(command: Any, ctx: Any) -> list[str]:
    import click

    rows = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option):
            continue
        record = param.get_help_record(ctx)
        if record is None:  # hidden: listed for completeness, marked as internal
            hidden = param.hidden
            param.hidden = False
            record = param.get_help_record(ctx)
            param.hidden = hidden
            record = (record[0], f"(internal, not shown by --help) {record[1]}")
        names, help_text = record
        env = param.envvar if isinstance(param.envvar, str) else ""
        rows.append(
            f"| `{_md_cell(names)}` | {_md_cell(help_text)} | {f'`{env}`' if env else ''} |"
        )
    return rows


def _arguments(command: Any, ctx: Any) -> list[str]:
    import click

    return [
        p.make_metavar(ctx) if _takes_ctx(p.make_metavar) else p.make_metavar()
        for p in command.get_params(ctx)
        if isinstance(p, click.Argument)
    ]


def _takes_ctx(method: Any) -> bool:
    """click 8.2 gave `make_metavar` a context argument; older versions take none."""
    return "ctx" in inspect.signature(method).parameters


def cli_markdown() -> str:
    """The reference of every command: usage, help, arguments and an options table."""
    import click

    parts: list[str] = []
    commands = list(walk_commands())
    parts.append("| command | what it does |\n|---|---|")
    for path, command in commands[1:]:
        short = _md_cell(command.get_short_help_str(limit=120))
        parts.append(f"| [`{path}`](#{_anchor(path)}) | {short} |")
    parts[-1] += "\n"
    for path, command in commands:
        parent = click.Context(commands[0][1], info_name="vault")
        ctx = click.Context(command, info_name=path, parent=parent if path != "vault" else None)
        heading = "##" if path.count(" ") <= 1 else "###"
        parts.append(f"{heading} `{path}` {{#{_anchor(path)}}}\n")
        pieces = command.collect_usage_pieces(ctx)
        parts.append(f"```text\nUsage: {path} {' '.join(pieces)}\n```\n")
        parts.extend(block + "\n" for block in _help_blocks(command.help or ""))
        arguments = _arguments(command, ctx)
        if arguments:
            parts.append("Arguments: " + ", ".join(f"`{a}`" for a in arguments) + "\n")
        rows = _option_rows(command, ctx)
        if rows:
            parts.append("| option | what it does | environment |\n|---|---|---|")
            parts.append("\n".join(rows) + "\n")
        if isinstance(command, click.Group):
            subs = ", ".join(
                f"[`{path} {name}`](#{_anchor(f'{path} {name}')})"
                for name in sorted(command.commands)
            )
            parts.append(f"Commands: {subs}\n")
    return "\n".join(parts)


# -- vault.toml ---------------------------------------------------------------------------------


def _field_comments(cls: type) -> dict[str, str]:
    """Each field's description: the comment lines right above it and the comment on its line.
    A block of comments above a field with none of its own speaks for the fields after it that
    have none either (`backend`, then `dsn` and `dsn_env`)."""
    lines, _ = inspect.getsourcelines(cls)
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    found: dict[str, str] = {}
    group = ""
    for number, line in enumerate(lines, start=1):
        match = re.match(r"\s+(\w+)\s*:", line)
        if not match or line.lstrip().startswith("#"):
            continue
        above: list[str] = []
        previous = number - 1
        while previous in comments and lines[previous - 1].lstrip().startswith("#"):
            above.insert(0, comments[previous])
            previous -= 1
        inline = comments.get(number, "")
        said = " ".join([*above, inline]).strip()
        if above and not inline:
            group = match[1]
        elif said:
            group = ""
        if not said and group:
            said = f"see `{group}`"
        found[match[1]] = _TRACKER.sub("", said).strip() or _UNCOMMENTED.get(match[1], "")
    return found


#: What a setting is for, where the code has no comment beside it (a comment there wins).
_UNCOMMENTED = {
    "limit": "how many results a search returns when no limit is given",
    "half_life_days": "dated files lose half their recency weight every this many days "
    "(MEMORY.md and undated notes never decay)",
    "enabled": "false: `vault dream` refuses and the watcher never dreams",
    "schedule": "when `vault watch` dreams: cron (minute hour day month weekday)",
    "lookback_days": "how many days of daily logs a dream reads",
    "max_memory_chars": "MEMORY.md's size budget: past it, the least valuable unpinned entries "
    "move to dreams/archive.md",
    "git_commit": "in a git repository, each dream and undo is one commit of the files it wrote",
    "base_url": "the endpoint's OpenAI-compatible /v1 address, e.g. http://127.0.0.1:11434/v1",
    "model": "the model's name on that endpoint",
    "api_key_env": "the environment variable holding the API key, if one is needed",
    "timeout_seconds": "one deadline per call: connection and every byte of the reply",
}


def config_keys() -> list[tuple[str, str, str, Any, str]]:
    """(section, key, type, default, description) of every setting vault.toml takes."""
    from vault_memory.config import SECTIONS

    keys = []
    for section, cls in SECTIONS.items():
        described = _field_comments(cls)
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
            keys.append((section, f.name, str(f.type), default, described.get(f.name, "")))
    return keys


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value) if not isinstance(value, int) else f"{value}"


def config_markdown() -> str:
    """A table per `[section]`: key, type, default, environment variable, description."""
    from vault_memory.config import SCOPE_SECTIONS

    parts: list[str] = []
    current = None
    for section, key, typ, default, said in config_keys():
        if section != current:
            current = section
            where = (
                "the root's `vault.toml`, or a scope's own (for that scope and those below it)"
                if section in SCOPE_SECTIONS
                else "the root's `vault.toml` only (the whole vault's setting)"
            )
            parts.append(f"\n### `[{section}]`\n\nSet in {where}.\n")
            parts.append(
                "| key | type | default | environment | what it does |\n|---|---|---|---|---|"
            )
        env = f"VAULT_{section.upper()}_{key.upper()}"
        parts.append(
            f"| `{key}` | {typ} | `{_md_cell(toml_value(default))}` | `{env}` | {_md_cell(said)} |"
        )
    return "\n".join(parts) + "\n"


# -- evaluation ---------------------------------------------------------------------------------


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, list) and all(_is_scalar(v) for v in value):
        return ", ".join(_fmt(v) for v in value)
    return _md_cell(str(value)) if _is_scalar(value) else f"`{_md_cell(json.dumps(value))}`"


def _table_of_rows(rows: dict[str, Any], columns: list[str] | None = None) -> str:
    """{row: {column: scalar}} as one table: the columns given (those present), else every
    column in order of first appearance."""
    present: list[str] = []
    for values in rows.values():
        present += [c for c in values if c not in present and _is_scalar(values[c])]
    columns = [c for c in columns if c in present] if columns else present
    heads = [re.sub(r"^recall@(\d+ch)$", r"r@\1", c) for c in columns]
    lines = ["| | " + " | ".join(heads) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, values in rows.items():
        cells = [_fmt(values[c]) if c in values else "" for c in columns]
        lines.append(f"| {_md_cell(name)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _figures(value: Any, title: str, depth: int) -> list[str]:
    """Nested figures as tables: scalars of one level together, a dict of dicts as one table."""
    out: list[str] = []
    if not isinstance(value, dict):
        return [f"{title}: {_fmt(value)}\n"] if title else [_fmt(value) + "\n"]
    scalars = {k: v for k, v in value.items() if _is_scalar(v) or isinstance(v, list)}
    if scalars:
        rows = [f"| {_md_cell(k)} | {_fmt(v)} |" for k, v in scalars.items()]
        out.append("| figure | value |\n|---|---|\n" + "\n".join(rows) + "\n")
    nested = {k: v for k, v in value.items() if isinstance(v, dict)}
    if nested and all(
        v and all(_is_scalar(x) or isinstance(x, list) for x in v.values()) for v in nested.values()
    ):
        out.append(_table_of_rows(nested) + "\n")
        return out
    for key, sub in nested.items():
        out.append(f"{'#' * min(depth, 6)} {key}\n")
        out += _figures(sub, "", depth + 1)
    return out


#: The search figures shown, the headline first (the results file holds more).
_SEARCH_COLUMNS = [
    "n",
    "recall@2000ch",
    "recall@1000ch",
    "recall@4000ch",
    "recall@1",
    "recall@5",
    "recall@10",
    "mrr",
    "sess@10",
]


def _search_tables(figures: dict[str, Any]) -> list[str]:
    """`bench/results/search.json`: per data set, overall and by category, then by
    conversation, with the latency."""
    out: list[str] = []
    for dataset, summary in figures.items():
        if not isinstance(summary, dict) or "overall" not in summary:
            out += _figures({dataset: summary}, "", 4)
            continue
        rows = {"overall": summary["overall"], **summary.get("by_category", {})}
        out.append(f"#### {dataset}\n")
        out.append(_table_of_rows(rows, _SEARCH_COLUMNS) + "\n")
        if summary.get("by_conversation"):
            out.append(_table_of_rows(summary["by_conversation"], _SEARCH_COLUMNS) + "\n")
        latency = summary.get("latency", {})
        if latency:
            said = ", ".join(f"{k.removesuffix('_ms')} {v:.1f} ms" for k, v in latency.items())
            out.append(f"Latency per query (in-process, warm): {said}.\n")
    return out


def evaluation_markdown(results_dir: Path) -> str:
    """A section per `bench/results/*.json`: what ran, where, with which versions, and its
    figures. New files appear on the page by themselves."""
    files = sorted(results_dir.glob("*.json")) if results_dir.is_dir() else []
    if not files:
        return "No benchmark has written its results to `bench/results/` yet.\n"
    parts: list[str] = []
    for path in files:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            parts.append(f"### `{path.name}`\n\nCould not be read: {_md_cell(str(exc))}.\n")
            continue
        name = str(doc.get("name") or path.stem)
        parts.append(f"### {name} {{#results-{_anchor(path.stem)}}}\n")
        facts = [f"file `bench/results/{path.name}`"]
        if doc.get("date"):
            facts.append(f"run {_md_cell(str(doc['date']))}")
        if doc.get("command"):
            facts.append(f"command `{_md_cell(str(doc['command']))}`")
        parts.append("; ".join(facts) + ".\n")
        for label, value in doc.items():
            if label in ("name", "date", "command", "figures"):
                continue
            if isinstance(value, dict) and value:
                said = "; ".join(f"{k} {_fmt(v)}" for k, v in value.items())
                parts.append(f"*{label.capitalize()}:* {_md_cell(said)}.\n")
            elif _is_scalar(value) and value not in (None, ""):
                parts.append(f"*{label.capitalize()}:* {_fmt(value)}.\n")
        figures = doc.get("figures", {})
        if name == "search" and isinstance(figures, dict):
            parts += _search_tables(figures)
        else:
            parts += _figures(figures, "", 4)
    return "\n".join(parts)


# -- JSON output --------------------------------------------------------------------------------

#: The example session a scratch vault is given before the commands run: two people, a
#: decision, a preference and a secret that flush redacts.
_CHAT = (
    "User: We decided to move billing-core to PostgreSQL 16. #decision\n"
    "Assistant: Noted: billing-core moves to PostgreSQL 16.\n"
    "User: I prefer hand-written SQL migrations over ORM-generated ones.\n"
)

#: (title, arguments, standard input) of every command run for the JSON reference, in the
#: order a vault's life goes; `{export}` is the file `vault export` wrote.
JSON_COMMANDS: list[tuple[str, list[str], str | None]] = [
    ("vault init", ["init", "{vault}", "--json"], None),
    ("vault add", ["add", "Chose PostgreSQL 16 for billing", "--tag", "decision", "--json"], None),
    ("vault flush", ["flush", "-", "--session", "billing-42", "--json"], _CHAT),
    ("vault index", ["index", "--json"], None),
    ("vault search", ["search", "which database for billing?", "-n", "2", "--json"], None),
    ("vault get", ["get", "MEMORY.md:1-3", "--json"], None),
    ("vault context", ["context", "--budget", "200", "--query", "billing", "--json"], None),
    ("vault status", ["status", "--json"], None),
    ("vault doctor", ["doctor", "--json"], None),
    ("vault sessions", ["sessions", "--json"], None),
    ("vault sessions show", ["sessions", "show", "billing-42", "--json"], None),
    ("vault sessions continue", ["sessions", "continue", "last", "--json"], None),
    (
        "vault sessions prune",
        ["sessions", "prune", "--older-than", "30d", "--dry-run", "--json"],
        None,
    ),
    ("vault dream", ["dream", "--dry-run", "--json"], None),
    ("vault scopes", ["scopes", "--json"], None),
    ("vault postgres status", ["postgres", "status", "--dir", "{vault}-pg", "--json"], None),
    ("vault postgres clones", ["postgres", "clones", "--json"], None),
    ("vault links", ["links", "MEMORY.md", "--json"], None),
    ("vault backlinks", ["backlinks", "MEMORY.md", "--json"], None),
    ("vault graph", ["graph", "--format", "json"], None),
    ("vault export", ["export", "--kind", "memory", "-o", "{export}"], None),
    ("vault import", ["import", "{export}", "--dry-run", "--json"], None),
    ("vault watch --stop", ["watch", "--stop", "--json"], None),
]


def _shorten(value: Any, depth: int = 0) -> Any:
    """A JSON value cut to what an example needs: long texts, long lists and large nested
    objects shortened, marked with `…`."""
    if isinstance(value, str) and len(value) > 160:
        return value[:150] + "…"
    if isinstance(value, list):
        cut = [_shorten(v, depth + 1) for v in value[:3]]
        return cut + ["…"] if len(value) > 3 else cut
    if isinstance(value, dict):
        if depth >= 2 and len(value) > 10:
            return {k: _shorten(v, depth + 1) for k, v in list(value.items())[:4]} | {"…": "…"}
        return {k: _shorten(v, depth + 1) for k, v in value.items()}
    return value


def json_examples() -> list[tuple[str, str, str]]:
    """(title, command line, output) of each command of `JSON_COMMANDS`, run in-process on a
    scratch vault with the clock fixed; an output that is not JSON fails loudly (a contract
    broke)."""
    import os
    import shlex
    import tempfile

    from click.testing import CliRunner

    from vault_memory.cli import cli

    found = []
    with tempfile.TemporaryDirectory() as tmp:
        vault = os.path.join(tmp, "my-vault")
        export = os.path.join(tmp, "memory.jsonl")
        env = {"VAULT_NOW": "2026-11-22T09:30:00+00:00", "VAULT_PATH": vault}
        for title, args, stdin in JSON_COMMANDS:
            args = [a.format(vault=vault, export=export) for a in args]
            result = CliRunner().invoke(cli, args, input=stdin, env=env, prog_name="vault")
            if result.exit_code != 0:
                raise RuntimeError(f"`vault {shlex.join(args)}` failed: {result.output}")
            text = result.stdout if title != "vault export" else Path(export).read_text()
            lines = [line for line in text.splitlines() if line.strip()]
            values = (
                [json.loads(line) for line in lines]
                if title == "vault export"
                else [json.loads(text)]
            )
            shown = "\n".join(
                json.dumps(_shorten(v), ensure_ascii=False, indent=2) for v in values[:3]
            )
            command = "vault " + shlex.join(args).replace(vault, "my-vault").replace(
                export, "memory.jsonl"
            )
            found.append((title, command.replace(tmp + "/", ""), shown.replace(tmp + "/", "")))
    return found


def json_markdown() -> str:
    """Each command's `--json` output as it is today, from a real run."""
    parts = []
    for title, command, shown in json_examples():
        parts.append(f"### `{title}` {{#json-{_anchor(title.replace(' --', ' '))}}}\n")
        parts.append(f"```sh\n{command}\n```\n\n```json\n{shown}\n```\n")
    return "\n".join(parts)
