"""plan_changes: disk state vs index state, on plain data (no files)."""

from __future__ import annotations

import pytest

from vault_memory.index.plan import ChangePlan, DiskFile, IndexedFile, plan_changes, stat_changed


def indexed(sha: str, mtime: int = 100, size: int = 10) -> IndexedFile:
    return IndexedFile(mtime, size, sha)


def same(row: IndexedFile) -> DiskFile:
    """The file on disk exactly as indexed: same stat, so no hash is computed."""
    return DiskFile(row.mtime_ns, row.size)


def changed(sha: str, mtime: int = 200, size: int = 10) -> DiskFile:
    return DiskFile(mtime, size, sha)


def as_dict(plan: ChangePlan) -> dict[str, list]:
    return {
        "new": plan.new,
        "modified": plan.modified,
        "moved": plan.moved,
        "deleted": plan.deleted,
        "unchanged": plan.unchanged,
        "touched": plan.touched,
        "unreadable": plan.unreadable,
    }


def expect(**lists: list) -> dict[str, list]:
    empty: dict[str, list] = {
        k: [] for k in ("new", "modified", "moved", "deleted", "unchanged", "touched", "unreadable")
    }
    return empty | lists


def test_empty() -> None:
    plan = plan_changes({}, {})
    assert as_dict(plan) == expect()
    assert plan.is_noop


def test_everything_new_on_first_index() -> None:
    disk = {"b.md": changed("B"), "a.md": changed("A")}
    plan = plan_changes(disk, {})
    assert as_dict(plan) == expect(new=["a.md", "b.md"])
    assert not plan.is_noop


def test_same_stat_is_unchanged_without_a_hash() -> None:
    rows = {"a.md": indexed("A"), "b.md": indexed("B", mtime=5, size=99)}
    plan = plan_changes({p: same(r) for p, r in rows.items()}, rows)
    assert as_dict(plan) == expect(unchanged=["a.md", "b.md"])
    assert plan.is_noop


def test_new_mtime_same_bytes_is_touched() -> None:
    plan = plan_changes({"a.md": changed("A", mtime=999)}, {"a.md": indexed("A")})
    assert as_dict(plan) == expect(touched=["a.md"])
    assert not plan.is_noop  # the stored stat must be refreshed, or it is hashed every run
    assert plan.counts()["unchanged"] == 1


@pytest.mark.parametrize(("mtime", "size"), [(200, 10), (100, 11), (200, 11)])
def test_different_bytes_is_modified(mtime: int, size: int) -> None:
    plan = plan_changes({"a.md": changed("A2", mtime, size)}, {"a.md": indexed("A")})
    assert as_dict(plan) == expect(modified=["a.md"])


def test_gone_from_disk_is_deleted() -> None:
    rows = {"a.md": indexed("A"), "b.md": indexed("B")}
    plan = plan_changes({"a.md": same(rows["a.md"])}, rows)
    assert as_dict(plan) == expect(deleted=["b.md"], unchanged=["a.md"])


def test_same_bytes_under_a_new_path_is_moved() -> None:
    plan = plan_changes({"new/a.md": changed("A", mtime=100)}, {"old/a.md": indexed("A")})
    assert as_dict(plan) == expect(moved=[("old/a.md", "new/a.md")])
    assert plan.counts()["moved"] == 1


def test_moved_and_edited_is_deleted_plus_new() -> None:
    plan = plan_changes({"new.md": changed("A2")}, {"old.md": indexed("A")})
    assert as_dict(plan) == expect(new=["new.md"], deleted=["old.md"])


def test_copy_of_an_unchanged_file_is_new() -> None:
    rows = {"a.md": indexed("A")}
    plan = plan_changes({"a.md": same(rows["a.md"]), "copy.md": changed("A")}, rows)
    assert as_dict(plan) == expect(new=["copy.md"], unchanged=["a.md"])


def test_duplicate_content_two_moves() -> None:
    rows = {"x/1.md": indexed("D"), "x/2.md": indexed("D")}
    disk = {"y/1.md": changed("D"), "y/2.md": changed("D")}
    plan = plan_changes(disk, rows)
    assert as_dict(plan) == expect(moved=[("x/1.md", "y/1.md"), ("x/2.md", "y/2.md")])


def test_duplicate_content_one_source_two_targets() -> None:
    plan = plan_changes({"b.md": changed("D"), "c.md": changed("D")}, {"a.md": indexed("D")})
    assert as_dict(plan) == expect(moved=[("a.md", "b.md")], new=["c.md"])


def test_duplicate_content_two_sources_one_target() -> None:
    plan = plan_changes({"c.md": changed("D")}, {"a.md": indexed("D"), "b.md": indexed("D")})
    assert as_dict(plan) == expect(moved=[("a.md", "c.md")], deleted=["b.md"])


