"""Deep Dream: the pure decisions on plain data, then real dreams on real vault folders
(sample_vault/ with the bundled model, small vaults with token overlap), the guardrails, the
diary, undo and git."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import threading
from pathlib import Path

import pytest

from vault_memory import Vault, clock
from vault_memory.dream.apply import DreamDisabledError, DreamRefusedError, UndoError
from vault_memory.dream.checks import enforce
from vault_memory.dream.decide import (
    Added,
    Archived,
    DreamPlan,
    Edited,
    Item,
    Policy,
    consolidate,
    extract_items,
    render,
    validate,
)
from vault_memory.dream.similarity import TokenSimilarity
from vault_memory.errors import NoteChangedError
from vault_memory.files.memoryfile import parse_memory
from vault_memory.files.notes import parse_note
from vault_memory.search.hitlog import counts, line_hash

NOW = dt.datetime(2026, 11, 22, 3, 30, tzinfo=dt.UTC)
TOKENS = TokenSimilarity()

MEMORY = """\
# MEMORY

## About Maya #pin
- Senior backend engineer at Ledgerly, works on billing-core.

## People
- Jonas Berg: Head of Engineering, Maya's manager.
- Tomás Ruiz: customer success lead. <!-- src: memory/2026-10-20.md#L4 -->

## Preferences
- Maya prefers short answers, code first. <!-- src: memory/2026-10-21.md#L5 -->
- Never run destructive commands against production without asking. #pin

