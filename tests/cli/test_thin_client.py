"""The thin client (cli/thin.py): `vault search|context|get` answered by a running watcher
print the same bytes, to the same streams, with the same exit status as the full CLI; every
other case (errors, help, other settings, no watcher) is left to the full CLI."""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_memory.cli import thin
from vault_memory.live import Watcher, thin_ops, watch_client

from ..live.test_watch import start_watcher  # noqa: F401 - the fixture

ANSWERED = [
    ["search", "which database did we pick for billing?"],
    ["search", "ERR_LEDGER_409", "--json", "-n", "3"],
    ["search", "standup", "--since", "2026-11-01", "--kind", "daily", "-n5", "--explain"],
    ["search", "--mode=keyword", "invoice", "renderer", "--in", "notes", "--json"],
    ["search", "tag:#decision", "-path:notes/", "database", "--limit", "4"],
    ["search", "billing", "--kind", "memory", "--kind", "daily", "--mode", "semantic"],
    ["search", "--mode", "keyword", "xylophone-quasar-nothing"],  # no results (stderr)
    ["search", "--mode", "keyword", "xylophone-quasar-nothing", "--json"],
    ["-q", "search", "billing", "-n", "2", "--", "-n"],
    ["search", "billing", "--scope", "/", "-n", "2"],
    ["context"],
    ["context", "--json", "--budget", "300"],
    ["context", "--query", "billing cutover", "--budget=800"],
    ["get", "MEMORY.md"],
    ["get", "memory/2026-10-26.md:2-4", "--json"],
    ["get", "notes/billing-migration.md:3"],
]

REFUSED = [  # the full CLI prints these: an error, a usage error, help
    ["search", "billing", "--in", "no/such/folder"],
    ["search", "billing", "--since", "2026-13-01"],
    ["search", "billing", "--limit", "0"],
    ["search", "billing", "-h"],
    ["search"],
    ["search", "billing", "--mode", "fuzzy"],
    ["search", "billing", "--json=yes"],
    ["search", "billing", "--since"],
    ["context", "--budget", "0"],
    ["context", "stray"],
    ["get", "MEMORY.md:abc"],
    ["get", "no-such-file.md"],
    ["get", "../outside.md"],
    ["get", "memory/2026-10-26.md:999"],
    ["get"],
    ["--version"],
    ["-v", "search", "billing"],
    ["search", "billing", "--scope", ""],
]


