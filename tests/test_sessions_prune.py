"""`vault sessions prune`: old transcripts go, nothing else ever does; in git, undoably."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.errors import VaultError
from vault_memory.sessions import parse_age

CHAT = [
    {"role": "user", "content": "Which port does the zephyr gateway use?"},
    {"role": "assistant", "content": "Port 7443, as decided in October."},
]


def chat_of(session: str) -> list[dict]:
    """A conversation of its own for each session (one conversation keeps one transcript)."""
    return [{**CHAT[0], "content": f"{CHAT[0]['content']} (asked in {session})"}, CHAT[1]]


def flush_at(
    vault: Vault,
    monkeypatch: pytest.MonkeyPatch,
    when: str,
    session: str,
    chat: list[dict] | None = None,
) -> None:
    monkeypatch.setenv("VAULT_NOW", when)
    vault.flush(chat or chat_of(session), session=session)


@pytest.fixture
def aged(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Vault:
    """Transcripts last updated 60, 40 (started 70) and 5 days before 2026-11-22, old daily
    logs, and files that only look like transcripts."""
    vault = Vault(vault_dir)
    flush_at(vault, monkeypatch, "2026-09-23T10:00", "old")
    flush_at(vault, monkeypatch, "2026-09-13T10:00", "revived")
    flush_at(
        vault,
        monkeypatch,
        "2026-10-13T10:00",
        "revived",
        [*chat_of("revived"), {"role": "user", "content": "And the staging one?"}],
    )
    flush_at(vault, monkeypatch, "2026-11-17T10:00", "recent")
    vault.scope("team").flush(chat_of("team-old"), session="team-old")  # 2026-11-17 too
    flush_at(vault.scope("team"), monkeypatch, "2026-08-01T10:00", "team-older")
    (vault_dir / "notes").mkdir()
    (vault_dir / "notes" / "2020-01-01-old.md").write_text("# a note named like a transcript\n")
    (vault_dir / "sessions" / "README.md").write_text("# not a transcript\n")
    (vault_dir / "memory" / "2019-01-01.md").write_text("# 2019-01-01\n\n- very old\n")
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T12:00")
    return vault


def names(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if ".vault" not in p.parts and ".git" not in p.parts
    }


def test_prune_deletes_old_transcripts_only(aged: Vault) -> None:
    root = aged.root
    before = names(root)
    dry = aged.prune_sessions("30d", dry_run=True)
    assert sorted(dry.deleted) == [
        "scopes/team/sessions/2026-08-01-team-older.md",
        "sessions/2026-09-13-revived.md",
        "sessions/2026-09-23-old.md",
    ]
    assert names(root) == before  # a dry run deletes nothing
    report = aged.prune_sessions("30d")
    assert sorted(report.deleted) == sorted(dry.deleted) and report.kept == 2
    assert names(root) == before - set(report.deleted)
    for kept in (
        "MEMORY.md",
        "memory/2019-01-01.md",
        "notes/2020-01-01-old.md",
        "sessions/README.md",
        "sessions/2026-11-17-recent.md",
    ):
        assert kept in names(root)
    # a bound scope prunes its own transcripts only
    assert aged.scope("team").prune_sessions(0, dry_run=True).deleted == [
        "scopes/team/sessions/2026-11-17-team-old.md"
    ]


def test_revived_transcripts_age_from_their_last_message(aged: Vault) -> None:
    assert "sessions/2026-09-13-revived.md" not in aged.prune_sessions("45d").deleted


def test_prune_in_git_is_one_commit_that_revert_undoes(aged: Vault) -> None:
    root = aged.root
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "sessions/2026-09-23-old.md", "MEMORY.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    report = aged.prune_sessions("30d")
    assert report.commit
    shown = subprocess.run(
        [*git, "show", "--stat", "--format=%s", "HEAD"], check=True, capture_output=True, text=True
    ).stdout
    assert shown.startswith("vault sessions prune: 3 transcripts older than 30 days")
    assert "sessions/2026-09-13-revived.md" in shown  # untracked before: committed first
    assert "MEMORY.md" not in shown
    status = subprocess.run(
        [*git, "status", "--porcelain"], check=True, capture_output=True, text=True
    ).stdout
    assert "sessions/2026-09" not in status  # nothing left staged or deleted-but-uncommitted
    subprocess.run([*git, "revert", "--no-edit", "HEAD"], check=True, capture_output=True)
    assert {"sessions/2026-09-13-revived.md", "sessions/2026-09-23-old.md"} <= names(root)


def test_the_cli_prunes_and_says_what(aged: Vault, run_cli) -> None:
    dry = run_cli(
        "--vault", str(aged.root), "sessions", "prune", "--older-than", "30d", "--dry-run"
    )
    assert dry.exit_code == 0
    assert "sessions/2026-09-23-old.md" in dry.stdout
    assert "would delete 3 transcripts" in dry.stderr
    done = run_cli("--vault", str(aged.root), "sessions", "prune", "--older-than", "4w", "--json")
    assert len(json.loads(done.stdout)["deleted"]) == 3
    bad = run_cli("--vault", str(aged.root), "sessions", "prune", "--older-than", "soon")
    assert bad.exit_code == 1 and "is not an age" in bad.stderr


@pytest.mark.parametrize(("text", "days"), [("30d", 30), ("30", 30), ("2w", 14), (" 0d ", 0)])
def test_ages(text: str, days: int) -> None:
    assert parse_age(text) == days


def test_a_bad_age_is_refused() -> None:
    with pytest.raises(VaultError, match="not an age"):
        parse_age("-3d")


def test_keep_days_prunes_once_a_day(aged: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    assert aged.prune_sessions_if_due() is None  # keep_days = 0: never
    vault = Vault(aged.root, {"sessions.keep_days": 30})
    report = vault.prune_sessions_if_due()
    assert report is not None and len(report.deleted) == 3
    flush_at(vault, monkeypatch, "2026-10-01T10:00", "later-old")
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T18:00")
    assert vault.prune_sessions_if_due() is None  # once a day
    assert (aged.root / "sessions/2026-10-01-later-old.md").exists()
    monkeypatch.setenv("VAULT_NOW", "2026-11-23T08:00")
    report = vault.prune_sessions_if_due()
    assert report is not None and report.deleted == ["sessions/2026-10-01-later-old.md"]


def test_the_watcher_prunes_with_keep_days(aged: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_memory.live import Watcher

    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")  # about files, not vectors
    (aged.root / "vault.toml").write_text("[sessions]\nkeep_days = 30\n", encoding="utf-8")
    watcher = Watcher(Vault(aged.root), dream=False, quiet_ms=100)
    watcher.start()
    try:
        assert watcher.ready.wait(60), "the first reconcile did not finish"
        assert not (aged.root / "sessions/2026-09-23-old.md").exists()
        assert (aged.root / "sessions/2026-11-17-recent.md").exists()
        state = json.loads((aged.root / ".vault" / "sessions-prune.json").read_text())
        assert state == {"day": "2026-11-22", "deleted": 3}
    finally:
        watcher.stop()
        watcher.vault.close()
