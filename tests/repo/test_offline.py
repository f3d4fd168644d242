"""Fully offline means no network at all: `vault index` and `vault search` with the bundled
model, in a process without a network, make no connection but to the vault's own socket and
leave no telemetry behind (onnxruntime writes a device id under ~/.cache/Microsoft/ unless told
not to)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..support.vaults import SAMPLE_VAULT, copy_vault

WORKTREE = Path(__file__).resolve().parents[2]
CONNECT = re.compile(
    r"connect\(\d+, \{sa_family=(?P<family>AF_\w+)(?:, sun_path=\"(?P<path>[^\"]*)\")?"
)


def _sandbox() -> list[str]:
    """`unshare -n` (root) or `unshare -rn` (a user namespace) around `strace -f`."""
    if shutil.which("strace") is None or shutil.which("unshare") is None:
        pytest.skip("needs strace and unshare (apt-get install strace util-linux)")
    unshare = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
    probe = subprocess.run(
        [*unshare, "strace", "-f", "-qq", "-e", "trace=connect", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"no network namespace or ptrace here: {probe.stderr.strip()[:200]}")
    return unshare


@pytest.mark.slow
def test_index_and_search_connect_nowhere_and_leave_no_telemetry(tmp_path: Path) -> None:
    unshare = _sandbox()
    root = copy_vault(SAMPLE_VAULT, tmp_path / "vault")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PYTHONPATH": str(WORKTREE),
        "LANG": "C.UTF-8",
    }
    connects: list[str] = []
    for args in (["index"], ["search", "which database did we pick for billing?", "--json"]):
        trace = tmp_path / f"trace-{args[0]}.txt"
        done = subprocess.run(
            [
                *unshare,
                "strace",
                "-f",
                "-qq",
                "-e",
                "trace=connect",
                "-o",
                str(trace),
                sys.executable,
                "-m",
                "vault_memory",
                "--vault",
                str(root),
                *args,
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        connects += [line for line in trace.read_text().splitlines() if "connect(" in line]
    assert '"path": "memory/' in done.stdout or '"path": "MEMORY.md"' in done.stdout
    own_socket = str(root / ".vault")
    for line in connects:
        match = CONNECT.search(line)
        assert match, line
        assert match["family"] == "AF_UNIX" and (match["path"] or "").startswith(own_socket), (
            f"a connection outside the vault's own socket: {line}"
        )
    assert not (home / ".cache" / "Microsoft").exists(), "onnxruntime telemetry was written"