def thin_run(argv: list[str], environ: dict[str, str] | None = None) -> tuple[str, str] | None:
    """What the thin client prints for `vault ARGV` (stdout, stderr), or None if it leaves
    the command to the full CLI (having printed nothing)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = thin.answer(argv, dict(os.environ if environ is None else environ))
    except Exception:  # Doubt, or no socket: `main` then runs the full CLI
        assert printed(out) == printed(err) == ""
        return None
    finally:
        sys.stdout, sys.stderr = saved
    assert code == 0
    return printed(out), printed(err)


def full_cli(run_cli: Callable[..., Any], *argv: str) -> Any:
    """`vault ARGV` by the full CLI, in this process; its logging setup (a stderr handler,
    -q) undone after it, as the end of its process would."""
    logger = logging.getLogger("vault_memory")
    handlers, propagate, level = list(logger.handlers), logger.propagate, logger.level
    # The watcher these tests run shares this process: a line its threads log while the CLI's
    # stderr handler is installed is not the command's output (a separate process would
    # never print it), so the handlers see only this thread's records.
    here = threading.get_ident()
    original = logging.Filterer.filter

    def this_thread_only(self: logging.Filterer, record: logging.LogRecord) -> Any:
        return record.thread == here and original(self, record)

    logging.Filterer.filter = this_thread_only  # type: ignore[method-assign]
    try:
        return run_cli(*argv)
    finally:
        logging.Filterer.filter = original  # type: ignore[method-assign]
        logger.handlers[:], logger.propagate = handlers, propagate
        logger.setLevel(level)


def printed(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


@pytest.fixture
def watched_sample(
    indexed_sample: Path,
    start_watcher: Callable[..., Watcher],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, Watcher]:
    monkeypatch.chdir(indexed_sample)
    monkeypatch.setenv("VAULT_NOW", os.environ.get("VAULT_NOW", "2026-11-20T10:00"))
    return indexed_sample, start_watcher(indexed_sample)


def test_same_bytes_as_the_full_cli(
    watched_sample: tuple[Path, Watcher], run_cli: Callable[..., Any]
) -> None:
    root, watcher = watched_sample
    for argv in ANSWERED:
        thin_said = thin_run(argv)
        assert thin_said is not None, argv
        full = full_cli(run_cli, *argv)
        assert full.exit_code == 0, (argv, full.output)
        assert thin_said == (full.stdout, full.stderr), argv
    assert watcher.report.searches >= 8


def test_without_a_watcher_a_search_prints_what_the_full_cli_prints(
    indexed_sample: Path, run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No watcher: `vault search` runs the library here without click (stderr not a terminal,
    an index there), with the full CLI's bytes; anything else goes to the full CLI."""
    from vault_memory.index import settings

    monkeypatch.chdir(indexed_sample)
    monkeypatch.setenv("VAULT_NOW", os.environ.get("VAULT_NOW", "2026-11-20T10:00"))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")  # what it sets, undone after the test
    monkeypatch.setattr(settings, "optimize_query_session", settings.optimize_query_session)
    for argv in [a for a in ANSWERED if a[0] == "search" or a[:2] == ["-q", "search"]]:
        thin_said = thin_run(argv)
        assert thin_said is not None, argv
        full = full_cli(run_cli, *argv)
        assert full.exit_code == 0, (argv, full.output)
        assert thin_said == (full.stdout, full.stderr), argv
    # a warning of the library reaches stderr as the CLI prints it
    (indexed_sample / "vault.toml").write_text(
        (indexed_sample / "vault.toml").read_text(encoding="utf-8") + "\n[odd]\nx = 1\n",
        encoding="utf-8",
    )
    said = thin_run(["search", "billing", "-n", "1"])
    full = full_cli(run_cli, "search", "billing", "-n", "1")
    assert said == (full.stdout, full.stderr) and "Warning: " in said[1]
    for argv in (["search", "billing", "--scope", "org/acme"],):  # its warnings twice
        full = full_cli(run_cli, *argv)
        assert thin_run(argv) == (full.stdout, full.stderr) and full.exit_code == 0
    for argv in REFUSED[:3] + [["search", "billing", "--scope", "../up"]]:
        assert thin_run(argv) is None, argv
    assert thin_run(["context"]) is None and thin_run(["get", "MEMORY.md"]) is None
    shutil.rmtree(indexed_sample / ".vault")  # no index yet: the full CLI indexes, with bars
    assert thin_run(["search", "billing"]) is None


