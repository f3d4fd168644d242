"""fsutil: confinement, safe reads, guarded atomic rewrites and locked appends, on real files."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vault_memory.errors import (
    CannotWriteError,
    LockTimeoutError,
    NoteChangedError,
    NoteNotFoundError,
    PathOutsideVaultError,
    UnreadableNoteError,
)
from vault_memory.files import fsutil
from vault_memory.files.fsutil import (
    append_entry,
    locked,
    read_text,
    resolve_in_vault,
    sha256_bytes,
    split_lines,
    write_atomic,
)


def leftovers(folder: Path) -> list[str]:
    """Temp files of `_replace_atomically` (`.NAME.XXXX.tmp`)."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- split_lines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\n\n", ["a", ""]),
        ("\n", [""]),
        ("a\r\nb\r\n", ["a", "b"]),
        ("a\nb", ["a", "b"]),
        ("form\ffeed \u2028 sep\x85\n", ["form\ffeed \u2028 sep\x85"]),
        ("cr\rinside\n", ["cr\rinside"]),
    ],
)
def test_split_lines_counts_like_an_editor(text: str, expected: list[str]) -> None:
    assert split_lines(text) == expected


# -- read_text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"# Plain\n\ntext\n",
        b"\xef\xbb\xbf# BOM\r\nline\r\n",
        b"---\ntitle: x\n---\nno final newline",
        "caf\u00e9 \u2014 \U0001f600\n".encode(),
        b"",
    ],
)
def test_read_text_returns_the_exact_text_and_hash(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "n.md"
    path.write_bytes(data)
    before = path.stat()
    got = read_text(path, "n.md")
    assert got.text.encode("utf-8") == data
    assert got.sha256 == hashlib.sha256(data).hexdigest() == sha256_bytes(data)
    assert got.size == len(data)
    assert got.mtime_ns == before.st_mtime_ns
    assert path.read_bytes() == data
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def test_read_text_missing_file(tmp_path: Path) -> None:
    with pytest.raises(NoteNotFoundError, match=r"notes/gone\.md does not exist"):
        read_text(tmp_path / "gone.md", "notes/gone.md")


def _write_bad(kind: str, path: Path) -> None:
    if kind == "invalid-utf8":
        path.write_bytes(b"# Title\nbad \xff\xfe byte\n")
    elif kind == "binary":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    elif kind == "nul-late":
        path.write_bytes(b"a\n" * 10_000 + b"\x00")
    elif kind == "too-large":
        with path.open("wb") as fh:  # 50 MiB of valid text, well over the 5 MB default limit
            fh.write(b"a\n" * (25 * 1024 * 1024))


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("invalid-utf8", r"bad\.md: not valid UTF-8 \(byte 12, line 2\); re-save it as UTF-8"),
        ("binary", r"bad\.md: binary file \(contains NUL bytes\), not Markdown"),
        ("nul-late", r"bad\.md: binary file"),
        ("too-large", r"bad\.md: 52,428,800 bytes is over the 5,000,000-byte limit"),
    ],
)
def test_read_text_refuses_bad_input_and_leaves_it_alone(
    tmp_path: Path, kind: str, message: str
) -> None:
    path = tmp_path / "bad.md"
    _write_bad(kind, path)
    digest, mtime = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    with pytest.raises(UnreadableNoteError, match=message) as info:
        read_text(path, "bad.md")
    assert info.value.relpath == "bad.md"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert path.stat().st_mtime_ns == mtime