## Decisions
- Invoice numbers are gapless per tenant. <!-- src: memory/2026-10-22.md#L4 -->
"""


def daily(day: str, body: str) -> list[Item]:
    return extract_items(parse_note(f"memory/{day}.md", f"# {day}\n\n{body}"))


def write(root: Path, relpath: str, text: str) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- candidates ---------------------------------------------------------------------------------


def test_extract_items_lines_continuations_and_code() -> None:
    items = daily(
        "2026-11-20",
        (
            "## 09:15 · note\n"  # line 3
            "- First fact about billing.\n"  # 4
            "  continued on the next line.\n"  # 5
            "- Second fact. #decision\n"  # 6
            "\n"
            "```bash\n"  # 8
            "- not an item, code\n"
            "```\n"
            "A paragraph of prose\n"  # 11
            "over two lines.\n"  # 12
            "## 10:00 · flush · session 7f3a\n"
            "1. Numbered item.\n"  # 14
        ),
    )
    assert [(i.start_line, i.end_line, i.text) for i in items] == [
        (4, 5, "First fact about billing.\ncontinued on the next line."),
        (6, 6, "Second fact. #decision"),
        (11, 12, "A paragraph of prose\nover two lines."),
        (14, 14, "Numbered item."),
    ]
    assert items[0].source == "memory/2026-11-20.md#L4-L5"
    assert items[1].source == "memory/2026-11-20.md#L6"
    assert items[1].tags == {"decision"}
    assert items[0].heading == "09:15 · note" and items[3].heading.startswith("10:00 · flush")
    shifted = daily("2026-11-20", "\n\n- Second fact. #decision\n")[0]
    assert shifted.start_line != items[1].start_line and shifted.key == items[1].key
    assert daily("2026-11-20", "- Second fact, edited. #decision\n")[0].key != items[1].key
    assert extract_items(parse_note("notes/x.md", "- not a daily log\n")) == []


# -- consolidation on plain data ----------------------------------------------------------------


def test_consolidate_promotes_merges_and_rejects() -> None:
    memory = parse_memory(MEMORY)
    items = (
        daily("2026-11-18", "- The renderer image needs fonts-noto-core for Nordic glyphs.\n")
        + daily("2026-11-19", "- Renderer image needs fonts-noto-core for the Nordic glyphs.\n")
        + daily(
            "2026-11-20",
            (
                "- Chose PostgreSQL 16 for the billing-core service. #decision\n"
                "- git push --force origin main\n"
                "- and then the\n"
                "- model=gpt-4o-mini tokens_in=2311 tokens_out=418\n"
                "- Maya prefers short answers with code first.\n"
                "- Call the dentist on Friday about the crown. #todo\n"
                "- Zoë is out until Wednesday at a fintech conference.\n"
                "- The renderer image needs fonts-noto-core for Nordic glyphs å ä ö.\n"
                "- Jonas goes on parental leave from 1 January. #important\n"
            ),
        )
    )
    plan = consolidate(memory, items, Policy(), TOKENS, evidence=items, today=NOW.date())
    added = {a.text: a for a in plan.added}
    assert set(added) == {
        "Chose PostgreSQL 16 for the billing-core service. #decision",
        "Jonas goes on parental leave from 1 January. #important",
        "The renderer image needs fonts-noto-core for Nordic glyphs å ä ö.",
    }
    decision = added["Chose PostgreSQL 16 for the billing-core service. #decision"]
    assert decision.section == "Decisions" and decision.sources == ("memory/2026-11-20.md#L3",)
    assert "#decision" in decision.reason
    renderer = added["The renderer image needs fonts-noto-core for Nordic glyphs å ä ö."]
    assert "recurs on 2 other days (2026-11-18, 2026-11-19)" in renderer.reason
    jonas = added["Jonas goes on parental leave from 1 January. #important"]
    assert jonas.section == "Inbox" and jonas.reason.endswith("placed: no matching section")
    merged = {m.source: m for m in plan.merged}
    assert merged["memory/2026-11-20.md#L7"].into == "MEMORY.md m4"  # short answers
    assert merged["memory/2026-11-18.md#L3"].into == "memory/2026-11-20.md#L10"
    assert merged["memory/2026-11-19.md#L3"].into == "memory/2026-11-20.md#L10"
    skipped = {s.source: s.reason for s in plan.skipped}
    assert skipped["memory/2026-11-20.md#L4"] == "junk: shell command"
    assert skipped["memory/2026-11-20.md#L5"].startswith("junk: fragment")
    assert skipped["memory/2026-11-20.md#L6"] == "junk: metadata line"
    assert "#todo (transient)" in skipped["memory/2026-11-20.md#L8"]
    assert "mentioned once" in skipped["memory/2026-11-20.md#L9"]
    assert len(plan.added) + len(plan.merged) + len(plan.skipped) == len(items)
    assert plan.consumed == items and not plan.archived

    text = render(memory, plan)
    assert validate(memory, plan, text, Policy(), [i.source for i in items]) == []
    assert text == MEMORY.replace(
        "- Invoice numbers are gapless per tenant. <!-- src: memory/2026-10-22.md#L4 -->\n",
        "- Invoice numbers are gapless per tenant. <!-- src: memory/2026-10-22.md#L4 -->\n"
        "- Chose PostgreSQL 16 for the billing-core service. #decision "
        "<!-- src: memory/2026-11-20.md#L3 -->\n\n"
        "## Inbox\n"
        "- Jonas goes on parental leave from 1 January. #important "
        "<!-- src: memory/2026-11-20.md#L11 -->\n"
        "- The renderer image needs fonts-noto-core for Nordic glyphs å ä ö. "
        "<!-- src: memory/2026-11-20.md#L10 -->\n",
    )


def test_a_correction_supersedes_the_entry_and_a_refinement_keeps_its_facts() -> None:
    memory = parse_memory(
        MEMORY + "- Standup moved to 09:30 on Mondays. <!-- src: memory/2026-10-23.md#L4 -->\n"
    )
    items = daily(
        "2026-11-20",
        (
            "- Correction: standup is at 10:00 on Mondays, not 09:30 on Mondays.\n"
            "- Actually, invoice numbers are gapless per tenant and per series.\n"
            "- Correction: Maya is not a senior backend engineer at Ledgerly any more, she leads "
            "billing-core.\n"
            "- The office plants are not watered on weekends. #important\n"
        ),
    )
    plan = consolidate(memory, items, Policy(), TOKENS, evidence=items, today=NOW.date())
    # the standup's time: the same subject key, another value -> the old entry to history
    (marked,) = plan.superseded
    assert marked.entry.text.startswith("- Standup moved to 09:30 on Mondays.")
    assert marked.by == "memory/2026-11-20.md#L3" and "09:30 -> 10:00" in marked.reason
    current = next(a for a in plan.added if a.replaces == marked.entry.key)
    assert current.text == "Standup is at 10:00 on Mondays, not 09:30 on Mondays."
    # a line that says all an entry says and more rewords it, every fact kept
    (edit,) = plan.edited
    assert edit.entry.text.startswith("- Invoice numbers are gapless per tenant.")
    assert edit.text == "Invoice numbers are gapless per tenant and per series."
    # the pinned "About Maya" entry is never changed: its correction is a new entry instead
    added = [a.text for a in plan.added]
    assert any(t.startswith("Correction: Maya is not a senior") for t in added)
    # "not" in a sentence that corrects nothing in MEMORY.md is an ordinary candidate
    assert "The office plants are not watered on weekends. #important" in added
    new = render(memory, plan)
    assert "- Standup is at 10:00 on Mondays, not 09:30 on Mondays." in new
    history = new.split("## History\n")[1]
    assert history.startswith("- ~~Standup moved to 09:30 on Mondays.~~ 2026-10-23 → 2026-11-20")
    assert "<!-- superseded-by: memory/2026-11-20.md#L3 -->" in history
    assert "src: memory/2026-10-22.md#L4, memory/2026-11-20.md#L4" in new  # both sources kept
    sources = [i.source for i in items]
    assert validate(memory, plan, new, Policy(), sources, TOKENS) == []


def test_validate_checks_the_rendered_text_not_the_plan() -> None:
    memory = parse_memory(MEMORY)
    pinned = next(e for e in memory.entries if e.pinned and e.section == "Preferences")
    plain = memory.entries[1]
    sources = ["memory/2026-11-20.md#L3"]

    def problems(plan: DreamPlan, text: str | None = None, **policy) -> list[str]:
        text = render(memory, plan) if text is None else text
        return [p.message for p in validate(memory, plan, text, Policy(**policy), sources)]

    assert problems(DreamPlan()) == []
    (message,) = problems(DreamPlan(archived=[Archived(pinned, "old")]))
    assert message.startswith('it would change or remove the pinned entry "- Never run destr')
    edit = Edited(memory.entries[0], "Works on billing-core.", (), "shorter")
    assert any("pinned entry" in p for p in problems(DreamPlan(edited=[edit])))
    assert problems(DreamPlan(), MEMORY.replace(plain.text + "\n", "")) == [
        f'it would lose the entry "{plain.text}"',
        f"it would lose 'Berg' of the entry \"{plain.text}\"",
    ]
    assert problems(DreamPlan(), MEMORY.replace("## About Maya #pin\n", "## About #pin\n")) == [
        "it would change the pinned section ## About Maya #pin"
    ]
    invented = Added(
        "People",
        "Zoë Okafor is the product manager for invoicing.",
        ("memory/2026-11-19.md#L4",),
        "new",
    )
    assert problems(DreamPlan(added=[invented])) == [
        'the new entry "Zoë Okafor is the product manager for invoicing." cites '
        "'memory/2026-11-19.md#L4', which is not one of this dream's inputs"
    ]
    into_pinned = Added(
        "About Maya", "Maya has two cats at home in Stockholm.", tuple(sources), "new"
    )
    assert problems(DreamPlan(added=[into_pinned])) == [
        "it would change the pinned section ## About Maya #pin"
    ]
    # what one part of a plan breaks is refused item by item (`enforce`), the rest stands
    line = daily("2026-11-20", "- Maya has two cats at home in Stockholm.\n")[0]
    good = Added("People", "Maya has two cats at home in Stockholm.", tuple(sources), "new")
    junk = Added("People", "git push --force origin main", tuple(sources), "new")
    sneaky = Added(
        "People", "Maya has two cats --> <!-- src: x --> in Stockholm.", tuple(sources), "new"
    )
    plan = DreamPlan(added=[good, junk, sneaky, into_pinned], consumed=[line])
    enforce(memory, plan, {line.source: line}, Policy())
    assert plan.added == [good]
    assert [(r.what, r.reason) for r in plan.refused] == [
        ("new entry", "it is a shell command"),
        ("new entry", "it contains an HTML comment"),
        ("new entry", "it would go to the pinned section ## About Maya #pin"),
    ]
    two = DreamPlan(archived=[Archived(e, "old") for e in memory.entries if not e.pinned][:2])
    assert problems(two) == ["it would drop 2 of 6 existing entries (33%, more than 25%)"]
    big = Added("People", "Zoë Okafor is the product manager. " * 10, tuple(sources), "new")
    assert problems(DreamPlan(added=[big]), max_memory_chars=len(MEMORY) + 50) == [
        f"MEMORY.md would be {len(render(memory, DreamPlan(added=[big]))):,} characters, "
        f"over the {len(MEMORY) + 50:,}-character budget"
    ]


# -- real dreams on real folders ----------------------------------------------------------------


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Token overlap instead of the model: fast and deterministic for the file-level tests."""
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")