def test_a_deep_search_is_answered_by_the_watcher_which_keeps_its_model(
    watched_sample: tuple[Path, Watcher],
    run_cli: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--deep` through a running watcher: the deep mode's model is loaded once, in the
    watcher, and answers the next deep searches of every client (a process a question would
    load it each time, seconds before its first word). A scripted completion stands in for
    the model: what is tested is where it runs and how often it is loaded."""
    from vault_memory.search import deep

    loads: list[Path] = []

    def load_model(path: Path, threads: int) -> Callable[[str], str]:
        loads.append(path)
        return lambda prompt: "WeasyPrint, renderer"

    monkeypatch.setattr(deep, "model_path", lambda: Path("scripted.gguf"))
    monkeypatch.setattr(deep, "load_model", load_model)
    _, watcher = watched_sample
    before = watcher.report.searches
    plain = ["search", "--mode", "keyword", "zyzzyva quokka", "--json"]
    assert '"results": []' in full_cli(run_cli, *plain).stdout  # no word of it is in the vault
    argv = [*plain[:-1], "--deep", "--explain"]
    said = thin_run(argv)  # the thin client, answered by the watcher
    assert said is not None
    full = full_cli(run_cli, *argv)  # the full CLI, answered by the watcher too
    assert full.exit_code == 0 and said == (full.stdout, full.stderr)
    assert "WeasyPrint" in said[0] and "deep=1.000" in said[0]  # found by the model's words
    assert thin_run(["search", "--mode", "keyword", "pdf engine", "--deep"]) is not None
    assert loads == [Path("scripted.gguf")]  # loaded once, by the watcher, for all three
    assert watcher.report.searches == before + 4


def test_errors_and_help_are_left_to_the_full_cli(watched_sample: tuple[Path, Watcher]) -> None:
    for argv in REFUSED:
        assert thin_run(argv) is None, argv


def test_refuses_what_the_full_cli_would_do_otherwise(
    watched_sample: tuple[Path, Watcher], tmp_path: Path
) -> None:
    root, watcher = watched_sample
    argv = ["context", "--query", "billing", "--budget", "500"]  # (a search would run here)
    assert thin_run(argv) is not None
    # a setting or the clock of the client's environment that the watcher does not share
    assert thin_run(argv, {**os.environ, "VAULT_SEARCH_LIMIT": "3"}) is None
    assert thin_run(argv, {**os.environ, "VAULT_NOW": "2027-01-01T00:00"}) is None
    other_zone = "Etc/GMT+5" if os.environ.get("TZ") != "Etc/GMT+5" else "Etc/GMT+6"
    assert thin_run(argv, {**os.environ, "TZ": other_zone}) is None
    # VAULT_PATH and VAULT_SCOPE are the client's to resolve
    assert thin_run(argv, {**os.environ, "VAULT_PATH": str(root), "VAULT_SCOPE": "/"})
    # another vault (its own cache has no watcher)
    other = tmp_path / "other"
    shutil.copytree(root, other, ignore=shutil.ignore_patterns(".vault"))
    assert thin_run(["--vault", str(other), *argv]) is None
    # vault.toml changed since the watcher started: other settings, or a warning to print
    toml = root / "vault.toml"
    original = toml.read_text(encoding="utf-8")
    toml.write_text(original + "\n[search]\nlimit = 3\n", encoding="utf-8")
    assert thin_run(argv) is None
    toml.write_text(original + "\n[nonsense]\nx = 1\n", encoding="utf-8")
    assert thin_run(argv) is None
    toml.write_text(original, encoding="utf-8")
    assert thin_run(argv) is not None
    # a file with two hard links: `vault get` warns about it, so the full CLI prints that
    os.link(root / "MEMORY.md", tmp_path / "linked.md")
    assert thin_run(["get", "MEMORY.md"]) is None
    # a watcher still indexing
    watcher.ready.clear()
    assert thin_run(argv) is None


def test_no_watcher_or_a_stale_socket(
    indexed_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(indexed_sample)
    argv = ["get", "MEMORY.md"]  # (a search would run here, without a watcher)
    assert thin_run(argv) is None  # never ran: no lock file
    cache = indexed_sample / ".vault"
    (cache / watch_client.LOCK_FILE).touch()
    assert thin_run(argv) is None  # no socket
    import socket

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(os.fsencode(cache / watch_client.SOCKET_FILE))
    stale.close()  # a socket file nobody listens on: a killed watcher's
    assert thin_run(argv) is None


def test_parsing_reads_options_as_click_does() -> None:
    env: dict[str, str] = {}
    _, vault, quiet, request = thin.parse(
        ["--vault=/v", "-q", "search", "-tag:#x", "a", "-n7", "--kind", "daily", "--", "-n"], env
    )
    assert (vault, quiet) == ("/v", True)
    assert request["query"] == "-tag:#x a -n" and request["limit"] == 7
    assert request["kinds"] == ["daily"]
    _, vault, _, request = thin.parse(
        ["get", "a.md:3-4", "--json"], {"VAULT_PATH": "/w", "VAULT_SCOPE": "org/a"}
    )
    assert (vault, request["scope"]) == ("/w", "org/a")
    assert (request["path"], request["start"], request["end"]) == ("a.md", 3, 4)
    for argv in (
        ["search", "x", "-n", "-3"],
        ["search", "x", "--limit", "1001"],
        ["add", "x"],
        ["context", "-j"],
        ["get", "a.md", "b.md"],
        ["search", "x", "--vault", "y"],
    ):
        with pytest.raises(thin.Doubt):
            thin.parse(argv, env)


def test_copies_agree_with_the_library() -> None:
    """thin.py repeats a few constants and functions so as not to import the package."""
    from vault_memory import config
    from vault_memory.vault import parse_location

    assert thin.SOCKET_FILE == watch_client.SOCKET_FILE
    assert thin.STATE_FILE == watch_client.STATE_FILE
    assert thin.LOCK_FILE == watch_client.LOCK_FILE
    assert thin.MAX_SOCKET_PATH == watch_client.MAX_SOCKET_PATH
    assert thin.PROTOCOL == watch_client.PROTOCOL
    assert (thin.CACHE_DIR, thin.CONFIG_FILE) == (config.CACHE_DIR, config.CONFIG_FILE)
    assert (thin.ENV_PREFIX, thin.ENV_NAMES, thin.ENV_HANDLED) == (
        thin_ops.ENV_PREFIX,
        thin_ops.ENV_NAMES,
        thin_ops.ENV_HANDLED,
    )
    for spec in ("MEMORY.md", "a.md:3", "a.md:3-9", "x:b.md", "x:y/z", "notes/t:12", "x:٣"):
        assert thin.parse_location(spec) == parse_location(spec)
    for spec in ("MEMORY.md:abc", "x:-3", "x:3-", "dir.d/x:y"):
        with pytest.raises(thin.Doubt):
            thin.parse_location(spec)
    import click

    assert click.style("x", fg="cyan") == thin.CYAN + "x" + thin.RESET
    assert click.style("x", dim=True) == thin.DIM + "x" + thin.RESET


def test_the_vault_command_through_a_watcher_imports_no_click(
    watched_sample: tuple[Path, Watcher],
) -> None:
    """The real entry point, in a process of its own: the thin client answers without
    importing click, numpy or the library; an error still comes from the full CLI."""
    root, _ = watched_sample
    script = "import sys; from vault_memory.cli import main; main()"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-X", "importtime", "-c", script, *argv],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = run("search", "billing", "--json", "-n", "2")
    assert done.returncode == 0 and '"results": [{' in done.stdout
    imported = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "vault_memory.cli.thin" in imported
    assert not imported & {"click", "numpy", "typing", "vault_memory.vault", "dataclasses"}
    done = run("get", "no-such-file.md")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "Error: " in done.stderr and "click" in done.stderr  # the full CLI said it


def test_the_entry_point_turns_the_cycle_collector_off_only_for_its_own_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A command the thin client answers ends in os._exit, so it runs without the cycle
    collector; one it leaves to the full CLI (any command, of any length) runs with it."""
    import gc

    import vault_memory.cli as cli

    seen: list[bool] = []

    def answer(argv: list[str], environ: Any) -> int:
        seen.append(gc.isenabled())
        raise thin.Doubt

    monkeypatch.setattr(thin, "answer", answer)
    monkeypatch.setattr(cli, "full_main", lambda: seen.append(gc.isenabled()))
    monkeypatch.setattr(sys, "argv", ["vault", "search", "billing"])
    assert gc.isenabled()
    thin.main()
    assert seen == [False, True] and gc.isenabled()
