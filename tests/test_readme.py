"""The README is tested like code: every TOML, JSON and shell block parses (a pasted config
block once broke every command), CI runs its set-up commands literally and in order, and the
transcript of "What it looks like" is run against a copy of sample_vault/ and must still say
what it shows."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from vault_memory.config import load_config

from .conftest import SAMPLE_VAULT, copy_vault

WORKTREE = Path(__file__).resolve().parent.parent
README = (WORKTREE / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(
    r"^(?P<fence>`{3,})(?P<lang>[\w-]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
# The clock the transcript was made at: its `vault add` says 04:55 on 2026-11-22.
TRANSCRIPT_NOW = "2026-11-22T04:55"


def blocks(*langs: str, text: str = README) -> list[str]:
    return [m["body"] for m in FENCE.finditer(text) if m["lang"] in langs]


def section(title: str) -> str:
    """The README's `## title` section, up to the next `## ` heading outside a code block."""
    lines, inside, fence = [], False, ""
    for line in README.splitlines():
        if line.startswith("## ") and not fence:
            inside = line == f"## {title}"
        elif inside:
            lines.append(line)
        opened = re.match(r"^(`{3,})", line)
        if opened and not fence:
            fence = opened[1]
        elif fence and line.strip() == fence:
            fence = ""
    return "\n".join(lines) + "\n"


def commands(console: str) -> list[tuple[str, list[str]]]:
    """(`$ command`, the output lines shown under it) of a console block."""
    found: list[tuple[str, list[str]]] = []
    for line in console.splitlines():
        if line.startswith("$ "):
            found.append((line[2:], []))
        elif found:
            found[-1][1].append(line)
    for _, shown in found:
        while shown and not shown[-1]:
            shown.pop()
    return found


def test_the_readme_has_blocks_of_every_kind() -> None:
    assert blocks("toml") and blocks("json") and blocks("sh") and blocks("console")


@pytest.mark.parametrize("block", blocks("toml"), ids=lambda b: b.split("\n", 1)[0])
def test_every_toml_block_is_a_vault_toml_without_warnings(tmp_path: Path, block: str) -> None:
    tomllib.loads(block)
    (tmp_path / "vault.toml").write_text(block, encoding="utf-8")
    config = load_config(tmp_path, environ={})
    assert config.warnings == ()


@pytest.mark.parametrize("block", blocks("json"), ids=lambda b: b.split("\n", 1)[0][:30])
def test_every_json_block_parses(block: str) -> None:
    json.loads(block)


def _shell_lines() -> list[str]:
    lines = [line for block in blocks("sh", "bash", "shell") for line in block.splitlines()]
    lines += [command for block in blocks("console") for command, _ in commands(block)]
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("line", _shell_lines())
def test_every_shell_line_parses(line: str) -> None:
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    checked = subprocess.run(["bash", "-n", "-c", line], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_ci_runs_the_set_up_commands_literally_in_order() -> None:
    setup = [
        line
        for block in blocks("sh", text=section("Set up"))
        for line in block.splitlines()
        if line.strip()
    ]
    assert len(setup) == 2  # install and run the main job; install and run the tests
    ci = (WORKTREE / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    positions = [ci.index(line) for line in setup]  # ValueError: CI does not run it as written
    assert positions == sorted(positions)


def test_set_up_shows_as_many_hits_as_the_transcript() -> None:
    setup_search = next(
        line for line in blocks("sh", text=section("Set up"))[0].splitlines() if " search " in line
    )
    shown = next(
        c
        for c, _ in commands(blocks("console")[0])
        if c.startswith("vault") and " search " in c and "--json" not in c
    )
    assert setup_search.split("&& ", 1)[1] == shown


def test_the_transcript_still_says_what_it_shows(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_vault(SAMPLE_VAULT, tmp_path / "sample_vault")
    monkeypatch.setenv("VAULT_NOW", TRANSCRIPT_NOW)
    transcript = commands(blocks("console", text=section("What it looks like"))[0])
    assert len(transcript) >= 5
    for command, shown in transcript:
        command, _, piped = command.partition(" | ")
        args = [a.replace("sample_vault", str(root)) for a in _split(command)]
        assert args[0] == "vault"
        result = run_cli(*args[1:])
        output = (result.stdout + result.stderr).splitlines()
        if piped.startswith("tail -"):  # the end of what it prints
            tail = result.stdout.splitlines()[-int(piped.removeprefix("tail -")) :]
            assert result.exit_code == 0 and tail == shown, command
            continue
        if piped:
            assert piped.startswith("head -")
            output = output[: int(piped.removeprefix("head -"))]
        if shown[0].startswith("Error: "):
            assert result.exit_code == 1 and output == shown, command
            continue
        assert result.exit_code == 0, (command, result.stderr)
        if shown[0].startswith("{"):  # JSON: the same hits, in order
            got, want = json.loads(result.stdout), json.loads(shown[0])
            assert [(h["path"], h["start_line"], h["end_line"]) for h in got["results"]] == [
                (h["path"], h["start_line"], h["end_line"]) for h in want["results"]
            ]
            continue
        if args[1:3] == ["--vault", str(root)] and args[3] == "index":
            assert output[0] == shown[0]  # the counts; the second line holds a timing
            continue
        if args[3] == "search":  # the same citations and lines, in order (scores may move)
            assert [_cited(line) for line in output] == [_cited(line) for line in shown]
            continue
        assert [line for line in result.stdout.splitlines()][: len(shown)] == shown, command


def _split(command: str) -> list[str]:
    import shlex

    return shlex.split(command)


def _cited(line: str) -> str:
    """A search result's line without its score: `path:lines  heading` or the text."""
    return re.sub(r"  \(\d+\.\d+(?:, weak match)?\)$", "", line)
