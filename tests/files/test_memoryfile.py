"""MEMORY.md as sections and entries: parsing, and edits that leave every other byte alone."""

from __future__ import annotations

from vault_memory.files.memoryfile import entry_lines, parse_memory, render_memory, sources_of

MEMORY = """\
---
title: Memory
---
# MEMORY

Curated by hand.

## About Maya #pin
- Senior backend engineer at Ledgerly.
- Mentors Priya.

## People
- Jonas Berg: Head of Engineering. See [[jonas-berg]].
- Jürgen's birthday: 3 December. <!-- src: memory/2026-10-29.md#L19 -->
  Send a card to Berlin.

  He likes V60 coffee gear.
* Zoë Okafor: product manager.

```
## Not a heading
- not an entry
```

## Preferences
- Never force-push to main. #pin
1. Tea, not coffee.

## Decisions
"""


def test_sections_entries_and_pins() -> None:
    doc = parse_memory(MEMORY)
    titles = [(s.title, s.level, s.pinned) for s in doc.sections]
    assert titles == [
        ("MEMORY", 1, False),
        ("About Maya #pin", 2, True),
        ("People", 2, False),
        ("Preferences", 2, False),
        ("Decisions", 2, False),
    ]
    people = doc.section("people")
    assert people is not None
    texts = [e.text for e in people.entries]
    assert texts == [
        "- Jonas Berg: Head of Engineering. See [[jonas-berg]].",
        "- Jürgen's birthday: 3 December. <!-- src: memory/2026-10-29.md#L19 -->\n"
        "  Send a card to Berlin.\n\n  He likes V60 coffee gear.",
        "* Zoë Okafor: product manager.",
    ]
    assert people.entries[1].sources == ("memory/2026-10-29.md#L19",)
    assert people.entries[1].body.startswith("Jürgen's birthday: 3 December. Send a card")
    assert [e.pinned for e in doc.entries] == [True, True, False, False, False, True, False]
    assert [e.key for e in doc.entries] == [f"m{i}" for i in range(1, 8)]
    assert doc.section("About Maya") is doc.sections[1]  # tags do not count in a title
    assert doc.text == MEMORY


def test_render_without_edits_is_byte_identical() -> None:
    for text in (MEMORY, MEMORY.replace("\n", "\r\n"), MEMORY.rstrip("\n"), "", "no newline"):
        assert render_memory(parse_memory(text)) == text


def test_insert_remove_replace_touch_only_their_lines() -> None:
    doc = parse_memory(MEMORY)
    new = render_memory(
        doc,
        remove=["m4"],
        replace={"m3": ["- Jonas Berg: Head of Engineering, on leave from January."]},
        insert={
            "Decisions": [entry_lines("PostgreSQL 16 for billing.", ["memory/x.md#L4"])],
            "people": [entry_lines("Tomás Ruiz: customer success lead.\nPhone over Slack.")],
            "Inbox": [entry_lines("Something new.")],
        },
    )
    assert new == MEMORY.replace(
        "- Jonas Berg: Head of Engineering. See [[jonas-berg]].",
        "- Jonas Berg: Head of Engineering, on leave from January.",
    ).replace(
        "- Jürgen's birthday: 3 December. <!-- src: memory/2026-10-29.md#L19 -->\n"
        "  Send a card to Berlin.\n\n  He likes V60 coffee gear.\n",
        "",
    ).replace(
        "* Zoë Okafor: product manager.\n",
        "* Zoë Okafor: product manager.\n- Tomás Ruiz: customer success lead.\n"
        "  Phone over Slack.\n",
    ).replace(
        "## Decisions\n",
        "## Decisions\n- PostgreSQL 16 for billing. <!-- src: memory/x.md#L4 -->\n\n"
        "## Inbox\n- Something new.\n",
    )


def test_crlf_files_get_crlf_lines_and_a_missing_final_newline_is_added() -> None:
    doc = parse_memory("# M\r\n\r\n## People\r\n- Jonas.\r\n")
    assert render_memory(doc, insert={"People": [["- Zoë."]]}) == (
        "# M\r\n\r\n## People\r\n- Jonas.\r\n- Zoë.\r\n"
    )
    doc = parse_memory("## People\n- Jonas.")
    assert render_memory(doc, insert={"People": [["- Zoë."]]}) == "## People\n- Jonas.\n- Zoë.\n"
    assert render_memory(parse_memory(""), insert={"Inbox": [["- A fact."]]}) == (
        "# MEMORY\n\n## Inbox\n- A fact.\n"
    )


def test_a_paragraph_ending_a_section_gets_a_blank_line_before_new_entries() -> None:
    doc = parse_memory("## People\nSome prose.\n\n## Next\n")
    assert render_memory(doc, insert={"People": [["- Zoë."]]}) == (
        "## People\nSome prose.\n\n- Zoë.\n\n## Next\n"
    )


def test_sources_of_reads_every_src_comment() -> None:
    assert sources_of("- a <!-- src: memory/a.md#L1, memory/b.md#L2-L3 --> <!--src:x-->") == (
        "memory/a.md#L1",
        "memory/b.md#L2-L3",
        "x",
    )
