"""The chunker: a parsed note -> small units with exact 1-based inclusive line spans."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from vault_memory.files.fsutil import split_lines
from vault_memory.files.notes import parse_note
from vault_memory.index.units import (
    BURST_CHARS,
    MAX_UNIT_LINES,
    UNITS,
    Unit,
    chunked_otherwise,
    make_units,
    note_fields,
)

SAMPLE = Path(__file__).resolve().parents[2] / "sample_vault"


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def units(text: str, relpath: str = "notes/n.md") -> list[Unit]:
    return make_units(parse_note(relpath, text))


def spans(text: str, relpath: str = "notes/n.md") -> list[tuple[int, int, str]]:
    return [(u.start_line, u.end_line, u.text) for u in units(text, relpath)]


def test_list_items_with_continuation_lines() -> None:
    text = md(
        """
        # T

        - one
          continued here
          and here
        - two
        1. numbered
        2) numbered too
        * star
        + plus
        """
    )
    assert spans(text) == [
        (3, 5, "- one\n  continued here\n  and here"),
        (6, 6, "- two"),
        (7, 7, "1. numbered"),
        (8, 8, "2) numbered too"),
        (9, 9, "* star"),
        (10, 10, "+ plus"),
    ]


def test_long_list_item_is_cut_at_five_lines() -> None:
    text = "- a\n" + "".join(f"  line {i}\n" for i in range(1, 8))
    found = spans(text)
    assert found[0] == (1, 5, "- a\n  line 1\n  line 2\n  line 3\n  line 4")
    assert [(s, e) for s, e, _ in found[1:]] == [(6, 8)]
    assert all(e - s + 1 <= MAX_UNIT_LINES for s, e, _ in found)


def test_paragraph_split_every_three_lines() -> None:
    text = md(
        """
        short line one
        short line two
        short line three
        short line four
        short line five

        next paragraph
        """
    )
    assert [(s, e) for s, e, _ in spans(text)] == [(1, 3), (4, 5), (7, 7)]


def test_paragraph_split_at_a_sentence_end() -> None:
    long_sentence = (
        "This sentence is long enough to close a unit on its own, as it has very many words."
    )
    assert len(long_sentence) >= 80
    text = f"{long_sentence}\nThe next sentence starts a new unit\nand goes on.\n"
    assert [(s, e) for s, e, _ in spans(text)] == [(1, 1), (2, 3)]


def test_short_sentences_stay_together() -> None:
    text = "Short one.\nShort two.\nShort three.\n"
    assert [(s, e) for s, e, _ in spans(text)] == [(1, 3)]


def test_code_block_in_units_of_five_lines_without_fences() -> None:
    body = "".join(f"x{i} = {i}\n" for i in range(12))
    text = "# T\n\n```python\n" + body + "```\nafter\n"
    found = spans(text)
    assert [(s, e) for s, e, _ in found] == [(4, 8), (9, 13), (14, 15), (17, 17)]
    assert found[0][2] == "x0 = 0\nx1 = 1\nx2 = 2\nx3 = 3\nx4 = 4"
    assert not any("```" in t for _, _, t in found)


def test_code_block_keeps_blank_lines_and_headings_inside() -> None:
    text = "```\n# not a heading\n\nvalue\n```\n"
    assert spans(text) == [(2, 4, "# not a heading\n\nvalue")]


def test_table_rows_are_units_and_the_rule_is_not() -> None:
    text = md(
        """
        ## Risks
        | Risk | Mitigation |
        |------|:----------:|
        | Rounding | Keep stored totals |
        | Overrun | Rehearse |
        """
    )
    assert spans(text) == [
        (2, 2, "| Risk | Mitigation |"),
        (4, 4, "| Rounding | Keep stored totals |"),
        (5, 5, "| Overrun | Rehearse |"),
    ]


def test_frontmatter_is_no_unit_but_fields_of_the_note() -> None:
    """Properties are fields of the note's units, never text to rank."""
    text = md(
        """
        ---
        title: Billing migration
        tags: [billing, postgres]
        ---
        # Heading

        Body text.
        """
    )
    found = units(text)
    assert [(u.start_line, u.text) for u in found] == [(7, "Body text.")]
    fields = note_fields(parse_note("notes/n.md", text))
    assert fields.tags == ("billing", "postgres")
    assert ("title", "Billing migration") in fields.properties


def test_a_frontmatter_that_does_not_parse_is_searched_as_text() -> None:
    text = "---\nk: [unclosed\n---\nbody\n"
    assert spans(text) == [(2, 2, "k: [unclosed"), (4, 4, "body")]