@pytest.fixture
def small(vault_dir: Path) -> Path:
    write(vault_dir, "MEMORY.md", MEMORY)
    write(
        vault_dir,
        "memory/2026-11-20.md",
        (
            "# 2026-11-20\n\n## 09:15 · note\n"
            "- Chose PostgreSQL 16 for the billing-core service. #decision\n"
            "- git push --force origin main\n"
            "- Maya prefers short answers with code first.\n"
        ),
    )
    write(
        vault_dir,
        "memory/2026-11-21.md",
        (
            "# 2026-11-21\n\n## 10:00 · note\n"
            "- Jonas goes on parental leave from 1 January. #important\n"
            "- Call the dentist on Friday about the crown. #todo\n"
        ),
    )
    write(vault_dir, "notes/ideas.md", "- Chose MongoDB for everything. #decision\n")
    return vault_dir


ALLOWED = re.compile(
    r"^(MEMORY\.md|dreams/\d{4}-\d\d-\d\d\.md|dreams/archive\.md|"
    r"dreams/\.backup/MEMORY\.[\dT-]+\.md|\.vault/(dream|write)\.lock)$"
)


def changed_paths(before: dict, after: dict) -> set[str]:
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


@pytest.mark.slow
def test_offline_dream_on_the_sample_vault(sample_vault: Path, loaded_embedder, tree_state) -> None:
    before = tree_state(sample_vault)
    original = (sample_vault / "MEMORY.md").read_text()
    with Vault(sample_vault) as vault:
        report = vault.dream(now=NOW)
    after = tree_state(sample_vault)
    assert report.status == "dreamed" and report.mode == "offline"
    assert report.similarity.startswith("all-MiniLM-L6-v2")
    assert changed_paths(before, after) <= {p for p in after if ALLOWED.match(p)}
    assert {"MEMORY.md", "dreams/2026-11-22.md", report.backup} <= changed_paths(before, after)
    assert (sample_vault / report.backup).read_text() == original

    text = (sample_vault / "MEMORY.md").read_text()
    memory, old = parse_memory(text), parse_memory(original)
    assert len(text) <= 12_000 and len(report.added) >= 3
    # Nothing removed (the budget is far away); one entry superseded: the cutover window that
    # a later daily log corrects ("Correction: … Saturday 14 Nov …, not Friday 13 Nov at
    # 22:00"). The correction takes its place; the old value moves to ## History.
    (marked,) = report.superseded
    assert marked["text"].startswith("- Billing cutover window: Friday 13 Nov")
    assert marked["by"] == "memory/2026-11-10.md#L4-L5"
    current, history = text.split("## History\n")
    assert "Billing cutover window: Friday 13 Nov" not in current
    assert history.startswith("- ~~Billing cutover window: Friday 13 Nov, 22:00–02:00 CET.~~")
    for entry in old.entries:
        if entry.text != marked["text"]:
            assert entry.text in text
    about = old.section("About Maya")
    assert "".join(old.lines[about.start : about.end]) in text  # the pinned section, verbatim
    new_entries = [
        e for e in memory.entries if e.text not in original and "superseded-by" not in e.text
    ]
    assert len(new_entries) == len(report.added)
    window = next(e for e in new_entries if e.body.startswith("The migration window is Sat"))
    assert window.section == "Projects" and window.sources == ("memory/2026-11-10.md#L4-L5",)
    for entry in new_entries:  # each cites a line of a daily log that says exactly this
        (source,) = entry.sources
        path, lines = source.split("#L")
        first = int(lines.split("-")[0])
        cited = (sample_vault / path).read_text().splitlines()[first - 1]
        # the entry says what the line says, with or without its lead-in ("Correction: the …")
        said = cited.lstrip("- ").lower()
        bare = re.sub(r"^[a-z][\w ]{0,20}:\s+", "", said)
        start = entry.body.split(" #")[0][:40].lower()
        assert said.startswith(start) or bare.startswith(start), (entry, cited)
        assert "2026-11-08" <= path.removeprefix("memory/")[:10] <= "2026-11-22"
    for added in report.added:
        if "#decision" in added["text"]:
            assert added["section"] == "Decisions"
    # never promoted: the junk lines of the sample logs
    for junk in ("TODO", "session_id=5e3b"):
        assert not any(junk in e.text for e in new_entries)
        assert any(
            s["text"].startswith(junk) and s["reason"].startswith("junk") for s in report.skipped
        )
    daily = {p: v for p, v in before.items() if p.startswith("memory/")}
    assert daily == {p: v for p, v in after.items() if p.startswith("memory/")}

    diary = (sample_vault / "dreams/2026-11-22.md").read_text()
    assert diary.startswith("# Dream diary 2026-11-22\n\n## 03:30 · dream · offline\n")
    for item in report.inputs:
        assert f"`{item['path']}` sha256 `{item['sha256']}`" in diary
    assert "### Added" in diary and "### Not promoted" in diary
    assert f"```diff\n{report.diff}```\n" in diary
    assert all(f"← `{a['sources'][0]}`" in diary for a in report.added)

    # a second dream with no new input changes nothing, and says so
    again = tree_state(sample_vault)
    with Vault(sample_vault) as vault:
        second = vault.dream(now=NOW + dt.timedelta(hours=1))
    assert second.status == "nothing-new" and not second.written
    assert "nothing new to dream about" in second.message
    assert tree_state(sample_vault) == again


