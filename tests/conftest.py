"""Shared fixtures: an initialised vault, a CLI runner, and helpers to prove files untouched."""

from __future__ import annotations

import builtins
import errno
import importlib.util
import io
import logging
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vault_memory import Vault
from vault_memory.cli import cli

from .llm_server import ScriptedLLMServer

# The clock may be fixed for a whole run (`VAULT_NOW=2028-02-29T12:00 pytest`): the slow suite
# runs the suite so at several dates to prove that no test depends on the day it runs.
KEPT_ENV = {"VAULT_NOW"}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No VAULT_* setting from the outer shell leaks in (but the clock), and the CLI's logging
    setup (a stderr handler, propagate off) and process-wide switches do not outlive the test
    that ran them."""
    for name in list(os.environ):
        if name.startswith("VAULT_") and name not in KEPT_ENV:
            monkeypatch.delenv(name)
    # A process-wide switch the CLI sets (a one-shot search turns it off): each test starts
    # from the library's default, whatever an in-process CLI run before it set.
    from vault_memory.index import settings as index_settings

    monkeypatch.setattr(index_settings, "optimize_query_session", True)
    logger = logging.getLogger("vault_memory")
    handlers, propagate, level = list(logger.handlers), logger.propagate, logger.level
    yield
    logger.handlers[:] = handlers
    logger.propagate = propagate
    logger.setLevel(level)


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A real chat-completions server on 127.0.0.1 with scripted replies (tests/llm_server.py)."""
    server = ScriptedLLMServer().start()
    yield server
    server.close()


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """A vault made by `Vault.init` (MEMORY.md, vault.toml, memory/, dreams/ …)."""
    return Vault.init(tmp_path / "vault").root


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Invoke `vault ARGS` in-process from `cwd`. Bugs (non-click exceptions) propagate instead
    of hiding behind exit status 1."""

    def run(
        *args: str,
        cwd: Path | None = None,
        input: str | bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        return CliRunner().invoke(
            cli, list(args), input=input, env=env, catch_exceptions=False, prog_name="vault"
        )

    return run


@pytest.fixture
def tree_state() -> Callable[[Path], dict[str, tuple[bytes, int, int]]]:
    """Every file under a folder as relpath -> (bytes, mtime_ns, mode): compare two snapshots
    to prove that nothing was modified."""

    def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
        state = {}
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                st = path.stat()
                state[path.relative_to(root).as_posix()] = (
                    path.read_bytes(),
                    st.st_mtime_ns,
                    st.st_mode,
                )
        return state

    return snapshot


@pytest.fixture
def make_unreadable(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Make a file impossible to open. chmod 000 does that for normal users; root reads through
    it, so then opening that one file (builtin `open`, `io.open`, `Path.open`) raises EACCES."""

    def apply(path: Path) -> None:
        path.chmod(0)
        try:
            with open(path, "rb"):
                pass
        except PermissionError:
            return
        real_open = builtins.open
        target = os.path.realpath(path)

        def guarded_open(file, *args, **kwargs):
            if isinstance(file, str | os.PathLike) and os.path.realpath(file) == target:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", guarded_open)
        monkeypatch.setattr(io, "open", guarded_open)

    return apply


@pytest.fixture
def escapes(vault_dir: Path) -> dict[str, Path]:
    """Symlinks in `vault_dir`: two that lead outside (a file, a folder) and two that stay in.
    The outside file holds the word SECRET, which must never be read through the vault."""
    outside = vault_dir.parent / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("SECRET\n")
    (vault_dir / "notes").mkdir()
    (vault_dir / "notes" / "real.md").write_text("# Real\n\ninside\n")
    (vault_dir / "leak.md").symlink_to(outside / "secret.md")
    (vault_dir / "leakdir").symlink_to(outside, target_is_directory=True)
    (vault_dir / "alias.md").symlink_to(Path("notes") / "real.md")
    (vault_dir / "notesdir").symlink_to(vault_dir / "notes", target_is_directory=True)
    return {"outside": outside, "secret": outside / "secret.md"}


# -- the derived index: the real model, loaded once, and indexed vaults to copy ----------------

SAMPLE_VAULT = Path(__file__).resolve().parent.parent / "sample_vault"