def test_empty_frontmatter_makes_no_unit() -> None:
    assert spans("---\n---\nbody\n") == [(3, 3, "body")]


def test_headings_are_never_units() -> None:
    text = md(
        """
        # One
        ## Two
        ### Three
        text
        #### Four
        """
    )
    assert spans(text) == [(4, 4, "text")]
    assert units("# Only a heading\n") == []


def test_heading_path() -> None:
    text = md(
        """
        # 2026-11-22

        ## 14:03 · flush · session 7f3a
        - Chose PostgreSQL for billing.

        ### Detail
        - nested

        ## 15:10 · note
        - Call the dentist.
        """
    )
    headings = [(u.start_line, u.heading) for u in units(text, "memory/2026-11-22.md")]
    assert headings == [
        (4, "2026-11-22 > 14:03 · flush · session 7f3a"),
        (7, "2026-11-22 > 14:03 · flush · session 7f3a > Detail"),
        (10, "2026-11-22 > 15:10 · note"),
    ]


def test_text_before_any_heading_has_an_empty_heading() -> None:
    assert units("plain\n")[0].heading == ""


def test_tags_from_the_unit_and_its_headings() -> None:
    text = md(
        """
        # Log #project
        ## Decisions
        - Chose PostgreSQL. #decision #Billing
        - Not a tag: file.md#L4, #123, `#code`, [[#Decisions]]
        """
    )
    found = units(text)
    assert found[0].tags == ("billing", "decision", "project")
    assert found[1].tags == ("project",)


@pytest.mark.parametrize(
    ("relpath", "line", "salience"),
    [
        ("notes/n.md", "- plain", 1.0),
        ("notes/n.md", "- key fact #important", 1.5),
        ("notes/n.md", "- never drop #pin", 1.5),
        ("notes/n.md", "- both #important #pin", 2.0),
        ("MEMORY.md", "- plain", 1.3),
        ("MEMORY.md", "- key fact #important", 1.8),
        ("memory/2026-11-22.md", "- key fact #important", 1.5),
    ],
)
def test_salience(relpath: str, line: str, salience: float) -> None:
    (unit,) = units(f"# Title\n\n{line}\n", relpath)
    assert unit.salience == salience


def test_pinned_section_raises_salience_of_its_units() -> None:
    text = "# MEMORY\n\n## About Maya #pin\n- Senior backend engineer.\n"
    (unit,) = units(text, "MEMORY.md")
    assert unit.tags == ("pin",)
    assert unit.salience == 1.8


def test_crlf_file_has_the_same_spans_without_carriage_returns() -> None:
    text = "# T\n\n- one\n  two\n\npara\n"
    crlf = text.replace("\n", "\r\n")
    assert spans(crlf) == spans(text)
    assert not any("\r" in t for _, _, t in spans(crlf))


def test_bom_does_not_hide_the_first_heading() -> None:
    assert spans("\ufeff# Title\n\n- item\n") == [(3, 3, "- item")]
    assert units("\ufeff# Title\n\n- item\n")[0].heading == "Title"


def test_sha256_is_of_the_text() -> None:
    a, b = units("- same\n\n- same\n")
    assert a.sha256 == b.sha256 and len(a.sha256) == 64
    assert a.sha256 != units("- other\n")[0].sha256


# -- properties over every file of the sample vault -------------------------------------------


def _sample_files() -> list[Path]:
    return sorted(
        p
        for p in SAMPLE.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(SAMPLE).parts)
    )


@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: p.relative_to(SAMPLE).as_posix())
def test_units_are_exact_line_spans_of_the_file(path: Path) -> None:
    relpath = path.relative_to(SAMPLE).as_posix()
    text = path.read_bytes().decode("utf-8")
    note = parse_note(relpath, text)
    lines = split_lines(text)
    found = make_units(note)
    assert found
    covered: list[int] = []
    headings = {h.line for h in note.headings}
    for unit in found:
        assert 1 <= unit.start_line <= unit.end_line <= len(lines)
        assert unit.text == "\n".join(lines[unit.start_line - 1 : unit.end_line])
        assert unit.end_line - unit.start_line + 1 <= MAX_UNIT_LINES
        assert unit.text.strip()
        assert not headings & set(range(unit.start_line, unit.end_line + 1))
        covered.extend(range(unit.start_line, unit.end_line + 1))
    assert covered == sorted(set(covered)), "units overlap or are out of order"
    # Nothing with content is left out: every non-blank line outside the frontmatter (its
    # properties are fields), headings and fences (and table rules) is in exactly one unit.
    for number, line in enumerate(lines, 1):
        structural = (
            not line.strip()
            or number in headings
            or line.strip().startswith(("```", "~~~"))
            or number <= note.frontmatter_end
            or set(line.strip()) <= set("|-: ")
        )
        if not structural:
            assert number in covered, f"{relpath}:{number} {line!r} is in no unit"


