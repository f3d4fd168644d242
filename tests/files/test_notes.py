"""notes: the Markdown model (headings, frontmatter, tags, links, daily entries), and proof that
no read path changes a byte of the file it reads."""

from __future__ import annotations

import datetime as dt
import hashlib
import textwrap
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.errors import InvalidTagError
from vault_memory.files.fsutil import read_text
from vault_memory.files.notes import (
    check_tag,
    date_from_name,
    format_entry,
    note_kind,
    parse_entry_heading,
    parse_note,
)


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def spans(note) -> list[tuple[int, str, int, int]]:
    return [(h.level, h.title, h.line, h.end_line) for h in note.headings]


# -- headings ------------------------------------------------------------------------------

TREE = md(
    """
    # Project
    intro

    ## Goals
    - fast

    ### Stretch
    - faster
    ## Risks
    ```python
    # not a heading
    ## nor this
    ```
    ~~~
    # still code
    ```
    ## inside a tilde fence: code too
    ~~~
    #notaheading but a tag
    # Second top
    last
    """
)


def test_heading_tree_spans_are_one_based_and_inclusive() -> None:
    note = parse_note("notes/p.md", TREE)
    assert len(note.lines) == 21
    assert spans(note) == [
        (1, "Project", 1, 19),
        (2, "Goals", 4, 8),
        (3, "Stretch", 7, 8),
        (2, "Risks", 9, 19),
        (1, "Second top", 20, 21),
    ]
    assert note.code_lines == frozenset(range(10, 19))
    assert note.tags == {"notaheading"}
    assert note.title == "Project"


def test_heading_path_encloses_a_line_outermost_first() -> None:
    note = parse_note("notes/p.md", TREE)

    def path(line: int) -> list[str]:
        return [h.title for h in note.heading_path(line)]

    assert path(2) == ["Project"]
    assert path(1) == ["Project"]
    assert path(4) == ["Project", "Goals"]
    assert path(5) == ["Project", "Goals"]
    assert path(8) == ["Project", "Goals", "Stretch"]
    assert path(9) == ["Project", "Risks"]
    assert path(12) == ["Project", "Risks"]  # inside code: the enclosing real headings
    assert path(19) == ["Project", "Risks"]
    assert path(21) == ["Second top"]


def test_heading_path_before_any_heading_and_with_skipped_levels() -> None:
    note = parse_note(
        "n.md",
        md(
            """
        preamble
        # A
        ### deep
        x
        ## B
        y
        """
        ),
    )
    assert note.heading_path(1) == []
    assert [h.title for h in note.heading_path(4)] == ["A", "deep"]
    assert [h.title for h in note.heading_path(6)] == ["A", "B"]


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ("## Title ##", "Title"),
        ("## Title   ", "Title"),
        ("## Learn C#", "Learn C#"),
        ("## #tag first", "#tag first"),
        ("###### Six", "Six"),
        ("## ###", ""),
    ],
)
def test_heading_titles(line: str, title: str) -> None:
    assert [h.title for h in parse_note("n.md", line + "\n").headings] == [title]


@pytest.mark.parametrize("line", ["####### seven", "#tag", "    # indented code", "#"])
def test_not_headings(line: str) -> None:
    assert parse_note("n.md", line + "\n").headings == []


def test_unclosed_fence_runs_to_the_end() -> None:
    note = parse_note("n.md", "# A\n```\n# B\n")
    assert spans(note) == [(1, "A", 1, 3)]
    assert note.code_lines == frozenset({2, 3})


def test_title_falls_back_to_frontmatter_then_file_name() -> None:
    assert parse_note("n.md", "---\ntitle: From FM\n---\n# Heading\n").title == "From FM"
    assert parse_note("notes/plain-note.md", "no heading\n").title == "plain-note"


# -- frontmatter ---------------------------------------------------------------------------


def test_frontmatter_parsed_and_excluded_from_the_body() -> None:
    text = md(
        """
        ---
        title: Billing
        tags: [Decision, db]
        date: 2026-11-22
        # comment: not a heading
        ---
        # Body #inline
        """
    )
    note = parse_note("notes/b.md", text)
    assert note.frontmatter == {
        "title": "Billing",
        "tags": ["Decision", "db"],
        "date": dt.date(2026, 11, 22),
    }
    assert note.frontmatter_end == 6
    assert note.frontmatter_error is None
    assert spans(note) == [(1, "Body #inline", 7, 7)]
    assert note.tags == {"decision", "db", "inline"}


