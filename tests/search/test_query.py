"""The query language of `vault search`: Obsidian's search operators read by
search/query.py (Whoosh's parser does the structure) and applied by search/select.py, alone and
combined, on an Obsidian vault (test_obsidian_vault.py's); malformed queries; queries without
operators left exactly as they were."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.agents.tools import make_tools
from vault_memory.search import OPERATORS, QuerySyntaxError, parse_query
from vault_memory.search.query import All, Exact, Field, Free, NotOf, Within, date_bounds

from ..files.test_obsidian_vault import make_obsidian_vault
from ..support.vaults import copy_vault

PRIYA = "notes/people/Priya Raman.md"
JONAS = "notes/people/Jonas Berg.md"
ROCKET = "projects/Rocket.md"
RUNBOOK = "notes/runbook.md"
DAILY = "memory/2026-11-20.md"
BOARD = "board.canvas"


# -- reading a query (pure) --------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "which database did we pick for billing?",
        "status: merged",
        "10:30 standup",
        "https://example.com/a-b",
        "C:\\Users\\me",
        "re-run the job",
        "-5 degrees",
        "C++ --force",
        'what did "Jonas" say about it?',
        "is it done - or not?",
        "[x] done",
        "[1]",
        "foo:bar",
        "Priya Raman",
        "a OR b",
    ],
)
def test_a_query_without_operators_is_left_as_it_is(query: str) -> None:
    parsed = parse_query(query)
    assert (parsed.operators, parsed.text, parsed.filter) == (False, query, None)


@pytest.mark.parametrize(
    ("query", "text", "tree"),
    [
        ("tag:#decision", "", "Field(tag:decision)"),
        ("tags:decision", "", "Field(tag:decision)"),
        ("path:projects/", "", "Field(pathpart:projects/*)"),
        ("file:Priya", "", "Field(filename:priya*)"),
        ("kind:daily", "", "Field(kind:daily)"),
        ("scope:acme/bot", "", "Field(scope:acme/bot)"),
        ("scope:/", "", "Field(scope:/)"),
        ("date:2026-11-01..2026-11-15", "", "Field(date:[2026-11-01 TO 2026-11-15])"),
        ("date:2026-11", "", "Field(date:[2026-11-01 TO 2026-11-30])"),
        ("date:2026-11-20", "", "Field(date:2026-11-20)"),
        ("[status:active]", "", "Field(prop:status:active)"),
        ("[Due date:2026-12-01]", "", "Field(prop:due_date:2026-12-01)"),
        ("[status]", "", "Field(prop:status)"),
        ('"exact phrase"', '"exact phrase"', "Exact(exact phrase)"),
        ("-draft", "", "Not(Free(draft))"),
        ("line:(static fire)", "static fire", "Within(line, All(Free(static) Free(fire)))"),
        ("section:risks", "risks", "Within(section, Free(risks))"),
        ("tag:#a billing -draft", "billing", "All(Field(tag:a) Free(billing) Not(Free(draft)))"),
        ("tag:#a OR tag:#b", "", "Any(Field(tag:a) Field(tag:b))"),
        (
            "(tag:#a OR path:x/) -[status:done] engine",
            "engine",
            "All(Any(Field(tag:a) Field(pathpart:x/*)) Not(Field(prop:status:done)) Free(engine))",
        ),
        ("tag:(#a OR #b)", "", "Any(Field(tag:a) Field(tag:b))"),
    ],
)
def test_each_operator_alone_and_combined(query: str, text: str, tree: str) -> None:
    parsed = parse_query(query)
    assert parsed.operators
    assert parsed.text == text
    assert show(parsed.filter) == tree


def show(node: Any) -> str:
    if isinstance(node, Field):
        return f"Field({node.query})"
    if isinstance(node, Free):
        return f"Free({node.word})"
    if isinstance(node, Exact):
        return f"Exact({node.phrase})"
    if isinstance(node, NotOf):
        return f"Not({show(node.part)})"
    if isinstance(node, Within):
        return f"Within({node.scope}, {show(node.part)})"
    name = "All" if isinstance(node, All) else "Any"
    return f"{name}({' '.join(show(p) for p in node.parts)})"


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ('"unbalanced quote', "the quote at character 1 is not closed"),
        ("tag:#a (b OR c", "a parenthesis is not closed"),
        ("tag:#a b)", "the parenthesis at character 9 closes nothing"),
        ("tag:(#a", "the parenthesis at character 5 is not closed"),
        ("[status:active", "the bracket at character 1 is not closed"),
        ("tag:#a [status:active", "the bracket at character 8 is not closed"),
        ("tag:#a owner:priya", "owner: is not an operator (a property is written [owner:value])"),
        ("date:tomorrow", "date:tomorrow is not a date or a range"),
        ("date:2026-11-15..2026-11-01", "is not a date or a range"),
        ("kind:weekly", "kind:weekly: the kinds are memory, daily, note, diary, session"),
        ("line:(a tag:#x)", "line:( ) takes words and phrases only"),
        ('tag:#a ""', '"" holds no words'),
        ("tag:#", "tag:# names no tag"),
    ],
)
def test_a_malformed_query_says_what_and_shows_the_operators(query: str, problem: str) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(query)
    message = str(caught.value)
    assert message.startswith(f"cannot read the search query {query!r}: ")
    assert problem in message
    for example, _ in OPERATORS:
        assert example in message


@pytest.mark.parametrize(
    ("value", "bounds"),
    [
        ("2026-11-01..2026-11-15", ("2026-11-01", "2026-11-15")),
        ("2026-02", ("2026-02-01", "2026-02-28")),
        ("2028-02", ("2028-02-01", "2028-02-29")),
        ("2026", ("2026-01-01", "2026-12-31")),
        ("2026-11-01..", ("2026-11-01", None)),
        ("..2026-11-15", (None, "2026-11-15")),
        ("2026-13", None),
        ("2026-02-30", None),
        ("..", None),
    ],
)
def test_date_ranges(value: str, bounds: tuple[str | None, str | None] | None) -> None:
    assert date_bounds(value) == bounds


# -- operators on a vault ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def _obsidian_template(tmp_path_factory: pytest.TempPathFactory, loaded_embedder: Any) -> Path:
    return make_obsidian_vault(tmp_path_factory.mktemp("obsidian") / "vault")


@pytest.fixture
def obsidian_vault(tmp_path: Path, _obsidian_template: Path) -> Path:
    """test_obsidian_vault.py's vault (every Obsidian construct), indexed once per module."""
    return copy_vault(_obsidian_template, tmp_path / "vault")