def test_dry_run_prints_the_diff_and_writes_nothing(
    sample_vault: Path, run_cli, no_model, tree_state
) -> None:
    before = tree_state(sample_vault)
    days = str((clock.today() - dt.date(2026, 11, 8)).days)
    result = run_cli("--vault", str(sample_vault), "dream", "--dry-run", "--days", days)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("--- a/MEMORY.md\n+++ b/MEMORY.md\n@@ ")
    assert "-- Billing cutover window: Friday 13 Nov" in result.stdout  # corrected in place
    assert "+- The migration window is Saturday 14 Nov" in result.stdout
    assert "Dry run: nothing was written." in result.stderr
    assert tree_state(sample_vault) == before
    assert not (sample_vault / ".vault").exists() and not (sample_vault / "dreams").exists()


def test_disabled_dream_has_no_side_effects(
    sample_vault: Path, run_cli, tree_state, no_model, monkeypatch
) -> None:
    config = sample_vault / "vault.toml"
    config.write_text(config.read_text().replace("enabled = true", "enabled = false"))
    before = tree_state(sample_vault)
    listing = sorted(p.relative_to(sample_vault) for p in sample_vault.rglob("*"))
    result = run_cli("--vault", str(sample_vault), "dream")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(
        "Error: dreaming is disabled ([dream] enabled = false in vault.toml); nothing was done."
    )
    with Vault(sample_vault) as vault, pytest.raises(DreamDisabledError):
        vault.dream(force=True)
    with Vault(sample_vault) as vault:  # a preview is allowed, and says so
        preview = vault.dream(dry_run=True, now=NOW)
    assert preview.diff and "dreaming is disabled" in preview.warnings[-1]
    assert tree_state(sample_vault) == before
    assert sorted(p.relative_to(sample_vault) for p in sample_vault.rglob("*")) == listing
    monkeypatch.setenv("VAULT_DREAM_ENABLED", "true")  # one explicit run through the environment
    with Vault(sample_vault) as vault:
        assert vault.dream(now=NOW).status == "dreamed"


