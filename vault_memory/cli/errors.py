"""Library errors in the command line's words, in one place: the library says what to do with
its own parameters and methods (`since=`, `Vault.init`, `mode='keyword'`); the CLI says it
with its flags and commands (`--since`, `vault init`, `--mode keyword`). An error without a
wording of its own here is printed as the library says it."""

from __future__ import annotations

import functools

from ..errors import (
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
from ..transfer import ImportFormatError

#: A library parameter -> the option that gives it (otherwise `--name-with-dashes`).
OPTIONS = {
    "within": "--in",
    "max_tokens": "--budget",
    "older_than_days": "--older-than",
    "lookback_days": "--days",
}


def option(parameter: str) -> str:
    """The command-line option of a library parameter (`max_tokens` -> `--budget`)."""
    return OPTIONS.get(parameter, "--" + parameter.replace("_", "-"))


@functools.singledispatch
def cli_message(exc: VaultError) -> str:
    """What `Error: ...` says for `exc`."""
    return str(exc)


@cli_message.register
def _(exc: ArgumentError) -> str:
    return f"{option(exc.parameter)} {exc.value!r}{exc.problem}"


@cli_message.register
def _(exc: DateRangeError) -> str:
    return f"--since {exc.since} is after --until {exc.until}: no date can match. Swap them."


@cli_message.register
def _(exc: NoSuchPathError) -> str:
    return (
        f"--in {exc.within}: there is no such file or folder in the vault. Check the path "
        "(relative to the vault root), e.g. --in memory or --in notes/a.md."
    )


@cli_message.register
def _(exc: SemanticUnavailableError) -> str:
    return (
        "semantic search needs the embedding model, which is not available "
        f"({exc.reason}). Use --mode keyword or hybrid."
    )


@cli_message.register
def _(exc: NoVectorsError) -> str:
    return (
        "the index holds no embeddings for the model yet (it was built without it). "
        "Run `vault index` to add them, or use --mode keyword."
    )


@cli_message.register
def _(exc: SessionInScopesError) -> str:
    where = ", ".join(scope or "/" for scope in exc.scopes)
    found = "has transcripts" if exc.transcript else "was flushed"
    show = "--transcript " if exc.transcript else ""
    return (
        f"session {exc.session!r} {found} in several scopes ({where}); pick one with --scope, "
        f"e.g. `vault sessions show {exc.session} {show}--scope {exc.scopes[0] or '/'}`."
    )


@cli_message.register
def _(exc: GitNotInstalledError) -> str:
    return "git is not installed; install it or run `vault init` without --git."


@cli_message.register
def _(exc: NotAVaultError) -> str:
    path = exc.path
    if exc.problem == "folder":
        return (
            f"{path} is not a vault (it holds no vault.toml, MEMORY.md or memory/). Run "
            f"`vault init {path}` to make it one, or pass the folder of an existing vault."
        )
    if exc.problem == "file":
        return f"{path} is a file, not a vault folder. Pass the folder that holds vault.toml."
    return (
        f"{path} does not exist. Pass an existing vault folder, or run "
        f"`vault init {path}` to create one."
    )


@cli_message.register
def _(exc: VaultNotFoundError) -> str:
    return (
        f"no vault found at or above {exc.start} (no vault.toml). "
        "Run `vault init` to create one, or pass --vault PATH / set VAULT_PATH."
    )


@cli_message.register
def _(exc: ImportFormatError) -> str:
    return (
        f"cannot import {exc.name}: {exc.what}. Nothing was written. Give a ChatGPT or Claude.ai "
        "data export (conversations.json, its folder or its .zip), OpenAI-style messages "
        "(JSON or JSONL), or a `vault export` file; name it with --format if it is not "
        "recognised."
    )
