"""`vault export` and `vault import` of an export: records per section, the round trip byte
for byte on the sample vault, filters, idempotence, newer exports, and exports that are cut
off or tampered with (refused whole, nothing written)."""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from vault_memory import Vault
from vault_memory.transfer import ImportFormatError, split_sections

SAMPLE = Path(__file__).resolve().parents[2] / "sample_vault"


def markdown(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*.md"))
        if ".vault" not in p.parts
    }


def exported(vault: Vault, **options: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    vault.export(out, **options)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "sample"))


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_round_trip_of_the_sample_vault_byte_for_byte(
    sample: Path, tmp_path: Path, run_cli, fmt: str
) -> None:
    result = run_cli("export", "--format", fmt, cwd=sample)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("exported 25 files, ")
    path = tmp_path / f"backup.{fmt}"
    path.write_bytes(result.stdout_bytes)
    empty = Vault.init(tmp_path / "empty").root
    done = run_cli("import", str(path), cwd=empty)
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("25 files: 25 written, 0 extended")
    assert markdown(empty) == markdown(sample)
    again = run_cli("import", str(path), cwd=empty)
    assert again.stdout.startswith("25 files: 0 written, 0 extended, 0 merged, 25 unchanged")


def test_records_say_what_each_section_is(sample: Path) -> None:
    records = exported(Vault(sample))
    header, end = records[0], records[-1]
    assert header["type"] == "header" and header["format"] == "vault-memory-export"
    assert header["version"] == 1 and header["vault_format"] == 1
    assert end == {
        "type": "end",
        "files": 25,
        "sections": sum(r["type"] == "section" for r in records),
    }
    by_path: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if record["type"] == "section":
            by_path.setdefault(record["path"], []).append(record)
    for path, sections in by_path.items():
        assert "".join(s["text"] for s in sections).encode() == (sample / path).read_bytes()
        lines = [n for s in sections for n in range(s["start_line"], s["end_line"] + 1)]
        assert lines == list(range(1, len(lines) + 1))
    flushed = [s for s in records if s["type"] == "section" and s["source"] == "flush"]
    assert flushed, "the sample vault has flushed blocks"
    block = flushed[0]
    assert block["kind"] == "daily" and block["date"] == block["path"][7:17]
    assert block["session"] and block["time"] and block["heading"].startswith(block["date"])
    memory = [s for s in by_path["MEMORY.md"] if "pin" in s["tags"]]
    assert memory and memory[0]["kind"] == "memory" and memory[0]["scope"] == ""


def test_kind_and_date_filters(sample: Path) -> None:
    vault = Vault(sample)
    files = [r["path"] for r in exported(vault, kinds="memory,notes") if r["type"] == "file"]
    assert "MEMORY.md" in files and any(p.startswith("notes/") for p in files)
    assert not any(p.startswith("memory/") for p in files)
    dated = [
        r["path"]
        for r in exported(vault, since="2026-11-10", until="2026-11-12")
        if r["type"] == "file"
    ]
    assert dated == ["memory/2026-11-10.md", "memory/2026-11-11.md", "memory/2026-11-12.md"]
    with pytest.raises(Exception, match="unknown kind 'pictures'"):
        exported(vault, kinds="pictures")


def test_a_scope_exports_its_own_files(vault_dir: Path) -> None:
    vault = Vault(vault_dir)
    vault.add("Root fact.")
    vault.scope("acme").add("Acme fact.")
    files = [r["path"] for r in exported(vault.scope("acme")) if r["type"] == "file"]
    assert files and all(p.startswith("scopes/acme/") for p in files)


def test_transcripts_in_sessions_name_their_session(vault_dir: Path) -> None:
    (vault_dir / "sessions").mkdir()
    (vault_dir / "sessions" / "2026-11-22-7f3a.md").write_text("### user · 14:03\nHello\n")
    (vault_dir / "sessions" / "2026-11-23-x.md").write_text("---\nsession: support-42\n---\nHi\n")
    records = exported(Vault(vault_dir), kinds="sessions")
    sections = [(r["path"], r["session"]) for r in records if r["type"] == "section"]
    assert sections == [
        ("sessions/2026-11-22-7f3a.md", "7f3a"),
        ("sessions/2026-11-23-x.md", "support-42"),
    ]
    assert {r["kind"] for r in records if r["type"] == "file"} == {"session"}


