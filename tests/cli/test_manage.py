"""`Vault.manage`: what an entry is, how ids name one, and create / update / delete against
real files (guarded rewrites, locked appends, confinement, #pin)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_memory import Vault, clock
from vault_memory.errors import (
    EmptyEntryError,
    InputTooLargeError,
    NoteChangedError,
    PathOutsideVaultError,
    VaultError,
)
from vault_memory.files import fsutil
from vault_memory.files.entries import (
    ManageError,
    PinnedEntryError,
    Target,
    bullet_lines,
    entries_of,
    entry_at,
    parse_id,
    replacement_lines,
    splice,
)
from vault_memory.files.notes import parse_note
from vault_memory.vault import MAX_ENTRY_BYTES

MEMORY = """\
# MEMORY

Curated by hand.

## About Maya #pin
- Senior backend engineer at Ledgerly.

## People
- Jonas Berg: Head of Engineering.
  Reads proposals the evening before.
- Zoë Okafor: product manager.
  - Prefers Loom videos.
  - Wants plain release notes.
- Priya joined in June. #pin

## Preferences
1. Short answers, code first.
2. Tea, not coffee.

## Code
```sh
- not an entry
```
"""


def today_rel() -> str:
    return f"memory/{clock.today().isoformat()}.md"


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    (vault_dir / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    return Vault(vault_dir)


def line_of(path: Path, text: str) -> int:
    lines = fsutil.split_lines(path.read_text(encoding="utf-8"))
    return next(i for i, line in enumerate(lines, 1) if text in line)


# -- entries (pure) -----------------------------------------------------------------------------


def test_entries_of_memory_finds_items_nested_items_and_paragraphs() -> None:
    note = parse_note("MEMORY.md", MEMORY)
    found = [(e.start_line, e.end_line, e.kind, e.pinned) for e in entries_of(note)]
    assert found == [
        (3, 3, "paragraph", False),
        (6, 6, "item", True),  # pinned by its section heading
        (9, 10, "item", False),  # a continuation line belongs to the item
        (11, 13, "item", False),  # nested items belong to their parent...
        (12, 12, "item", False),  # ...and are entries themselves
        (13, 13, "item", False),
        (14, 14, "item", True),
        (17, 17, "item", False),
        (18, 18, "item", False),
    ]  # the list item inside the code block (line 22) is not an entry


def test_entry_at_picks_the_innermost_entry_and_accepts_a_range_within_it() -> None:
    note = parse_note("MEMORY.md", MEMORY)
    assert (entry_at(note, 10).start_line, entry_at(note, 10).end_line) == (9, 10)
    assert entry_at(note, 12).text == "  - Prefers Loom videos."
    assert (entry_at(note, 11, 13).start_line, entry_at(note, 11, 13).end_line) == (11, 13)
    assert entry_at(note, 17).marker == "1. "


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (8, None, "is a heading (## People)"),
        (7, None, "is a blank line"),
        (22, None, "is inside a code block"),
        (14, 17, "are not in one entry"),
        (0, None, "out of range"),
        (99, None, "has 23 lines"),
    ],
)
def test_entry_at_says_why_a_line_is_not_an_entry(
    start: int, end: int | None, message: str
) -> None:
    with pytest.raises(ManageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        entry_at(parse_note("MEMORY.md", MEMORY), start, end)


def test_frontmatter_lines_are_not_entries() -> None:
    note = parse_note("MEMORY.md", "---\ntitle: x\n---\n- a\n")
    with pytest.raises(ManageError, match="frontmatter"):
        entry_at(note, 2)
    assert entry_at(note, 4).text == "- a"


def test_daily_log_time_heading_names_the_whole_block() -> None:
    text = "# 2026-11-20\n\n## 09:15 · note\n- Standup moved.\n- Jonas approved. #important\n"
    note = parse_note("memory/2026-11-20.md", text)
    block = entry_at(note, 3)
    assert (block.kind, block.start_line, block.end_line) == ("block", 3, 5)
    assert entry_at(note, 4).kind == "item"


@pytest.mark.parametrize(
    ("given", "action", "target"),
    [
        ("MEMORY.md#L12", "update", Target("MEMORY.md", 12, 12)),
        ("MEMORY.md#L12-L14", "delete", Target("MEMORY.md", 12, 14)),
        ("memory/2026-11-20.md:4-5", "update", Target("memory/2026-11-20.md", 4, 5)),
        ("memory/2026-11-20.md:4", "delete", Target("memory/2026-11-20.md", 4, 4)),
        ("MEMORY.md#ABCDEF12", "delete", Target("MEMORY.md", hash="abcdef12")),
        ("abcdef12", "update", Target(hash="abcdef12")),
        (None, "create", Target()),
        ("MEMORY.md#People", "create", Target("MEMORY.md", section="People")),
        ("MEMORY.md", "create", Target("MEMORY.md")),
    ],
)
def test_parse_id(given: str | None, action: str, target: Target) -> None:
    assert parse_id(given, action) == target


@pytest.mark.parametrize("given", ["MEMORY.md", "abc", "MEMORY.md#People", "x\x00y"])
def test_parse_id_refuses_what_names_no_entry(given: str) -> None:
    with pytest.raises(ManageError):
        parse_id(given, "delete")


@pytest.mark.parametrize(
    ("text", "start", "end", "new", "expected"),
    [
        ("a\nb\nc\n", 2, 2, ["B"], "a\nB\nc\n"),
        ("a\r\nb\r\nc\r\n", 2, 2, ["B", "B2"], "a\r\nB\r\nB2\r\nc\r\n"),
        ("\ufeffa\nb\n", 1, 1, ["A"], "\ufeffA\nb\n"),
        ("a\nb", 2, 2, [], "a\n"),
        ("a\nb", 3, 2, ["c"], "a\nb\nc\n"),  # an insert at the end ends with a newline
        ("a\nb\n", 2, 1, ["x"], "a\nx\nb\n"),
        ("a\n", 1, 1, [], ""),
    ],
)
def test_splice_changes_only_the_lines_it_names(
    text: str, start: int, end: int, new: list[str], expected: str
) -> None:
    assert splice(text, start, end, new) == expected


def test_replacement_keeps_marker_indentation_and_pin() -> None:
    note = parse_note("MEMORY.md", MEMORY)
    assert replacement_lines(entry_at(note, 12), "Prefers short videos") == [
        "  - Prefers short videos"
    ]
    assert replacement_lines(entry_at(note, 17), "* Shortest answers\nthen code") == [
        "1. Shortest answers",
        "   then code",
    ]
    assert replacement_lines(entry_at(note, 14), "Priya joined in May.") == [
        "- Priya joined in May. #pin"  # an update never unpins
    ]
    # pinned by its section only: nothing to add
    assert replacement_lines(entry_at(note, 6), "Staff engineer") == ["- Staff engineer"]


def test_bullet_lines_makes_each_plain_line_a_bullet() -> None:
    assert bullet_lines("one\n\n- two\n  more\nthree") == ["- one", "- two", "  more", "- three"]


# -- create ---------------------------------------------------------------------------------------


def test_create_defaults_to_todays_log_and_is_idempotent(vault: Vault) -> None:
    report = vault.manage("Prefers tea over coffee", "create")
    path = vault.root / today_rel()
    lines = fsutil.split_lines(path.read_text())
    assert report.changed and report.path == today_rel()
    assert lines[report.start_line - 1].endswith("· agent")
    assert lines[report.start_line - 1 : report.end_line] == report.text.split("\n")
    assert report.text.endswith("\n- Prefers tea over coffee")
    assert report.id == f"{today_rel()}#L{report.start_line}"
    assert fsutil.sha256_text(report.text).startswith(report.hash)
    before = path.read_bytes()
    again = vault.manage("  prefers tea   over coffee ", "create", "today")
    assert not again.changed and "already holds" in again.message
    assert path.read_bytes() == before


def test_create_in_memory_goes_to_the_inbox_section(vault: Vault) -> None:
    memory = vault.root / "MEMORY.md"
    first = vault.manage("Billing runs on PostgreSQL 16", "create", "MEMORY.md")
    second = vault.manage("Deploys happen on Tuesdays", "create", "MEMORY.md")
    text = memory.read_text()
    assert (
        text
        == MEMORY + "\n## Inbox\n- Billing runs on PostgreSQL 16\n- Deploys happen on Tuesdays\n"
    )
    assert (first.start_line, second.start_line) == (26, 27)
    assert first.message == "added to MEMORY.md under ## Inbox"


def test_create_in_a_named_section_appends_at_its_end(vault: Vault) -> None:
    memory = vault.root / "MEMORY.md"
    report = vault.manage("Tomás Ruiz: customer success lead", "create", "MEMORY.md#people")
    lines = fsutil.split_lines(memory.read_text())
    assert report.start_line == 15
    assert lines[13:17] == [
        "- Priya joined in June. #pin",
        "- Tomás Ruiz: customer success lead",
        "",
        "## Preferences",
    ]
    # a section title is matched without its tags
    vault.manage("Based in Stockholm", "create", "MEMORY.md#About Maya")
    assert fsutil.split_lines(memory.read_text())[5:8] == [
        "- Senior backend engineer at Ledgerly.",
        "- Based in Stockholm",
        "",
    ]


def test_create_in_an_empty_section_of_the_template(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    template = (vault_dir / "MEMORY.md").read_text()
    vault.manage("Short answers", "create", "MEMORY.md#Preferences")
    assert (vault_dir / "MEMORY.md").read_text() == template.replace(
        "## Preferences\n\n", "## Preferences\n- Short answers\n\n"
    )


def test_create_makes_a_missing_memory_file(vault_dir: Path) -> None:
    (vault_dir / "MEMORY.md").unlink()
    report = Vault(vault_dir).manage("First fact", "create", "MEMORY.md")
    assert (vault_dir / "MEMORY.md").read_text() == "# MEMORY\n\n## Inbox\n- First fact\n"
    assert (report.start_line, report.end_line) == (4, 4)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("notes/billing.md", "manage edits only MEMORY.md and daily logs"),
        ("dreams/2026-11-20.md", "manage edits only MEMORY.md and daily logs"),
        ("vault.toml", "manage edits only MEMORY.md and daily logs"),
        (".vault/index.sqlite", "manage edits only MEMORY.md and daily logs"),
        ("memory/2026-11-20.md", "past days are history"),
        ("../MEMORY.md", "climbs out"),
        ("/etc/passwd", "absolute paths"),
        ("today#Inbox", "no sections"),
    ],
)
def test_create_refuses_other_targets(vault: Vault, tree_state, target: str, message: str) -> None:
    (vault.root / "memory" / "2026-11-20.md").write_text("# 2026-11-20\n")
    before = tree_state(vault.root.parent)
    with pytest.raises(VaultError, match=message):
        vault.manage("Some fact", "create", target)
    assert tree_state(vault.root.parent) == before


# -- update ---------------------------------------------------------------------------------------


def test_update_by_line_rewrites_only_that_entry(vault: Vault) -> None:
    memory = vault.root / "MEMORY.md"
    report = vault.manage("Jonas Berg: CTO since November.", "update", "MEMORY.md#L10")
    assert report.changed and (report.start_line, report.end_line) == (9, 9)
    assert (
        report.previous
        == "- Jonas Berg: Head of Engineering.\n  Reads proposals the evening before."
    )
    assert memory.read_text() == MEMORY.replace(
        "- Jonas Berg: Head of Engineering.\n  Reads proposals the evening before.\n",
        "- Jonas Berg: CTO since November.\n",
    )


def test_update_by_hash_prefix_full_hash_and_path_hash(vault: Vault) -> None:
    note = parse_note("MEMORY.md", MEMORY)
    digest = entry_at(note, 17).sha256
    vault.manage("Short answers, code after.", "update", digest[:8])
    assert "1. Short answers, code after.\n" in (vault.root / "MEMORY.md").read_text()
    tea = entry_at(note, 18).sha256
    vault.manage("Green tea.", "update", f"MEMORY.md#{tea}")
    assert "2. Green tea.\n" in (vault.root / "MEMORY.md").read_text()
    report = vault.manage("Rooibos.", "update", vault.manage("x", "create").hash)
    assert report.path == today_rel() and report.text.endswith("\n- Rooibos.")


def test_update_keeps_crlf_and_the_rest_of_the_file_byte_for_byte(vault_dir: Path) -> None:
    path = vault_dir / "memory" / "2026-11-20.md"
    original = "# 2026-11-20\r\n\r\n## 09:15 · note\r\n- Standup moved.\r\n- Call Jonas.\r\n"
    path.write_bytes(original.encode())
    Vault(vault_dir).manage("Call Jonas on Friday.", "update", "memory/2026-11-20.md:5")
    assert path.read_bytes() == original.replace("Call Jonas.", "Call Jonas on Friday.").encode()


def test_update_of_a_block_keeps_its_time_heading(vault_dir: Path) -> None:
    path = vault_dir / "memory" / "2026-11-20.md"
    path.write_text("# 2026-11-20\n\n## 09:15 · note\n- a\n- b\n\n## 10:00 · note\n- c\n")
    Vault(vault_dir).manage("only this", "update", "memory/2026-11-20.md#L3")
    assert (
        path.read_text() == "# 2026-11-20\n\n## 09:15 · note\n- only this\n\n## 10:00 · note\n- c\n"
    )


def test_update_with_the_same_text_writes_nothing(vault: Vault) -> None:
    memory = vault.root / "MEMORY.md"
    before = memory.stat().st_mtime_ns
    report = vault.manage("Tea, not coffee.", "update", "MEMORY.md#L18")
    assert not report.changed and report.message.startswith("unchanged")
    assert memory.stat().st_mtime_ns == before


def test_update_refuses_a_file_edited_meanwhile(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer appends between manage's read and its write: NoteChangedError, and the
    other writer's line survives."""
    memory = vault.root / "MEMORY.md"
    real_read = fsutil.read_text

    def read_then_someone_writes(path, *args, **kwargs):
        result = real_read(path, *args, **kwargs)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("- Added by a person meanwhile.\n")
        return result

    monkeypatch.setattr(fsutil, "read_text", read_then_someone_writes)
    with pytest.raises(NoteChangedError, match="changed on disk"):
        vault.manage("Jonas Berg: CTO.", "update", "MEMORY.md#L9")
    assert memory.read_text() == MEMORY + "- Added by a person meanwhile.\n"


