"""Crash consistency by construction. What must happen together is recorded first
(an append's journal beside the file, a dream's journal in dreams/.backup/, the index's
"embeddings incomplete" flag committed with the units), so any kill point leaves a state the
next run (or `vault doctor`) completes or rolls back.

Kill points are injected at every write step (`VAULT_TEST_KILL_AT=STEP[#N]` makes the process
end with os._exit(137) at the N-th passage of STEP, as kill -9 would); the slow suite adds
random kill -9 trials of incremental `vault index`, four concurrent `vault flush` processes
and `vault dream`: 30 kills each (`RANDOM_KILLS`). The kill points above already cover every
write step in every test run; the random trials look for what a list of steps misses (a kill
between two steps, inside a library's write), and 30 kills at random points of each command
keep the slow suite's time for the rest of it.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.dream.diary import parse_records
from vault_memory.files import fsutil

from ..support.vaults import SAMPLE_VAULT, copy_vault

RANDOM_KILLS = 30

NOW = "2026-11-22T09:30"
KILLED = 137


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    env.update({"VAULT_MODEL_DISABLED": "1", "VAULT_NOW": NOW}, **extra)
    return env


def _vault(
    root: Path, *args: str, kill: str | None = None, model: bool = False, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = _env(**({fsutil.KILL_ENV: kill} if kill else {}))
    if model:
        env.pop("VAULT_MODEL_DISABLED")
    return subprocess.run(
        [sys.executable, "-m", "vault_memory", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        input=stdin,
    )


def _timed(args: list[str], root: Path, env: dict[str, str], stdin: str | None = None) -> float:
    """How long one uninterrupted run takes here and now: the random kill points are drawn
    within it (the machine's load changes it several-fold)."""
    started = time.monotonic()
    subprocess.run(
        args,
        cwd=root,
        env=env,
        input=stdin,
        text=True,
        capture_output=True,
        check=True,
        timeout=300,
    )
    return time.monotonic() - started


def _leftovers(root: Path) -> list[str]:
    """Temp files and journals a writer leaves only while it runs."""
    found = []
    for path in root.rglob("*"):
        name = path.name
        if (
            name.endswith(".tmp")
            or (name.startswith(".") and name.endswith(".append"))
            or name == "pending.json"
        ):
            found.append(path.relative_to(root).as_posix())
    return found


# -- appends ----------------------------------------------------------------------------------

APPEND = textwrap.dedent("""
    import sys
    from pathlib import Path
    from vault_memory.files import fsutil
    fsutil.append_entry(Path(sys.argv[1]), sys.argv[2])
""")
ORIGINAL = "# 2026-11-22\n\n## 09:00 · note\n- first entry\n"
ENTRY = "## 09:30 · note\n- " + "a long entry that a kill may cut in two " * 20 + "\n"


@pytest.mark.parametrize(
    "step",
    ["append.after-journal", "append.mid-write", "append.after-write", "append.after-commit"],
)
def test_an_append_killed_at_any_step_is_completed_once(tmp_path: Path, step: str) -> None:
    log = tmp_path / "memory.md"
    log.write_text(ORIGINAL)
    done = subprocess.run(
        [sys.executable, "-c", APPEND, str(log), ENTRY],
        env=_env(**{fsutil.KILL_ENV: step}),
        timeout=60,
    )
    assert done.returncode == KILLED
    if step == "append.mid-write":
        assert log.read_text() != ORIGINAL + ENTRY  # really cut in two
    actions = fsutil.recover_tree(tmp_path)  # what the next writer or `vault doctor` does
    assert log.read_text() == ORIGINAL + ENTRY
    assert _leftovers(tmp_path) == []
    if step != "append.after-commit":
        assert actions
    fsutil.append_entry(log, "- next\n")  # and the next append lands after it, once
    assert log.read_text() == ORIGINAL + ENTRY + "- next\n"


@pytest.mark.parametrize("step", ["append.after-journal", "append.mid-write"])
def test_a_flush_killed_mid_append_then_run_again_writes_each_entry_once(
    tmp_path: Path, step: str
) -> None:
    """The killed flush journaled its block; the flush run again must see it completed before
    it decides what is new (found by the random kills of four concurrent flushes)."""
    root = Vault.init(tmp_path / "vault").root
    first = _vault(
        root,
        "flush",
        "--session",
        "s6",
        "--date",
        "2026-11-22",
        "-",
        stdin=FLUSH_CHAT.format(n=6, k=0),
    )  # the day's log exists: an append
    assert first.returncode == 0, first.stderr
    chat = FLUSH_CHAT.format(n=7, k=1)
    killed = _vault(
        root, "flush", "--session", "s7", "--date", "2026-11-22", "-", kill=step, stdin=chat
    )
    assert killed.returncode == KILLED
    again = _vault(root, "flush", "--session", "s7", "--date", "2026-11-22", "-", stdin=chat)
    assert again.returncode == 0, again.stderr
    log = (root / "memory/2026-11-22.md").read_text()
    assert log.count("Decision 7: billing batch 7 ") == 1, log
    assert log.count("batch 7 runs at 01:00") == 1, log
    assert _leftovers(root) == []


def test_a_cut_append_is_completed_by_the_next_append(tmp_path: Path) -> None:
    log = tmp_path / "memory.md"
    log.write_text(ORIGINAL)
    subprocess.run(
        [sys.executable, "-c", APPEND, str(log), ENTRY],
        env=_env(**{fsutil.KILL_ENV: "append.mid-write"}),
        timeout=60,
    )
    fsutil.append_entry(log, "- next\n")
    assert log.read_text() == ORIGINAL + ENTRY + "- next\n"
    assert _leftovers(tmp_path) == []


def test_a_cut_append_of_a_file_edited_since_is_left_to_the_person(tmp_path: Path) -> None:
    log = tmp_path / "memory.md"
    log.write_text(ORIGINAL)
    subprocess.run(
        [sys.executable, "-c", APPEND, str(log), ENTRY],
        env=_env(**{fsutil.KILL_ENV: "append.mid-write"}),
        timeout=60,
    )
    edited = "# 2026-11-22\n\nrewritten by hand\n"
    log.write_text(edited)
    actions = fsutil.recover_tree(tmp_path)
    assert log.read_text() == edited
    assert any("changed since" in a for _, a in actions)
    assert _leftovers(tmp_path) == []


def test_a_journal_killed_before_its_rename_leaves_no_temp(tmp_path: Path) -> None:
    log = tmp_path / "memory.md"
    log.write_text(ORIGINAL)
    done = subprocess.run(
        [sys.executable, "-c", APPEND, str(log), ENTRY],
        env=_env(**{fsutil.KILL_ENV: "atomic.before-replace"}),
        timeout=60,
    )
    assert done.returncode == KILLED
    assert _leftovers(tmp_path)  # the journal's temp file
    fsutil.append_entry(log, "- next\n")  # the next append of the file removes it
    assert log.read_text() == ORIGINAL + "- next\n"
    assert _leftovers(tmp_path) == []


def test_a_rewrite_killed_before_its_rename_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("old\n")
    script = (
        "import sys; from pathlib import Path; from vault_memory.files import fsutil; "
        "p = Path(sys.argv[1]); fsutil.write_atomic(p, 'new\\n', "
        "fsutil.sha256_bytes(p.read_bytes()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(note)],
        env=_env(**{fsutil.KILL_ENV: "atomic.before-replace"}),
        timeout=60,
    )
    assert done.returncode == KILLED
    assert note.read_text() == "old\n" and _leftovers(tmp_path)  # the temp file is there
    fsutil.recover_tree(tmp_path)
    assert note.read_text() == "old\n" and _leftovers(tmp_path) == []


# -- dreams -----------------------------------------------------------------------------------


def _dream_vault(root: Path) -> Path:
    copy_vault(SAMPLE_VAULT, root)
    config = root / "vault.toml"
    text = config.read_text()
    assert "max_memory_chars = 12000" in text
    config.write_text(text.replace("max_memory_chars = 12000", "max_memory_chars = 3000"))
    return root


@pytest.fixture(scope="module")
def dreamed(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """MEMORY.md before and after an uninterrupted dream of the sample vault (it archives:
    the budget is small), to compare killed dreams with."""
    root = _dream_vault(tmp_path_factory.mktemp("dream") / "reference")
    before = (root / "MEMORY.md").read_bytes()
    result = _vault(root, "dream", "--force")
    assert result.returncode == 0, result.stderr
    after = (root / "MEMORY.md").read_bytes()
    assert after != before and (root / "dreams/archive.md").exists()
    return before, after


def _check_dream(root: Path, before: bytes, after: bytes, existing: bool = False) -> str:
    """After recovery: MEMORY.md old or new byte for byte, a diary that agrees, an undo that
    works, nothing left behind. Returns which ("old" or "new")."""
    memory = (root / "MEMORY.md").read_bytes()
    assert memory in (before, after), "MEMORY.md is neither the old nor the new one"
    diaries = sorted((root / "dreams").glob("20*.md"))
    records = [
        r for d in diaries for r in parse_records(d.name, d.read_text()) if r.action == "dream"
    ]
    assert _leftovers(root) == [], _leftovers(root)
    if memory == before:
        assert records == []
        archive = root / "dreams/archive.md"
        assert not archive.exists() or "Archived by the dream" not in archive.read_text()
        assert (
            existing
            or not (root / "dreams/2026-11-22.md").exists()
            or "dream ·" not in (root / "dreams/2026-11-22.md").read_text()
        )
        assert (
            list((root / "dreams/.backup").glob("MEMORY.*.md")) == []
            if (root / "dreams/.backup").exists()
            else True
        )
        return "old"
    assert len(records) == 1 and records[0].memory_after == fsutil.sha256_bytes(after)
    result = _vault(root, "dream", "--undo")
    assert result.returncode == 0, result.stderr
    assert (root / "MEMORY.md").read_bytes() == before
    return "new"


# (step, whether the diary and the archive exist before: new files are written whole by a
# rename, existing ones get an append; the N of STEP#N counts that kind of write)
DREAM_STEPS = [
    ("atomic.before-replace#1", False),  # the journal
    ("dream.after-journal", False),
    ("atomic.before-replace#2", False),  # the backup
    ("dream.after-backup", False),
    ("atomic.before-replace#3", False),  # the archive, a new file
    ("dream.after-archive", False),
    ("atomic.before-replace#4", False),  # MEMORY.md
    ("atomic.after-replace#4", False),
    ("dream.after-memory", False),
    ("atomic.before-replace#5", False),  # the diary, a new file
    ("dream.after-diary", False),
    ("append.after-journal#1", True),  # the archive, appended to
    ("append.mid-write#1", True),
    ("append.after-write#1", True),
    ("atomic.before-replace#3", True),  # MEMORY.md
    ("append.after-journal#2", True),  # the diary, appended to
    ("append.mid-write#2", True),
    ("append.after-commit#2", True),
]
MEMORY_REPLACED = {
    ("atomic.after-replace#4", False),
    ("dream.after-memory", False),
    ("atomic.before-replace#5", False),
    ("dream.after-diary", False),
    ("append.after-journal#2", True),
    ("append.mid-write#2", True),
    ("append.after-commit#2", True),
}
DIARY_START = "# Dream diary 2026-11-22\n\nwritten by hand before the dream\n"
ARCHIVE_START = "# Archive\n\nolder archived entries\n"


# The default suite kills a dream at two steps (MEMORY.md written, the rest not; an append cut
# midway); every other step is fault injection for the slow suite.
QUICK_STEPS = {
    ("dream.after-memory", False),
    ("append.mid-write#1", True),
}


@pytest.mark.parametrize(
    ("step", "existing"),
    [
        pytest.param(s, e, marks=() if (s, e) in QUICK_STEPS else pytest.mark.slow)
        for s, e in DREAM_STEPS
    ],
    ids=[f"{s}{'-existing' if e else ''}" for s, e in DREAM_STEPS],
)
def test_a_dream_killed_at_any_write_step_is_completed_or_rolled_back(
    tmp_path: Path, dreamed: tuple[bytes, bytes], step: str, existing: bool
) -> None:
    root = _dream_vault(tmp_path / "vault")
    if existing:
        (root / "dreams").mkdir(exist_ok=True)
        (root / "dreams/2026-11-22.md").write_text(DIARY_START)
        (root / "dreams/archive.md").write_text(ARCHIVE_START)
    killed = _vault(root, "dream", "--force", kill=step)
    assert killed.returncode == KILLED, (step, killed.stderr)
    result = _vault(root, "doctor")
    assert result.returncode == 0, result.stderr
    if existing:
        assert (root / "dreams/2026-11-22.md").read_text().startswith(DIARY_START)
        archive = (root / "dreams/archive.md").read_text()
        assert archive.startswith(ARCHIVE_START)
        if (step, existing) not in MEMORY_REPLACED:
            assert archive == ARCHIVE_START  # the archive's append taken back
    state = _check_dream(root, *dreamed, existing=existing)
    assert state == ("new" if (step, existing) in MEMORY_REPLACED else "old"), step


def test_the_next_dream_recovers_first(tmp_path: Path, dreamed: tuple[bytes, bytes]) -> None:
    root = _dream_vault(tmp_path / "vault")
    assert _vault(root, "dream", "--force", kill="dream.after-memory").returncode == KILLED
    result = _vault(root, "dream", "--undo")  # recovery, then the undo of the recovered dream
    assert result.returncode == 0, result.stderr
    assert (root / "MEMORY.md").read_bytes() == dreamed[0]


# -- the index --------------------------------------------------------------------------------


def _edit(root: Path, n: int) -> None:
    for i, path in enumerate(sorted((root / "notes").glob("*.md"))[:3]):
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n- trial {n} line {i}: the ledger keeps attempt {n * 10 + i}.\n")
    (root / f"notes/trial-{n}.md").write_text(f"# Trial {n}\n\nA new note of trial {n}.\n")


def _check_index(root: Path) -> None:
    with Vault(root) as vault:
        vault.index()
        status = vault.status()
        assert status["embedded_units"] == status["units"] > 0, status
        check = vault.cache.verify()
        assert check.equal, check.differences
    assert _leftovers(root / ".vault") == []


@pytest.mark.slow
@pytest.mark.parametrize("step", ["index.after-units", "index.before-embed", "index.mid-embed"])
def test_an_incremental_index_killed_at_any_step_gets_every_vector(
    tmp_path: Path, _sample_template: Path, step: str
) -> None:
    root = copy_vault(_sample_template, tmp_path / "sample")
    _edit(root, 0)
    killed = _vault(root, "index", kill=step, model=True)
    assert killed.returncode == KILLED, (step, killed.stderr[-2000:])
    _check_index(root)


@pytest.mark.slow
@pytest.mark.parametrize(
    "step", ["index.after-units", "index.mid-keyword-segment#3", "index.after-fulltext"]
)
def test_a_keyword_only_full_index_killed_midway_is_completed_by_the_next(
    tmp_path: Path, _sample_template: Path, step: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first full index without a model, killed after SQLite's batch, while the keyword
    index's segment is being written from the postings held in memory, or after its commit:
    the next run leaves the index equal to the files and the keyword search answering."""
    root = copy_vault(_sample_template, tmp_path / "sample")
    shutil.rmtree(root / ".vault", ignore_errors=True)
    command = [sys.executable, "-m", "vault_memory", "index"]
    killed = subprocess.run(
        command,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(VAULT_INDEX_MODEL="none", **{fsutil.KILL_ENV: step}),
    )
    assert killed.returncode == KILLED, (step, killed.stderr[-2000:])
    subprocess.run(
        command,
        cwd=root,
        env=_env(VAULT_INDEX_MODEL="none"),
        check=True,
        capture_output=True,
        timeout=300,
    )
    monkeypatch.setenv("VAULT_INDEX_MODEL", "none")  # as the runs: keyword-only
    with Vault(root) as vault:
        check = vault.cache.verify()
        assert check.equal, check.differences
        assert vault.search("postgres", mode="keyword", limit=3)
        assert vault.status()["units"] > 100
    assert _leftovers(root / ".vault") == []


@pytest.mark.slow
def test_random_kills_of_incremental_index(tmp_path: Path, _sample_template: Path) -> None:
    rng = random.Random(24)
    root = copy_vault(_sample_template, tmp_path / "sample")
    env = _env()
    env.pop("VAULT_MODEL_DISABLED")
    command = [sys.executable, "-m", "vault_memory", "index"]
    _edit(root, 0)
    took = _timed(command, root, env)
    killed = trials = 0
    while killed < RANDOM_KILLS:  # runs killed at random points (model, units, vectors)
        trials += 1
        assert trials <= 4 * RANDOM_KILLS, f"only {killed} of {trials} runs were killed"
        _edit(root, trials)
        proc = subprocess.Popen(
            command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            proc.wait(timeout=rng.uniform(0.2, 1.05) * took)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed += 1
        _check_index(root)  # the next index completes it: every unit has its vector
    print(f"incremental index: {killed} of {trials} runs killed, 0 units without vectors after")


FLUSH_CHAT = """[{{"role": "user", "content": "Decision {n}: billing batch {n} moves to \
PostgreSQL 16 on day {n}. #decision"}}, {{"role": "assistant", "content": "Noted: batch {n} \
moves on day {n}."}}, {{"role": "user", "content": "I prefer that batch {n} runs at 0{k}:00. \
Remember that."}}]"""


@pytest.mark.slow
def test_random_kills_of_four_concurrent_flushes(tmp_path: Path) -> None:
    rng = random.Random(2024)
    root = Vault.init(tmp_path / "vault").root
    env = _env()
    took = _timed(
        [
            sys.executable,
            "-m",
            "vault_memory",
            "flush",
            "--session",
            "warm-up",
            "--date",
            "2026-11-21",
            "-",
        ],
        root,
        env,
        FLUSH_CHAT.format(n=-1, k=0),
    )
    killed = trials = hit = 0
    while hit < RANDOM_KILLS:  # trials in which at least one of the four flushes is killed
        trial, trials = trials, trials + 1
        assert trials <= 3 * RANDOM_KILLS, f"only {hit} of {trials} trials killed a flush"
        procs = []
        for k in range(4):
            n = trial * 4 + k
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "vault_memory",
                    "flush",
                    "--session",
                    f"s{n}",
                    "--date",
                    "2026-11-22",
                    "-",
                ],
                cwd=root,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            assert proc.stdin is not None
            proc.stdin.write(FLUSH_CHAT.format(n=n, k=k))
            proc.stdin.close()
            procs.append((n, k, proc))
        deadline = time.monotonic() + rng.uniform(0.5, 3.0) * took  # four at once: slower
        before = killed
        for _, _, proc in procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                killed += 1
        hit += killed > before
        for n, k, proc in procs:  # what was killed runs again (a flush is idempotent)
            if proc.returncode != 0:
                again = _vault(
                    root,
                    "flush",
                    "--session",
                    f"s{n}",
                    "--date",
                    "2026-11-22",
                    "-",
                    stdin=FLUSH_CHAT.format(n=n, k=k),
                )
                assert again.returncode == 0, again.stderr
    log = (root / "memory/2026-11-22.md").read_text()
    for n in range(trials * 4):
        assert log.count(f"Decision {n}: billing batch {n} ") == 1, n
        assert log.count(f"session s{n}\n") >= 1, n
    assert _leftovers(root) == []
    print(
        f"flush: {killed} of {trials * 4} processes killed in {hit} of {trials} trials of 4 "
        "concurrent flushes; every entry once"
    )


@pytest.mark.slow
def test_random_kills_of_dreams(tmp_path: Path, dreamed: tuple[bytes, bytes]) -> None:
    rng = random.Random(7)
    command = [sys.executable, "-m", "vault_memory", "dream", "--force"]
    took = _timed(command, _dream_vault(tmp_path / "calibration"), _env())
    outcomes = {"old": 0, "new": 0}
    trials = 0
    while sum(outcomes.values()) < RANDOM_KILLS:  # dreams killed at a random point
        trials += 1
        killed_so_far = sum(outcomes.values())
        assert trials <= 5 * RANDOM_KILLS, f"only {killed_so_far} of {trials} dreams were killed"
        root = _dream_vault(tmp_path / f"v{trials}")
        proc = subprocess.Popen(
            command, cwd=root, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            proc.wait(timeout=rng.uniform(0.5, 1.1) * took)  # past the imports, mostly
            killed = False
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed = True
        result = _vault(root, "doctor")
        assert result.returncode == 0, result.stderr
        state = _check_dream(root, *dreamed)
        if killed:
            outcomes[state] += 1
        shutil.rmtree(root)
    print(
        f"dream: {trials} runs, {RANDOM_KILLS} killed: MEMORY.md old (rolled back) in "
        f"{outcomes['old']}, new (completed) in {outcomes['new']}; the diary agrees in every one"
    )
