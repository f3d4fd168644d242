"""kill -9 in the middle of `vault import`, then the same import again: the vault ends up
exactly as one uninterrupted import leaves it (0 lost messages' entries, 0 duplicated
entries), for a ChatGPT export and for a `vault export` (slow suite)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_memory import Vault

from .test_import import DAY, T0, entries, gpt_conversation, gpt_message, logs

pytestmark = pytest.mark.slow

TOPICS = [
    "billing-core",
    "the invoice renderer",
    "the ledger export",
    "the nightly backup",
    "the staging cluster",
    "the on-call rota",
    "the API gateway",
    "the audit log",
]
TOOLS = ["PostgreSQL", "pytest", "Terraform", "Grafana", "Neovim", "uv", "GitLab CI", "Lua"]


def big_export(path: Path, count: int) -> Path:
    """`count` conversations of 2-4 days each, every one with statements the offline rules keep."""
    conversations = []
    for n in range(count):
        start = T0 + (n % 40) * DAY + n * 61
        nodes: list = [("r", None, None)]
        parent = "r"
        for i in range(6):
            node = f"n{i}"
            if i % 2 == 0:
                text = (
                    f"I prefer {TOOLS[(n + i) % 8]} over {TOOLS[(n + i + 3) % 8]} for "
                    f"{TOPICS[(n * 3 + i) % 8]} (case {n}-{i})."
                )
            else:
                text = "Understood."
            nodes.append(
                (
                    node,
                    parent,
                    gpt_message(
                        "user" if i % 2 == 0 else "assistant", text, start + (i // 2) * DAY + i
                    ),
                )
            )
            parent = node
        conversations.append(gpt_conversation(f"{n:08x}-1111-2222", f"Chat {n}", nodes, parent))
    path.write_text(json.dumps(conversations))
    return path


def import_process(vault: Path, source: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "VAULT_PATH": str(vault)}
    return subprocess.Popen(
        [sys.executable, "-m", "vault_memory", "-q", "import", str(source)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def kill_when(
    process: subprocess.Popen[bytes], ready: Callable[[], bool], timeout: float = 60.0
) -> bool:
    """SIGKILL the process once `ready()` holds; False when it finished first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        if ready():
            process.send_signal(signal.SIGKILL)
            process.wait()
            process.stderr.close()  # type: ignore[union-attr]
            return True
        time.sleep(0.005)  # polling a condition, not waiting for an event
    process.kill()
    process.wait()
    raise AssertionError("the import did not get far enough in time")


def blocks_written(vault: Path) -> int:
    total = 0
    for path in (vault / "memory").glob("*.md"):
        with contextlib.suppress(OSError, UnicodeDecodeError):  # a file being replaced
            total += path.read_text(encoding="utf-8").count("· flush · session")
    return total


@pytest.mark.parametrize("after_blocks", [3, 60, 200])
def test_chatgpt_import_killed_then_run_again(tmp_path: Path, after_blocks: int) -> None:
    source = big_export(tmp_path / "conversations.json", 120)
    clean = Vault.init(tmp_path / "clean").root
    Vault(clean).import_history(source)
    expected = entries(clean)
    assert max(expected.values()) == 1 and sum(expected.values()) == 120 * 3

    crashed = Vault.init(tmp_path / "crashed").root
    process = import_process(crashed, source)
    assert kill_when(process, lambda: blocks_written(crashed) >= after_blocks)
    assert entries(crashed) != expected  # it stopped part way
    Vault(crashed).import_history(source)
    assert entries(crashed) == expected
    assert logs(crashed) == logs(clean)  # byte for byte: same blocks, same order
    again = Vault(crashed).import_history(source)
    assert again.entries == 0 and logs(crashed) == logs(clean)


def test_export_import_killed_then_run_again(tmp_path: Path) -> None:
    source = Vault(Vault.init(tmp_path / "source").root)
    for n in range(400):  # 400 daily logs of 30 entries
        day = (dt.date(2025, 1, 1) + dt.timedelta(days=n)).isoformat()
        lines = [f"# {day}", "", "## 09:00 · note"]
        lines += [f"- Entry {i} of day {n}: {TOPICS[(n + i) % 8]} #t{i % 5}" for i in range(30)]
        (source.root / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n")
    out = io.StringIO()
    source.export(out)
    backup = tmp_path / "backup.jsonl"
    backup.write_text(out.getvalue())
    target = Vault.init(tmp_path / "target").root
    process = import_process(target, backup)
    assert kill_when(process, lambda: len(list((target / "memory").glob("*.md"))) >= 10)
    assert len(list((target / "memory").glob("*.md"))) < 400
    for path in (target / "memory").glob("*.md"):  # every file there is whole
        assert path.read_bytes() == (source.root / "memory" / path.name).read_bytes()
    report = Vault(target).import_history(backup)
    assert report.files is not None and report.files.done["conflict"] == []
    for path in (source.root / "memory").glob("*.md"):
        assert (target / "memory" / path.name).read_bytes() == path.read_bytes()