# -- delete ---------------------------------------------------------------------------------------


def test_delete_removes_the_entry_and_keeps_one_blank_line(vault: Vault) -> None:
    memory = vault.root / "MEMORY.md"
    report = vault.manage(None, "delete", "MEMORY.md#L3")
    assert report.text == "Curated by hand." and report.hash is None
    assert memory.read_text().startswith("# MEMORY\n\n## About Maya #pin\n")
    vault.manage("", "delete", "MEMORY.md#L" + str(line_of(memory, "Prefers Loom")))
    assert "Loom" not in memory.read_text() and "Wants plain release notes" in memory.read_text()


def test_delete_of_a_pinned_entry_needs_force(vault: Vault, tree_state) -> None:
    before = tree_state(vault.root)
    for entry_id in ("MEMORY.md#L14", "MEMORY.md#L6"):  # tagged, and in a pinned section
        with pytest.raises(PinnedEntryError, match="is pinned"):
            vault.manage(None, "delete", entry_id)
    assert tree_state(vault.root) == before
    vault.manage(None, "delete", "MEMORY.md#L14", force=True)
    assert "Priya" not in (vault.root / "MEMORY.md").read_text()


def test_deleting_the_last_bullet_of_a_log_entry_removes_its_heading(vault_dir: Path) -> None:
    path = vault_dir / "memory" / "2026-11-20.md"
    path.write_text("# 2026-11-20\n\n## 09:15 · note\n- a\n\n## 10:00 · note\n- b\n- c\n")
    vault = Vault(vault_dir)
    vault.manage(None, "delete", "memory/2026-11-20.md#L4")
    assert path.read_text() == "# 2026-11-20\n\n## 10:00 · note\n- b\n- c\n"
    vault.manage(None, "delete", "memory/2026-11-20.md#L3")  # a whole block, at the end
    assert path.read_text() == "# 2026-11-20\n"


