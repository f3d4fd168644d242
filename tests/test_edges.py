"""Issue 24, the edges: strict budgets (context blocks, tool results), hard links, read-only
caches and vaults, file names the OS allows, `call_tool` that never raises, a secret-looking
session id, `vault init` on a folder no one can write."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from vault_memory import Vault
from vault_memory.agents.tools import MAX_HIT_CHARS, MAX_RESULT_CHARS, call_tool, make_tools
from vault_memory.search.tokens import MAX_CHARS_PER_TOKEN, token_counter

HEX = "".join(f"{(n * 2654435761) % 2**32:08x}" for n in range(25_000))  # 200,000 characters

IS_ROOT = os.geteuid() == 0


def _tool(vault: Vault, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return json.loads(call_tool(make_tools(vault), name, arguments))


# -- budgets ----------------------------------------------------------------------------------


def test_a_word_longer_than_wordpiece_reads_counts_by_its_length() -> None:
    counter = token_counter()
    assert counter.count(HEX[:1000]) >= 1000 / 2.5  # WordPiece alone: one [UNK] token
    assert counter.count("x" * 600) >= 600 / MAX_CHARS_PER_TOKEN
    prose = "The invoice renderer uses WeasyPrint and needs the Noto fonts."
    raw = counter._tokenizer.encode(prose, add_special_tokens=False)  # type: ignore[union-attr]
    assert counter.count(prose) == len(raw.ids)  # ordinary text: the tokenizer's own count


def test_a_context_block_stays_within_its_budget_in_tokens_and_characters(
    small_vault: Path, run_cli: Callable[..., Result]
) -> None:
    memory = small_vault / "MEMORY.md"
    memory.write_text(memory.read_text() + f"- The signing key fingerprint is {HEX}\n")
    (small_vault / "notes/blob.md").write_text(f"# Blob\n\nrenderer {HEX}\n")
    result = run_cli("context", "--budget", "300", "--query", "renderer", cwd=small_vault)
    assert result.exit_code == 0, result.output
    text = result.stdout.rstrip("\n")
    tokenizer = token_counter()._tokenizer
    assert len(tokenizer.encode(text, add_special_tokens=False).ids) <= 300  # type: ignore
    assert token_counter().count(text) <= 300
    assert len(text) <= 300 * MAX_CHARS_PER_TOKEN, len(text)
    assert "Billing runs on PostgreSQL 16" in text  # what fits is still there


@pytest.mark.slow
def test_search_memory_results_are_capped_with_where_to_read_the_rest(small_vault: Path) -> None:
    (small_vault / "notes/huge.md").write_text("# Huge\n\nzanzibar " + "word " * 60_000 + "\n")
    for n in range(12):
        (small_vault / f"notes/z{n}.md").write_text(f"# Z{n}\n\nzanzibar {'text ' * 1000}\n")
    with Vault(small_vault) as vault:
        found = _tool(vault, "search_memory", {"query": "zanzibar", "limit": 20})
    assert "error" not in found, found
    texts = [r["text"] for r in found["results"]]
    assert texts and all(len(t) <= MAX_HIT_CHARS for t in texts)
    assert sum(map(len, texts)) <= MAX_RESULT_CHARS
    assert len(json.dumps(found)) < 2 * MAX_RESULT_CHARS
    cut = [r for r in found["results"] if "note" in r]
    assert cut and "get_memory(" in cut[0]["note"]


def test_call_tool_never_raises(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Vault(vault_dir) as vault:

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("a bug")

        monkeypatch.setattr(Vault, "manage", broken)
        reply = _tool(vault, "manage_memory", {"action": "create", "content": "x"})
        assert "failed unexpectedly" in reply["error"]

        def disk(*args: Any, **kwargs: Any) -> Any:
            raise PermissionError(13, "Permission denied", str(vault_dir / "MEMORY.md"))

        monkeypatch.setattr(Vault, "manage", disk)
        reply = _tool(vault, "manage_memory", {"action": "create", "content": "x"})
        assert "cannot be used right now: Permission denied" in reply["error"]


# -- read-only cache and vault ----------------------------------------------------------------


def _read_only(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `root` read-only for this process: chmod, and for root (who writes through
    permissions) `os.access` answers as for anyone else."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode & ~0o222)
        Path(folder).chmod(Path(folder).stat().st_mode & ~0o222)
    if IS_ROOT:
        real_access = os.access
        target = str(root)

        def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
            if mode & os.W_OK and os.path.abspath(os.fspath(path)).startswith(target):
                return False
            return real_access(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "access", access)


def _writable_again(root: Path) -> None:
    for folder, _, files in os.walk(root):
        Path(folder).chmod(Path(folder).stat().st_mode | stat.S_IWUSR)
        for name in files:
            (Path(folder) / name).chmod((Path(folder) / name).stat().st_mode | stat.S_IWUSR)


def test_search_works_from_a_read_only_cache(
    indexed_small: Path, run_cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    (indexed_small / "notes/new.md").write_text("# New\n\nunindexed zeppelin\n")
    _read_only(indexed_small / ".vault", monkeypatch)
    try:
        result = run_cli("search", "PostgreSQL", "--json", cwd=indexed_small)
        assert result.exit_code == 0, result.output
        hits = json.loads(result.stdout)["results"]
        assert hits and hits[0]["path"] == "MEMORY.md"
        assert "read-only" in result.stderr and "malformed" not in result.stderr
        result = run_cli("index", cwd=indexed_small)
        assert result.exit_code == 1
        assert "cannot write .vault/index.sqlite" in result.output
        assert "read-only" in result.output and "Traceback" not in result.output
    finally:
        _writable_again(indexed_small)


@pytest.mark.parametrize(
    "args",
    [("add", "a new fact"), ("flush", "-"), ("dream", "--force")],
    ids=["add", "flush", "dream"],
)
def test_write_commands_on_a_read_only_vault_say_what_they_cannot_write(
    indexed_small: Path,
    run_cli: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    tree_state: Callable[[Path], dict],
) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T09:30")  # the small vault's logs are recent
    if not IS_ROOT:
        _read_only(indexed_small, monkeypatch)
    else:  # root writes through permissions: make the writes fail as the disk would

        def refuse(*a: Any, **k: Any) -> Any:
            raise PermissionError(13, "Permission denied", str(a[0]) if a else None)

        import vault_memory.files.fsutil as fsutil

        monkeypatch.setattr(fsutil, "_append_once", refuse)
        monkeypatch.setattr(fsutil, "_replace_atomically", refuse)
    before = {p: s[0] for p, s in tree_state(indexed_small).items() if not p.startswith(".vault")}
    try:
        result = run_cli(
            *args,
            cwd=indexed_small,
            input=json.dumps(
                [{"role": "user", "content": "We decided to move billing to PostgreSQL 17."}]
            ),
        )
    finally:
        _writable_again(indexed_small)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: cannot write"), result.output
    assert "Permission denied" in lines[0] or "read-only" in lines[0]
    after = {p: s[0] for p, s in tree_state(indexed_small).items() if not p.startswith(".vault")}
    assert after == before


# -- file names -------------------------------------------------------------------------------


def test_any_file_name_the_os_allows_is_indexed_or_skipped_with_its_name(
    small_vault: Path, run_cli: Callable[..., Result]
) -> None:
    notes = os.fsencode(small_vault / "notes")
    with open(os.path.join(notes, b"bad\xff.md"), "w") as fh:
        fh.write("# Bad name\n\nquetzal one\n")
    (small_vault / "notes/new\nline.md").write_text("# Newline\n\nquetzal two\n")
    (small_vault / ("notes/" + "x" * 240 + ".md")).write_text("# Long\n\nquetzal three\n")
    result = run_cli("index", cwd=small_vault)
    assert result.exit_code == 0, result.output
    assert "skipped notes/bad\\xff.md: its name is not valid UTF-8" in result.output
    result = run_cli("search", "quetzal", "--json", cwd=small_vault)
    paths = {h["path"] for h in json.loads(result.stdout)["results"]}
    assert {"notes/new\nline.md", "notes/" + "x" * 240 + ".md"} <= paths
    status = json.loads(run_cli("status", "--json", cwd=small_vault).stdout)
    assert "notes/bad\\xff.md" in status["skipped"]


def test_a_symlink_loop_is_skipped(small_vault: Path, run_cli: Callable[..., Result]) -> None:
    (small_vault / "loop.md").symlink_to("loop.md")
    (small_vault / "notes/again").symlink_to("../notes", target_is_directory=True)
    for args in (("index",), ("search", "PostgreSQL"), ("status",)):
        result = run_cli(*args, cwd=small_vault)
        assert result.exit_code == 0, (args, result.output)


# -- the rest ---------------------------------------------------------------------------------


def test_a_secret_looking_session_id_is_refused_and_not_echoed(
    vault_dir: Path, run_cli: Callable[..., Result]
) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    conversation = json.dumps([{"role": "user", "content": "We chose PostgreSQL 16."}])
    result = run_cli("flush", "--session", token, "-", cwd=vault_dir, input=conversation)
    assert result.exit_code == 1
    assert "looks like a secret (github-token)" in result.output
    assert token not in result.output
    assert not list((vault_dir / "memory").glob("*.md"))


def test_init_where_nothing_can_be_written_is_one_line(
    run_cli: Callable[..., Result], tmp_path: Path
) -> None:
    result = run_cli("init", "/proc/self", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot create a vault at /proc/self")
    assert len(result.output.strip().splitlines()) == 1


def test_the_watcher_skips_a_file_name_that_is_not_utf8(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vault_memory.live.watch import Watcher

    from .test_watch import index_units, wait_until

    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    watcher = Watcher(Vault(vault_dir), dream=False, quiet_ms=100)
    watcher.start()
    try:
        assert watcher.ready.wait(60)
        with open(os.path.join(os.fsencode(vault_dir), b"bad\xff.md"), "w") as fh:
            fh.write("# Bad\n\nquetzal\n")
        (vault_dir / "good.md").write_text("# Good\n\nquetzal\n")
        wait_until(lambda: "good.md" in index_units(vault_dir), 30, "good.md to be indexed")
        assert watcher.report.errors == 0
        assert not any(p.startswith("bad") for p in index_units(vault_dir))
    finally:
        watcher.stop()
        watcher.vault.close()
