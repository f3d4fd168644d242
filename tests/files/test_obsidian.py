"""files/obsidian.py and files/canvas.py: a note as Obsidian sees it, with plain data (no I/O).
Whole vaults (indexing, search, links, status) are in test_obsidian_vault.py."""

from __future__ import annotations

import datetime as dt
import json
import textwrap

import pytest

from vault_memory.files import CanvasError, LinkTargets, obsidian, parse_canvas
from vault_memory.files.notes import parse_note
from vault_memory.index.units import make_canvas_units, note_fields


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- properties, tags, aliases ---------------------------------------------------------------

EVERY_TYPE = md(
    """
    ---
    title: Rocket
    aliases: [Launch vehicle, LV-1]
    tags: [project, team/propulsion/engines]
    count: 3
    ratio: 0.5
    done: false
    due: 2026-11-30
    started: 2026-11-01T09:30:00
    owner: "[[Priya Raman]]"
    reviewers:
      - "[[Jonas Berg]]"
      - Aino
    empty:
    nested: {a: 1}
    Due date: soon
    ---
    # Rocket

    - Engine test on Friday. #decision #risk/weather
    """
)


def test_properties_of_every_yaml_type_become_text() -> None:
    note = parse_note("projects/rocket.md", EVERY_TYPE)
    pairs = obsidian.properties(note.frontmatter)
    assert ("count", "3") in pairs
    assert ("ratio", "0.5") in pairs
    assert ("done", "false") in pairs
    assert ("due", "2026-11-30") in pairs
    assert ("started", "2026-11-01T09:30:00") in pairs
    assert ("owner", "[[Priya Raman]]") in pairs
    assert ("reviewers", "[[Jonas Berg]]") in pairs and ("reviewers", "Aino") in pairs
    assert ("empty", "") in pairs
    assert ("nested", '{"a": 1}') in pairs
    terms = obsidian.property_terms(pairs)
    assert {
        "count:3",
        "done:false",
        "due:2026-11-30",
        "empty",
        "owner:priya",
        "owner:raman",
        "due_date:soon",
        "reviewers:aino",
    } <= set(terms)


def test_property_values_of_dates_and_lists() -> None:
    assert obsidian.property_values(dt.date(2026, 11, 1)) == ["2026-11-01"]
    assert obsidian.property_values(True) == ["true"]
    assert obsidian.property_values([1, [2, None], "x"]) == ["1", "2", "x"]
    assert obsidian.property_values("  ") == []


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        ({"aliases": ["Priya", "PR"]}, ["Priya", "PR"]),
        ({"aliases": "Priya"}, ["Priya"]),
        ({"alias": "P. Raman"}, ["P. Raman"]),
        ({}, []),
    ],
)
def test_aliases_list_and_string_forms(frontmatter: dict, expected: list[str]) -> None:
    assert obsidian.aliases(frontmatter) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["project", "#rocketry"], ["project", "rocketry"]),
        ("project, rocketry", ["project", "rocketry"]),
        ("project rocketry", ["project", "rocketry"]),
        ("#Project", ["project"]),
    ],
)
def test_frontmatter_tags_in_every_form(value: object, expected: list[str]) -> None:
    assert obsidian.frontmatter_tags({"tags": value}) == expected


def test_nested_tags_are_also_their_parents() -> None:
    assert obsidian.tag_terms(["team/propulsion/engines", "#x"]) == [
        "team",
        "team/propulsion",
        "team/propulsion/engines",
        "x",
    ]


def test_note_fields_hold_tags_names_and_properties_but_no_text() -> None:
    note = parse_note("projects/rocket.md", EVERY_TYPE)
    fields = note_fields(note)
    assert set(fields.tags) >= {"project", "team/propulsion/engines", "decision", "risk/weather"}
    assert fields.names == ("rocket", "Launch vehicle", "LV-1")
    assert ("title", "Rocket") in fields.properties
    # Daily logs and MEMORY.md are not named things.
    assert note_fields(parse_note("memory/2026-11-20.md", "# 2026-11-20\n- a\n")).names == ()


# -- links -------------------------------------------------------------------------------------


def test_every_form_of_link_is_read() -> None:
    line = (
        "See [[Priya Raman]], [[Priya Raman|Priya]], [[Rocket#Budget]], "
        "![[diagram.png]], [[Rocket#Budget|the budget]], [sheet](../notes/budget%20plan.md),"
        " ![img](attachments/a.png), [web](https://example.com) and `[[not a link]]`."
    )
    found = list(obsidian.links_in_line(line, 7))
    assert [(f.target, f.subpath, f.display, f.embed, f.kind) for f in found] == [
        ("Priya Raman", "", "", False, "wikilink"),
        ("Priya Raman", "", "Priya", False, "wikilink"),
        ("Rocket", "#Budget", "", False, "wikilink"),
        ("diagram.png", "", "", True, "wikilink"),
        ("Rocket", "#Budget", "the budget", False, "wikilink"),
        ("../notes/budget plan.md", "", "sheet", False, "markdown"),
        ("attachments/a.png", "", "img", True, "markdown"),
    ]
    assert {f.line for f in found} == {7}