def test_a_modified_file_is_never_a_move_source() -> None:
    # b.md now holds what a.md held, and a.md holds something else: two modifications.
    rows = {"a.md": indexed("A"), "b.md": indexed("B")}
    plan = plan_changes({"a.md": changed("A2"), "b.md": changed("A")}, rows)
    assert as_dict(plan) == expect(modified=["a.md", "b.md"])


def test_unreadable_indexed_file_is_modified_never_deleted() -> None:
    disk = {"a.md": DiskFile(200, 10, unreadable="cannot read (Permission denied)")}
    plan = plan_changes(disk, {"a.md": indexed("A")})
    assert as_dict(plan) == expect(modified=["a.md"], unreadable=["a.md"])
    assert plan.counts() == {
        "new": 0,
        "modified": 1,
        "moved": 0,
        "deleted": 0,
        "unchanged": 0,
        "unreadable": 1,
    }


def test_unreadable_new_file_is_only_reported() -> None:
    plan = plan_changes({"bin.md": DiskFile(1, 4, unreadable="binary file")}, {})
    assert as_dict(plan) == expect(unreadable=["bin.md"])
    assert plan.is_noop


def test_unreadable_file_is_not_a_move_target() -> None:
    plan = plan_changes({"b.md": DiskFile(1, 4, unreadable="binary")}, {"a.md": indexed("A")})
    assert as_dict(plan) == expect(deleted=["a.md"], unreadable=["b.md"])


def test_unreadable_with_unchanged_stat_is_unchanged() -> None:
    # Unchanged stat: the file is not read at all, so its unreadability cannot show.
    plan = plan_changes({"a.md": DiskFile(100, 10)}, {"a.md": indexed("A")})
    assert plan.unchanged == ["a.md"]


def test_every_path_lands_in_exactly_one_list() -> None:
    rows = {
        "same.md": indexed("S"),
        "touch.md": indexed("T"),
        "edit.md": indexed("E"),
        "gone.md": indexed("G"),
        "from.md": indexed("M"),
        "locked.md": indexed("L"),
    }
    disk = {
        "same.md": same(rows["same.md"]),
        "touch.md": changed("T"),
        "edit.md": changed("E2"),
        "to.md": changed("M"),
        "fresh.md": changed("F"),
        "locked.md": DiskFile(5, 5, unreadable="no access"),
    }
    plan = plan_changes(disk, rows)
    assert as_dict(plan) == expect(
        new=["fresh.md"],
        modified=["edit.md", "locked.md"],
        moved=[("from.md", "to.md")],
        deleted=["gone.md"],
        unchanged=["same.md"],
        touched=["touch.md"],
        unreadable=["locked.md"],
    )
    assert plan.counts() == {
        "new": 1,
        "modified": 2,
        "moved": 1,
        "deleted": 1,
        "unchanged": 2,
        "unreadable": 1,
    }


# -- scope: a partial update for a few paths ---------------------------------------------


def test_scope_plans_only_its_paths() -> None:
    rows = {"a.md": indexed("A"), "b.md": indexed("B"), "c.md": indexed("C")}
    disk = {"a.md": changed("A2"), "b.md": changed("B2"), "new.md": changed("N")}
    plan = plan_changes(disk, rows, scope={"a.md"})
    assert as_dict(plan) == expect(modified=["a.md"])  # not b.md, not c.md (gone), not new.md


def test_scope_deleted_path() -> None:
    rows = {"a.md": indexed("A"), "b.md": indexed("B")}
    plan = plan_changes({"a.md": changed("A2")}, rows, scope={"b.md"})
    assert as_dict(plan) == expect(deleted=["b.md"])


def test_scope_move_needs_both_paths() -> None:
    rows = {"old.md": indexed("A")}
    disk = {"new.md": changed("A")}
    assert plan_changes(disk, rows, scope={"old.md", "new.md"}).moved == [("old.md", "new.md")]
    only_target = plan_changes(disk, rows, scope={"new.md"})
    assert as_dict(only_target) == expect(new=["new.md"])
    only_source = plan_changes(disk, rows, scope={"old.md"})
    assert as_dict(only_source) == expect(deleted=["old.md"])


def test_scope_paths_unknown_everywhere_are_ignored() -> None:
    assert plan_changes({}, {}, scope={"nowhere.md"}).is_noop


def test_empty_scope_plans_nothing() -> None:
    plan = plan_changes({"a.md": changed("A")}, {"b.md": indexed("B")}, scope=set())
    assert as_dict(plan) == expect()


# -- stat_changed ---------------------------------------------------------------------------


def test_stat_changed() -> None:
    row = indexed("A", mtime=100, size=10)
    assert not stat_changed(DiskFile(100, 10), row)
    assert stat_changed(DiskFile(101, 10), row)
    assert stat_changed(DiskFile(100, 11), row)
    assert stat_changed(DiskFile(100, 10), None)
