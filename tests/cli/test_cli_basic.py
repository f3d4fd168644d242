"""`vault init`, `vault add`, `vault get` through click's CliRunner: exit codes, stdout data,
stderr messages, and the files they leave behind."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import re
from pathlib import Path

import pytest

from vault_memory import Vault, clock
from vault_memory.errors import PathOutsideVaultError, UnreadableNoteError
from vault_memory.files import fsutil
from vault_memory.files.fsutil import split_lines
from vault_memory.vault import MAX_ENTRY_BYTES, template_dir

LAYOUT = [".gitattributes", ".gitignore", "MEMORY.md", "vault.toml"]


def error_of(result) -> str:
    """The one `Error: ...` line of a failed command (exit 1), with nothing on stdout."""
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith("Error: "), result.stderr
    return result.stderr.removeprefix("Error: ").strip()


def added(result) -> tuple[str, int, int, str]:
    """`memory/DATE.md:START-END  HEADING` -> (path, start, end, heading)."""
    assert result.exit_code == 0, result.stderr
    match = re.fullmatch(r"(\S+):(\d+)-(\d+)  (.+)\n", result.stdout)
    assert match, result.stdout
    return match[1], int(match[2]), int(match[3]), match[4]


# -- init ----------------------------------------------------------------------------------


def test_init_creates_the_layout_from_the_templates(tmp_path: Path, run_cli) -> None:
    target = tmp_path / "new" / "vault"
    old = os.umask(0o022)
    try:
        result = run_cli("init", str(target))
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "created  memory/",
        "created  dreams/",
        "created  MEMORY.md",
        "created  vault.toml",
        "created  .gitignore",
        "created  .gitattributes",
        f"Vault ready at {target}",
    ]
    assert sorted(p.name for p in target.iterdir()) == sorted([*LAYOUT, "dreams", "memory"])
    templates = template_dir() / "vault"
    for name in LAYOUT:
        shipped = (templates / name.lstrip(".")).read_bytes()
        assert (target / name).read_bytes() == shipped, name
        assert (target / name).stat().st_mode & 0o777 == 0o644, name
    assert ".vault/" in (target / ".gitignore").read_text().splitlines()
    assert "memory/*.md merge=union" in (target / ".gitattributes").read_text().splitlines()
    assert not (target / ".git").exists()
    assert Vault(target).config.warnings == ()


def test_init_twice_changes_no_byte(tmp_path: Path, run_cli, tree_state) -> None:
    target = tmp_path / "vault"
    assert run_cli("init", str(target)).exit_code == 0
    (target / "MEMORY.md").write_text("# MEMORY\n\n## People\n- Ana, my editor\n")
    before = tree_state(target)
    result = run_cli("init", str(target), "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == {
        "root": str(target),
        "created": [],
        "git_initialised": False,
        "kept": ["memory/", "dreams/", "MEMORY.md", "vault.toml", ".gitignore", ".gitattributes"],
    }
    assert tree_state(target) == before


def test_init_keeps_a_pre_existing_memory_file(tmp_path: Path, run_cli, tree_state) -> None:
    target = tmp_path / "obsidian"
    target.mkdir()
    (target / "MEMORY.md").write_bytes(b"\xef\xbb\xbf# Mine\r\n- keep me\r\n")
    (target / "notes.md").write_text("other note\n")
    before = tree_state(target)
    result = run_cli("init", cwd=target)  # PATH defaults to the current folder
    assert result.exit_code == 0, result.stderr
    assert "kept     MEMORY.md (already there)" in result.stdout.splitlines()
    assert "created  vault.toml" in result.stdout.splitlines()
    after = tree_state(target)
    assert {k: after[k] for k in before} == before
    assert sorted(after) == sorted(
        ["MEMORY.md", "notes.md", "vault.toml", ".gitignore", ".gitattributes"]
    )


def test_init_uses_the_vault_option_when_no_path_is_given(tmp_path: Path, run_cli) -> None:
    result = run_cli("--vault", str(tmp_path / "v"), "init")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "v" / "vault.toml").is_file()


def test_init_git(tmp_path: Path, run_cli) -> None:
    target = tmp_path / "vault"
    result = run_cli("init", str(target), "--git")
    assert result.exit_code == 0, result.stderr
    assert "git      initialised a repository" in result.stdout.splitlines()
    assert (target / ".git" / "HEAD").is_file()
    again = run_cli("init", str(target), "--git", "--json")
    assert json.loads(again.stdout)["git_initialised"] is False


def test_init_git_without_git_installed(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    message = error_of(run_cli("init", str(tmp_path / "vault"), "--git"))
    assert message == "git is not installed; install it or run `vault init` without --git."


def test_init_on_a_file(tmp_path: Path, run_cli) -> None:
    target = tmp_path / "taken"
    target.write_text("a file\n")
    usage = run_cli("init", str(target))
    assert usage.exit_code == 2
    assert "is a file" in usage.stderr
    message = error_of(run_cli("--vault", str(target), "init"))
    assert message == f"{target} exists and is not a folder. Choose another path."
    assert target.read_text() == "a file\n"


# -- add -----------------------------------------------------------------------------------


def test_add_creates_the_day_file_and_reports_real_lines(vault_dir: Path, run_cli) -> None:
    before = clock.today()
    result = run_cli(
        "add", "Chose", "PostgreSQL", "for billing", "--tag", "decision", "-t", "#db", cwd=vault_dir
    )
    path, start, end, heading = added(result)
    day = dt.date.fromisoformat(path.removeprefix("memory/").removesuffix(".md"))
    assert before <= day <= clock.today()
    assert re.fullmatch(r"\d{2}:\d{2} · note", heading)
    lines = split_lines((vault_dir / path).read_text())
    assert lines == [
        f"# {day.isoformat()}",
        "",
        f"## {heading}",
        "- Chose PostgreSQL for billing #decision #db",
    ]
    assert (start, end) == (3, 4)
    assert (vault_dir / path).stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_add_appends_and_the_reported_range_holds_the_entry(vault_dir: Path, run_cli) -> None:
    first = added(run_cli("add", "first entry", cwd=vault_dir))
    day_file = vault_dir / first[0]
    before = day_file.read_bytes()
    result = run_cli(
        "add", "--source", "flush", "--json", input="line one\n\nline two\n", cwd=vault_dir
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["path"] == first[0]
    assert report["created_file"] is False
    assert report["heading"].endswith(" · flush")
    assert day_file.read_bytes().startswith(before)
    lines = split_lines(day_file.read_text())
    entry = lines[report["start_line"] - 1 : report["end_line"]]
    assert entry == [f"## {report['heading']}", "- line one", "", "- line two"]
    assert report["end_line"] == len(lines)
    got = run_cli(
        "get", f"{report['path']}:{report['start_line']}-{report['end_line']}", cwd=vault_dir
    )
    assert got.stdout == "\n".join(entry) + "\n"


def test_add_finds_the_vault_from_a_subfolder_option_and_env(
    vault_dir: Path, tmp_path: Path, run_cli
) -> None:
    (vault_dir / "notes" / "deep").mkdir(parents=True)
    paths = {
        added(run_cli("add", "from a subfolder", cwd=vault_dir / "notes" / "deep"))[0],
        added(run_cli("--vault", str(vault_dir), "add", "with --vault", cwd=tmp_path))[0],
        added(run_cli("add", "with VAULT_PATH", cwd=tmp_path, env={"VAULT_PATH": str(vault_dir)}))[
            0
        ],
    }
    [path] = paths
    text = (vault_dir / path).read_text()
    for entry in ("- from a subfolder", "- with --vault", "- with VAULT_PATH"):
        assert entry in text
    assert not list((vault_dir / "notes").rglob("*.md"))


def test_add_empty_entry(vault_dir: Path, run_cli, tree_state) -> None:
    before = tree_state(vault_dir)
    assert error_of(run_cli("add", cwd=vault_dir, input="")) == (
        "nothing to add: the entry is empty; give the text to remember."
    )
    assert error_of(run_cli("add", "  ", cwd=vault_dir)).startswith("nothing to add")
    assert tree_state(vault_dir) == before


def test_add_refuses_a_nul_byte(vault_dir: Path, run_cli, tree_state) -> None:
    """A NUL would turn the day's log into a "binary" file that refuses every later append."""
    before = tree_state(vault_dir)
    assert error_of(run_cli("add", "a\x00b", cwd=vault_dir)) == (
        "the entry contains a NUL byte (\\x00); send plain text."
    )
    assert tree_state(vault_dir) == before
    assert run_cli("add", "still fine", cwd=vault_dir).exit_code == 0