def test_concurrent_edit_aborts_the_dream(small: Path, no_model, monkeypatch, tree_state) -> None:
    from vault_memory.dream import apply as dreamer

    real_render = dreamer.render
    edited = MEMORY + "- A line Maya typed while the dream was thinking.\n"

    def render_then_user_saves(*args, **kwargs):
        text = real_render(*args, **kwargs)
        (small / "MEMORY.md").write_text(edited)
        return text

    monkeypatch.setattr(dreamer, "render", render_then_user_saves)
    before = tree_state(small)
    with Vault(small) as vault, pytest.raises(NoteChangedError) as info:
        vault.dream(now=NOW)
    assert str(info.value) == (
        "MEMORY.md changed on disk during the dream; nothing was written. "
        "Run the command again to work from the current file."
    )
    assert (small / "MEMORY.md").read_text() == edited
    after = tree_state(small)
    assert changed_paths(before, after) - {".vault/dream.lock", ".vault/write.lock"} == {
        "MEMORY.md"
    }  # the user's edit; no diary, no backup, no archive
    monkeypatch.setattr(dreamer, "render", real_render)
    with Vault(small) as vault:  # nothing was consumed: the next dream does the work
        report = vault.dream(now=NOW)
    assert len(report.added) == 2
    assert "A line Maya typed" in (small / "MEMORY.md").read_text()