def test_a_photo_caption_on_its_own_line_joins_the_turn_that_shows_it() -> None:
    """Chat exports put a photo on a line of its own: as the next list item, or after a blank
    line as an image. It joins the turn above it; a line of text does not."""
    text = md(
        """
        # 2023-05-08

        - **Melanie**: Look what I finished last week!
        - (photo: a painting of a sunset over a lake)
        - **Caroline**: Wow, it's lovely.

        - **Melanie**: And this is from the beach.

        ![kids building a sandcastle](IMG_0042.jpg)

        Some paragraph after it.
        - [image: a blue vase]
        """
    )
    got = [(start, end) for start, end, _ in spans(text)]
    assert got == [(3, 4), (5, 5), (7, 9), (11, 11), (12, 12)]


def test_an_index_of_the_units_before_captions_joined_is_cut_again(tmp_path: Path) -> None:
    """An index written before a caption on its own line joined its turn (units version 1)
    reads those files again on its next run; the others are left as they are."""
    from vault_memory import Vault

    (tmp_path / "memory").mkdir()
    photo = tmp_path / "memory" / "2026-03-01.md"
    photo.write_text(
        "# Sunday\n\n- **Ana**: look at the lake this morning\n\n"
        "(photo: a misty lake at sunrise)\n",
        encoding="utf-8",
    )
    other = tmp_path / "memory" / "2026-03-02.md"
    other.write_text("# Monday\n\nBack at work, the lake far away.\n", encoding="utf-8")
    with Vault(tmp_path) as vault:
        vault.index()
        store = vault.cache.store
        (caption,) = [r for r in store.conn.execute("SELECT text FROM chunks") if "misty" in r[0]]
        assert "look at the lake" in caption[0]
        with store.transaction() as conn:  # as version 1 left it: the caption a unit alone
            conn.execute(
                "UPDATE chunks SET text='(photo: a misty lake at sunrise)' "
                "WHERE text LIKE '%misty%'"
            )
            conn.execute("DELETE FROM meta WHERE key='units'")
    with Vault(tmp_path) as vault:
        report = vault.index()
        assert (report.modified, report.unchanged) == (1, 1)
        texts = [r[0] for r in vault.cache.store.conn.execute("SELECT text FROM chunks")]
        assert any("look at the lake" in t and "misty" in t for t in texts)
        assert vault.cache.store.get_meta("units") == str(UNITS)
        assert vault.index().modified == 0  # recorded: checked once


BURSTS = """\
# 2024-06-01

## 18:02 — session 4

- **Sam**: so i went
- **Sam**: to the lake w my dad
- **Sam**: caught 3 fish!!
- **Jo**: no way
- **Jo**: pics?
- **Sam**: one sec
- **Jo**: I finally finished the quarterly report for the board, forty pages with every appendix and the budget tables, and sent it to Priya before the deadline on Friday evening
- **Jo**: and then I slept for twelve hours straight, which I have not done since university, and woke up to eleven messages from the team about the slides
"""  # noqa: E501


def test_a_fragment_joins_the_message_that_completes_it() -> None:
    """A message that does not stand alone (real chats: "so i went", "to the lake w my dad")
    is one unit with the message of its speaker that completes it; the other speaker's turn
    ends it, and whole messages stay units of their own."""
    found = spans(BURSTS, "memory/2024-06-01.md")
    assert [(start, end) for start, end, _ in found] == [
        (5, 7),
        (8, 9),
        (10, 10),
        (11, 11),
        (12, 12),
    ]
    assert found[0][2].endswith("caught 3 fish!!")
    assert sum(len(line) for line in BURSTS.splitlines()[10:12]) > BURST_CHARS


RUN = """\
# 2024-06-02

## 09:15 — session 5

- **Sam**: we drove up to the lake on saturday
- **Sam**: caught three trout before noon
- **Sam**: my dad cooked them on the fire that night
- **Jo**: sounds perfect
"""


def test_whole_messages_of_one_speaker_in_a_row_are_units_of_their_own() -> None:
    """Each of Sam's three messages says something whole (a verb, no open sentence): each is
    what is found, cited and paid for, not the run of them (units before version 4 joined
    them, as they end without a full stop)."""
    found = spans(RUN, "memory/2024-06-02.md")
    assert [(start, end) for start, end, _ in found] == [(5, 5), (6, 6), (7, 7), (8, 8)]


