"""Library errors speak the library's words (its parameters and methods), never a command-line
flag; the CLI says the same with its own options and commands, in one place (cli/errors.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest

from vault_memory.cli import cli
from vault_memory.cli.errors import WORDINGS, cli_message, option
from vault_memory.dream import DreamDisabledError, DreamRefusedError
from vault_memory.errors import (
    ArgumentError,
    DateRangeError,
    GitNotInstalledError,
    NoSuchPathError,
    NotAVaultError,
    NoVectorsError,
    SecretSessionIdError,
    SemanticUnavailableError,
    SessionInScopesError,
    VaultError,
    VaultNotFoundError,
)
from vault_memory.live import (
    WatcherNotAnsweringError,
    WatcherRunningError,
    WatcherStillRunningError,
)
from vault_memory.transfer import ImportFormatError

PACKAGE = Path(__file__).resolve().parents[2] / "vault_memory"


def long_options(group: click.Group) -> set[str]:
    """Every long option of every `vault` command."""
    found: set[str] = set()
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found |= long_options(command)
        for param in command.params:
            found |= {o for o in (*param.opts, *param.secondary_opts) if o.startswith("--")}
    return found - {"--help"}


def error_strings(tree: ast.Module) -> list[tuple[int, str]]:
    """The string parts of what a module raises and of its error classes' messages."""
    found: list[tuple[int, str]] = []
    nodes: list[ast.AST] = [n.exc for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.exc]
    nodes += [
        item
        for n in ast.walk(tree)
        if isinstance(n, ast.ClassDef) and any("Error" in ast.unparse(b) for b in n.bases)
        for item in n.body
        if isinstance(item, ast.FunctionDef) and item.name == "__init__"
    ]
    for node in nodes:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                found.append((inner.lineno, inner.value))
    return found


def test_no_library_error_quotes_a_command_line_option() -> None:
    options = long_options(cli)
    assert {"--force", "--since", "--in", "--dry-run", "--mode"} <= options
    pattern = re.compile(
        r"(?<![\w-])(" + "|".join(map(re.escape, sorted(options, key=len, reverse=True))) + r")"
        r"(?![\w-])"
    )
    quoting = [
        f"{path.relative_to(PACKAGE)}:{line}: {text!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "cli" not in path.relative_to(PACKAGE).parts
        for line, text in error_strings(ast.parse(path.read_text(encoding="utf-8")))
        if pattern.search(text)
    ]
    assert quoting == []