def test_frontmatter_closed_with_dots() -> None:
    note = parse_note("n.md", "---\na: 1\n...\ntext\n")
    assert (note.frontmatter, note.frontmatter_end) == ({"a": 1}, 3)


def test_broken_frontmatter_is_reported_not_fatal() -> None:
    note = parse_note("n.md", "---\ntitle: [unclosed\ntags: [x\n---\n# Still here #ok\n")
    assert note.frontmatter == {}
    assert note.frontmatter_end == 4
    assert note.frontmatter_error is not None
    assert note.frontmatter_error.startswith("broken frontmatter (")
    assert "indexed as plain text" in note.frontmatter_error
    assert spans(note) == [(1, "Still here #ok", 5, 5)]
    assert note.tags == {"ok"}


def test_an_unterminated_dash_line_is_not_frontmatter() -> None:
    note = parse_note("n.md", "---\n# Heading\n")
    assert note.frontmatter_end == 0
    assert spans(note) == [(1, "Heading", 2, 2)]


def test_crlf_and_bom_parse_like_plain_text() -> None:
    plain = "---\ntags: a\n---\n# Head\n- item #t\n"
    for text in (plain, plain.replace("\n", "\r\n"), "\ufeff" + plain):
        note = parse_note("n.md", text)
        assert note.frontmatter == {"tags": "a"}
        assert spans(note) == [(1, "Head", 4, 5)]
        assert note.tags == {"a", "t"}
        assert note.lines == ["---", "tags: a", "---", "# Head", "- item #t"]


# -- tags ----------------------------------------------------------------------------------


def test_inline_tags() -> None:
    text = md(
        """
        # Heading #InHeading
        - Chose PostgreSQL #decision and #Project/Billing-2026.
        - see memory/2026-11-22.md#L4 and https://x.example/page#section
        - ticket #123, C# and a&#39;b are not tags
        - first#word is not a tag either
        <!-- src: memory/2026-11-22.md #hidden -->
        - `#inline-code` is code
        ```
        #fenced
        ```
        #start-of-line
        """
    )
    assert parse_note("n.md", text).tags == {
        "inheading",
        "decision",
        "project/billing-2026",
        "start-of-line",
    }


@pytest.mark.parametrize(
    ("frontmatter", "tags"),
    [
        ("tags: [Alpha, '#beta']", {"alpha", "beta"}),
        ("tags:\n  - One\n  - two", {"one", "two"}),
        ("tags: alpha, Beta gamma", {"alpha", "beta", "gamma"}),
        ("tag: single", {"single"}),
        ("tags: 42", set()),
        ("tags:", set()),
    ],
)
def test_frontmatter_tags(frontmatter: str, tags: set[str]) -> None:
    assert parse_note("n.md", f"---\n{frontmatter}\n---\nbody\n").tags == tags


# -- wikilinks -----------------------------------------------------------------------------


def test_wikilinks() -> None:
    text = md(
        """
        See [[a]], [[b|alias]], [[c#Heading]] and [[d#h|both]].
        Again [[a]] and [[ spaced name ]].
        ```
        [[in code]]
        ```
        [[#same-note heading]] [not a link] [[]]
        """
    )
    assert parse_note("n.md", text).links == ("a", "b", "c", "d", "spaced name")


# -- kinds, dates, entries -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("relpath", "kind"),
    [
        ("MEMORY.md", "memory"),
        ("memory/2026-11-22.md", "daily"),
        ("dreams/2026-11-22.md", "diary"),
        ("dreams/x.md", "diary"),
        ("notes/x.md", "note"),
        ("memory/sub/x.md", "note"),
        ("memory/sub/2026-11-22.md", "note"),
        ("memory/notes.md", "note"),
        ("notes/MEMORY.md", "note"),
        ("2026-11-22.md", "note"),
        ("dreams", "note"),
    ],
)
def test_note_kind(relpath: str, kind: str) -> None:
    assert note_kind(relpath) == kind
    assert parse_note(relpath, "x\n").kind == kind


