"""The README and the docs are tested like code: every TOML, JSON, shell and Python block parses
(a pasted config block once broke every command), CI runs the README's set-up commands
literally and in order, the transcript of "What it looks like" is run against a copy of
sample_vault/ and must still say what it shows, and the README's tour, its library example and
the getting-started page run as written in a scratch folder, printing what they show."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from vault_memory.config import load_config

from .conftest import SAMPLE_VAULT, copy_vault

WORKTREE = Path(__file__).resolve().parent.parent
DOCS = WORKTREE / "docs"
README = (WORKTREE / "README.md").read_text(encoding="utf-8")
GETTING_STARTED = (DOCS / "getting-started.md").read_text(encoding="utf-8")
FENCE = re.compile(
    r"^(?P<fence>`{3,})(?P<lang>[\w-]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
# The clock the transcript was made at: its `vault add` says 04:55 on 2026-11-22.
TRANSCRIPT_NOW = "2026-11-22T04:55"
# The clock of the tour and the getting-started page, and the home folder they show.
TOUR_NOW = "2026-11-22T09:30"
SHOWN_HOME = "/home/you"
MAX_README_LINES = 250


def doc_pages() -> list[Path]:
    """The pages of the site (not the pages other engineers hand in under docs/incoming/)."""
    return sorted(p for p in DOCS.rglob("*.md") if "incoming" not in p.relative_to(DOCS).parts)


TEXTS = {"README.md": README} | {
    str(p.relative_to(WORKTREE)): p.read_text(encoding="utf-8") for p in doc_pages()
}


def blocks(*langs: str, text: str = README) -> list[str]:
    return [m["body"] for m in FENCE.finditer(text) if m["lang"] in langs]


def all_blocks(*langs: str) -> list[tuple[str, str]]:
    """(file, block) of every block of these languages in the README and the docs."""
    return [(name, block) for name, text in TEXTS.items() for block in blocks(*langs, text=text)]


def _block_id(item: tuple[str, str]) -> str:
    return f"{item[0]}:{item[1].split(chr(10), 1)[0][:30]}"


def section(title: str, text: str = README) -> str:
    """The `## title` section of a Markdown text (the README by default), up to the next `## `
    heading outside a code block."""
    lines, inside, fence = [], False, ""
    for line in text.splitlines():
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


def test_the_readme_is_a_landing_page() -> None:
    assert len(README.splitlines()) <= MAX_README_LINES
    assert re.findall(r"^## .*", README, re.M)[0] == "## Set up"  # the set-up comes first
    for target in re.findall(r"\]\(((?:docs/|CHANGELOG|CONTRIBUTING)[^)#]*)", README):
        assert (WORKTREE / target).exists(), target


def test_the_readme_has_blocks_of_every_kind() -> None:
    assert blocks("json") and blocks("sh") and blocks("console") and blocks("python")
    assert [b for _, b in all_blocks("toml")]


@pytest.mark.parametrize("item", all_blocks("toml"), ids=_block_id)
def test_every_toml_block_is_a_vault_toml_without_warnings(
    tmp_path: Path, item: tuple[str, str]
) -> None:
    block = item[1]
    tomllib.loads(block)
    (tmp_path / "vault.toml").write_text(block, encoding="utf-8")
    config = load_config(tmp_path, environ={})
    assert config.warnings == ()


@pytest.mark.parametrize("item", all_blocks("json"), ids=_block_id)
def test_every_json_block_parses(item: tuple[str, str]) -> None:
    json.loads(item[1])


@pytest.mark.parametrize("item", all_blocks("python"), ids=_block_id)
def test_every_python_block_compiles(item: tuple[str, str]) -> None:
    compile(item[1], item[0], "exec")


def _shell_lines() -> list[str]:
    found = []
    for _, block in all_blocks("sh", "bash", "shell"):
        # A heredoc's body is data, not shell: the block is checked whole below.
        if "<<" not in block:
            found += block.splitlines()
    found += [command for _, block in all_blocks("console") for command, _ in commands(block)]
    return sorted({line for line in found if line.strip() and not line.lstrip().startswith("#")})


@pytest.mark.parametrize("line", _shell_lines())
def test_every_shell_line_parses(line: str) -> None:
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    checked = subprocess.run(["bash", "-n", "-c", line], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize(
    "item", [i for i in all_blocks("sh", "bash") if "<<" in i[1]], ids=_block_id
)
def test_every_shell_block_with_a_heredoc_parses(item: tuple[str, str]) -> None:
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    checked = subprocess.run(["bash", "-n", "-c", item[1]], capture_output=True, text=True)
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
        args = [a.replace("sample_vault", str(root)) for a in shlex.split(command)]
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


def _cited(line: str) -> str:
    """A search result's line without its score: `path:lines  heading` or the text."""
    return re.sub(r"  \(\d+\.\d+(?:, weak match)?\)$", "", line)