def test_read_text_names_the_full_path_without_relpath(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes(b"\x00")
    with pytest.raises(UnreadableNoteError, match=re.escape(str(path))):
        read_text(path)


def test_read_text_respects_max_bytes(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_text("x" * 100)
    assert read_text(path, max_bytes=100).size == 100
    path.write_text("x" * 101)
    with pytest.raises(UnreadableNoteError, match="101 bytes is over the 100-byte limit"):
        read_text(path, "n.md", max_bytes=100)


def test_read_text_unreadable_file(tmp_path: Path, make_unreadable) -> None:
    path = tmp_path / "locked.md"
    path.write_text("private\n")
    make_unreadable(path)
    with pytest.raises(UnreadableNoteError, match=r"locked\.md: cannot read \(Permission denied\)"):
        read_text(path, "locked.md")
    assert os.stat(path).st_size == len(b"private\n")


def test_read_text_refuses_folders_and_fifos(tmp_path: Path) -> None:
    (tmp_path / "folder.md").mkdir()
    with pytest.raises(UnreadableNoteError, match=r"folder\.md: a folder, not a regular file"):
        read_text(tmp_path / "folder.md", "folder.md")
    os.mkfifo(tmp_path / "pipe.md")  # opening it would block forever
    with pytest.raises(UnreadableNoteError, match="a named pipe .FIFO., not a regular file"):
        read_text(tmp_path / "pipe.md", "pipe.md")


# -- resolve_in_vault ----------------------------------------------------------------------

ESCAPING = [
    ("..", "it climbs out with '..'"),
    ("../outside/secret.md", "it climbs out with '..'"),
    ("a/../../x", "it climbs out with '..'"),
    ("notes/../../outside/secret.md", "it climbs out with '..'"),
    ("/etc/passwd", "absolute paths are not accepted"),
    ("~", "absolute paths are not accepted"),
    ("~/notes.md", "absolute paths are not accepted"),
    ("leak.md", "a symlink leads outside the vault"),
    ("leakdir/secret.md", "a symlink leads outside the vault"),
    ("leakdir", "a symlink leads outside the vault"),
    ("memory\x00.md", "the path contains a NUL byte"),
    ("", "the path is empty"),
    ("   ", "the path is empty"),
]


@pytest.mark.parametrize(("given", "reason"), ESCAPING)
def test_resolve_refuses_paths_leaving_the_vault(
    vault_dir: Path, escapes: dict[str, Path], given: str, reason: str
) -> None:
    with pytest.raises(PathOutsideVaultError) as info:
        resolve_in_vault(vault_dir, given)
    assert info.value.given == given
    assert f"refusing {given!r}: {reason}" in str(info.value)
    assert "relative to the vault root" in str(info.value)


def test_resolve_refuses_an_absolute_path_even_inside_the_vault(vault_dir: Path) -> None:
    with pytest.raises(PathOutsideVaultError, match="absolute"):
        resolve_in_vault(vault_dir, str(vault_dir / "MEMORY.md"))


@pytest.mark.parametrize(
    ("given", "relpath"),
    [
        ("MEMORY.md", "MEMORY.md"),
        ("./MEMORY.md", "MEMORY.md"),
        ("memory/../MEMORY.md", "MEMORY.md"),
        ("notes/real.md", "notes/real.md"),
        ("alias.md", "notes/real.md"),  # a symlink that stays inside is followed
        ("notesdir/real.md", "notes/real.md"),
        ("notes/new.md", "notes/new.md"),  # need not exist yet
        (".", "."),
    ],
)
def test_resolve_allows_paths_that_stay_inside(
    vault_dir: Path, escapes: dict[str, Path], given: str, relpath: str
) -> None:
    real, rel = resolve_in_vault(vault_dir, given)
    assert rel == relpath
    assert real == (vault_dir / relpath).resolve()


def test_resolve_through_a_symlinked_vault_root(tmp_path: Path, vault_dir: Path) -> None:
    link = tmp_path / "link-to-vault"
    link.symlink_to(vault_dir, target_is_directory=True)
    real, rel = resolve_in_vault(link, "MEMORY.md")
    assert rel == "MEMORY.md"
    assert real == vault_dir.resolve() / "MEMORY.md"
    with pytest.raises(PathOutsideVaultError):
        resolve_in_vault(link, "../x.md")


# -- locked --------------------------------------------------------------------------------


def test_lock_excludes_a_second_holder_then_releases(tmp_path: Path) -> None:
    target = tmp_path / "log.md"
    with locked(target):
        with pytest.raises(LockTimeoutError) as info, locked(target, timeout=0.05):
            pass
        message = str(info.value)
        assert f"could not take the write lock ({tmp_path}) within 0.05 s" in message
        assert "another vault process is busy" in message
    with locked(target, timeout=0.05):  # free again
        pass


def test_lock_is_held_against_other_processes(tmp_path: Path) -> None:
    target = tmp_path / "log.md"
    probe = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
        "try:\n"
        "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "    print('free')\n"
        "except BlockingIOError:\n"
        "    print('held')\n"
    )
    with locked(target):
        held = subprocess.run(
            [sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, check=True
        )
    free = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert (held.stdout.strip(), free.stdout.strip()) == ("held", "free")


# -- write_atomic --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "new_text",
    [
        "replaced\n",
        "\ufeff---\nk: v\n---\r\nCRLF\r\nkept\r\n",
        "no newline",
        "",
        "\u00e9\U0001f600\n",
    ],
)
def test_write_atomic_replaces_content_exactly(tmp_path: Path, new_text: str) -> None:
    path = tmp_path / "n.md"
    path.write_bytes(b"old\n")
    before = read_text(path)
    new_sha = write_atomic(path, new_text, before.sha256, "n.md")
    assert path.read_bytes() == new_text.encode("utf-8")
    assert new_sha == hashlib.sha256(new_text.encode("utf-8")).hexdigest()
    assert leftovers(tmp_path) == []
    # the returned hash guards the next rewrite
    write_atomic(path, "again\n", new_sha)
    assert path.read_bytes() == b"again\n"


def test_write_atomic_refuses_a_file_edited_after_it_was_read(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("# MEMORY\n- one\n")
    seen = read_text(path, "MEMORY.md")
    path.write_text("# MEMORY\n- one\n- added by a person\n")
    with pytest.raises(NoteChangedError) as info:
        write_atomic(path, "# MEMORY\n- rewritten\n", seen.sha256, "MEMORY.md")
    assert info.value.relpath == "MEMORY.md"
    assert str(info.value) == (
        "MEMORY.md changed on disk during the write; nothing was written. "
        "Run the command again to work from the current file."
    )
    assert path.read_text() == "# MEMORY\n- one\n- added by a person\n"
    assert leftovers(tmp_path) == []


def test_write_atomic_refuses_when_the_file_was_deleted(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_text("x\n")
    seen = read_text(path)
    path.unlink()
    with pytest.raises(NoteChangedError):
        write_atomic(path, "y\n", seen.sha256)
    assert not path.exists()
    assert leftovers(tmp_path) == []


def test_write_atomic_expected_none_creates_but_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "new.md"
    write_atomic(path, "first\n", None)
    assert path.read_bytes() == b"first\n"
    mtime = path.stat().st_mtime_ns
    with pytest.raises(NoteChangedError, match=r"new\.md changed on disk"):
        write_atomic(path, "second\n", None, "new.md")
    assert path.read_bytes() == b"first\n"
    assert path.stat().st_mtime_ns == mtime
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644, 0o755])
def test_write_atomic_preserves_the_file_mode(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "n.md"
    path.write_text("x\n")
    path.chmod(mode)
    write_atomic(path, "y\n", read_text(path).sha256)
    assert path.stat().st_mode & 0o7777 == mode


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    """Not mkstemp's 0o600: a new note gets what any editor would give it."""
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "a.md", "x\n", None)
        append_entry(tmp_path / "b.md", "y\n")
    finally:
        os.umask(old)
    assert (tmp_path / "a.md").stat().st_mode & 0o777 == mode
    assert (tmp_path / "b.md").stat().st_mode & 0o777 == mode


def test_write_atomic_leaves_no_temp_file_when_the_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "n.md"
    path.write_text("original\n")
    seen = read_text(path)

    def failing_replace(src: str, dst: object) -> None:
        assert Path(src).exists()  # the temp file was really written before this point
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil.os, "replace", failing_replace)
    with pytest.raises(CannotWriteError, match="cannot write .*n.md: No space left"):
        write_atomic(path, "new\n", seen.sha256)
    assert path.read_bytes() == b"original\n"
    assert leftovers(tmp_path) == []