@pytest.mark.parametrize(
    ("relpath", "date"),
    [
        ("memory/2026-11-22.md", dt.date(2026, 11, 22)),
        ("dreams/2024-02-29.md", dt.date(2024, 2, 29)),
        ("notes/2026-01-05.md", dt.date(2026, 1, 5)),
        ("memory/2026-02-30.md", None),
        ("memory/2026-11-22-extra.md", None),
        ("memory/2026-11-22.txt", None),
        ("MEMORY.md", None),
    ],
)
def test_date_from_name(relpath: str, date: dt.date | None) -> None:
    assert date_from_name(relpath) == date
    assert parse_note(relpath, "").date == date


DAILY = md(
    """
    # 2026-11-22

    ## 09:00 — session 3
    - morning notes

    ## 14:03 · flush · session 7f3a
    - Chose PostgreSQL for the billing service. #decision
    - Prefers short answers with code first.

    ## Not an entry
    text
    ### 14:30 · nested, not an entry
    ## 15:10 · note
    - Call the dentist on Friday. #todo
    """
)


def test_daily_log_entries() -> None:
    note = parse_note("memory/2026-11-22.md", DAILY)
    assert note.kind == "daily"
    assert note.date == dt.date(2026, 11, 22)
    got = [
        (e.time, e.source, e.session, e.heading_line, e.start_line, e.end_line)
        for e in note.entries()
    ]
    assert got == [
        ("09:00", "", "3", 3, 4, 5),
        ("14:03", "flush", "7f3a", 6, 7, 9),
        ("15:10", "note", None, 13, 14, 14),
    ]
    assert note.lines[6] == "- Chose PostgreSQL for the billing service. #decision"
    assert note.tags == {"decision", "todo"}


@pytest.mark.parametrize(
    ("title", "parsed"),
    [
        ("14:03 · flush · session 7f3a", ("14:03", "flush", "7f3a")),
        ("15:10 · note", ("15:10", "note", None)),
        ("09:00 — session 3", ("09:00", "", "3")),
        ("9:05 - flush - abc", ("9:05", "flush", "abc")),
        ("14:03", ("14:03", "", None)),
        ("Notes from 14:03", None),
        ("Meeting", None),
    ],
)
def test_parse_entry_heading(title: str, parsed: tuple[str, str, str | None] | None) -> None:
    assert parse_entry_heading(title) == parsed


def test_format_entry_round_trips_through_the_parser() -> None:
    when = dt.datetime(2026, 11, 22, 14, 3)
    block = format_entry(
        "Chose PostgreSQL\n- already a bullet\n\n  indented",
        when,
        "flush",
        "7f3a",
        tags=("decision", "#db"),
    )
    assert block == (
        "\n## 14:03 · flush · session 7f3a\n- Chose PostgreSQL\n- already a bullet\n\n"
        "  indented #decision #db\n"
    )
    note = parse_note("memory/2026-11-22.md", "# 2026-11-22\n" + block)
    [entry] = note.entries()
    assert (entry.time, entry.source, entry.session) == ("14:03", "flush", "7f3a")
    assert (entry.heading_line, entry.end_line) == (3, 7)
    assert note.tags == {"decision", "db"}


# -- tags a user gives ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "written"),
    [
        ("decision", "decision"),
        ("#todo", "todo"),
        ("project/alpha-2", "project/alpha-2"),
        ("snake_case", "snake_case"),
        ("y1984", "y1984"),
        ("café", "café"),
        ("cafe\u0301", "café"),  # decomposed: written composed
    ],
)
def test_valid_tags_are_written_as_given(tag: str, written: str) -> None:
    assert check_tag(tag) == written
    block = format_entry("Chose PostgreSQL", dt.datetime(2026, 11, 22, 14, 3), "note", tags=(tag,))
    assert block.endswith(f"- Chose PostgreSQL #{written}\n")


