"""Imports linear in their input: the memo of what the daily logs hold (capture/seen.py) gives
the flushes of an import the answers that reading the logs would, so an import writes the same
logs with it as without it; it reads a log again when someone else changed it; and (slow) four
times the conversations on one day cost about four times as much, not sixteen."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.capture import seen_entries
from vault_memory.files import fsutil
from vault_memory.transfer import importer

DAY_START = 1757066400.0  # a morning; every conversation of an export here falls on its day
PHRASES = [
    "I prefer PostgreSQL over MySQL for the billing service.",
    "We decided to ship the renderer on Friday.",
    "My sister Lena lives in Lisbon.",
    "The staging database runs out of disk every Monday.",
    "Priya owns the ledger migration.",
]


def conversation(rng: random.Random, number: int, shared: bool = True) -> dict[str, Any]:
    stamp = DAY_START + number * 30
    mapping: dict[str, Any] = {"r": {"id": "r", "message": None, "parent": None, "children": []}}
    parent = "r"
    for i in range(rng.randrange(2, 7)):
        role = "user" if i % 2 == 0 else "assistant"
        # phrases shared between conversations: what other sessions flushed is left out
        own = f"I prefer tool {number}-{i} over tool {rng.randrange(10**6)} for project {number}."
        text = rng.choice(PHRASES) if shared and rng.random() < 0.4 else own
        node = f"n{i}"
        message = {
            "author": {"role": role},
            "content": {"content_type": "text", "parts": [text]},
            "create_time": stamp + i,
        }
        mapping[node] = {"id": node, "message": message, "parent": parent, "children": []}
        mapping[parent]["children"].append(node)
        parent = node
    return {
        "title": f"Talk {number % 7}",
        "create_time": stamp,
        "mapping": mapping,
        "current_node": parent,
        # some conversations come back under the same id (a session flushed again)
        "id": f"{number % 20 if shared else number:08x}-aaaa",
    }


def export(path: Path, count: int, seed: int = 3, shared: bool = True) -> Path:
    rng = random.Random(seed)
    chats = [conversation(rng, n, shared) for n in range(count)]
    path.write_text(json.dumps(chats), encoding="utf-8")
    return path


def daily_logs(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "memory").glob("*.md"))}


def test_an_import_writes_the_same_logs_with_the_memo_as_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = export(tmp_path / "conversations.json", 50)
    with_memo = Vault.init(tmp_path / "with").root
    without = Vault.init(tmp_path / "without").root
    first = Vault(with_memo).import_history(source)
    with monkeypatch.context() as patch:
        patch.setattr(importer, "seen_entries", lambda *args: None)
        second = Vault(without).import_history(source)
    assert first.entries == second.entries and first.already_flushed == second.already_flushed
    assert first.already_flushed > 0  # the shared phrases were left out the second time
    assert daily_logs(with_memo) == daily_logs(without)
    again = Vault(with_memo).import_history(source)
    assert again.entries == 0 and daily_logs(with_memo) == daily_logs(without)


def block(session: str, *entries: str) -> str:
    lines = "\n".join(f"- {text}" for text in entries)
    return f"\n## 10:00 · flush · session {session}\n{lines}\n"


def test_the_memo_reads_a_log_again_only_when_someone_else_changed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datetime as dt

    from vault_memory.capture.extract import entry_key

    log = tmp_path / "memory" / "2026-11-22.md"
    log.parent.mkdir()
    log.write_text("# 2026-11-22\n" + block("alpha", "Tea over coffee."), encoding="utf-8")
    reads = []
    real = fsutil.read_text
    here = threading.get_ident()  # a thread another test left running may read its own logs

    def counted(*a: Any, **k: Any) -> Any:
        if threading.get_ident() == here:
            reads.append(a[1])
        return real(*a, **k)

    monkeypatch.setattr(fsutil, "read_text", counted)
    seen = seen_entries(1_000_000)
    logs = [(log, "memory/2026-11-22.md")]
    span = (dt.date(2026, 11, 20), dt.date(2026, 11, 24))
    wanted = {entry_key("Rust for the CLI."), entry_key("Tea over coffee.")}

    own, elsewhere = seen.flushed(logs, "alpha", wanted, span)
    assert own == {entry_key("Tea over coffee.")} and elsewhere == {}
    added = block("beta", "Rust for the CLI.")
    fsutil.append_entry(log, added)
    seen.appended(log, "memory/2026-11-22.md", added)  # what this process appended: no read
    own, elsewhere = seen.flushed(logs, "alpha", wanted, span)
    assert elsewhere == {entry_key("Rust for the CLI."): {"beta"}}
    assert reads == ["memory/2026-11-22.md"]

    with log.open("a", encoding="utf-8") as fh:  # a person (or another tool) adds a block
        fh.write(block("gamma", "Tea over coffee."))
    own, elsewhere = seen.flushed(logs, "alpha", wanted, span)
    assert elsewhere[entry_key("Tea over coffee.")] == {"gamma"}
    assert reads == ["memory/2026-11-22.md"] * 2


def cpu_seconds(folder: Path, source: Path) -> float:
    vault = Vault(Vault.init(folder).root)
    started = time.process_time()
    report = vault.import_history(source)
    spent = time.process_time() - started
    vault.close()
    assert report.imported == report.conversations
    return spent


@pytest.mark.slow
def test_four_times_the_conversations_on_one_day_cost_about_four_times(tmp_path: Path) -> None:
    """Side by side, CPU seconds (the fsyncs of each append are wall time, and linear): a
    flush that parsed the day's whole log for each conversation made 4x cost 11x."""
    small = export(tmp_path / "small.json", 100, seed=1, shared=False)
    large = export(tmp_path / "large.json", 400, seed=1, shared=False)
    times: dict[str, list[float]] = {"small": [], "large": []}
    for run in range(2):
        times["small"].append(cpu_seconds(tmp_path / f"s{run}", small))
        times["large"].append(cpu_seconds(tmp_path / f"l{run}", large))
    ratio = min(times["large"]) / min(times["small"])
    assert ratio <= 6.0, times
