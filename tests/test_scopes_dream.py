"""Scopes and the writers that run on their own: a scope's dream touches only its MEMORY.md and
dreams/, a scheduled dream dreams every scope with new logs (one diary each, schedules of a
scope's own honoured), the watcher answers scoped searches over its socket, and the CLI's
`--scope` and `vault scopes`."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from apscheduler.triggers.cron import CronTrigger

from vault_memory import Vault
from vault_memory.live.watch import Watcher

from . import scoped
from .scoped import ALPHA, ALPHA_DIR, BETA_DIR, HIDDEN, TODAY

SCOPE = "org/acme/agent-alpha"


@pytest.fixture
def vault_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VAULT_NOW", scoped.NOW)
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")  # keyword search, word-overlap dreams
    return scoped.build(tmp_path / "vault")


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".vault" not in p.relative_to(root).parts
    }


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def test_a_scopes_dream_touches_only_its_memory_and_diary(
    vault_root: Path, run_cli: Callable[..., Any]
) -> None:
    before = files(vault_root)
    result = run_cli("--vault", str(vault_root), "dream", "--scope", SCOPE, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "dreamed"
    assert [i["path"] for i in report["inputs"]] == [
        f"{ALPHA_DIR}/MEMORY.md",
        f"{ALPHA_DIR}/memory/{TODAY - dt.timedelta(days=1)}.md",
        f"{ALPHA_DIR}/memory/{TODAY}.md",
    ]
    after = files(vault_root)
    touched = changed(before, after)
    assert f"{ALPHA_DIR}/MEMORY.md" in touched
    assert {p for p in touched if not p.startswith(f"{ALPHA_DIR}/dreams/")} == {
        f"{ALPHA_DIR}/MEMORY.md"
    }
    assert f"{ALPHA_DIR}/dreams/{TODAY}.md" in touched  # the diary
    assert any(p.startswith(f"{ALPHA_DIR}/dreams/.backup/MEMORY.") for p in touched)
    memory = (vault_root / ALPHA_DIR / "MEMORY.md").read_text()
    assert f"<!-- src: {ALPHA_DIR}/memory/" in memory and "Alphalogcanary" in memory
    assert not [word for word in HIDDEN + ["Rootcanary", "Acmecanary"] if word in memory]
    diary = (vault_root / ALPHA_DIR / "dreams" / f"{TODAY}.md").read_text()
    assert f"--- a/{ALPHA_DIR}/MEMORY.md" in diary and BETA_DIR not in diary
    # a second dream finds nothing new; the undo restores its MEMORY.md byte for byte
    again = run_cli("--vault", str(vault_root), "dream", "--scope", SCOPE, "--json")
    assert json.loads(again.stdout)["status"] == "nothing-new"
    undo = run_cli("--vault", str(vault_root), "dream", "--undo", "--scope", SCOPE)
    assert undo.exit_code == 0, undo.stderr
    assert (vault_root / ALPHA_DIR / "MEMORY.md").read_bytes() == before[f"{ALPHA_DIR}/MEMORY.md"]
    assert {
        p for p in changed(before, files(vault_root)) if not p.startswith(f"{ALPHA_DIR}/dreams/")
    } == set()


def test_every_scope_with_new_logs_dreams_with_a_diary_of_its_own(vault_root: Path) -> None:
    with Vault(vault_root) as vault:
        done = vault.dream_scopes()
        statuses = {name: getattr(r, "status", r) for name, r in done.items()}
        assert statuses == {
            "": "no-change",
            "org": "nothing-new",
            "org/acme": "no-change",
            "org/acme/agent-alpha": "dreamed",
            "org/acme/agent-alpha/sub": "nothing-new",
            "org/acme/agent-beta": "dreamed",
            "other": "nothing-new",
        }
        again = {name: getattr(r, "status", r) for name, r in vault.dream_scopes().items()}
    assert set(again.values()) == {"nothing-new"}
    diaries = sorted(
        p.relative_to(vault_root).as_posix() for p in vault_root.rglob(f"dreams/{TODAY}.md")
    )
    assert diaries == [
        f"dreams/{TODAY}.md",
        f"{ALPHA_DIR}/dreams/{TODAY}.md",
        f"{BETA_DIR}/dreams/{TODAY}.md",
        f"scopes/org/acme/dreams/{TODAY}.md",
    ]
    beta = (vault_root / BETA_DIR / "MEMORY.md").read_text()
    assert "Betalogcanary" in beta and "Alphalogcanary" not in beta
    assert "Betalogcanary" not in (vault_root / ALPHA_DIR / "MEMORY.md").read_text()


def test_a_disabled_scope_does_not_dream(vault_root: Path) -> None:
    (vault_root / BETA_DIR / "vault.toml").write_text("[dream]\nenabled = false\n")
    with Vault(vault_root) as vault:
        groups = vault.dream_schedules()
        assert [("org", "acme", "agent-beta") in members for members in groups.values()] == [False]
        assert "org/acme/agent-beta" not in vault.dream_scopes()
        with pytest.raises(Exception, match="dreaming is disabled"):
            vault.scope("org", "acme", "agent-beta").dream()
    assert not (vault_root / BETA_DIR / "dreams" / f"{TODAY}.md").exists()


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_the_watcher_dreams_each_schedule_of_the_scopes(vault_root: Path) -> None:
    (vault_root / BETA_DIR / "vault.toml").write_text('[dream]\nschedule = "15 4 * * *"\n')
    watcher = Watcher(
        Vault(vault_root), quiet_ms=50, dream_trigger=CronTrigger(second="*", timezone=dt.UTC)
    )
    with watcher:
        assert watcher.ready.wait(60)
        assert sorted(watcher.schedulers) == [("15 4 * * *", ""), ("30 3 * * *", "")]
        assert watcher.scheduler is watcher.schedulers[("30 3 * * *", "")]
        wait_until(
            lambda: (
                (vault_root / BETA_DIR / "dreams" / f"{TODAY}.md").exists()
                and (vault_root / ALPHA_DIR / "dreams" / f"{TODAY}.md").exists()
            ),
            60,
            "both schedules to dream",
        )
        wait_until(
            lambda: all(s.state().get("last_dream_at") for s in watcher.schedulers.values()),
            30,
            "their state",
        )
        assert Vault(vault_root).status()["watcher"]["next_dream_at"]
    states = sorted(p.name for p in (vault_root / ".vault").glob("scheduler*.json"))
    assert states[0] == "scheduler-" + states[0][10:] and states[1] == "scheduler.json"
    beta_diary = (vault_root / BETA_DIR / "dreams" / f"{TODAY}.md").read_text()
    assert beta_diary.count("· dream ·") >= 1 and "Alphalogcanary" not in beta_diary


def test_the_watcher_answers_a_scoped_search(vault_root: Path) -> None:
    (vault_root / ALPHA_DIR / "vault.toml").write_text("[search]\nlimit = 3\n")
    watcher = Watcher(Vault(vault_root), dream=False, quiet_ms=50)
    with watcher:
        assert watcher.ready.wait(60) and watcher.warm.wait(60)
        with Vault(vault_root) as here:
            alpha = here.scope(*ALPHA)
            through = alpha.search("billing Betacanary invoices", via_watcher=True)
            assert watcher.report.searches == 1
            assert through == alpha.search("billing Betacanary invoices")
            assert through and len(through) <= 3
            assert not [h for h in through if h.path.startswith(BETA_DIR)]
            beta = here.search("Betacanary", via_watcher=True)
            assert beta[0].path == f"{BETA_DIR}/MEMORY.md" and watcher.report.searches == 2
        bad = watcher.answer({"op": "search", "protocol": 2, "query": "x", "scope": ["..", "x"]})
        assert not bad["ok"] and "is not a scope name" in bad["error"]
        old = watcher.answer({"op": "search", "protocol": 1, "query": "Betacanary"})
        assert not old["ok"]  # a client of before scopes is told to search in-process


def test_the_cli_with_scopes(
    vault_root: Path, run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def vault(*args: str, **kwargs: Any) -> Any:
        result = run_cli("--vault", str(vault_root), *args, **kwargs)
        assert result.exit_code == 0, result.stderr
        return result

    listed = vault("scopes").stdout.splitlines()
    assert [line.split()[0] for line in listed] == [
        "/",
        "org",
        "org/acme",
        "org/acme/agent-alpha",
        "org/acme/agent-alpha/sub",
        "org/acme/agent-beta",
        "other",
    ]
    assert "5 files" in listed[3] and "2 daily logs" in listed[3] and "(MEMORY.md)" in listed[3]
    data = json.loads(vault("scopes", "--json").stdout)
    assert data[3] == {
        "scope": "org/acme/agent-alpha",
        "files": 5,
        "units": data[3]["units"],
        "memory": True,
        "daily_logs": 2,
        "settings": False,
        "bindable": True,
    }
    added = vault("add", "Alpha note from the CLI", "--scope", SCOPE)
    assert added.stdout.startswith(f"{ALPHA_DIR}/memory/{TODAY}.md:")
    hits = json.loads(vault("search", "billing", "--json", "--scope", SCOPE).stdout)["results"]
    assert hits and not [h for h in hits if h["path"].startswith(BETA_DIR)]
    status = vault("status", "--scope", SCOPE).stdout
    assert "scope         org/acme/agent-alpha (5 files" in status and "sees /, org, org/acme" in (
        status
    )
    context = vault("context", "--scope", SCOPE, "--budget", "800").stdout
    assert context.index("Alphacanary") < context.index("Acmecanary") < context.index("Rootcanary")
    sessions = vault("sessions", "--scope", SCOPE).stdout
    assert sessions.startswith("alpha-1  ") and "beta-7" not in sessions
    assert "beta-7" in vault("sessions").stdout  # unbound: every scope's
    shown = vault("sessions", "show", "alpha-1", "--scope", SCOPE).stdout
    assert "Alphalogcanary" in shown
    chat = json.dumps([{"role": "user", "content": "I prefer dark mode in every tool."}])
    flushed = vault("flush", "-", "--session", "alpha-9", "--scope", SCOPE, input=chat).stdout
    assert flushed.startswith(f"{ALPHA_DIR}/memory/{TODAY}.md:")
    assert vault("get", "scopes/org/MEMORY.md", "--scope", SCOPE).stdout.startswith("# MEMORY")
    monkeypatch.setenv("VAULT_SCOPE", SCOPE)  # the environment binds too
    refused = run_cli("--vault", str(vault_root), "get", f"{BETA_DIR}/MEMORY.md")
    assert refused.exit_code == 1 and "may not see" in refused.stderr
    monkeypatch.delenv("VAULT_SCOPE")
    for bad, why in (
        ("org/../x", "is not a folder of its own"),
        ("", "the scope is empty"),
        ("a b", "no spaces"),
    ):
        result = run_cli("--vault", str(vault_root), "search", "x", "--scope", bad)
        assert result.exit_code == 1 and why in result.stderr, result.stderr
        assert result.stderr.startswith("Error: ")


def test_a_scopes_diary_is_searched_only_when_asked_for(vault_root: Path) -> None:
    with Vault(vault_root) as vault:
        vault.dream_scopes()
        alpha = vault.scope(*ALPHA)
        assert not [
            h for h in alpha.search("dream diary Alphalogcanary", limit=50) if h.kind == "diary"
        ]
        diary = alpha.search("Alphalogcanary", within=f"{ALPHA_DIR}/dreams", limit=50)
        assert diary and {h.path for h in diary} == {f"{ALPHA_DIR}/dreams/{TODAY}.md"}
        asked = alpha.search("Betalogcanary dream", kinds=("diary",), limit=50)
        assert not [h for h in asked if h.path.startswith(BETA_DIR)]


def test_the_readme_example_of_two_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The python block of the docs' "Many agents and users" guide runs, and prints what it
    says."""
    import re

    from .test_readme import DOCS

    monkeypatch.setenv("VAULT_NOW", scoped.NOW)
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")
    root = Vault.init(tmp_path / "team").root
    guide = (DOCS / "guides" / "many-agents.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", guide, re.S)[1]
    exec(compile(code.replace("~/team-memory", str(root)), "many-agents.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    found, refused, not_written = (json.loads(line) for line in printed)
    paths = [r["path"] for r in found["results"]]
    assert paths[0] == "scopes/acme/support-bot/MEMORY.md"
    assert f"scopes/acme/memory/{TODAY}.md" in paths
    assert not [p for p in paths if "billing-bot" in p]
    assert refused["error"].startswith(
        "refusing 'scopes/acme/billing-bot/MEMORY.md': it belongs "
        "to scope acme/billing-bot, which scope acme/support-bot "
        "may not see"
    )
    assert not_written["error"].startswith(
        "refusing 'scopes/acme/MEMORY.md': it belongs to scope acme, and scope acme/billing-bot "
        "writes only its own files (in scopes/acme/billing-bot/)"
    )
    assert (root / "scopes/acme/billing-bot/memory" / f"{TODAY}.md").is_file()


def test_scopes_dream_side_by_side(vault_root: Path) -> None:
    """Each scope's dream takes a lock of its own: one running does not refuse another's."""
    from vault_memory.dream import Dreamer
    from vault_memory.errors import LockTimeoutError
    from vault_memory.files import fsutil

    with Vault(vault_root) as vault:
        alpha, beta = vault.scope(*ALPHA), vault.scope("org", "acme", "agent-beta")
        held = Dreamer(alpha.config, lambda: alpha._index.writer_lock()).lock_path
        assert (
            held.name.startswith("dream-")
            and held != Dreamer(beta.config, lambda: beta._index.writer_lock()).lock_path
        )
        with fsutil.lock_file(held, "dream"):
            assert beta.dream().status == "dreamed"
            with pytest.raises(LockTimeoutError, match="could not take the dream lock"):
                alpha.dream()
        assert alpha.dream().status == "dreamed"