# -- the tour and the getting-started page, run as a reader would -------------------------------


def _page_script(text: str, out: Path) -> tuple[str, list[tuple[int, str, list[str]]]]:
    """One bash script that runs a page's blocks in order, as a reader pasting them would:
    shell blocks must succeed, each console command's output and status are kept for
    comparison, Python blocks run with this interpreter. Install lines are CI's to run."""
    script = [f"PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH"]
    shown: list[tuple[int, str, list[str]]] = []
    for number, match in enumerate(FENCE.finditer(text)):
        lang, body = match["lang"], match["body"]
        if lang in ("sh", "bash"):
            kept = [line for line in body.splitlines() if not line.startswith("pip install")]
            script += ["set -e", *kept, "set +e"]
        elif lang == "console":
            for i, (command, output) in enumerate(commands(body)):
                n = number * 100 + i
                script.append(
                    f"{{ {command}\n}} >{out}/{n}.out 2>{out}/{n}.err; echo $? >{out}/{n}.rc"
                )
                shown.append((n, command, output))
        elif lang == "python":
            (out / f"{number}.py").write_text(body, encoding="utf-8")
            script.append(
                f"{shlex.quote(sys.executable)} {out}/{number}.py >{out}/{number}.pyout 2>&1"
                f" || {{ cat {out}/{number}.pyout >&2; echo 'python block {number} failed' >&2;"
                " exit 70; }"
            )
    return "\n".join(script) + "\n", shown


def run_page(text: str, tmp_path: Path) -> None:
    """Run a page's examples in a scratch home folder and check that each console command
    prints what the page shows under it."""
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    home, out = tmp_path / "home", tmp_path / "out"
    home.mkdir()
    out.mkdir()
    script, shown = _page_script(text, out)
    env = {
        **os.environ,
        "HOME": str(home),
        "VAULT_NOW": TOUR_NOW,
        "TZ": "UTC",
        "LC_ALL": "C.UTF-8",
    }
    for name in ("VAULT_PATH", "VAULT_SCOPE"):
        env.pop(name, None)
    ran = subprocess.run(
        ["bash", "-c", script], cwd=home, env=env, capture_output=True, text=True, timeout=600
    )
    assert ran.returncode == 0, ran.stderr
    assert shown or ".py " in script  # the page has examples to run
    for n, command, output in shown:
        status = int((out / f"{n}.rc").read_text())
        stdout = (out / f"{n}.out").read_text(encoding="utf-8").replace(str(home), SHOWN_HOME)
        stderr = (out / f"{n}.err").read_text(encoding="utf-8")
        printed = stdout.splitlines()
        if output and output[0].startswith("Error: "):
            assert status == 1 and stderr.splitlines() == output, command
        elif " search " in command and "--json" not in command:
            assert status == 0, (command, stderr)
            assert [_cited(line) for line in printed] == [_cited(line) for line in output]
        else:
            assert status == 0, (command, stderr)
            assert printed == output, command


def test_the_readme_tour_runs_as_shown(tmp_path: Path) -> None:
    run_page(section("A five-minute tour"), tmp_path)


def test_the_readme_library_example_runs(tmp_path: Path) -> None:
    run_page(section("Using as a library"), tmp_path)


@pytest.mark.slow  # about 15 CPU-s of `vault` processes; the README's tour runs by default
def test_the_getting_started_page_runs_as_shown(tmp_path: Path) -> None:
    run_page(GETTING_STARTED, tmp_path)
