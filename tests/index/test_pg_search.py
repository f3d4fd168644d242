"""Search on the index server (docs/postgres-design.md §4): candidates from
the server's HNSW and full-text indexes, filtered by scope and kind in SQL, ranked here by the
same code as the unit table of the whole index; a warm search is one statement. Real server
(tests/support/pg_server.py): slow suite."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.index.pgstore import PgStore

from ..files.test_obsidian_vault import _obsidian_template, obsidian_vault  # noqa: F401 - fixtures

pytestmark = pytest.mark.slow

QUERIES = [
    "ERR_LEDGER_409",
    "which database did we pick for billing",
    "invoice renderer fonts",
    "who is Jonas",
    "what does Priya prefer",
    "VAT rounding",
    "cutover runbook owner",
    "retry budget ledger-api",
    # questions asking for a kind: lines naming its instances match too (search/kinds.py)
    "Which languages does the team use?",
    "What food does Jonas eat?",
    "Which months did we ship?",
]
ASKING_KINDS = QUERIES[-3:]


def on_server(root: Path, dsn: str, vault_id: str = "") -> None:
    with (root / "vault.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[index]\nbackend = "postgres"\ndsn = "{dsn}"\n')
        if vault_id:
            fh.write(f'vault_id = "{vault_id}"\n')
    with Vault(root) as opened:
        opened.index()


def kind_hits(hits: list[Any]) -> set[tuple[str, int]]:
    return {(h.path, h.start_line) for h in hits if h.scores.get("kind")}


def where(hits: list[Any]) -> list[tuple[str, int, int]]:
    return [(h.path, h.start_line, h.end_line) for h in hits]


def test_a_search_ranks_the_servers_candidates_without_the_unit_table(
    indexed_sample: Path, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_server(indexed_sample, pg_database)
    with Vault(indexed_sample, {"search.on_server": False}) as whole:
        expected = {q: where(whole.search(q, fresh=False)) for q in QUERIES}
        by_kind = {q: kind_hits(whole.search(q, fresh=False)) for q in ASKING_KINDS}
        assert all(by_kind.values())  # the unit table matched instances for each of them
        kinds = where(whole.search("decision", fresh=False, kinds=["memory"]))

    def no_table(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a search on the server read the whole unit table")

    monkeypatch.setattr(PgStore, "unit_rows", no_table)
    monkeypatch.setattr(PgStore, "unit_rows_and_marks", no_table)
    from vault_memory.search import served as server_search

    with Vault(indexed_sample) as served:
        served.prepare_search()  # the query encoder only: no table to read
        # every unit a candidate (192 in the sample vault): the whole table's hits and
        # scores, so the same ranking code ran (BM25 with the server's frequencies)
        monkeypatch.setattr(server_search, "SERVED_NEAR", 1000)
        exact = {q: where(served.search(q, fresh=False)) for q in QUERIES}
        assert exact == expected
        # the instances of a kind asked for are matched on the server's candidates too
        assert {q: kind_hits(served.search(q, fresh=False)) for q in ASKING_KINDS} == by_kind
        # the default candidates (150 nearest, 200 keyword matches): cosines are min-max
        # scaled over the candidates only, so scores shift a little and close neighbours
        # may trade places; the best hit stays, and most of the first five
        monkeypatch.setattr(server_search, "SERVED_NEAR", 150)
        found = {q: where(served.search(q, fresh=False)) for q in QUERIES}
        for query, hits in found.items():
            assert hits[0] == expected[query][0], query
            if query in ASKING_KINDS:  # instance lines come as candidates of their own
                assert kind_hits(served.search(query, fresh=False)), query
            firsts = {(p, s) for p, s, _ in hits[:5]}
            assert len(firsts & {(p, s) for p, s, _ in expected[query][:5]}) >= 4, query
        memory = served.search("decision", fresh=False, kinds=["memory"])
        assert {h.kind for h in memory} == {"memory"}
        # the same units first; a span may coalesce otherwise: the cosines are min-max
        # scaled over the candidates, not over every unit (docs/postgres-design.md §4)
        assert [(p, s) for p, s, _ in where(memory)][:3] == [(p, s) for p, s, _ in kinds][:3]


def test_candidates_are_filtered_by_scope_and_kind_inside_sql(
    indexed_sample: Path, pg_database: str
) -> None:
    on_server(indexed_sample, pg_database)
    with Vault(indexed_sample) as vault:
        store = vault.cache.store
        model = vault.cache.model_id
        import numpy as np

        from vault_memory.index import terms_of

        vector = np.asarray(
            vault.cache.query_embedder().embed_query("ledger conflict"), dtype=np.float32
        ).tobytes()
        terms = terms_of("ledger conflict", query=True)

        def served(scopes: Any, conditions: dict[str, Any]) -> Any:
            return store.served(
                model, vector, terms, terms, [], scopes, conditions, 20, 20, 2, None
            )

        everything = served(None, {})
        assert everything.rows and everything.stats[0] == store.counts(model)["units"]
        assert all(everything.df[t][0] > 0 for t in terms)
        assert served(["org/nobody"], {}).rows == []
        assert served(["org/nobody"], {}).stats == (0, 0, 0)
        assert served([""], {}).rows
        memory = served(None, {"kinds": ("memory",)})
        allowed = [chunk.kind for _, chunk, ok, _ in memory.rows if ok]
        assert allowed and set(allowed) == {"memory"}
        hidden = served(None, {"hidden_files": ("memory",)})
        assert "memory" not in {chunk.kind for _, chunk, ok, _ in hidden.rows if ok}
        # instruction-like units are judged when indexed, as the embedded index does
        from vault_memory.index.store import Store

        embedded = Store(indexed_sample / ".vault" / "index.sqlite", readonly=True)
        try:
            assert store.flagged_count() == embedded.flagged_count() is not None
        finally:
            embedded.close()
        assert all(flagged is not None for *_, flagged in everything.rows)


def test_a_warm_search_is_one_statement_and_sees_another_machines_write(
    indexed_sample: Path, pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    shutil.copytree(indexed_sample, other, symlinks=True)
    on_server(indexed_sample, pg_database, "team")
    statements: list[str] = []
    execute, served = PgStore._execute, PgStore.served

    def counted_execute(self: PgStore, sql: Any, params: Any = ()) -> Any:
        statements.append(str(sql))
        return execute(self, sql, params)

    def counted_served(self: PgStore, *args: Any, **kwargs: Any) -> Any:
        statements.append("served")
        return served(self, *args, **kwargs)

    monkeypatch.setattr(PgStore, "_execute", counted_execute)
    monkeypatch.setattr(PgStore, "served", counted_served)
    with Vault(indexed_sample) as vault:
        vault.search("warm up", fresh=False)
        statements.clear()
        assert vault.search("ERR_LEDGER_409 ledger", fresh=False)
        assert statements == ["served"]
        # another clone indexes a note this checkout does not have into the same vault
        (other / "notes").mkdir(exist_ok=True)
        (other / "notes" / "zanzibar.md").write_text(
            "# Zanzibar\n\n- The quokka migration runs on Zanzibar hosts.\n", encoding="utf-8"
        )
        on_server(other, pg_database, "team")
        statements.clear()
        hits = vault.search("ERR_LEDGER_409 ledger", fresh=False)
        assert hits and all(hit.path != "notes/zanzibar.md" for hit in hits)
        # the meta read with the previous statement was of another generation: searched
        # again with this one's, so two statements, and the next warm search is one again
        assert statements == ["served", "served"]
        statements.clear()
        vault.search("ERR_LEDGER_409 ledger", fresh=False)
        assert statements == ["served"]
        assert not [
            h for h in vault.search("quokka migration", fresh=False) if "zanzibar" in h.path
        ]


def test_status_lists_the_unresolved_links_the_server_holds(
    obsidian_vault: Path,  # noqa: F811 - the fixture
    pg_database: str,
) -> None:
    settings = {"index.backend": "postgres", "index.dsn": pg_database}
    with Vault(obsidian_vault, settings) as vault:
        vault.index()
        info = vault.status()
    assert info["backend"] == "postgres"
    assert info["unresolved_links"] == 1
    assert [(u["source"], u["line"], u["target"]) for u in info["unresolved"]] == [
        ("projects/Rocket.md", 21, "Nowhere")
    ]


def test_a_table_of_the_servers_rows_is_never_taken_for_the_embedded_indexs(
    indexed_sample: Path, pg_database: str, tmp_path: Path
) -> None:
    """One folder searched through both backends (a move to the server, a benchmark): the
    unit table saved from the server's rows (other unit and file ids) must not be patched
    into, or read as, the embedded index's."""
    with Vault(indexed_sample) as embedded:
        before = {q: where(embedded.search(q, fresh=False)) for q in QUERIES}
    server = {"index.backend": "postgres", "index.dsn": pg_database, "search.on_server": False}
    other = tmp_path / "other"  # another vault first: this one's ids on the server differ
    shutil.copytree(indexed_sample, other, symlinks=True)
    with Vault(other, server | {"index.vault_id": "other"}) as first:
        first.index()
    with Vault(indexed_sample, server) as on_server_:
        on_server_.index()
        assert on_server_.search("ERR_LEDGER_409", fresh=False)  # saves its table
    with Vault(indexed_sample) as embedded:
        assert {q: where(embedded.search(q, fresh=False)) for q in QUERIES} == before


