"""kill -9 at any point loses no submitted conversation and duplicates no entry: 50 trials of a
process that submits a growing conversation (acknowledging each submission on stdout) and is
killed with SIGKILL at a random moment, while its worker may be flushing; the next queue of
the vault drains what it left."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from vault_memory import Vault

from ..support.waiting import wait_until

TRIALS = 50
DAY = "2026-11-22"

CHILD = r"""
import sys, time
from vault_memory import Vault

vault = Vault(sys.argv[1])
updates = vault.updates
talks = [[], [], []]  # three sessions, each a growing conversation
for i in range(int(sys.argv[2])):
    text = f"We decided that service number {i} runs on Postgres."
    talks[i % 3].append({"role": "user", "content": text})
    updates.submit(talks[i % 3], session=f"s{i % 3}")
    sys.stdout.write(f"{i}\n")
    sys.stdout.flush()
    if i % 5 == 0:
        time.sleep(0.002)
time.sleep(30)
"""


@pytest.mark.slow
def test_kill_9_loses_nothing_and_duplicates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", f"{DAY}T10:00")
    rng = random.Random(19)
    lost = duplicated = 0
    for trial in range(TRIALS):
        root = Vault.init(tmp_path / f"v{trial}").root
        (root / "vault.toml").write_text(
            "[queue]\ndebounce_seconds = 0.01\nmax_delay_seconds = 0.05\n"
        )
        total = rng.randint(20, 120)
        kill_after = rng.randint(1, total)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(root), str(total)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=os.environ.copy(),
        )
        acknowledged = -1
        assert child.stdout is not None
        while acknowledged + 1 < kill_after:
            line = child.stdout.readline()
            if not line:
                break
            acknowledged = int(line)
        time.sleep(rng.uniform(0, 0.03))  # at any point: mid-submit, mid-flush, idle
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        # The next process of the vault drains what is left.
        with Vault(root) as vault:
            vault.updates  # noqa: B018
            folder = root / ".vault" / "queue"
            wait_until(lambda folder=folder: all(_own(p) for p in folder.glob("*.jsonl")))
        log = root / "memory" / f"{DAY}.md"
        lines = (
            [x for x in log.read_text().splitlines() if x.startswith("- ")] if log.exists() else []
        )
        counts = Counter(lines)
        expected = {
            f"- User: We decided that service number {i} runs on Postgres. #decision"
            for i in range(acknowledged + 1)
        }
        lost += len(expected - set(counts))
        duplicated += sum(n - 1 for n in counts.values())
        assert not (root / ".vault" / "queue" / "failed.jsonl").exists()
    assert (lost, duplicated) == (0, 0)


def _own(path: Path) -> bool:
    """A segment of a live queue of this test process (none after `close`)."""
    return path.name.startswith(f"{os.getpid()}-")


@pytest.mark.slow
def test_a_process_that_exits_without_closing_flushes_at_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_NOW", f"{DAY}T10:00")
    root = Vault.init(tmp_path / "v").root
    (root / "vault.toml").write_text("[queue]\ndebounce_seconds = 60\n")
    code = (
        "import sys\nfrom vault_memory import Vault\nv = Vault(sys.argv[1])\n"
        "v.updates.submit([{'role': 'user', 'content': 'We decided to keep Postgres.'}],"
        " session='bye')\n"
    )
    subprocess.run([sys.executable, "-c", code, str(root)], check=True, timeout=60)
    assert (
        "- User: We decided to keep Postgres. #decision"
        in (root / "memory" / f"{DAY}.md").read_text()
    )
    assert not list((root / ".vault" / "queue").glob("*.jsonl"))