def test_links_in_properties_and_text_but_not_in_code() -> None:
    text = md(
        """
        ---
        owner: "[[Priya Raman]]"
        ---
        # Note

        ```
        [[Inside code]]
        ```
        - Talk to [[Jonas Berg]]. | a \\| [[Table#Row\\|shown]] |
        """
    )
    found = obsidian.note_links(parse_note("n.md", text))
    assert [(f.line, f.target, f.kind) for f in found] == [
        (2, "Priya Raman", "property"),
        (9, "Jonas Berg", "wikilink"),
        (9, "Table", "wikilink"),
    ]
    assert found[2].subpath == "#Row" and found[2].display == "shown"


FILES = [
    "notes/people/Priya Raman.md",
    "archive/2024/people/priya raman.md",
    "projects/rocket.md",
    "projects/sub/rocket.md",
    "rocket.md",
    "attachments/diagram.png",
    "board.canvas",
]


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        ("Priya Raman", "projects/rocket.md", "notes/people/Priya Raman.md"),  # shortest path
        ("priya RAMAN", "x.md", "notes/people/Priya Raman.md"),  # case-insensitive
        ("people/Priya Raman", "x.md", "notes/people/Priya Raman.md"),
        ("2024/people/Priya Raman", "x.md", "archive/2024/people/priya raman.md"),  # longer
        ("rocket", "projects/sub/x.md", "projects/sub/rocket.md"),  # beside the linking note
        ("rocket", "other/x.md", "rocket.md"),  # else the shortest path
        ("rocket.md", "x.md", "rocket.md"),
        ("sub/rocket", "projects/x.md", "projects/sub/rocket.md"),  # relative to the note
        ("../rocket.md", "projects/sub/x.md", "projects/rocket.md"),
        ("/projects/rocket", "projects/sub/x.md", "projects/rocket.md"),  # from the root
        ("diagram.png", "x.md", "attachments/diagram.png"),  # an attachment
        ("board.canvas", "x.md", "board.canvas"),
        ("Nowhere", "x.md", None),
        ("../../outside", "x.md", None),
    ],
)
def test_links_resolve_as_obsidian_resolves_them(
    target: str, source: str, expected: str | None
) -> None:
    assert LinkTargets(FILES).resolve(target, source) == expected


# -- Obsidian's "Excluded files" ----------------------------------------------------------------


def test_excluded_files_from_app_json() -> None:
    app = json.dumps({"userIgnoreFilters": ["archive/", "/\\.draft\\.md$/", "Templates", 3]})
    compiled = obsidian.compile_filters(obsidian.ignore_filters(app))
    assert obsidian.is_excluded("archive/old.md", compiled)
    assert obsidian.is_excluded("notes/x.draft.md", compiled)
    assert obsidian.is_excluded("Templates/daily.md", compiled)
    assert not obsidian.is_excluded("notes/archive/old.md", compiled)
    assert not obsidian.is_excluded("notes/x.md", compiled)
    assert obsidian.ignore_filters("not json") == []
    assert obsidian.ignore_filters("[]") == []


# -- canvas -----------------------------------------------------------------------------------

NODES = [
    {"id": "g1", "type": "group", "label": "Launch", "x": 0, "y": 0, "width": 800, "height": 600},
    {
        "id": "t1",
        "type": "text",
        "text": "Fuel check with [[Priya Raman]]\n\n- weather go/no-go #launch",
        "x": 10,
        "y": 10,
        "width": 200,
        "height": 100,
    },
    {
        "id": "t2",
        "type": "text",
        "text": "Outside any group",
        "x": 900,
        "y": 0,
        "width": 100,
        "height": 100,
    },
    {
        "id": "f1",
        "type": "file",
        "file": "projects/rocket.md",
        "subpath": "#Budget",
        "x": 300,
        "y": 10,
        "width": 200,
        "height": 100,
    },
    {
        "id": "l1",
        "type": "link",
        "url": "https://example.com",
        "x": 0,
        "y": 700,
        "width": 10,
        "height": 10,
    },
]
# As Obsidian writes it: one node per line (a node is cited by its line).
CANVAS = (
    '{\n  "nodes": [\n'
    + ",\n".join(f"    {json.dumps(n)}" for n in NODES)
    + '\n  ],\n  "edges": [{"id": "e1", "fromNode": "t1", "toNode": "f1"}]\n}\n'
)


def test_canvas_text_nodes_are_units_and_file_nodes_links() -> None:
    canvas = parse_canvas("board.canvas", CANVAS)
    assert [(t.line, t.group) for t in canvas.texts] == [(4, "Launch"), (5, "")]
    assert [(link.line, link.target, link.kind) for link in canvas.links] == [
        (4, "Priya Raman", "wikilink"),
        (6, "projects/rocket.md", "canvas"),
    ]
    assert canvas.links[1].subpath == "#Budget"
    units = make_canvas_units(canvas, "board")
    assert [(u.start_line, u.text, u.heading) for u in units] == [
        (4, "Fuel check with [[Priya Raman]]", "board > Launch"),
        (4, "- weather go/no-go #launch", "board > Launch"),
        (5, "Outside any group", "board"),
    ]
    assert units[1].tags == ("launch",)


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"nodes": 3}'])
def test_a_file_that_is_not_a_canvas_is_refused(text: str) -> None:
    with pytest.raises(CanvasError):
        parse_canvas("bad.canvas", text)


def test_an_empty_canvas_has_nothing() -> None:
    assert parse_canvas("empty.canvas", "").texts == []
    assert parse_canvas("empty.canvas", "{}").links == []