def test_write_atomic_is_a_replace_not_an_in_place_write(tmp_path: Path) -> None:
    """A reader that opened the file before the rewrite keeps reading the old version whole."""
    path = tmp_path / "n.md"
    path.write_text("old version\n")
    with path.open("rb") as reader:
        write_atomic(path, "new version\n", read_text(path).sha256)
        assert reader.read() == b"old version\n"
    assert path.read_bytes() == b"new version\n"


# -- append_entry --------------------------------------------------------------------------


def test_append_creates_the_file_with_its_header(tmp_path: Path) -> None:
    path = tmp_path / "2026-11-22.md"
    first = append_entry(path, "\n## 14:03 · note\n- one", create_with="# 2026-11-22")
    assert path.read_text() == "# 2026-11-22\n\n## 14:03 · note\n- one\n"
    assert first == 2
    assert split_lines(path.read_text())[first - 1 :] == ["", "## 14:03 · note", "- one"]
    assert leftovers(tmp_path) == []


def test_append_without_header(tmp_path: Path) -> None:
    path = tmp_path / "log.md"
    assert append_entry(path, "a\n") == 1
    assert append_entry(path, "b\nc\n") == 2
    assert append_entry(path, "d") == 4
    assert path.read_bytes() == b"a\nb\nc\nd\n"