def found(root: Path, query: str, **options: Any) -> set[str]:
    with Vault(root) as vault:
        return {h.path for h in vault.search(query, limit=50, **options)}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tag:#decision", {ROCKET}),
        ("tag:#person", {PRIYA, JONAS}),
        ("tag:#launch", {BOARD}),
        ("path:projects/", {ROCKET}),
        ("path:people", {PRIYA, JONAS}),
        ("path:notes/people/priya", {PRIYA}),
        ("file:berg", {JONAS}),
        ("file:rocket.md", {ROCKET}),
        ("kind:daily", {DAILY}),
        ("kind:memory", {"MEMORY.md"}),
        ("date:2026-11-20", {DAILY}),
        ("date:2026-11-01..2026-11-15", set()),
        ("[status:active]", {ROCKET}),
        ("[status:done]", set()),
        ("[role]", {PRIYA}),
        ('"static fire"', {ROCKET, RUNBOOK}),
        ('"fire static"', set()),
        ("line:(static friday)", {ROCKET}),
        ("section:(risks)", {ROCKET}),
        ("tag:#person OR tag:#project", {PRIYA, JONAS, ROCKET}),
        ("(tag:#person OR tag:#project) -file:jonas", {PRIYA, ROCKET}),
        ("path:notes/ -tag:#person", {RUNBOOK}),
        ("scope:/ tag:#person", {PRIYA, JONAS}),
        ("scope:acme tag:#person", set()),
    ],
)
def test_operators_select_what_they_say(
    obsidian_vault: Path, query: str, expected: set[str]
) -> None:
    assert found(obsidian_vault, query) == expected


def test_filters_select_and_the_free_text_is_ranked(obsidian_vault: Path) -> None:
    with Vault(obsidian_vault) as vault:
        hits = vault.search("tag:#project weather delay", limit=5)
        assert {h.path for h in hits} == {ROCKET}
        assert hits[0].start_line == 24  # "Weather may delay the static fire."
        # Words outside operators are ranked, not required.
        assert vault.search("tag:#person zeppelin", limit=5)