SMALL_VAULT_FILES = {
    "MEMORY.md": "# MEMORY\n\n## Decisions\n- Billing runs on PostgreSQL 16. #pin\n",
    "memory/2026-11-20.md": (
        "# 2026-11-20\n\n## 09:15 · note\n- Standup moved to 09:45 on Thursdays.\n"
        "- Jonas approved the cutover plan. #important\n"
    ),
    "memory/2026-11-21.md": (
        "# 2026-11-21\n\n## 14:03 · flush · session 7f3a\n"
        "- ERR_LEDGER_409 comes from retried refunds.\n- Call the dentist on Friday. #todo\n"
    ),
    "notes/renderer.md": (
        "# Renderer\n\nThe invoice renderer uses WeasyPrint 63.1 and needs fonts-noto-core.\n"
    ),
}


def load_script(path: Path, name: str) -> ModuleType:
    """A bench script (not a package module) loaded by its path under `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def copy_vault(source: Path, target: Path) -> Path:
    """Copy a vault, `.vault/` included, keeping mtimes: an indexed copy is still up to date.
    The checkout's sample_vault/ is copied without its `.vault/`: the README's first command
    leaves one there, and tests build from the sample's Markdown alone."""
    ignore = shutil.ignore_patterns(".vault") if source.resolve() == SAMPLE_VAULT else None
    shutil.copytree(source, target, symlinks=True, ignore=ignore)
    return target


@pytest.fixture(scope="session")
def loaded_embedder() -> Any:
    """The bundled model, loaded once per test run. `Index` gets its model from
    `indexer.shared_embedder`, so every vault of the run reuses this one."""
    from vault_memory.index.embedder import BUNDLED_MODEL, DISABLE_ENV
    from vault_memory.index.indexer import shared_embedder

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv(DISABLE_ENV, raising=False)
        return shared_embedder(BUNDLED_MODEL)


def _indexed_template(root: Path) -> Path:
    with pytest.MonkeyPatch.context() as mp:  # session fixtures run before `_isolated`
        for name in list(os.environ):
            if name.startswith("VAULT_"):
                mp.delenv(name)
        with Vault(root) as vault:
            report = vault.index()
    assert report.units_embedded == report.units > 0, report
    return root


@pytest.fixture(scope="session")
def _sample_template(tmp_path_factory: pytest.TempPathFactory, loaded_embedder: Any) -> Path:
    root = copy_vault(SAMPLE_VAULT, tmp_path_factory.mktemp("sample") / "vault")
    return _indexed_template(root)


@pytest.fixture(scope="session")
def _small_template(tmp_path_factory: pytest.TempPathFactory, loaded_embedder: Any) -> Path:
    root = Vault.init(tmp_path_factory.mktemp("small") / "vault").root
    for relpath, text in SMALL_VAULT_FILES.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    return _indexed_template(root)


@pytest.fixture
def sample_vault(tmp_path: Path) -> Path:
    """A copy of sample_vault/ (25 files, about 200 units), not indexed."""
    return copy_vault(SAMPLE_VAULT, tmp_path / "sample")


@pytest.fixture
def indexed_sample(tmp_path: Path, _sample_template: Path) -> Path:
    """A copy of sample_vault/ with an up-to-date `.vault/` (indexed once per run)."""
    return copy_vault(_sample_template, tmp_path / "sample")


@pytest.fixture
def small_vault(tmp_path: Path) -> Path:
    """An initialised vault holding SMALL_VAULT_FILES (a dozen units), not indexed."""
    root = Vault.init(tmp_path / "small").root
    for relpath, text in SMALL_VAULT_FILES.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def indexed_small(tmp_path: Path, _small_template: Path) -> Path:
    """`small_vault` with an up-to-date `.vault/` (indexed once per run)."""
    return copy_vault(_small_template, tmp_path / "small")


@pytest.fixture
def vault_warnings(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """The warnings the library logged so far in this test."""
    caplog.set_level(logging.INFO, logger="vault_memory")

    def collect() -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if r.name.startswith("vault_memory") and r.levelno >= logging.WARNING
        ]

    return collect


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A real PostgreSQL with pgvector (tests/pg_server.py), started once per test run on the
    first test that asks for it (slow tests only); skipped where `pgserver` is not installed."""
    from .pg_server import binaries, start_server

    folder = binaries()
    if folder is None:
        pytest.skip("the pgserver wheel (PostgreSQL + pgvector binaries) is not installed")
    server = start_server(folder)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_database(pg_server: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh, empty database on the session's PostgreSQL (its DSN), dropped afterwards."""
    import re

    import psycopg

    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    with psycopg.connect(pg_server.dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_server.dsn.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(pg_server.dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
