"""Library errors in the command line's words, in one place: the library says what to do with
its own parameters and methods (`since=`, `Vault.init`, `mode='keyword'`); the CLI says it
with its flags and commands (`--since`, `vault init`, `--mode keyword`). An error without a
wording of its own here is printed as the library says it.

Wordings are found by the name of the error's class (or of a class it derives from), so
that printing an error imports none of the features that raise them (the dream's modules
alone take half a second to import).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..dream import DreamDisabledError, DreamRefusedError
    from ..errors import (
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
    from ..live import WatcherNotAnsweringError, WatcherRunningError, WatcherStillRunningError
    from ..search import DeepUnavailableError
    from ..transfer import ImportFormatError, NothingToFollowError

E = TypeVar("E")
#: The name of an error class -> its wording on the command line.
WORDINGS: dict[str, Callable[[Any], str]] = {}


def wording(name: str) -> Callable[[Callable[[E], str]], Callable[[E], str]]:
    """Register the command-line wording of the errors of class `name` (and its subclasses)."""

    def register(render: Callable[[E], str]) -> Callable[[E], str]:
        WORDINGS[name] = render
        return render

    return register


def cli_message(exc: VaultError) -> str:
    """What `Error: ...` says for `exc`."""
    for cls in type(exc).__mro__:
        render = WORDINGS.get(cls.__name__)
        if render is not None:
            return render(exc)
    return str(exc)


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


@wording("ArgumentError")
def _argument_error(exc: ArgumentError) -> str:
    return f"{option(exc.parameter)} {exc.value!r}{exc.problem}"


@wording("DateRangeError")
def _date_range_error(exc: DateRangeError) -> str:
    return f"--since {exc.since} is after --until {exc.until}: no date can match. Swap them."


@wording("NoSuchPathError")
def _no_such_path_error(exc: NoSuchPathError) -> str:
    return (
        f"--in {exc.within}: there is no such file or folder in the vault. Check the path "
        "(relative to the vault root), e.g. --in memory or --in notes/a.md."
    )


@wording("SemanticUnavailableError")
def _semantic_unavailable_error(exc: SemanticUnavailableError) -> str:
    return (
        "semantic search needs the embedding model, which is not available "
        f"({exc.reason}). Use --mode keyword or hybrid."
    )


@wording("DeepUnavailableError")
def _deep_unavailable_error(exc: DeepUnavailableError) -> str:
    return (
        f"deep search needs {exc.missing}, which is not installed. Install the extra: "
        f"{exc.install}, or search without --deep."
    )


@wording("NoVectorsError")
def _no_vectors_error(exc: NoVectorsError) -> str:
    return (
        "the index holds no embeddings for the model yet (it was built without it). "
        "Run `vault index` to add them, or use --mode keyword."
    )


@wording("SessionInScopesError")
def _session_in_scopes_error(exc: SessionInScopesError) -> str:
    where = ", ".join(scope or "/" for scope in exc.scopes)
    found = "has transcripts" if exc.transcript else "was flushed"
    show = "--transcript " if exc.transcript else ""
    return (
        f"session {exc.session!r} {found} in several scopes ({where}); pick one with --scope, "
        f"e.g. `vault sessions show {exc.session} {show}--scope {exc.scopes[0] or '/'}`."
    )


@wording("GitNotInstalledError")
def _git_not_installed_error(exc: GitNotInstalledError) -> str:
    return "git is not installed; install it or run `vault init` without --git."


@wording("NotAVaultError")
def _not_a_vault_error(exc: NotAVaultError) -> str:
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


@wording("VaultNotFoundError")
def _vault_not_found_error(exc: VaultNotFoundError) -> str:
    return (
        f"no vault found at or above {exc.start} (no vault.toml). "
        "Run `vault init` to create one, or pass --vault PATH / set VAULT_PATH."
    )


@wording("ImportFormatError")
def _import_format_error(exc: ImportFormatError) -> str:
    return (
        f"cannot import {exc.name}: {exc.what}. Nothing was written. Give a ChatGPT or Claude.ai "
        "data export (conversations.json, its folder or its .zip), OpenAI-style messages "
        "(JSON or JSONL), Claude Code or Codex session files, or a `vault export` file; name "
        "it with --format if it is not recognised."
    )


@wording("NothingToFollowError")
def _nothing_to_follow_error(exc: NothingToFollowError) -> str:
    return (
        f"{exc.path} holds no Claude Code or Codex sessions to follow; give such a file or "
        "folder, and --format claude-code or --format codex if it is not recognised."
    )


@wording("SecretSessionIdError")
def _secret_session_id_error(exc: SecretSessionIdError) -> str:
    return (
        f"the session id looks like a secret ({', '.join(exc.found)}); it would be written into "
        "the daily log. Use another id (or leave --session out)."
    )


@wording("DreamDisabledError")
def _dream_disabled_error(exc: DreamDisabledError) -> str:
    return (
        "dreaming is disabled ([dream] enabled = false in vault.toml); nothing was done. "
        "Set enabled = true, or run once with VAULT_DREAM_ENABLED=true vault dream "
        "(vault dream --dry-run previews it without writing)."
    )


@wording("DreamRefusedError")
def _dream_refused_error(exc: DreamRefusedError) -> str:
    hint = (
        "Run `vault dream --dry-run` to see the diff, and `vault dream --force` to apply it anyway."
        if exc.forceable
        else "Nothing was written; the next dream will try again."
    )
    return "the dream was refused, MEMORY.md is unchanged: " + "; ".join(exc.problems) + ". " + hint


@wording("WatcherRunningError")
def _watcher_running_error(exc: WatcherRunningError) -> str:
    who = f"pid {exc.pid}" if exc.pid else "another process"
    return (
        f"a watcher already runs for this vault ({who}). Searches already go through it; "
        "stop it first with `vault watch --stop` to start another."
    )


@wording("WatcherStillRunningError")
def _watcher_still_running_error(exc: WatcherStillRunningError) -> str:
    who = f"pid {exc.pid}" if exc.pid else "its process"
    return (
        f"the watcher ({who}) was asked to stop but still runs after {exc.seconds:g} s: it "
        "lets a running dream or batch finish first. Run `vault watch --stop` again to "
        f"wait longer, or end it at once with `kill -9 {exc.pid or '<pid>'}` (safe: the next "
        "start compares the files with the index)."
    )


@wording("WatcherNotAnsweringError")
def _watcher_not_answering_error(exc: WatcherNotAnsweringError) -> str:
    return (
        "a watcher holds .vault/watch.lock but does not answer on its socket and has not "
        "written its pid yet (it may be starting). Try `vault watch --stop` again in a "
        "moment."
    )