def test_excluding_words_and_exact_phrases(obsidian_vault: Path) -> None:
    with Vault(obsidian_vault) as vault:
        hits = vault.search("telemetry -dashboards", limit=20)
        assert hits and all("dashboard" not in h.text.lower() for h in hits)
        assert JONAS not in {h.path for h in hits}
        exact = vault.search('"static fire of the engine"', limit=20)
        assert [(h.path, h.start_line) for h in exact] == [(ROCKET, 19)]


def test_section_and_line_scopes(obsidian_vault: Path) -> None:
    with Vault(obsidian_vault) as vault:
        risks = vault.search("section:(risks)", limit=20)  # a word of the heading
        assert [(h.path, h.start_line) for h in risks] == [(ROCKET, 24)]
        plan = vault.search("section:(telemetry weather)", limit=20)
        assert plan == []  # in two different sections
        line = vault.search("line:(friday priya)", limit=20)
        assert [(h.path, h.start_line) for h in line] == [(ROCKET, 19)]


def test_kind_diary_and_the_options_combine(obsidian_vault: Path) -> None:
    with Vault(obsidian_vault) as vault:
        assert vault.search("kind:diary anything") == []
        assert {
            h.path for h in vault.search("tag:#person", within="notes/people/Jonas Berg.md")
        } == {JONAS}
        assert vault.search("tag:#person", kinds=("memory",)) == []


def test_a_malformed_query_in_the_cli(
    obsidian_vault: Path, run_cli: Callable[..., Any], tree_state: Any
) -> None:
    before = tree_state(obsidian_vault)
    result = run_cli("--vault", str(obsidian_vault), "search", "tag:#person", "(engine")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "Error: cannot read the search query 'tag:#person (engine': a parenthesis is not closed."
    )
    assert "[status:active]" in result.stderr
    assert result.stdout == ""
    assert tree_state(obsidian_vault) == before


def test_minus_words_need_no_quoting_in_the_cli(
    obsidian_vault: Path, run_cli: Callable[..., Any]
) -> None:
    result = run_cli(
        "--vault",
        str(obsidian_vault),
        "search",
        "-tag:#person",
        "-n",
        "20",
        "-dashboards",
        "telemetry",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["query"] == "-tag:#person -dashboards telemetry"
    paths = {r["path"] for r in data["results"]}
    assert BOARD in paths and not paths & {PRIYA, JONAS}
    assert run_cli("--vault", str(obsidian_vault), "search", "-n3", "engine").exit_code == 0


def test_the_search_tool_takes_operators(obsidian_vault: Path) -> None:
    with Vault(obsidian_vault) as vault:
        (search_memory, *_) = make_tools(vault)
        ok = search_memory.run({"query": "tag:#person telemetry"})
        assert not ok.is_error
        assert {r["path"] for r in json.loads(ok.text)["results"]} == {JONAS, PRIYA}
        bad = search_memory.run({"query": "tag:#person [status"})
        assert bad.is_error
        assert "cannot read the search query" in json.loads(bad.text)["error"]


def test_filters_follow_edits_through_deleted_documents(obsidian_vault: Path) -> None:
    """An edit deletes the note's old documents from the keyword index (a segment with
    deletions): the block-wise postings reader must leave them out as Whoosh does."""
    from whoosh.query import Or, Prefix, Term

    from vault_memory.index.fulltext import matching_docs

    jonas = obsidian_vault / JONAS
    jonas.write_text(jonas.read_text().replace("tags: person", "tags: contractor"))
    with Vault(obsidian_vault) as vault:
        vault.index()
        assert {h.path for h in vault.search("tag:#person")} == {PRIYA}
        assert {h.path for h in vault.search("tag:#contractor")} == {JONAS}
        searcher = vault.cache.fulltext.searcher()
        assert any(leaf.has_deletions() for leaf, _ in searcher.reader().leaf_readers())
        for query in (
            Term("tag", "person"),
            Term("tag", "contractor"),
            Prefix("pathpart", "n"),
            Or([Term("kind", "note"), Term("kind", "daily")]),
            Term("tag", "none"),
        ):
            slow = sorted(searcher.docs_for_query(query))
            assert matching_docs(searcher, query).tolist() == slow, query