def test_hash_ids_that_match_several_or_no_entries(vault_dir: Path) -> None:
    (vault_dir / "MEMORY.md").write_text("# MEMORY\n\n## A\n- same\n\n## B\n- same\n")
    digest = fsutil.sha256_text("- same")
    vault = Vault(vault_dir)
    with pytest.raises(ManageError, match="matches 2 entries .*MEMORY.md#L4, MEMORY.md#L7"):
        vault.manage(None, "delete", digest[:10])
    with pytest.raises(ManageError, match="no entry with hash 000000"):
        vault.manage(None, "delete", "000000")


# -- bad requests change nothing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "action", "entry_id", "error", "message"),
    [
        ("x", "rename", None, ManageError, "unknown action 'rename'"),
        ("", "create", None, EmptyEntryError, "the entry is empty"),
        ("  \n\n", "update", "MEMORY.md#L9", EmptyEntryError, "the entry is empty"),
        ("a\x00b", "create", None, ManageError, "NUL byte"),
        ("x" * (MAX_ENTRY_BYTES + 1), "create", None, InputTooLargeError, "over the limit"),
        ("```\ncode", "create", None, ManageError, "does not close"),
        ("x", "update", None, ManageError, "needs the id of an entry"),
        ("x", "update", "MEMORY.md#L8", ManageError, "is a heading"),
        ("x", "update", "notes/a.md#L1", ManageError, "manage edits only"),
        ("x", "delete", "../outside/secret.md#L1", PathOutsideVaultError, "climbs out"),
        ("x", "delete", "leak.md:1", PathOutsideVaultError, "symlink leads outside"),
        ("x", "delete", "memory/2026-11-20.md#L1", VaultError, "does not exist"),
    ],
)
def test_bad_requests_raise_and_change_nothing(
    vault: Vault,
    escapes,
    tree_state,
    content: str,
    action: str,
    entry_id: str | None,
    error: type[Exception],
    message: str,
) -> None:
    before = tree_state(vault.root.parent)
    with pytest.raises(error, match=message):
        vault.manage(content, action, entry_id)
    assert tree_state(vault.root.parent) == before
    assert escapes["secret"].read_text() == "SECRET\n"


def test_a_memory_file_symlinked_elsewhere_in_the_vault_is_not_written(vault_dir: Path) -> None:
    (vault_dir / "notes").mkdir()
    (vault_dir / "notes" / "real.md").write_text("- a note\n")
    (vault_dir / "MEMORY.md").unlink()
    (vault_dir / "MEMORY.md").symlink_to(Path("notes") / "real.md")
    with pytest.raises(ManageError, match="refusing to write notes/real.md"):
        Vault(vault_dir).manage("x", "update", "MEMORY.md#L1")
    assert (vault_dir / "notes" / "real.md").read_text() == "- a note\n"