def test_a_rare_keyword_is_a_keyword_candidate_among_many_units_of_a_common_one(
    tmp_path: Path, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More units hold the query's common word (three times each) than a search keeps as
    keyword candidates (200); the one unit holding its rare word, in another note, is one of
    them and comes first, as BM25 over the whole table ranks it. A rank without idf (what
    `ts_rank_cd` was) put every unit of the common word above it, and left it out."""
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")  # keyword candidates only
    memory = tmp_path / "memory"
    memory.mkdir()
    common = "\n\n".join(f"Deploy deploy deploy of service s{n}." for n in range(260))
    (memory / "2026-01-05.md").write_text(f"# 2026-01-05\n\n{common}\n", encoding="utf-8")
    (memory / "2026-01-06.md").write_text("# 2026-01-06\n\nThe zanzibar cutover.\n", "utf-8")
    tops = []
    for settings in ({}, {"index.backend": "postgres", "index.dsn": pg_database}):
        with Vault(tmp_path, settings) as vault:
            vault.index(rebuild=True)
            tops.append(where(vault.search("zanzibar deploy", mode="keyword", fresh=False)))
            if settings:
                # a store that has not counted the units yet, under a searcher that has (its
                # statement then leaves them out): the idf is counted from the files
                vault.cache.store._counted.clear()  # type: ignore[attr-defined]
                again = vault.search("zanzibar deploy", mode="keyword", fresh=False)
                assert where(again)[:3] == tops[-1][:3]
    assert tops[0][0][0] == "memory/2026-01-06.md"
    assert tops[1][:3] == tops[0][:3]


def test_keyword_candidates_are_the_best_the_filters_allow_when_better_ones_are_not(
    tmp_path: Path, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server ranks a keyword's matches before it reads their files: more units than a
    search keeps as keyword candidates (200) hold the word more often, in a folder the search
    leaves out, and the one unit the filter allows, holding it once, is still found, on the
    server as in the embedded index."""
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")  # keyword candidates only
    memory, notes = tmp_path / "memory", tmp_path / "notes"
    memory.mkdir()
    notes.mkdir()
    many = "\n\n".join(f"Zanzibar zanzibar s{n}." for n in range(260))
    (memory / "2026-01-05.md").write_text(f"# 2026-01-05\n\n{many}\n", encoding="utf-8")
    (notes / "cutover.md").write_text(
        "# Cutover\n\nThe zanzibar cutover plan lists each step, its owner, the window and the"
        " rollback agreed with the payments team.\n",
        "utf-8",
    )
    found = []
    for settings in ({}, {"index.backend": "postgres", "index.dsn": pg_database}):
        with Vault(tmp_path, settings) as vault:
            vault.index(rebuild=True)
            found.append(where(vault.search("zanzibar", mode="keyword", within="notes")))
            assert where(vault.search("zanzibar", mode="keyword", kinds=["note"]))[:1] == [
                ("notes/cutover.md", 3, 3)
            ]
    assert found[0][:1] == [("notes/cutover.md", 3, 3)]
    assert found[1] == found[0]


def test_a_word_no_unit_holds_does_not_stand_in_for_the_rarest_held_one(
    tmp_path: Path, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server ranks the matches of the query's rarest words only, up to a bound, the
    rarest always. A word of the question no unit holds ("zanzibar" here) is not the rarest:
    the word the vault does hold is, even past the bound (lowered here to 50 of its 260
    units, as a common word of a vault of a million units passes the real one), and its
    matches are the keyword candidates, as the embedded index finds them."""
    from vault_memory.index import pgstore

    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")  # keyword candidates only
    monkeypatch.setattr(pgstore, "KEYWORD_MATCHES_RANKED", 50)
    memory = tmp_path / "memory"
    memory.mkdir()
    many = "\n\n".join(f"Deploy of service s{n} went out." for n in range(260))
    (memory / "2026-01-05.md").write_text(f"# 2026-01-05\n\n{many}\n", encoding="utf-8")
    tops = []
    for settings in ({}, {"index.backend": "postgres", "index.dsn": pg_database}):
        with Vault(tmp_path, settings) as vault:
            vault.index(rebuild=True)
            tops.append(where(vault.search("zanzibar deploy", mode="keyword", fresh=False)))
    assert len(tops[0]) == 10  # the embedded index ranks every unit holding "deploy"
    assert tops[1] == tops[0]


def test_matches_past_the_first_ranked_are_read_when_the_filters_leave_out_those(
    tmp_path: Path, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server sorts only the best few hundred matches of a stream before reading their
    files (a bounded sort). When the filters leave out every one of those (here the best
    300 matches are in memory/ and the search asks within notes/), it ranks every match
    instead, and finds the notes' lines as the embedded index does."""
    from vault_memory.index import pgstore

    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")  # keyword candidates only
    monkeypatch.setattr(pgstore, "RANKED_FIRST_SHARE", 1)  # the best 200 sorted first
    (tmp_path / "memory").mkdir()
    (tmp_path / "notes").mkdir()
    short = "\n\n".join(f"Deploy s{n}." for n in range(300))
    (tmp_path / "memory" / "2026-01-05.md").write_text(
        f"# 2026-01-05\n\n{short}\n", encoding="utf-8"
    )
    long = "\n\n".join(
        f"The deploy of the billing service number {n} went out after a long review."
        for n in range(5)
    )
    (tmp_path / "notes" / "releases.md").write_text(f"# Releases\n\n{long}\n", encoding="utf-8")
    tops = []
    for settings in ({}, {"index.backend": "postgres", "index.dsn": pg_database}):
        with Vault(tmp_path, settings) as vault:
            vault.index(rebuild=True)
            tops.append(where(vault.search("deploy", mode="keyword", within="notes")))
    assert tops[0] and {path for path, _, _ in tops[0]} == {"notes/releases.md"}
    assert tops[1] == tops[0]


def test_every_unit_naming_an_instance_of_the_kind_asked_for_is_ranked(
    tmp_path: Path, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The instances of a kind count alike (a rare one is no better evidence than a common
    one), so the server ranks every unit holding any of them, past the bound keyword matches
    have (lowered here to 50): with 400 lines naming English and three naming Cornish, its
    hits are the embedded index's (the shortest English lines), not the Cornish ones that
    ranking the rarest instance's matches only would give."""
    from vault_memory.index import pgstore

    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")
    monkeypatch.setattr(pgstore, "KEYWORD_MATCHES_RANKED", 50)
    (tmp_path / "memory").mkdir()
    common = "\n\n".join(f"English s{n}." for n in range(400))
    rare = "\n\n".join(
        f"Some Cornish in the long release notes for the west office, part {n}." for n in range(3)
    )
    (tmp_path / "memory" / "2026-01-05.md").write_text(
        f"# 2026-01-05\n\n{common}\n\n{rare}\n", encoding="utf-8"
    )
    question = "Which languages does the team use?"
    tops = []
    for settings in ({}, {"index.backend": "postgres", "index.dsn": pg_database}):
        with Vault(tmp_path, settings) as vault:
            vault.index(rebuild=True)
            tops.append(vault.search(question, mode="keyword", fresh=False))
    assert len(tops[0]) == 10 and not any("Cornish" in hit.text for hit in tops[0])
    assert where(tops[1]) == where(tops[0])