def test_a_dry_run_and_a_scope_that_may_not_write_it(
    sample: Path, tmp_path: Path, tree_state
) -> None:
    backup = tmp_path / "b.jsonl"
    backup.write_text("".join(_lines(sample)))
    empty = Vault(Vault.init(tmp_path / "empty").root)
    before = tree_state(empty.root)
    report = empty.import_history(backup, dry_run=True)
    assert report.files is not None and len(report.files.done["written"]) == 25
    assert tree_state(empty.root) == before
    with pytest.raises(ImportFormatError, match="line 2: .*MEMORY.md.*acme"):
        empty.scope("acme").import_history(backup)
    assert tree_state(empty.root) == before


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(position=0.0078125, byte=b"x", cut=False)  # the header damaged: not an export
@given(
    position=st.floats(0, 1),
    byte=st.sampled_from([b"x", b"}", b'"', b"\n", b"1"]),
    cut=st.booleans(),
)
def test_fuzzed_exports_write_the_same_files_or_nothing(
    tmp_path_factory: pytest.TempPathFactory, position: float, byte: bytes, cut: bool
) -> None:
    work = tmp_path_factory.mktemp("fuzz")
    source = Vault(Vault.init(work / "source").root)
    source.add("Chose PostgreSQL for billing. #decision", when=dt.datetime(2026, 1, 2, 9, 0))
    source.add("Prefers short answers.", when=dt.datetime(2026, 1, 3, 10, 0))
    data = bytearray("".join(_lines(source.root)).encode())
    at = min(int(len(data) * position), len(data) - 1)
    data = data[:at] if cut else data[:at] + byte + data[at + 1 :]
    path = work / "e.jsonl"
    path.write_bytes(bytes(data))
    target = Vault(Vault.init(work / "target").root)
    before = markdown(target.root)
    try:
        target.import_history(path)
    except ImportFormatError as exc:
        assert "Nothing was written" in str(exc)
        assert markdown(target.root) == before
        return
    # Whole, or not at all: a first line damaged so that the file is no longer an export is
    # read as a chat history instead, found to hold none, and skipped with a warning.
    assert markdown(target.root) in (markdown(source.root), before)


def test_a_newer_export_extends_and_merges_daily_logs(sample: Path, tmp_path: Path) -> None:
    copy = Vault.init(tmp_path / "copy").root
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join(json.dumps(r) for r in exported(Vault(sample))) + "\n")
    Vault(copy).import_history(old)
    # the source grows a day; the copy gets its own entry on another day
    Vault(sample).add(
        "Booked the offsite in Uppsala.", when=__import__("datetime").datetime(2026, 11, 21, 18, 5)
    )
    Vault(copy).add("Copy-only note.", when=__import__("datetime").datetime(2026, 11, 20, 9, 0))
    new = tmp_path / "new.jsonl"
    new.write_text("\n".join(json.dumps(r) for r in exported(Vault(sample))) + "\n")
    (sample / "notes" / "ci-flaky-tests.md").write_text("rewritten at the source\n")
    report = Vault(copy).import_history(new)
    assert report.files is not None
    assert report.files.done["extended"] == ["memory/2026-11-21.md"]
    assert report.files.done["written"] == [] and report.files.done["conflict"] == []
    assert "Copy-only note." in (copy / "memory/2026-11-20.md").read_text()
    assert (copy / "memory/2026-11-21.md").read_bytes() == (
        sample / "memory/2026-11-21.md"
    ).read_bytes()
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(json.dumps(r) for r in exported(Vault(sample))) + "\n")
    kept = Vault(copy).import_history(changed)
    assert kept.files is not None and kept.files.done["conflict"] == ["notes/ci-flaky-tests.md"]
    assert (copy / "notes/ci-flaky-tests.md").read_text() != "rewritten at the source\n"