def test_dream_and_undo_restore_byte_identically(
    small: Path, no_model, run_cli, tree_state, monkeypatch
) -> None:
    undo_at = NOW + dt.timedelta(hours=1)
    monkeypatch.setenv("VAULT_NOW", undo_at.isoformat())  # the CLI's clock
    original = (small / "MEMORY.md").read_bytes()
    with Vault(small) as vault:
        with pytest.raises(UndoError, match="no dream has changed MEMORY.md yet"):
            vault.undo_dream(now=NOW)
        report = vault.dream(now=NOW)
    assert report.status == "dreamed" and report.backup
    assert {a["text"] for a in report.added} == {
        "Chose PostgreSQL 16 for the billing-core service. #decision",
        "Jonas goes on parental leave from 1 January. #important",
    }
    assert "MongoDB" not in (small / "MEMORY.md").read_text()  # notes are never inputs
    result = run_cli("--vault", str(small), "dream", "--undo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("restored MEMORY.md from before the dream of 2026-11-22T03:30")
    assert (small / "MEMORY.md").read_bytes() == original
    diary = (small / f"dreams/{undo_at.astimezone().date()}.md").read_text()
    assert "· undo\n" in diary and "-- Chose PostgreSQL 16" in diary
    result = run_cli("--vault", str(small), "dream", "--undo")
    assert result.exit_code == 1
    assert "was already undone" in result.stderr and "only the last dream" in result.stderr
    state = tree_state(small)
    with Vault(small) as vault:  # the undone dream's inputs stay consumed
        assert vault.dream(now=NOW + dt.timedelta(hours=1)).status == "nothing-new"
    assert tree_state(small) == state


def test_undo_refuses_to_discard_later_edits(small: Path, no_model) -> None:
    with Vault(small) as vault:
        vault.dream(now=NOW)
        path = small / "MEMORY.md"
        path.write_text(path.read_text() + "- Maya's own line, added after the dream.\n")
        edited = path.read_bytes()
        with pytest.raises(UndoError, match="was edited after the dream of .* copy what you"):
            vault.undo_dream(now=NOW)
    assert path.read_bytes() == edited


def test_over_budget_is_refused_then_forced_and_archived(small: Path, no_model) -> None:
    config = small / "vault.toml"
    config.write_text(
        config.read_text().replace("max_memory_chars = 12000", "max_memory_chars = 400")
    )
    original = (small / "MEMORY.md").read_bytes()
    with Vault(small) as vault:
        with pytest.raises(DreamRefusedError) as info:
            vault.dream(now=NOW)
        dropped = re.search(
            r"it would drop (\d) of 6 existing entries \(\d+%, more than 25%\)", str(info.value)
        )
        assert dropped, str(info.value)
        assert "`dream(force=True)`" in str(info.value)
        assert (small / "MEMORY.md").read_bytes() == original
        refusal = (small / "dreams/2026-11-22.md").read_text()  # recorded, with its reason
        assert "dream · refused" in refusal and dropped[0] in refusal
        preview = vault.dream(dry_run=True, now=NOW)
        assert preview.refused and preview.archived and preview.diff
        report = vault.dream(force=True, now=NOW)
    text = (small / "MEMORY.md").read_text()
    assert len(text) <= 400 and len(report.archived) == int(dropped[1])
    archive = (small / "dreams/archive.md").read_text()
    for archived in report.archived:
        assert archived["text"] in archive and archived["text"] not in text
    assert "Never run destructive commands" in text  # pinned
    with Vault(small) as vault:
        vault.undo_dream(now=NOW)
    assert (small / "MEMORY.md").read_bytes() == original
    assert not (small / "dreams/archive.md").exists()  # the dream created it; undo took it back


def test_state_survives_deleting_the_cache(small: Path, no_model, tree_state) -> None:
    with Vault(small) as vault:
        vault.search("PostgreSQL decision", mode="keyword")
        assert (small / ".vault/hits.jsonl").exists()
        assert counts(small / ".vault")
        vault.dream(now=NOW)
    import shutil

    shutil.rmtree(small / ".vault")
    state = tree_state(small)
    with Vault(small) as vault:
        report = vault.dream(now=NOW + dt.timedelta(days=1))
    assert report.status == "nothing-new"
    assert tree_state(small) == state


def test_dream_runs_from_a_background_thread_with_no_arguments(vault_dir: Path, no_model) -> None:
    with Vault(vault_dir) as vault:
        vault.add("Billing runs on PostgreSQL 16 from now on.", tags=("decision",))
        vault.add("ls -la", tags=())
        results: list = []
        worker = threading.Thread(target=lambda: results.append(vault.dream()))
        worker.start()
        worker.join(timeout=60)
    (report,) = results
    assert report.status == "dreamed"
    assert [a["section"] for a in report.added] == ["Decisions"]
    assert (
        "- Billing runs on PostgreSQL 16 from now on. #decision <!-- src: memory/"
        in (vault_dir / "MEMORY.md").read_text()
    )


def test_cli_json_report_and_usage_errors(small: Path, no_model, run_cli) -> None:
    days = str((clock.today() - dt.date(2026, 11, 20)).days + 1)
    result = run_cli("--vault", str(small), "dream", "--json", "--days", days)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "dreamed" and data["mode"] == "offline"
    assert {"added", "merged", "archived", "skipped", "diff", "diary", "inputs"} <= set(data)
    assert data["similarity"] == "token-overlap"
    result = run_cli("--vault", str(small), "dream", "--days", days)
    assert result.exit_code == 0 and result.stdout.startswith("nothing new to dream about")
    result = run_cli("--vault", str(small), "dream", "--undo", "--dry-run")
    assert result.exit_code == 2 and "cannot be combined" in result.stderr
    result = run_cli("dream", "--help")
    assert result.exit_code == 0 and "Example:\n    vault dream --dry-run" in result.stdout


# -- git ------------------------------------------------------------------------------------------


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


def test_git_commit_holds_exactly_the_dream_files(small: Path, no_model) -> None:
    git(small, "init", "-q")
    git(small, "config", "user.email", "maya@example.com")
    git(small, "config", "user.name", "Maya")
    git(small, "add", "-A")
    git(small, "commit", "-q", "-m", "start")
    write(small, "notes/ideas.md", "- Chose MongoDB for everything. #decision\n- staged\n")
    git(small, "add", "notes/ideas.md")  # the user's staged change
    write(small, "notes/draft.md", "unstaged and untracked\n")
    path = small / "memory/2026-11-21.md"
    path.write_text(path.read_text() + "- Unstaged edit to a daily log, not a fact yet\n")
    with Vault(small) as vault:
        report = vault.dream(now=NOW)
    assert report.commit == git(small, "rev-parse", "HEAD").strip()
    files = git(small, "show", "--name-only", "--format=", "HEAD").split()
    assert (
        sorted(files)
        == sorted(report.written)
        == sorted(["MEMORY.md", "dreams/2026-11-22.md", report.backup])
    )
    assert git(small, "log", "-1", "--format=%an %s").startswith("Maya vault dream 2026-11-22")
    assert git(small, "diff", "--cached", "--name-only").split() == ["notes/ideas.md"]
    status = git(small, "status", "--porcelain").splitlines()
    assert sorted(status) == sorted(
        ["?? notes/draft.md", "M  notes/ideas.md", " M memory/2026-11-21.md"]
    )
    with Vault(small) as vault:
        undo = vault.undo_dream(now=NOW)
    files = git(small, "show", "--name-only", "--format=", "HEAD").split()
    assert undo.commit and sorted(files) == ["MEMORY.md", "dreams/2026-11-22.md"]
    assert git(small, "show", "HEAD~2:MEMORY.md") == git(small, "show", "HEAD:MEMORY.md")
    assert git(small, "diff", "--cached", "--name-only").split() == ["notes/ideas.md"]


def test_an_ignored_diary_is_explained_and_memory_still_committed(small: Path, no_model) -> None:
    """With dreams/ git-ignored, a dream printed git's own hint and left MEMORY.md staged."""
    git(small, "init", "-q")
    (small / ".gitignore").write_text(".vault/\ndreams/\n")  # the user keeps dreams out of git
    with Vault(small) as vault:
        report = vault.dream(now=NOW)
    assert report.status == "dreamed" and report.commit
    (warning,) = report.warnings
    assert warning == (
        "dreams/ is ignored by git (.gitignore): written but not committed. Remove the "
        "ignore rule to keep the dream diary in git, or set [dream] git_commit = false."
    )
    assert git(small, "show", "--name-only", "--format=", "HEAD").split() == ["MEMORY.md"]
    assert git(small, "diff", "--cached", "--name-only") == ""  # nothing left staged
    assert "PostgreSQL 16" in (small / "MEMORY.md").read_text()
    config = small / "vault.toml"
    config.write_text(config.read_text() + "git_commit = false\n")  # [dream] is the last table
    (small / "memory/2026-11-21.md").write_text(
        (small / "memory/2026-11-21.md").read_text() + "- Chose Buildkite for CI. #decision\n"
    )
    with Vault(small) as vault:
        report = vault.dream(now=NOW)
    assert report.commit is None and not report.warnings and len(report.added) == 1


def test_a_failed_commit_leaves_the_staging_area_as_it_was(small: Path, no_model) -> None:
    git(small, "init", "-q")
    git(small, "add", "MEMORY.md")  # the user's own staged change
    hook = small / ".git" / "hooks" / "prepare-commit-msg"  # runs even with --no-verify
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'refused by hook' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = git(small, "diff", "--cached", "--name-only")
    with Vault(small) as vault:
        report = vault.dream(now=NOW)
    assert report.status == "dreamed" and report.commit is None
    (warning,) = report.warnings
    assert warning.startswith("git commit failed: ") and "git_commit = false" in warning
    assert git(small, "diff", "--cached", "--name-only") == before == "MEMORY.md\n"
    assert (small / report.diary).exists()  # the dream itself is written


def test_undo_refuses_a_tampered_backup(small: Path, no_model) -> None:
    with Vault(small) as vault:
        report = vault.dream(now=NOW)
        (small / report.backup).write_text("not what the dream saved\n")
        after = (small / "MEMORY.md").read_bytes()
        with pytest.raises(UndoError, match=r"its backup dreams/\.backup/.* was modified since"):
            vault.undo_dream(now=NOW)
        (small / report.backup).unlink()
        with pytest.raises(UndoError, match="its backup of MEMORY.md cannot be read"):
            vault.undo_dream(now=NOW)
    assert (small / "MEMORY.md").read_bytes() == after


def test_one_dream_at_a_time_and_bad_settings(small: Path, no_model) -> None:
    from vault_memory.errors import ConfigError, LockTimeoutError, VaultError
    from vault_memory.files import fsutil

    with Vault(small) as vault:
        with (
            fsutil.lock_file(small / ".vault/dream.lock", "dream"),
            pytest.raises(LockTimeoutError, match="could not take the dream lock"),
        ):
            vault.dream(now=NOW)
        with pytest.raises(
            VaultError, match="lookback_days=0: the lookback must be at least 1 day"
        ):
            vault.dream(lookback_days=0, now=NOW)
    config = small / "vault.toml"
    config.write_text(config.read_text() + 'timezone = "Mars/Olympus_Mons"\n')
    with Vault(small) as vault, pytest.raises(ConfigError, match="not a known time zone"):
        vault.dream()
    assert not (small / "dreams/2026-11-22.md").exists()


def test_search_logs_what_it_returned(small: Path, no_model) -> None:
    with Vault(small) as vault:
        hits = vault.search("parental leave", mode="keyword")
        vault.search("parental leave January", mode="keyword")
    assert hits and hits[0].path == "memory/2026-11-21.md"
    log = small / ".vault/hits.jsonl"
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["hits"][0][:3] == [
        hits[0].path,
        hits[0].start_line,
        hits[0].end_line,
    ]
    with log.open("a") as fh:
        fh.write('{"torn": \n')  # a crash mid-line, or someone else's line
    found = counts(small / ".vault")
    line = "- Jonas goes on parental leave from 1 January. #important"
    assert found[("memory/2026-11-21.md", line_hash(line))] == 2


def test_records_are_ordered_by_their_instant_not_their_file(small: Path, no_model) -> None:
    """A dream at 03:30 UTC files under 2026-11-22; its undo an hour later, on a clock in
    UTC-12, files under 2026-11-21. The undo is still the last record: a second undo says so
    (it once read the dream as the last record, and refused because MEMORY.md had changed)."""
    west = dt.timezone(dt.timedelta(hours=-12))
    with Vault(small) as vault:
        vault.dream(now=NOW)
        undone = vault.undo_dream(now=(NOW + dt.timedelta(hours=1)).astimezone(west))
        assert undone.diary == "dreams/2026-11-21.md"
        with pytest.raises(UndoError, match="was already undone"):
            vault.undo_dream(now=NOW + dt.timedelta(hours=2))