@pytest.mark.parametrize(
    ("error", "library", "command_line"),
    [
        (
            ArgumentError("since", "2026-13-01", " is not a date; use YYYY-MM-DD."),
            "since='2026-13-01' is not a date; use YYYY-MM-DD.",
            "--since '2026-13-01' is not a date; use YYYY-MM-DD.",
        ),
        (
            ArgumentError("max_tokens", 100, " is too small; give at least 400 tokens."),
            "max_tokens=100 is too small; give at least 400 tokens.",
            "--budget 100 is too small; give at least 400 tokens.",
        ),
        (
            ArgumentError("older_than_days", "soon", " is not an age; give days."),
            "older_than_days='soon' is not an age; give days.",
            "--older-than 'soon' is not an age; give days.",
        ),
        (
            DateRangeError("2026-11-20", "2026-11-10"),
            "since 2026-11-20 is after until 2026-11-10: no date can match. Swap them.",
            "--since 2026-11-20 is after --until 2026-11-10: no date can match. Swap them.",
        ),
        (
            NoSuchPathError("notez"),
            "within='notez': there is no such file or folder in the vault. Check the path "
            "(relative to the vault root), e.g. 'memory' or 'notes/a.md'.",
            "--in notez: there is no such file or folder in the vault. Check the path "
            "(relative to the vault root), e.g. --in memory or --in notes/a.md.",
        ),
        (
            SemanticUnavailableError("embeddings are turned off"),
            "semantic search needs the embedding model, which is not available (embeddings "
            "are turned off). Search with mode='keyword' or mode='hybrid'.",
            "semantic search needs the embedding model, which is not available (embeddings "
            "are turned off). Use --mode keyword or hybrid.",
        ),
        (
            NoVectorsError(),
            "the index holds no embeddings for the model yet (it was built without it). "
            "Index the vault (`Vault.index()`) to add them, or search with mode='keyword'.",
            "the index holds no embeddings for the model yet (it was built without it). "
            "Run `vault index` to add them, or use --mode keyword.",
        ),
        (
            SessionInScopesError("7f3a", ["org/acme", ""]),
            "session '7f3a' was flushed in several scopes (org/acme, /); pick one by binding "
            "the vault to it, e.g. `vault.scope('org', 'acme').session('7f3a')`.",
            "session '7f3a' was flushed in several scopes (org/acme, /); pick one with --scope, "
            "e.g. `vault sessions show 7f3a --scope org/acme`.",
        ),
        (
            SessionInScopesError("7f3a", ["", "org"], transcript=True),
            "session '7f3a' has transcripts in several scopes (/, org); pick one by binding "
            "the vault to it, e.g. `vault.scope().transcript('7f3a')`.",
            "session '7f3a' has transcripts in several scopes (/, org); pick one with --scope, "
            "e.g. `vault sessions show 7f3a --transcript --scope /`.",
        ),
        (
            GitNotInstalledError(),
            "git is not installed; install it, or create the vault with git=False.",
            "git is not installed; install it or run `vault init` without --git.",
        ),
        (
            ImportFormatError("chats.bin", "not JSON"),
            "cannot import chats.bin: not JSON. Nothing was written. Give a ChatGPT or "
            "Claude.ai data export (conversations.json, its folder or its .zip), OpenAI-style "
            "messages (JSON or JSONL), Claude Code or Codex session files, or an export of a "
            "vault; give its `format` if it is not recognised.",
            "cannot import chats.bin: not JSON. Nothing was written. Give a ChatGPT or "
            "Claude.ai data export (conversations.json, its folder or its .zip), OpenAI-style "
            "messages (JSON or JSONL), Claude Code or Codex session files, or a `vault export` "
            "file; name it with --format if it is not recognised.",
        ),
        (
            SecretSessionIdError(["github-token"]),
            "the session id looks like a secret (github-token); it would be written into the "
            "daily log. Use another id (or none: one is derived from the conversation).",
            "the session id looks like a secret (github-token); it would be written into the "
            "daily log. Use another id (or leave --session out).",
        ),
        (
            ArgumentError("lookback_days", 0, ": the lookback must be at least 1 day."),
            "lookback_days=0: the lookback must be at least 1 day.",
            "--days 0: the lookback must be at least 1 day.",
        ),
        (
            DreamDisabledError(),
            "dreaming is disabled ([dream] enabled = false in vault.toml); nothing was done. "
            "Set enabled = true, or dream once with VAULT_DREAM_ENABLED=true (a dry run, "
            "`dream(dry_run=True)`, previews it without writing).",
            "dreaming is disabled ([dream] enabled = false in vault.toml); nothing was done. "
            "Set enabled = true, or run once with VAULT_DREAM_ENABLED=true vault dream "
            "(vault dream --dry-run previews it without writing).",
        ),
        (
            DreamRefusedError(["it would drop 3 of 6 entries"], forceable=True),
            "the dream was refused, MEMORY.md is unchanged: it would drop 3 of 6 entries. "
            "See the diff with `dream(dry_run=True)`, and apply it anyway with "
            "`dream(force=True)`.",
            "the dream was refused, MEMORY.md is unchanged: it would drop 3 of 6 entries. "
            "Run `vault dream --dry-run` to see the diff, and `vault dream --force` to apply "
            "it anyway.",
        ),
        (
            DreamRefusedError(["the reply was no JSON"]),
            "the dream was refused, MEMORY.md is unchanged: the reply was no JSON. Nothing "
            "was written; the next dream will try again.",
            "the dream was refused, MEMORY.md is unchanged: the reply was no JSON. Nothing "
            "was written; the next dream will try again.",
        ),
        (
            WatcherRunningError(4242),
            "a watcher already runs for this vault (pid 4242). Searches already go through "
            "it; stop it first (`Vault.stop_watcher()`) to start another.",
            "a watcher already runs for this vault (pid 4242). Searches already go through "
            "it; stop it first with `vault watch --stop` to start another.",
        ),
        (
            WatcherStillRunningError(4242, 30.0),
            "the watcher (pid 4242) was asked to stop but still runs after 30 s: it lets a "
            "running dream or batch finish first. Ask it again (`Vault.stop_watcher()`) to "
            "wait longer, or end it at once with `kill -9 4242` (safe: the next start "
            "compares the files with the index).",
            "the watcher (pid 4242) was asked to stop but still runs after 30 s: it lets a "
            "running dream or batch finish first. Run `vault watch --stop` again to wait "
            "longer, or end it at once with `kill -9 4242` (safe: the next start compares "
            "the files with the index).",
        ),
        (
            WatcherNotAnsweringError(),
            "a watcher holds .vault/watch.lock but does not answer on its socket and has not "
            "written its pid yet (it may be starting). Ask it to stop again in a moment.",
            "a watcher holds .vault/watch.lock but does not answer on its socket and has not "
            "written its pid yet (it may be starting). Try `vault watch --stop` again in a "
            "moment.",
        ),
    ],
)
def test_the_cli_words_an_error_with_its_options(
    error: VaultError, library: str, command_line: str
) -> None:
    assert str(error) == library
    assert cli_message(error) == command_line


def test_an_error_without_a_wording_of_its_own_is_printed_as_the_library_says_it() -> None:
    assert cli_message(VaultError("the query is empty.")) == "the query is empty."
    assert option("within") == "--in" and option("dry_run") == "--dry-run"


def test_every_wording_is_of_an_error_class_the_library_has() -> None:
    """Wordings are found by class name (printing an error imports no feature): each name
    must be a `VaultError` subclass, so a renamed class cannot lose its wording unseen."""
    import vault_memory.dream.apply
    import vault_memory.live.watch
    import vault_memory.search.deep
    import vault_memory.transfer.follow
    import vault_memory.transfer.formats  # noqa: F401 - their error classes, defined

    def subclasses(cls: type) -> set[str]:
        return {name for sub in cls.__subclasses__() for name in {sub.__name__} | subclasses(sub)}

    assert set(WORDINGS) <= subclasses(VaultError)


def test_vault_errors_name_vault_init_in_the_library_and_vault_init_on_the_command_line(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    error = NotAVaultError(plain)
    assert f"`Vault.init({str(plain)!r})`" in str(error)
    assert f"Run `vault init {plain}` to make it one" in cli_message(error)
    missing = NotAVaultError(tmp_path / "missing")
    assert "`Vault.init(" in str(missing) and "run `vault init " in cli_message(missing)
    found = VaultNotFoundError(tmp_path)
    assert "`Vault.init(path)`" in str(found) and "--vault" not in str(found)
    assert cli_message(found).endswith("pass --vault PATH / set VAULT_PATH.")