def test_a_diverged_daily_log_gets_the_blocks_it_lacks(vault_dir: Path, tmp_path: Path) -> None:
    import datetime as dt

    source = Vault(Vault.init(tmp_path / "source").root)
    source.add("Shared first entry.", when=dt.datetime(2026, 5, 1, 9, 0))
    target = Vault(vault_dir)
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join(json.dumps(r) for r in exported(source)) + "\n")
    target.import_history(first)
    source.add("Only at the source.", when=dt.datetime(2026, 5, 1, 10, 0))
    target.add("Only in the copy.", when=dt.datetime(2026, 5, 1, 11, 0))
    second = tmp_path / "second.jsonl"
    second.write_text("\n".join(json.dumps(r) for r in exported(source)) + "\n")
    report = target.import_history(second)
    assert report.files is not None and report.files.done["merged"] == ["memory/2026-05-01.md"]
    text = (vault_dir / "memory/2026-05-01.md").read_text()
    assert [text.count(s) for s in ("Shared first", "Only at the source", "Only in the copy")] == [
        1,
        1,
        1,
    ]
    assert "memory/2026-05-01.md" in target.import_history(second).files.done["unchanged"]


def _lines(sample: Path) -> list[str]:
    out = io.StringIO()
    Vault(sample).export(out)
    return out.getvalue().splitlines(keepends=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda lines: lines[:-1], "ends without its end record: the export was cut off"),
        (lambda lines: lines[:5] + lines[-1:], "has 3 of its 7 sections: the export was cut off"),
        (lambda lines: [*lines[:-1], lines[-1][:10]], "is not JSON"),
        (
            lambda lines: [lines[0].replace('"version":1', '"version":9'), *lines[1:]],
            "format version 9 is newer than this vault-memory reads",
        ),
        (lambda lines: lines[1:], "the first record is not the header"),
        (
            lambda lines: [lines[0], lines[1], lines[2].replace("Maya", "Mia", 1), *lines[3:]],
            "the sections of MEMORY.md do not match its sha256",
        ),
        (
            lambda lines: [
                lines[0],
                lines[1].replace('"MEMORY.md"', '"../escape.md"', 1),
                *lines[2:],
            ],
            "escape.md",
        ),
        (
            lambda lines: [
                lines[0],
                lines[1].replace('"MEMORY.md"', '"vault.toml"', 1),
                *lines[2:],
            ],
            "vault.toml is not a Markdown file of a vault",
        ),
    ],
)
def test_a_damaged_export_is_refused_whole(
    sample: Path, tmp_path: Path, tree_state, change: Any, message: str
) -> None:
    lines = _lines(sample)
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(change(lines)))
    empty = Vault(Vault.init(tmp_path / "empty").root)
    before = tree_state(empty.root)
    with pytest.raises(ImportFormatError) as caught:
        empty.import_history(path)
    assert message in str(caught.value) and "Nothing was written" in str(caught.value)
    assert tree_state(empty.root) == before


def test_cli_export_to_a_file(sample: Path, tmp_path: Path, run_cli) -> None:
    target = tmp_path / "out.jsonl"
    result = run_cli("export", "-o", str(target), "--kind", "daily", cwd=sample)
    assert result.exit_code == 0 and result.stdout == ""
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert {r["kind"] for r in records if r["type"] == "file"} == {"daily"}
    assert not (tmp_path / "out.jsonl.partial").exists()
    bad = run_cli("export", "--since", "2026-12-01", "--until", "2026-01-01", cwd=sample)
    assert bad.exit_code == 1 and "is after --until" in bad.stderr


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "# T",
                "## 10:00 · note · session s",
                "- item #tag",
                "```",
                "# in code",
                "---",
                "a: b",
                "",
                "  cont",
                "text\r",
                "\ufeffbom",
                "### deep",
            ]
        ),
        max_size=25,
    ),
    st.booleans(),
)
def test_sections_join_to_the_file_exactly(lines: list[str], final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    sections = split_sections("memory/2026-01-02.md", text)
    assert "".join(s["text"] for s in sections) == text
    spans = [n for s in sections for n in range(s["start_line"], s["end_line"] + 1)]
    assert spans == list(range(1, len(spans) + 1))
