"""Library errors speak the library's words (its parameters and methods), never a command-line
flag; the CLI says the same with its own options and commands, in one place (cli/errors.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_memory.cli.errors import cli_message, option
from vault_memory.errors import (
    ArgumentError,
    DateRangeError,
    GitNotInstalledError,
    NoSuchPathError,
    NotAVaultError,
    NoVectorsError,
    SemanticUnavailableError,
    SessionInScopesError,
    VaultError,
    VaultNotFoundError,
)
from vault_memory.transfer import ImportFormatError


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
            "messages (JSON or JSONL), or an export of a vault; give its `format` if it is not "
            "recognised.",
            "cannot import chats.bin: not JSON. Nothing was written. Give a ChatGPT or "
            "Claude.ai data export (conversations.json, its folder or its .zip), OpenAI-style "
            "messages (JSON or JSONL), or a `vault export` file; name it with --format if it "
            "is not recognised.",
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