def test_a_run_of_fragments_ends_at_five_lines_and_at_a_blank_line_or_another_label() -> None:
    many = "".join(f"- **Sam**: msg {n}\n" for n in range(7))
    assert [(s, e) for s, e, _ in spans("# D\n\n" + many)] == [(3, 7), (8, 9)]
    apart = "# D\n\n- **Sam**: one\n\n- **Sam**: two\n- Sam said three\n- **Decision:** ship\n"
    assert [(s, e) for s, e, _ in spans(apart)] == [(3, 3), (5, 5), (6, 6), (7, 7)]
    # A short sentence that ends stands alone: flushed entries stay one fact a unit.
    facts = "# D\n\n- Ines: I adopted a greyhound.\n- Ines: The kitchen needs tiles\n"
    assert [(s, e) for s, e, _ in spans(facts)] == [(3, 3), (4, 4)]
    # "omg!!" and "best concert ever" have no verb: each goes on to the next message.
    chat = "# D\n\n- **Sam**: omg!!\n- **Sam**: best concert ever\n- **Sam**: she played 3h\n"
    assert [(s, e) for s, e, _ in spans(chat)] == [(3, 5)]


def test_an_index_of_the_units_before_bursts_is_cut_again(tmp_path: Path) -> None:
    """An index written before bursts were one unit (units version 2) reads its files of
    short labelled turns again on its next run, once; the vectors of unchanged texts stay."""
    from vault_memory import Vault

    (tmp_path / "memory").mkdir()
    chat = tmp_path / "memory" / "2024-06-01.md"
    chat.write_text(BURSTS, encoding="utf-8")
    prose = tmp_path / "memory" / "2024-06-02.md"
    prose.write_text("# Sunday\n\nA quiet day at home, reading by the window.\n", encoding="utf-8")
    assert chunked_otherwise("- **Sam**: one sec") and not chunked_otherwise("- one sec")
    with Vault(tmp_path) as vault:
        vault.index()
        store = vault.cache.store
        with store.transaction() as conn:  # as version 2 left it: each message a unit
            conn.execute(
                "UPDATE chunks SET text='- **Sam**: caught 3 fish!!' "
                "WHERE text LIKE '%caught 3 fish%'"
            )
            conn.execute("UPDATE meta SET value='2' WHERE key='units'")
    with Vault(tmp_path) as vault:
        report = vault.index()
        assert (report.modified, report.unchanged) == (1, 1)
        texts = [r[0] for r in vault.cache.store.conn.execute("SELECT text FROM chunks")]
        assert any(t.startswith("- **Sam**: so i went") and t.endswith("fish!!") for t in texts)
        assert vault.index().modified == 0


def test_an_index_of_joined_runs_is_cut_into_messages_again(tmp_path: Path) -> None:
    """An index written when one speaker's messages in a row were one unit (units version 3)
    reads the files holding such a unit again on its next run, once: each message is then a
    unit of its own."""
    from vault_memory import Vault

    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2024-06-02.md").write_text(RUN, encoding="utf-8")
    joined = "\n".join(RUN.splitlines()[4:7])
    assert chunked_otherwise(joined)
    with Vault(tmp_path) as vault:
        vault.index()
        store = vault.cache.store
        with store.transaction() as conn:  # as version 3 left it: the run one unit
            conn.execute("UPDATE chunks SET text=? WHERE start_line=5", (joined,))
            conn.execute("UPDATE meta SET value='3' WHERE key='units'")
    with Vault(tmp_path) as vault:
        assert vault.index().modified == 1
        rows = vault.cache.store.conn.execute("SELECT start_line, end_line FROM chunks")
        assert sorted(rows) == [(5, 5), (6, 6), (7, 7), (8, 8)]
        assert vault.index().modified == 0


def test_a_paragraph_holds_one_speakers_lines() -> None:
    text = "# D\n\nJo: do you like dogs?\nSam: I love turtles\nand named one Shelly\nJo: cool\n"
    assert [(s, e) for s, e, _ in spans(text)] == [(3, 3), (4, 5), (6, 6)]
    prose = "# D\n\nThe renderer turns JSON into PDF\nWorkers: three of them\n"
    assert [(s, e) for s, e, _ in spans(prose)] == [(3, 4)]  # no label opened it: as before
    assert chunked_otherwise("Jo: do you like dogs?\nSam: I love turtles")
    assert not chunked_otherwise("The renderer turns JSON into PDF\nWorkers: three")