@pytest.mark.parametrize(
    ("existing", "expected", "first"),
    [
        (b"# day\n- x\n", b"# day\n- x\nnew\n", 3),
        (b"# day\n- no newline", b"# day\n- no newline\nnew\n", 3),
        (b"# day\r\n- crlf\r\n", b"# day\r\n- crlf\r\nnew\n", 3),
        (b"", b"new\n", 1),
        (b"\n\n", b"\n\nnew\n", 3),
    ],
)
def test_append_to_an_existing_file(
    tmp_path: Path, existing: bytes, expected: bytes, first: int
) -> None:
    path = tmp_path / "log.md"
    path.write_bytes(existing)
    inode = path.stat().st_ino
    assert append_entry(path, "new", create_with="# ignored\n") == first
    assert path.read_bytes() == expected
    assert path.stat().st_ino == inode  # appended in place, not rewritten
    assert split_lines(path.read_bytes().decode())[first - 1] == "new"


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from vault_memory.files.fsutil import append_entry

    path, writer, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    print("ready", flush=True)
    sys.stdin.readline()  # everyone starts together
    starts = []
    for seq in range(count):
        tag = f"{writer}:{seq}"
        filler = "x" * (seq * 37 % 300)  # blocks of varying size
        block = f"<<< {tag}\\nbody {tag} {filler}\\n>>> {tag}\\n"
        starts.append(append_entry(path, block, create_with="# shared log\\n"))
    print(" ".join(map(str, starts)), flush=True)
    """
)


@pytest.mark.slow
def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    """8 processes x 200 appends to one (initially missing) file: one header, every 3-line
    block present once, whole and contiguous, and each reported start line is right."""
    writers, count = 8, 200
    path = tmp_path / "memory" / "2026-11-22.md"
    path.parent.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{n}", str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(writers)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            results.append([int(n) for n in out.split()])
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    lines = split_lines(path.read_text())
    assert lines[0] == "# shared log"
    body = lines[1:]
    assert len(body) == writers * count * 3
    seen: dict[str, int] = {}  # tag -> 1-based line where its block starts
    last_seq: dict[str, int] = {}
    for i in range(0, len(body), 3):
        opening, middle, closing = body[i : i + 3]
        match = re.fullmatch(r"<<< (w\d+):(\d+)", opening)
        assert match, f"line {i + 2} is not the start of a block: {opening!r}"
        tag, writer, seq = f"{match[1]}:{match[2]}", match[1], int(match[2])
        assert middle == f"body {tag} " + "x" * (seq * 37 % 300), f"block {tag} is broken"
        assert closing == f">>> {tag}", f"block {tag} is broken"
        assert tag not in seen, f"block {tag} appears twice"
        assert seq > last_seq.get(writer, -1), f"{writer}'s blocks are out of order"
        seen[tag] = i + 2
        last_seq[writer] = seq
    assert len(seen) == writers * count
    for n, starts in enumerate(results):
        assert starts == [seen[f"w{n}:{seq}"] for seq in range(count)]
    assert leftovers(path.parent) == []


def test_append_lock_timeout_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.md"
    path.write_text("# log\n")
    original = fsutil.locked
    monkeypatch.setattr(fsutil, "locked", lambda p, timeout=0.05: original(p, timeout))
    fd = os.open(tmp_path, os.O_RDONLY)  # another writer holds the folder lock
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(LockTimeoutError):
            append_entry(path, "late\n")
    finally:
        os.close(fd)
    assert path.read_text() == "# log\n"
