"""`Vault.search` and `vault search` end to end on a copy of sample_vault/, indexed once per
module with the real bundled model: what is found, filters, the JSON `--json` prints, line spans,
freshness without `vault index`, keyword-only operation and the error messages."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.errors import PathOutsideVaultError, VaultError
from vault_memory.files.notes import KINDS
from vault_memory.index.embedder import DISABLE_ENV
from vault_memory.search.ranking import contains_token
from vault_memory.search.searcher import Hit

SAMPLE = Path(__file__).resolve().parents[2] / "sample_vault"
ZOE_QUESTION = "How does Zoë like product changes explained to her?"
ZOE_ANSWER = ("memory/2026-11-03.md", 12)
IDS = ["ERR_LEDGER_409", "BIL-1423", "RENDER_E_FONT_MISSING"]
RESULT_KEYS = {
    "path",
    "start_line",
    "end_line",
    "heading",
    "text",
    "score",
    "scores",
    "date",
    "kind",
    "flags",
}


# The index backends these tests run against: SQLite, and in the slow suite a
# real PostgreSQL + pgvector server (tests/support/pg_server.py), with the same expectations.
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)]


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def on_server(root: Path, dsn: str) -> None:
    """Point the vault at the index server `dsn` and index it there."""
    with (root / "vault.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[index]\nbackend = "postgres"\ndsn = "{dsn}"\n')
    with Vault(root) as opened:
        opened.index()


@pytest.fixture(scope="module")
def indexed(
    tmp_path_factory: pytest.TempPathFactory,
    _sample_template: Path,
    backend: str,
    request: pytest.FixtureRequest,
) -> Iterator[Path]:
    """The run's indexed sample vault (conftest), copied once for this module, which only
    reads it: tests that edit files use `indexed_sample`, a copy of their own."""
    root = tmp_path_factory.mktemp("search") / "vault"
    shutil.copytree(_sample_template, root, symlinks=True)  # keeps mtimes: still up to date
    if backend == "sqlite":
        yield root
        return
    import psycopg

    admin = request.getfixturevalue("pg_server").dsn
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS t_search_module")
        conn.execute("CREATE DATABASE t_search_module")
    on_server(root, admin.rsplit("/", 1)[0] + "/t_search_module")
    yield root
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE t_search_module WITH (FORCE)")


@pytest.fixture(scope="module")
def vault(indexed: Path) -> Iterator[Vault]:
    with Vault(indexed) as opened:
        yield opened


@pytest.fixture
def fresh_copy(indexed_sample: Path, backend: str, request: pytest.FixtureRequest) -> Path:
    """An indexed copy for a test that edits files; it starts up to date."""
    if backend == "postgres":
        on_server(indexed_sample, request.getfixturevalue("pg_database"))
    with Vault(indexed_sample) as copy:
        assert copy.status()["drift"] == {"new": 0, "changed": 0, "deleted": 0}
    return indexed_sample


def where(hits: list[Hit]) -> list[tuple[str, int, int]]:
    return [(h.path, h.start_line, h.end_line) for h in hits]


def covers(hit: Hit | dict, path: str, line: int) -> bool:
    """Does the hit (a Hit or its JSON) cite `line` of `path`? Hits may span several units."""
    if isinstance(hit, dict):
        return hit["path"] == path and hit["start_line"] <= line <= hit["end_line"]
    return hit.path == path and hit.start_line <= line <= hit.end_line


def search_json(run_cli, root: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    result = run_cli("--vault", str(root), "search", *args, "--json", env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def error_of(result) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith("Error: "), result.stderr
    return result.stderr.removeprefix("Error: ").strip()


# -- what is found ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_paraphrase_is_found_by_meaning(vault: Vault, mode: str) -> None:
    hits = vault.search(ZOE_QUESTION, limit=3, mode=mode)
    assert any(covers(h, *ZOE_ANSWER) for h in hits), where(hits)


def test_a_paraphrase_is_found_through_the_cli_in_semantic_mode(run_cli, indexed: Path) -> None:
    data = search_json(run_cli, indexed, ZOE_QUESTION, "--mode", "semantic", "-n", "3")
    assert data["mode"] == "semantic"
    assert any(covers(r, *ZOE_ANSWER) for r in data["results"]), data["results"]
    assert all(r["scores"]["keyword"] == 0 for r in data["results"])


def lines_holding(root: Path, token: str) -> set[tuple[str, int]]:
    """(path, line) of every non-heading line of the vault's Markdown holding `token`."""
    found = set()
    for path in root.rglob("*.md"):
        relpath = path.relative_to(root).as_posix()
        if relpath.startswith(".vault/"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.lstrip().startswith("#") and contains_token(line, token):
                found.add((relpath, number))
    return found


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
@pytest.mark.parametrize("token", IDS)
def test_units_holding_an_exact_id_rank_above_all_others(
    vault: Vault, indexed: Path, token: str, mode: str
) -> None:
    hits = vault.search(token, limit=30, mode=mode)
    holds = [contains_token(h.text, token) for h in hits]
    assert holds[0], where(hits)
    first_without = holds.index(False) if False in holds else len(holds)
    assert not any(holds[first_without:]), list(zip(where(hits), holds, strict=True))
    # and every line holding it is inside one of those first hits
    holders = hits[:first_without]
    for path, line in lines_holding(indexed, token):
        assert any(h.path == path and h.start_line <= line <= h.end_line for h in holders), (
            path,
            line,
            where(holders),
        )


def test_an_exact_id_inside_a_question_still_wins(vault: Vault) -> None:
    hits = vault.search("what did we find out about BIL-1423?", limit=5)
    assert all(contains_token(h.text, "BIL-1423") for h in hits[:3]), where(hits)


# -- filters ----------------------------------------------------------------------------------


def test_since_and_until_keep_only_dated_units_within(vault: Vault) -> None:
    query = "Zoë product manager invoicing release notes"
    unfiltered = vault.search(query, limit=30)
    assert any(h.path == "MEMORY.md" for h in unfiltered)  # so leaving it out means something
    since, until = dt.date(2026, 11, 3), dt.date(2026, 11, 12)
    hits = vault.search(query, limit=30, since=since.isoformat(), until=until.isoformat())
    assert hits
    for hit in hits:
        assert hit.date is not None and hit.kind == "daily", hit
        assert since <= dt.date.fromisoformat(hit.date) <= until, hit
        assert hit.path == f"memory/{hit.date}.md"


def test_since_and_until_are_inclusive_and_take_dates(vault: Vault) -> None:
    day = dt.date(2026, 11, 3)
    hits = vault.search("BIL-1423", limit=10, since=day, until=day)
    assert hits
    assert {h.path for h in hits} == {"memory/2026-11-03.md"}
    assert any(covers(h, "memory/2026-11-03.md", 4) for h in hits), where(hits)


def test_since_alone_and_until_alone(vault: Vault) -> None:
    after = vault.search("ERR_LEDGER_409", limit=30, since="2026-11-03")
    assert after and all(h.date and h.date >= "2026-11-03" for h in after)
    assert any(covers(h, "memory/2026-11-14.md", 16) for h in after), where(after)
    before = vault.search("ERR_LEDGER_409", limit=30, until="2026-11-02")
    assert before and covers(before[0], "memory/2026-11-02.md", 8), where(before)
    assert all(h.date and h.date <= "2026-11-02" for h in before)


def test_a_range_with_no_files_finds_nothing(vault: Vault) -> None:
    assert vault.search("billing", since="2030-01-01") == []


@pytest.mark.parametrize("within", ["notes/", "notes", "./notes/"])
def test_in_a_folder(vault: Vault, within: str) -> None:
    hits = vault.search("rollback plan for the cutover", limit=30, within=within)
    assert hits
    assert all(h.path.startswith("notes/") for h in hits), where(hits)


def test_in_the_vault_root_is_no_filter(vault: Vault) -> None:
    query = "rollback plan for the cutover"
    assert where(vault.search(query, within=".")) == where(vault.search(query))


def test_in_one_file(vault: Vault) -> None:
    hits = vault.search("fonts glyphs", limit=30, within="notes/runbooks/invoice-renderer.md")
    assert hits
    assert {h.path for h in hits} == {"notes/runbooks/invoice-renderer.md"}


def test_in_a_folder_does_not_match_a_longer_name(fresh_copy: Path) -> None:
    (fresh_copy / "notes-old").mkdir()
    (fresh_copy / "notes-old" / "x.md").write_text("- The pelican roster lives here.\n")
    (fresh_copy / "notes" / "y.md").write_text("- The pelican roster moved here.\n")
    with Vault(fresh_copy) as vault:
        hits = vault.search("pelican roster", within="notes", mode="keyword")
    assert where(hits) == [("notes/y.md", 1, 1)]


@pytest.mark.parametrize(
    ("kinds", "allowed"),
    [
        (["memory"], {"memory"}),
        (["daily"], {"daily"}),
        (["note"], {"note"}),
        (["daily", "note"], {"daily", "note"}),
    ],
)
def test_kind_filter(vault: Vault, kinds: list[str], allowed: set[str]) -> None:
    hits = vault.search("Jonas rollback plan", limit=40, kinds=kinds)
    assert hits
    assert {h.kind for h in hits} == allowed
    if kinds == ["memory"]:
        assert {h.path for h in hits} == {"MEMORY.md"}
    if kinds == ["daily"]:
        assert all(h.path.startswith("memory/") and h.date for h in hits)


def test_filters_through_the_cli(run_cli, indexed: Path) -> None:
    data = search_json(run_cli, indexed, "Jonas", "--in", "notes/", "--kind", "note", "-n", "50")
    assert data["results"]
    assert all(r["path"].startswith("notes/") and r["kind"] == "note" for r in data["results"])
    data = search_json(
        run_cli,
        indexed,
        "Jonas",
        "--kind",
        "memory",
        "--kind",
        "daily",
        "--since",
        "2026-11-05",
        "--until",
        "2026-11-05",
    )
    assert data["results"]
    assert {r["path"] for r in data["results"]} == {"memory/2026-11-05.md"}


# -- output -----------------------------------------------------------------------------------


def test_json_output_has_exactly_the_documented_shape(run_cli, indexed: Path) -> None:
    data = search_json(run_cli, indexed, "which", "database", "for", "billing?", "-n", "7")
    assert set(data) == {"query", "mode", "results"}
    assert data["query"] == "which database for billing?"
    assert data["mode"] == "hybrid"
    assert 0 < len(data["results"]) <= 7
    scores = [r["score"] for r in data["results"]]
    assert scores[0] == max(scores)
    for result in data["results"]:
        assert set(result) == RESULT_KEYS
        assert isinstance(result["path"], str)
        assert not result["path"].startswith(("/", "./")) and "\\" not in result["path"]
        assert (indexed / result["path"]).is_file()
        assert isinstance(result["start_line"], int) and isinstance(result["end_line"], int)
        assert 1 <= result["start_line"] <= result["end_line"]
        assert isinstance(result["heading"], str) and isinstance(result["text"], str)
        assert result["text"].strip()
        assert isinstance(result["score"], float | int)
        assert {"keyword", "vector"} <= set(result["scores"])
        assert all(isinstance(v, float | int) for v in result["scores"].values())
        assert result["kind"] in KINDS
        if result["kind"] in ("daily", "diary"):
            assert dt.date.fromisoformat(result["date"]).isoformat() == result["date"]
        else:
            assert result["date"] is None
    assert any(r["scores"]["keyword"] > 0 for r in data["results"])
    assert any(r["scores"]["vector"] > 0 for r in data["results"])


def test_no_results_is_an_empty_list_in_json_and_a_note_on_stderr(run_cli, indexed: Path) -> None:
    args = ("--vault", str(indexed), "search", "xylophone", "--mode", "keyword")
    assert json.loads(run_cli(*args, "--json").stdout) == {
        "query": "xylophone",
        "mode": "keyword",
        "results": [],
    }
    result = run_cli(*args)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == "no results\n"


def test_text_output_cites_path_and_lines(run_cli, indexed: Path) -> None:
    result = run_cli("--vault", str(indexed), "search", "ERR_LEDGER_409", "-n", "2", "--explain")
    assert result.exit_code == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("notes/billing-migration.md:") or first.startswith("memory/")
    assert "ERR_LEDGER_409" in result.stdout
    assert "keyword=" in result.stdout and "vector=" in result.stdout


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
@pytest.mark.parametrize(
    "query", [ZOE_QUESTION, "ERR_LEDGER_409", "fonts for the invoice renderer", "Jonas"]
)
def test_line_spans_point_at_the_hit_text(
    vault: Vault, indexed: Path, query: str, mode: str
) -> None:
    hits = vault.search(query, limit=20, mode=mode)
    assert hits
    for hit in hits:
        lines = (indexed / hit.path).read_text(encoding="utf-8").split("\n")
        assert "\n".join(lines[hit.start_line - 1 : hit.end_line]) == hit.text, hit


def test_results_are_distinct(vault: Vault) -> None:
    hits = vault.search("ERR_LEDGER_409 idempotency conflicts", limit=30)
    spans = [(h.path, h.start_line, h.end_line) for h in hits]
    assert len(spans) == len(set(spans))
    assert len({h.text for h in hits}) == len(hits)


# -- freshness --------------------------------------------------------------------------------


def test_an_edited_file_is_searched_without_vault_index(fresh_copy: Path) -> None:
    daily = fresh_copy / "memory" / "2026-11-21.md"
    before = daily.read_text(encoding="utf-8")
    daily.write_text(
        before + "\n## 18:00 · note\n- The sandbox tenant is PELICAN_7731 now.\n", encoding="utf-8"
    )
    line = len(before.split("\n")) + 2
    with Vault(fresh_copy) as vault:
        hits = vault.search("PELICAN_7731")
        assert where(hits)[:1] == [("memory/2026-11-21.md", line, line)]
        assert hits[0].text == "- The sandbox tenant is PELICAN_7731 now."
        assert hits[0].scores["vector"] > 0  # embedded on the way, not keyword-only
        assert vault.status()["drift"] == {"new": 0, "changed": 0, "deleted": 0}


def test_a_new_and_a_deleted_file_are_seen_without_vault_index(fresh_copy: Path) -> None:
    with Vault(fresh_copy) as vault:
        flaky = vault.search("flaky tests quarantine", limit=20, mode="keyword")
        assert any(h.path == "notes/ci-flaky-tests.md" for h in flaky)
    (fresh_copy / "notes" / "ci-flaky-tests.md").unlink()
    kestrel = fresh_copy / "notes" / "kestrel.md"
    kestrel.write_text("# Kestrel\n\n- KESTREL_88 is the new CI pool.\n")
    with Vault(fresh_copy) as vault:
        flaky = vault.search("flaky tests quarantine", limit=50)
        assert all(h.path != "notes/ci-flaky-tests.md" for h in flaky)
        assert where(vault.search("KESTREL_88", limit=1)) == [("notes/kestrel.md", 3, 3)]


def test_fresh_false_searches_the_index_as_it_is(fresh_copy: Path) -> None:
    note = fresh_copy / "notes" / "kestrel.md"
    note.write_text("- KESTREL_88 is the new CI pool.\n")
    with Vault(fresh_copy) as vault:
        assert vault.search("KESTREL_88", fresh=False, mode="keyword") == []
        assert where(vault.search("KESTREL_88", mode="keyword")) == [("notes/kestrel.md", 1, 1)]


def test_too_many_changed_files_warn_and_search_the_old_index(run_cli, fresh_copy: Path) -> None:
    for name in ("2026-11-19.md", "2026-11-20.md", "2026-11-21.md"):
        path = fresh_copy / "memory" / name
        path.write_text(path.read_text(encoding="utf-8") + f"- ZEBRA_0042 spotted ({name}).\n")
    env = {"VAULT_SEARCH_FRESHNESS_MAX_FILES": "2"}
    result = run_cli("--vault", str(fresh_copy), "search", "ZEBRA_0042", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    assert all("ZEBRA_0042" not in r["text"] for r in json.loads(result.stdout)["results"])
    assert (
        "Warning: 3 files changed since the last index; searching the index as it is. "
        "Run `vault index` (or `vault watch`) to include them." in result.stderr
    )
    # within the budget the same search indexes them first
    data = search_json(
        run_cli,
        fresh_copy,
        "ZEBRA_0042",
        "--mode",
        "keyword",
        env={"VAULT_SEARCH_FRESHNESS_MAX_FILES": "3"},
    )
    assert {r["path"] for r in data["results"] if "ZEBRA_0042" in r["text"]} == {
        "memory/2026-11-19.md",
        "memory/2026-11-20.md",
        "memory/2026-11-21.md",
    }


def test_a_vault_never_indexed_is_indexed_by_its_first_search(run_cli, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".vault"))
    env = {DISABLE_ENV: "1"}  # embedding the whole sample vault is slow
    result = run_cli(
        "--vault", str(root), "search", "ERR_LEDGER_409", "--mode", "keyword", "--json", env=env
    )
    assert result.exit_code == 0, result.stderr
    assert (
        "Warning: no index yet: indexing the vault first (later searches are fast)."
        in result.stderr
    )
    results = json.loads(result.stdout)["results"]
    assert any(contains_token(r["text"], "ERR_LEDGER_409") for r in results)
    assert (root / ".vault" / "index.sqlite").is_file()


# -- without the model ------------------------------------------------------------------------


def test_keyword_mode_works_with_the_model_disabled(run_cli, indexed: Path) -> None:
    result = run_cli(
        "--vault",
        str(indexed),
        "search",
        "BIL-1423",
        "--mode",
        "keyword",
        "--json",
        env={DISABLE_ENV: "1"},
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""  # keyword mode never asks for the model
    results = json.loads(result.stdout)["results"]
    assert results and contains_token(results[0]["text"], "BIL-1423")
    assert all(r["scores"]["vector"] == 0 for r in results)


def test_hybrid_mode_falls_back_to_keywords_with_the_model_disabled(run_cli, indexed: Path) -> None:
    result = run_cli(
        "--vault", str(indexed), "search", "BIL-1423", "--json", env={DISABLE_ENV: "1"}
    )
    assert result.exit_code == 0, result.stderr
    assert "disabled by VAULT_MODEL_DISABLED=1" in result.stderr
    results = json.loads(result.stdout)["results"]
    assert results and contains_token(results[0]["text"], "BIL-1423")


def test_semantic_mode_with_the_model_disabled_is_an_error(run_cli, indexed: Path) -> None:
    result = run_cli(
        "--vault",
        str(indexed),
        "search",
        ZOE_QUESTION,
        "--mode",
        "semantic",
        env={DISABLE_ENV: "1"},
    )
    assert result.exit_code == 1, result.stderr
    assert result.stdout == ""
    warning, error = result.stderr.splitlines()  # the model's own warning, then the error
    assert warning.startswith("Warning: embedding model ")
    message = error.removeprefix("Error: ")
    assert message.startswith(
        "semantic search needs the embedding model, which is not "
        "available (embedding model sentence-transformers/all-MiniLM-L6-v2 "
        "is unavailable: disabled by VAULT_MODEL_DISABLED=1"
    )
    assert message.endswith("Use --mode keyword or hybrid.")


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_refused(run_cli, indexed: Path, query: str) -> None:
    result = run_cli("--vault", str(indexed), "search", query)
    assert error_of(result) == "the query is empty. Ask a question or give some keywords."


def test_a_missing_query_is_a_usage_error(run_cli, indexed: Path) -> None:
    result = run_cli("--vault", str(indexed), "search")
    assert result.exit_code == 2
    assert "Missing argument 'QUERY...'" in result.stderr


@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize("value", ["yesterday", "2026-13-01", "22.11.2026"])
def test_a_bad_date_is_refused(run_cli, indexed: Path, option: str, value: str) -> None:
    result = run_cli("--vault", str(indexed), "search", "billing", option, value)
    assert error_of(result) == f"{option} {value!r} is not a date; use YYYY-MM-DD."


def test_an_unknown_mode_is_a_usage_error(run_cli, indexed: Path) -> None:
    result = run_cli("--vault", str(indexed), "search", "billing", "--mode", "fuzzy")
    assert result.exit_code == 2
    assert (
        "Invalid value for '--mode': 'fuzzy' is not one of 'hybrid', 'keyword', 'semantic'."
        in result.stderr
    )


def test_an_unknown_kind_is_a_usage_error(run_cli, indexed: Path) -> None:
    result = run_cli("--vault", str(indexed), "search", "billing", "--kind", "journal")
    assert result.exit_code == 2
    assert "Invalid value for '--kind'" in result.stderr


def test_the_library_refuses_unknown_modes_and_kinds(vault: Vault) -> None:
    with pytest.raises(
        VaultError, match="unknown search mode 'fuzzy'; use one of: hybrid, keyword, semantic."
    ):
        vault.search("billing", mode="fuzzy")
    with pytest.raises(
        VaultError, match="unknown kind 'journal'; use one of: memory, daily, note, diary."
    ):
        vault.search("billing", kinds=["journal"])


@pytest.mark.parametrize(
    ("within", "reason"),
    [
        ("../outside", "it climbs out with '..'"),
        ("notes/../../x", "it climbs out with '..'"),
        ("/etc", "absolute paths are not accepted"),
    ],
)
def test_in_outside_the_vault_is_refused(run_cli, indexed: Path, within: str, reason: str) -> None:
    result = run_cli("--vault", str(indexed), "search", "billing", "--in", within)
    assert error_of(result) == (
        f"refusing {within!r}: {reason}. Give a path relative to the vault root, "
        "e.g. memory/2026-11-22.md."
    )


def test_in_through_a_symlink_leading_outside_is_refused(fresh_copy: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (fresh_copy / "away").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with (
        Vault(fresh_copy) as vault,
        pytest.raises(PathOutsideVaultError, match="a symlink leads outside the vault"),
    ):
        vault.search("billing", within="away")


def test_hit_to_dict_rounds_scores() -> None:
    hit = Hit(
        "MEMORY.md",
        3,
        4,
        "MEMORY > People",
        "- a\n- b",
        0.123456789,
        {"keyword": 0.333333, "vector": 2 / 3},
        None,
        "memory",
    )
    assert hit.to_dict() == {
        "path": "MEMORY.md",
        "start_line": 3,
        "end_line": 4,
        "heading": "MEMORY > People",
        "text": "- a\n- b",
        "score": 0.1235,
        "scores": {"keyword": 0.3333, "vector": 0.6667},
        "date": None,
        "kind": "memory",
        "flags": [],
    }


def test_filters_scale_the_keyword_signal_over_the_allowed_units(indexed: Path) -> None:
    """With --since, the keyword scores are normalised among the allowed units: the two best
    keyword matches overall are left out by the filter and must not dwarf the ones it keeps."""
    with Vault(indexed) as vault:
        everything = vault.search("ERR_LEDGER_409 idempotency", fresh=False)
        hits = vault.search("ERR_LEDGER_409 idempotency", since="2026-11-14", fresh=False)
    assert everything[0].date is None or everything[0].date < "2026-11-14"  # filtered out
    assert hits and all(h.date and h.date >= "2026-11-14" for h in hits)
    top = hits[0]
    assert (top.path, top.start_line <= 16 <= top.end_line) == ("memory/2026-11-14.md", True)
    assert max(h.scores["keyword"] for h in hits) == pytest.approx(1.0)


def test_an_index_built_without_the_model_says_so(
    run_cli, small_vault: Path, monkeypatch: pytest.MonkeyPatch, loaded_embedder
) -> None:
    from vault_memory.index.embedder import DISABLE_ENV

    monkeypatch.setenv(DISABLE_ENV, "1")
    assert run_cli("--vault", str(small_vault), "index").exit_code == 0
    monkeypatch.delenv(DISABLE_ENV)
    semantic = run_cli("--vault", str(small_vault), "search", "database", "--mode", "semantic")
    assert semantic.exit_code == 1
    assert "the index holds no embeddings for the model yet" in semantic.stderr
    hybrid = run_cli("--vault", str(small_vault), "search", "PostgreSQL", "--json")
    assert hybrid.exit_code == 0
    assert "searching by keywords only. Run `vault index` to add them." in hybrid.stderr
    assert json.loads(hybrid.stdout)["results"]
    assert run_cli("--vault", str(small_vault), "index").exit_code == 0
    again = run_cli("--vault", str(small_vault), "search", "database", "--mode", "semantic")
    assert again.exit_code == 0 and "no embeddings" not in again.stderr


def test_a_nonsense_query_marks_its_hits_weak(indexed_sample: Path, run_cli) -> None:
    """A query nothing in the vault answers still returns its nearest lines; each says it is a
    weak match, so a caller can tell them from answers."""
    nonsense = json.loads(
        run_cli(
            "--vault", str(indexed_sample), "search", "quantum chromodynamics lattice", "--json"
        ).stdout
    )
    assert nonsense["results"] and all(h["flags"] == ["weak"] for h in nonsense["results"])
    real = json.loads(
        run_cli(
            "--vault", str(indexed_sample), "search", "who owns the invoice renderer?", "--json"
        ).stdout
    )
    assert real["results"][0]["flags"] == []
    text = run_cli("--vault", str(indexed_sample), "search", "banana helicopter", "-n", "1")
    assert "weak match" in text.stdout


def test_inverted_dates_and_a_missing_folder_say_so(indexed_sample: Path, run_cli) -> None:
    from ..cli.test_cli_basic import error_of

    root = str(indexed_sample)
    assert error_of(
        run_cli(
            "--vault", root, "search", "billing", "--since", "2026-11-20", "--until", "2026-11-10"
        )
    ) == ("--since 2026-11-20 is after --until 2026-11-10: no date can match. Swap them.")
    assert error_of(run_cli("--vault", root, "search", "billing", "--in", "notez")) == (
        "--in notez: there is no such file or folder in the vault. Check the path (relative to "
        "the vault root), e.g. --in memory or --in notes/a.md."
    )


@pytest.mark.slow
def test_the_dream_diary_is_left_out_unless_asked_for(
    indexed_sample: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a dream and its undo, 3 of the top 5 hits for "parental leave" were diary lines
    (one a removal line of the diff), above the daily log that holds the fact."""
    from vault_memory.agents.tools import call_tool, make_tools

    monkeypatch.setenv("VAULT_NOW", "2026-11-22T10:00")
    with Vault(indexed_sample) as vault:
        assert vault.dream(lookback_days=30).status == "dreamed"
        vault.undo_dream()
        vault.index()
        assert vault.search("parental leave", kinds=["diary"])  # the diary is indexed
        hits = vault.search("parental leave")
        assert hits and all(h.kind != "diary" for h in hits)
        assert any(h.path.startswith("memory/") for h in hits[:5])  # the fact's own log
        assert vault.search("parental leave", within="dreams")  # asked for by folder
        block = vault.context(3000, query="parental leave")
        assert "dreams/" not in block
        tool = json.loads(
            call_tool(make_tools(vault), "search_memory", {"query": "parental leave", "limit": 20})
        )
        assert tool["results"] and not any(r["path"].startswith("dreams/") for r in tool["results"])
    shown = json.loads(
        run_cli(
            "--vault", str(indexed_sample), "search", "parental leave", "--kind", "diary", "--json"
        ).stdout
    )
    assert shown["results"] and all(h["kind"] == "diary" for h in shown["results"])