def test_add_too_large(vault_dir: Path, run_cli, tree_state) -> None:
    before = tree_state(vault_dir)
    size = MAX_ENTRY_BYTES + 1
    assert error_of(run_cli("add", cwd=vault_dir, input="x" * size)) == (
        f"the entry is {size:,} bytes, over the limit of {MAX_ENTRY_BYTES:,}. "
        "Split it into smaller pieces."
    )
    assert tree_state(vault_dir) == before


def test_add_refuses_to_append_to_a_binary_day_file(vault_dir: Path, run_cli) -> None:
    today = clock.today()
    days = [vault_dir / "memory" / f"{today + dt.timedelta(n)}.md" for n in (0, 1)]  # midnight
    for day in days:
        day.write_bytes(b"# day\n\x00\x01binary")
    message = error_of(run_cli("add", "x", cwd=vault_dir))
    assert re.match(r"memory/\d{4}-\d{2}-\d{2}\.md: binary file", message), message
    for day in days:
        assert day.read_bytes() == b"# day\n\x00\x01binary"


def test_add_while_another_writer_holds_the_lock(
    vault_dir: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = fsutil.locked
    monkeypatch.setattr(fsutil, "locked", lambda path, timeout=0.1: original(path, timeout))
    folder = vault_dir / "memory"
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        message = error_of(run_cli("add", "blocked", cwd=vault_dir))
    finally:
        os.close(fd)
    assert message == (
        f"could not take the write lock ({folder}) within 0.1 s: another vault process is "
        "busy. Wait for it to finish and try again."
    )
    assert list(folder.iterdir()) == []


def test_add_with_a_broken_vault_toml(vault_dir: Path, run_cli) -> None:
    (vault_dir / "vault.toml").write_text("[search\n")
    message = error_of(run_cli("add", "x", cwd=vault_dir))
    assert message.startswith(f"{vault_dir / 'vault.toml'} is not valid TOML")
    assert list((vault_dir / "memory").iterdir()) == []


def test_unknown_settings_warn_on_stderr(vault_dir: Path, run_cli) -> None:
    with (vault_dir / "vault.toml").open("a") as fh:
        fh.write("\n[llm]\nmodell = 'x'\n")
    result = run_cli("add", "still works", cwd=vault_dir)
    added(result)
    assert result.stderr == "Warning: vault.toml: unknown setting llm.modell (ignored)\n"
    assert run_cli("-q", "add", "quiet", cwd=vault_dir).stderr == ""


# -- get -----------------------------------------------------------------------------------

NOTE = "# Title\n\n## Section\n- one\n- two\nlast line\n"


@pytest.fixture
def note_vault(vault_dir: Path) -> Path:
    (vault_dir / "notes").mkdir()
    (vault_dir / "notes" / "n.md").write_text(NOTE)
    return vault_dir


@pytest.mark.parametrize(
    ("location", "text"),
    [
        ("notes/n.md", NOTE),
        ("notes/n.md:1", "# Title\n"),
        ("notes/n.md:4-5", "- one\n- two\n"),
        ("notes/n.md:6-6", "last line\n"),
        ("notes/n.md:5-99", "- two\nlast line\n"),  # the end is clipped to the file
        ("./notes/../notes/n.md:2-3", "\n## Section\n"),
    ],
)
def test_get(note_vault: Path, run_cli, location: str, text: str) -> None:
    result = run_cli("get", location, cwd=note_vault)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == text
    assert result.stderr == ""


def test_get_json(note_vault: Path, run_cli) -> None:
    result = run_cli("get", "notes/n.md:4-5", "--json", cwd=note_vault)
    assert json.loads(result.stdout) == {
        "path": "notes/n.md",
        "start_line": 4,
        "end_line": 5,
        "total_lines": 6,
        "text": "- one\n- two\n",
    }
    whole = json.loads(run_cli("get", "notes/n.md", "--json", cwd=note_vault).stdout)
    assert (whole["start_line"], whole["end_line"], whole["text"]) == (1, 6, NOTE)


@pytest.mark.parametrize("span", ["7", "0", "5-3", "7-9", "0-2"])
def test_get_out_of_range(note_vault: Path, run_cli, span: str) -> None:
    message = error_of(run_cli("get", f"notes/n.md:{span}", cwd=note_vault))
    start, _, end = span.partition("-")
    assert message == (
        f"notes/n.md has 6 lines; lines {start}-{end or start} are out of range. "
        "Ask for a range within 1-6."
    )


def test_get_missing_file_and_folder(note_vault: Path, run_cli) -> None:
    assert error_of(run_cli("get", "notes/nope.md", cwd=note_vault)) == (
        "notes/nope.md does not exist in the vault. Check the path with `ls`."
    )
    assert error_of(run_cli("get", "notes", cwd=note_vault)) == (
        "notes: is a folder; give a file path"
    )


ESCAPING = [
    "..",
    "../outside/secret.md",
    "a/../../x",
    "/etc/passwd",
    "~",
    "~/x.md",
    "leak.md",
    "leakdir/secret.md",
    "notes/real.md\x00",
    "",
]


@pytest.mark.parametrize("given", ESCAPING)
def test_get_refuses_paths_leaving_the_vault(
    vault_dir: Path, escapes: dict[str, Path], run_cli, given: str
) -> None:
    with pytest.raises(PathOutsideVaultError):
        Vault(vault_dir).get(given)
    result = run_cli("get", given, cwd=vault_dir)
    message = error_of(result)
    assert message.startswith(f"refusing {given!r}: ")
    assert "SECRET" not in result.output


def test_get_follows_symlinks_that_stay_inside(
    vault_dir: Path, escapes: dict[str, Path], run_cli
) -> None:
    for given in ("alias.md", "notesdir/real.md", "alias.md:3"):
        result = run_cli("get", given, "--json", cwd=vault_dir)
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["path"] == "notes/real.md"
    assert Vault(vault_dir).get("alias.md").text == "# Real\n\ninside\n"


BAD_FILES = {
    "invalid-utf8": (b"ok\n\xc3\x28\n", "not valid UTF-8 (byte 3, line 2)"),
    "binary": (b"\x7fELF\x02\x01\x00\x00", "binary file (contains NUL bytes), not Markdown"),
    "too-large": (None, "52,428,800 bytes is over the 5,000,000-byte limit"),
    "unreadable": (b"# private\n", "cannot read (Permission denied)"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_get_bad_input_names_the_file_and_leaves_it_alone(
    vault_dir: Path, run_cli, make_unreadable, kind: str
) -> None:
    data, reason = BAD_FILES[kind]
    path = vault_dir / "notes" / f"{kind}.md"
    path.parent.mkdir()
    if data is None:
        with path.open("wb") as fh:
            fh.truncate(50 * 1024 * 1024)  # sparse; refused on its size before any read
        assert path.stat().st_size > Vault(vault_dir).config.index.max_file_bytes
    else:
        path.write_bytes(data)
    if kind == "unreadable":
        make_unreadable(path)
    stat = path.stat()
    with pytest.raises(UnreadableNoteError) as info:
        Vault(vault_dir).get(f"notes/{kind}.md")
    assert str(info.value).startswith(f"notes/{kind}.md: {reason}")
    assert error_of(run_cli("get", f"notes/{kind}.md:1", cwd=vault_dir)).startswith(
        f"notes/{kind}.md: {reason}"
    )
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ino,
    )
    if data is not None and kind != "unreadable":
        assert path.read_bytes() == data


def test_get_respects_the_configured_size_limit(note_vault: Path, run_cli) -> None:
    result = run_cli("get", "notes/n.md", cwd=note_vault, env={"VAULT_INDEX_MAX_FILE_BYTES": "10"})
    assert error_of(result) == f"notes/n.md: {len(NOTE)} bytes is over the 10-byte limit (skipped)"


# -- usage errors and vault discovery ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "--bogus"], "No such option"),
        (["get"], "Missing argument 'LOCATION'"),
        (["nosuch"], "No such command 'nosuch'"),
        (["--vault"], "Option '--vault' requires an argument"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, run_cli, args: list[str], message: str) -> None:
    result = run_cli(*args, cwd=tmp_path)  # outside any vault: usage is checked first
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""
    assert message in result.stderr


def test_help_works_outside_a_vault(tmp_path: Path, run_cli) -> None:
    for args in (["--help"], ["add", "--help"], ["get", "-h"], ["init", "--help"]):
        result = run_cli(*args, cwd=tmp_path)
        assert result.exit_code == 0, (args, result.stderr)
        assert "Example:" in result.stdout


def test_no_vault_found(tmp_path: Path, run_cli) -> None:
    for args in (["add", "x"], ["get", "MEMORY.md"]):
        message = error_of(run_cli(*args, cwd=tmp_path))
        assert message == (
            f"no vault found at or above {tmp_path.resolve()} (no vault.toml). Run `vault init` "
            "to create one, or pass --vault PATH / set VAULT_PATH."
        )
    assert list(tmp_path.iterdir()) == []


def test_vault_option_pointing_nowhere(tmp_path: Path, run_cli) -> None:
    missing = tmp_path / "missing"
    expected = (
        f"{missing} does not exist. Pass an existing vault folder, "
        f"or run `vault init {missing}` to create one."
    )
    assert error_of(run_cli("--vault", str(missing), "get", "MEMORY.md")) == expected
    assert error_of(run_cli("add", "x", env={"VAULT_PATH": str(missing)})) == expected
    assert not missing.exists()


def test_vault_option_needs_a_vault_not_any_folder(tmp_path: Path, run_cli) -> None:
    """`vault --vault ~/code search foo` on a folder without vault.toml indexed the whole tree
    and wrote .vault/ into it; `--vault README.md` suggested `vault init README.md`."""
    code = tmp_path / "code"
    (code / "docs").mkdir(parents=True)
    (code / "docs" / "guide.md").write_text("# Guide\n\nfoo bar\n")
    message = error_of(run_cli("--vault", str(code), "search", "foo"))
    assert message == (
        f"{code} is not a vault (it holds no vault.toml, MEMORY.md or memory/). "
        f"Run `vault init {code}` to make it one, or pass the folder of an "
        "existing vault."
    )
    assert sorted(p.name for p in code.iterdir()) == ["docs"]  # no .vault/ written
    readme = tmp_path / "README.md"
    readme.write_text("# readme\n")
    message = error_of(run_cli("--vault", str(readme), "search", "foo"))
    assert message == (
        f"{readme} is a file, not a vault folder. Pass the folder that holds vault.toml."
    )


@pytest.mark.parametrize("spec", ["MEMORY.md:abc", "MEMORY.md:-3", "MEMORY.md:3-"])
def test_get_says_a_malformed_range_is_malformed(vault_dir: Path, run_cli, spec: str) -> None:
    """`vault get MEMORY.md:abc` said the file does not exist."""
    tail = spec.partition(":")[2]
    assert error_of(run_cli("get", spec, cwd=vault_dir)) == (
        f"{spec!r}: {tail!r} is not a line range. Write PATH:START or PATH:START-END with line "
        "numbers from 1, e.g. MEMORY.md:4-9."
    )


def _run_on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run `vault ARGS` with stderr on a pseudo-terminal; (status, stdout, terminal output)."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    process = subprocess.Popen(
        [sys.executable, "-m", "vault_memory", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert process.stdout is not None
    with process.stdout:
        stdout = process.stdout.read().decode()
    status = process.wait(timeout=120)
    os.close(master)
    return status, stdout, seen.decode(errors="replace")


@pytest.mark.slow
def test_long_work_shows_progress_on_a_terminal_only(tmp_path: Path, run_cli) -> None:
    """`vault index` of a large vault printed nothing for minutes. On a terminal it draws bars
    (phase, counts, rate); piped, with --quiet, or as JSON its output is unchanged."""
    from vault_memory import Vault

    root = Vault.init(tmp_path / "v").root
    for day in range(1, 29):
        (root / "memory" / f"2026-02-{day:02d}.md").write_text(
            f"# 2026-02-{day:02d}\n\n## 09:00 · note\n"
            + "".join(f"- Entry {n} of day {day} about topic {n * day}.\n" for n in range(2))
        )
    status, stdout, terminal = _run_on_a_terminal(["index"], root)
    assert status == 0, terminal
    assert re.search(r"files: +\d+%\|", terminal) and re.search(r"embedding: .*unit/s", terminal)
    assert stdout.startswith("29 new, 0 modified")  # 28 days and MEMORY.md
    status, stdout, terminal = _run_on_a_terminal(["--quiet", "index", "--rebuild"], root)
    assert status == 0 and "%|" not in terminal
    piped = run_cli("--vault", str(root), "index", "--rebuild")
    assert piped.exit_code == 0 and "%|" not in piped.stderr and "%|" not in piped.stdout
