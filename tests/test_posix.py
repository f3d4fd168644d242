"""vault-memory is POSIX-only and says so (vault_memory/files/posix.py): where `fcntl` is missing
(Windows) the library's import raises one clear error, and the `vault` command prints it as
one `Error:` line, exit status 1, no traceback. Windows is played by a child process whose
`os.name` is "nt" and which cannot import `fcntl`."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from vault_memory.files.posix import MESSAGE

ROOT = Path(__file__).resolve().parent.parent
AS_WINDOWS = "import os, sys\nos.name = 'nt'\nsys.modules['fcntl'] = None\n"


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", AS_WINDOWS + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_the_command_says_in_one_line_that_it_needs_posix() -> None:
    done = run("sys.argv = ['vault', 'status']; from vault_memory.cli import main; main()")
    assert done.returncode == 1
    assert done.stderr == f"Error: {MESSAGE}\n" and done.stdout == ""
    assert "WSL" in MESSAGE


def test_the_library_import_raises_the_same_error() -> None:
    done = run(
        "try:\n"
        "    from vault_memory import Vault\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"UnsupportedPlatformError {MESSAGE}\n"


def test_the_package_declares_posix_in_its_classifiers() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "Operating System :: POSIX" in project["classifiers"]
    assert not any("Windows" in c for c in project["classifiers"])