@pytest.mark.parametrize(
    ("tag", "advice"),
    [
        ("two words", "Use 'two-words' instead."),
        ("#two words", "Use 'two-words' instead."),
        ("C++ tips!", "Use 'C-tips' instead."),
        ("a//b", "Use 'a/b' instead."),
        ("/inbox/", "Use 'inbox' instead."),
        ("10%", "Give a word with a letter in it, e.g. 'decision'."),
        ("1984", "Give a word with a letter in it, e.g. 'decision'."),
        ("2026/11", "Give a word with a letter in it, e.g. 'decision'."),
        ("", "Give a word with a letter in it, e.g. 'decision'."),
        ("#", "Give a word with a letter in it, e.g. 'decision'."),
        ("🙂", "Give a word with a letter in it, e.g. 'decision'."),
    ],
)
def test_a_tag_obsidian_would_not_read_is_refused(tag: str, advice: str) -> None:
    with pytest.raises(InvalidTagError) as info:
        format_entry("x", dt.datetime(2026, 11, 22, 14, 3), "note", tags=("ok", tag))
    message = str(info.value)
    assert message.startswith(
        f"{tag!r} is not a valid tag: a tag holds letters, digits, _, - "
        "and / (between nested parts), and not only digits. "
    )
    assert advice in message and "\n" not in message


def test_vault_add_refuses_a_bad_tag_and_writes_nothing(
    vault_dir: Path, run_cli, tree_state
) -> None:
    before = tree_state(vault_dir)
    with pytest.raises(InvalidTagError, match="Use 'two-words' instead"):
        Vault(vault_dir).add("Chose PostgreSQL", tags=("two words",))
    result = run_cli("add", "Chose PostgreSQL", "--tag", "#two words", cwd=vault_dir)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (
        "Error: 'two words' is not a valid tag: a tag holds letters, "
        "digits, _, - and / (between nested parts), and not only digits. "
        "Use 'two-words' instead.\n"
    )
    assert tree_state(vault_dir) == before
    assert run_cli("add", "Chose PostgreSQL", "--tag", "two-words", cwd=vault_dir).exit_code == 0


# -- reading never writes ------------------------------------------------------------------

SAMPLES = {
    "frontmatter.md": b"---\ntitle: Kept\ntags: [b, a]   # odd spacing stays\n---\n# Body\n",
    "broken-frontmatter.md": b"---\ntitle: [oops\n---\n# Body\n",
    "crlf.md": b"# CRLF\r\n\r\n- one\r\n- two\r\n",
    "bom.md": b"\xef\xbb\xbf---\r\ntitle: BOM\r\n---\r\n# Body\r\nno final newline",
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_read_path_leaves_the_file_byte_identical(
    vault_dir: Path, run_cli, name: str
) -> None:
    data = SAMPLES[name]
    path = vault_dir / "notes" / name
    path.parent.mkdir()
    path.write_bytes(data)
    old = (path.stat().st_mtime_ns, path.stat().st_ino)

    note = parse_note(f"notes/{name}", read_text(path, f"notes/{name}").text)
    assert note.headings[0].title in {"Body", "CRLF"}
    got = Vault(vault_dir).get(f"notes/{name}")
    assert got.text.encode("utf-8") == data
    result = run_cli("--vault", str(vault_dir), "get", f"notes/{name}")
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == data
    result = run_cli("--vault", str(vault_dir), "get", f"notes/{name}:2-3", "--json")
    assert result.exit_code == 0, result.stderr

    assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(data).digest()
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == old
    assert sorted(p.name for p in path.parent.iterdir()) == [name]


@pytest.mark.parametrize("tag", ["decision", "2024-goals", "_inbox", "élan", "project/alpha-2"])
def test_a_tag_that_is_accepted_is_read_back_as_a_tag(tag: str) -> None:
    """What `vault add --tag` accepts, the index reads as a tag (and Obsidian does too)."""
    block = format_entry(
        "Chose PostgreSQL", dt.datetime(2026, 11, 22, 14, 3), "note", tags=(check_tag(tag),)
    )
    assert tag in parse_note("memory/2026-11-22.md", "# 2026-11-22\n" + block).tags


def test_numbers_and_anchors_are_not_tags() -> None:
    note = parse_note("notes/a.md", "# A\n\nticket #42, see file.md#L4 and [[#Heading]]\n")
    assert note.tags == frozenset()
