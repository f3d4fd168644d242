"""Indexing is linear in file size on every shape (the timing is in
bench/shapes.py; here, that the linear heading spans and heading paths give what the simple
quadratic ones gave), and CR-only files are split into lines."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from vault_memory.files import fsutil, parse_note
from vault_memory.files.notes import Heading
from vault_memory.index.units import _spans as unit_spans

from ..support import scoped  # noqa: F401 - keeps hypothesis's caches out of the checkout


def _reference_spans(raw: list[tuple[int, int, str]], total: int) -> list[Heading]:
    headings = []
    for i, (line, level, title) in enumerate(raw):
        end = total
        for later_line, later_level, _ in raw[i + 1 :]:
            if later_level <= level:
                end = later_line - 1
                break
        headings.append(Heading(level, title, line, end))
    return headings


def _reference_path(headings: list[Heading], line: int) -> list[Heading]:
    path: list[Heading] = []
    for h in headings:
        if h.line > line:
            break
        if h.end_line >= line:
            while path and path[-1].level >= h.level:
                path.pop()
            path.append(h)
    return path


_LINE = st.one_of(
    st.integers(1, 6).map(lambda n: "#" * n + " Title"),
    st.just("- an item"),
    st.just("text of a paragraph."),
    st.just(""),
    st.just("```"),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINE, max_size=60))
def test_heading_spans_and_paths_are_those_of_the_simple_scan(lines: list[str]) -> None:
    note = parse_note("notes/n.md", "\n".join(lines) + "\n")
    raw = [(h.line, h.level, h.title) for h in note.headings]
    assert note.headings == _reference_spans(raw, len(note.lines))
    for line in range(1, len(note.lines) + 2):
        assert note.heading_path(line) == _reference_path(note.headings, line)


def test_a_deeply_indented_list_is_split_as_a_list() -> None:
    text = "".join("  " * depth + f"- item {depth}\n" for depth in range(300))
    note = parse_note("notes/deep.md", text)
    spans = unit_spans(note)
    assert spans[0] == (1, 1) and len(spans) >= 20  # one unit per item, lists capped by lines


def test_cr_only_line_ends_are_split_into_lines() -> None:
    text = "# Old Mac file\r\rfirst line\rsecond line\r"
    assert fsutil.split_lines(text) == ["# Old Mac file", "", "first line", "second line"]
    note = parse_note("notes/mac.md", text)
    assert [h.title for h in note.headings] == ["Old Mac file"]
    assert len(note.lines) == 4
    # CRLF and LF files are as they were
    assert fsutil.split_lines("a\r\nb\r\n") == ["a", "b"]
    assert fsutil.split_lines("a\rb\nc") == ["a\rb", "c"]  # a stray CR in an LF file stays
