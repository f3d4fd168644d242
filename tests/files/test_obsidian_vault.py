"""An Obsidian vault end to end: properties, tags and aliases as fields, links and
backlinks, canvas, Obsidian's excluded files, files that cannot be read; every file's bytes and
mtime unchanged. The query language's operators on such a vault: test_query.py."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault

from ..support.vaults import copy_vault

Snapshot = Callable[[Path], dict[str, tuple[bytes, int, int]]]

NODES = [
    {
        "id": "grp",
        "type": "group",
        "label": "Launch day",
        "x": 0,
        "y": 0,
        "width": 900,
        "height": 600,
    },
    {
        "id": "txt",
        "type": "text",
        "text": "Countdown checklist: fuel, telemetry, range safety #launch/checklist",
        "x": 20,
        "y": 20,
        "width": 300,
        "height": 200,
    },
    {
        "id": "fil",
        "type": "file",
        "file": "projects/Rocket.md",
        "x": 400,
        "y": 20,
        "width": 300,
        "height": 200,
    },
    {
        "id": "pic",
        "type": "file",
        "file": "attachments/engine.png",
        "x": 400,
        "y": 300,
        "width": 100,
        "height": 100,
    },
]

OBSIDIAN_FILES: dict[str, str | bytes] = {
    "notes/people/Priya Raman.md": (
        "---\n"
        "aliases: [Priya, P. Raman]\n"
        "tags: [person, team/propulsion]\n"
        "role: Propulsion lead\n"
        "started: 2024-03-01\n"
        "---\n"
        "# Priya Raman\n"
        "\n"
        "- Runs the engine test stand in Mojave.\n"
        "- Prefers written go/no-go criteria over meetings.\n"
    ),
    "notes/people/Jonas Berg.md": (
        "---\n"
        "aliases: Jonas\n"  # one alias as a string
        "tags: person\n"
        "---\n"
        "# Jonas Berg\n"
        "\n"
        "- Owns the telemetry dashboards.\n"
    ),
    "projects/Rocket.md": (
        "---\n"
        "title: Rocket\n"
        "aliases:\n"
        "  - Launch vehicle\n"
        "tags: [project, rocketry]\n"
        "status: active\n"
        "budget: 120000\n"
        "ratio: 0.75\n"
        "reusable: true\n"
        "due: 2026-12-15\n"
        'owner: "[[Priya Raman]]"\n'
        "reviewers:\n"
        '  - "[[Jonas Berg]]"\n'
        "empty:\n"
        "---\n"
        "# Rocket\n"
        "\n"
        "## Plan\n"
        "- Static fire of the engine on Friday with [[Priya Raman|Priya]]. #decision\n"
        "- Telemetry review with [[Jonas Berg#Dashboards]] and "
        "[the runbook](../notes/runbook.md).\n"
        "- ![[engine.png]] and ![[spec.pdf]] and [[Old plan]] and [[Nowhere]].\n"
        "\n"
        "## Risks\n"
        "- Weather may delay the static fire. #risk/weather\n"
    ),
    "notes/runbook.md": "# Runbook\n\n- Purge the lines with nitrogen before the static fire.\n",
    "memory/2026-11-20.md": (
        "# 2026-11-20\n\n## 10:00 · note\n"
        "- Lunch with [[Priya Raman]]: Priya Raman wants the go/no-go list by Monday.\n"
    ),
    "board.canvas": '{\n  "nodes": [\n'
    + ",\n".join(f"    {json.dumps(n)}" for n in NODES)
    + '\n  ],\n  "edges": []\n}\n',
    "attachments/engine.png": b"\x89PNG\r\n\x1a\n fake image",
    "attachments/spec.pdf": b"%PDF-1.4 fake",
    ".obsidian/app.json": json.dumps({"userIgnoreFilters": ["archive/"]}),
    ".obsidian/workspace.md": "- Obsidian's own file: fuel telemetry\n",
    ".trash/deleted.md": "- a deleted note about the static fire\n",
    "archive/Old plan.md": "# Old plan\n\n- Static fire in the desert, canceled.\n",
    "notes/latin1.md": "- caf\xe9 notes about the static fire\n".encode("latin-1"),
}

FRONTMATTER_WORDS = ("rocketry", "Propulsion lead", "120000", "aliases")


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for relpath, data in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")


def make_obsidian_vault(root: Path) -> Path:
    """An initialised vault at `root` holding OBSIDIAN_FILES, indexed with the bundled model."""
    Vault.init(root)
    write_files(root, OBSIDIAN_FILES)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("VAULT_MODEL_DISABLED", raising=False)
        with Vault(root) as vault:
            report = vault.index()
    assert report.units_embedded == report.units > 0, report
    return root


@pytest.fixture(scope="module")
def _obsidian_template(tmp_path_factory: pytest.TempPathFactory, loaded_embedder: Any) -> Path:
    return make_obsidian_vault(tmp_path_factory.mktemp("obsidian") / "vault")


@pytest.fixture
def obsidian_vault(tmp_path: Path, _obsidian_template: Path) -> Path:
    return copy_vault(_obsidian_template, tmp_path / "vault")


def search(root: Path, query: str, **options: Any) -> list[Any]:
    with Vault(root) as vault:
        return list(vault.search(query, **options))


def paths(hits: list[Any]) -> list[str]:
    return [h.path for h in hits]


def vault_files(state: dict[str, tuple[bytes, int, int]]) -> dict[str, tuple[bytes, int, int]]:
    return {p: v for p, v in state.items() if not p.startswith(".vault/")}


# -- the round trip ---------------------------------------------------------------------------


def test_round_trip_leaves_every_file_as_it_was(
    tmp_path: Path,
    loaded_embedder: Any,
    tree_state: Snapshot,
    run_cli: Callable[..., Any],
) -> None:
    root = Vault.init(tmp_path / "vault").root
    write_files(root, OBSIDIAN_FILES)
    before = vault_files(tree_state(root))
    with Vault(root) as vault:
        report = vault.index()
        assert report.unreadable == 1  # notes/latin1.md
        assert vault.search("static fire")
        assert vault.search("tag:#project/x OR tag:#team [role:lead] file:priya -meetings")
        assert vault.links("projects/Rocket.md")
        assert vault.backlinks("Priya Raman")
        vault.status()
    for args in (
        ["search", "countdown checklist"],
        ["links", "Rocket"],
        ["backlinks", "engine.png"],
        ["status"],
        ["index"],
    ):
        result = run_cli("--vault", str(root), *args)
        assert result.exit_code == 0, result.stderr
    assert vault_files(tree_state(root)) == before


# -- properties, tags and aliases are fields, not text ------------------------------------------


@pytest.mark.parametrize("word", FRONTMATTER_WORDS)
def test_frontmatter_is_never_a_hit(obsidian_vault: Path, word: str) -> None:
    for hit in search(obsidian_vault, word, limit=20):
        assert "aliases:" not in hit.text and "tags:" not in hit.text, hit
        assert not (hit.path == "projects/Rocket.md" and hit.start_line <= 15), hit


def test_tags_aliases_and_properties_select_the_note(obsidian_vault: Path) -> None:
    rocket = search(obsidian_vault, "tag:#rocketry")
    assert set(paths(rocket)) == {"projects/Rocket.md"}
    assert {h.start_line for h in rocket} >= {19, 20, 21, 24}  # every unit of the note
    assert set(paths(search(obsidian_vault, "tag:#team"))) == {"notes/people/Priya Raman.md"}
    assert set(paths(search(obsidian_vault, "[budget:120000]"))) == {"projects/Rocket.md"}
    assert set(paths(search(obsidian_vault, "[reusable:true]"))) == {"projects/Rocket.md"}
    assert set(paths(search(obsidian_vault, "[due:2026-12-15]"))) == {"projects/Rocket.md"}
    assert set(paths(search(obsidian_vault, "[empty]"))) == {"projects/Rocket.md"}
    assert set(paths(search(obsidian_vault, "[role:propulsion]"))) == {
        "notes/people/Priya Raman.md"
    }
    # The inline nested tag, as Obsidian tags a note: every unit of the note.
    assert set(paths(search(obsidian_vault, "tag:#risk"))) == {"projects/Rocket.md"}


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("Priya Raman", "notes/people/Priya Raman.md"),
        ("what does Priya Raman prefer?", "notes/people/Priya Raman.md"),
        ("P. Raman", "notes/people/Priya Raman.md"),  # an alias (list form)
        ("Jonas", "notes/people/Jonas Berg.md"),  # an alias (string form)
        ("launch vehicle", "projects/Rocket.md"),
    ],
)
def test_a_query_naming_a_note_ranks_its_own_units_first(
    obsidian_vault: Path,
    query: str,
    note: str,
) -> None:
    hits = search(obsidian_vault, query)
    assert hits[0].path == note, [(h.path, h.start_line, h.score) for h in hits]


def test_one_word_names_a_note_only_when_it_is_the_whole_query(obsidian_vault: Path) -> None:
    (obsidian_vault / "notes" / "Plan.md").write_text("# Plan\n\n- Quarterly goals.\n")
    assert search(obsidian_vault, "who is Jonas?")[0].path == "notes/people/Jonas Berg.md"
    assert search(obsidian_vault, "plan")[0].path == "notes/Plan.md"
    hits = search(obsidian_vault, "what is the plan for the static fire?")
    assert hits[0].path == "projects/Rocket.md", [(h.path, h.start_line) for h in hits]


def test_a_mention_through_a_link_is_still_evidence(obsidian_vault: Path) -> None:
    hits = search(obsidian_vault, "Priya Raman go/no-go list")
    assert "memory/2026-11-20.md" in paths(hits)


# -- links -------------------------------------------------------------------------------------


def test_links_of_a_note_resolve_as_obsidian_does(obsidian_vault: Path) -> None:
    with Vault(obsidian_vault) as vault:
        found = [
            (link.line, link.target, link.resolved, link.kind) for link in vault.links("Rocket")
        ]
    assert found == [
        (11, "Priya Raman", "notes/people/Priya Raman.md", "property"),
        (13, "Jonas Berg", "notes/people/Jonas Berg.md", "property"),
        (19, "Priya Raman", "notes/people/Priya Raman.md", "wikilink"),
        (20, "Jonas Berg", "notes/people/Jonas Berg.md", "wikilink"),
        (20, "../notes/runbook.md", "notes/runbook.md", "markdown"),
        (21, "engine.png", "attachments/engine.png", "wikilink"),
        (21, "spec.pdf", "attachments/spec.pdf", "wikilink"),
        (21, "Old plan", "archive/Old plan.md", "wikilink"),  # excluded, but a file
        (21, "Nowhere", None, "wikilink"),
    ]


def test_backlinks_with_their_lines(obsidian_vault: Path, run_cli: Callable[..., Any]) -> None:
    result = run_cli("--vault", str(obsidian_vault), "backlinks", "priya raman", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(b["source"], b["line"]) for b in data["links"]] == [
        ("memory/2026-11-20.md", 4),
        ("projects/Rocket.md", 11),
        ("projects/Rocket.md", 19),
    ]
    assert data["links"][2]["text"].startswith("- Static fire of the engine on Friday")
    text = run_cli("--vault", str(obsidian_vault), "backlinks", "notes/people/Priya Raman.md")
    assert "projects/Rocket.md:19  - Static fire of the engine" in text.stdout
    # An attachment is a link target: embedded by the note and by the canvas.
    pic = run_cli("--vault", str(obsidian_vault), "backlinks", "engine.png", "--json")
    assert [(b["source"], b["kind"]) for b in json.loads(pic.stdout)["links"]] == [
        ("board.canvas", "canvas"),
        ("projects/Rocket.md", "wikilink"),
    ]


def test_links_cli_and_a_note_nobody_answers_to(
    obsidian_vault: Path,
    run_cli: Callable[..., Any],
) -> None:
    result = run_cli("--vault", str(obsidian_vault), "links", "projects/Rocket.md")
    assert result.exit_code == 0, result.stderr
    assert "![[engine.png]]  -> attachments/engine.png" in result.stdout
    assert "[[Nowhere]]  -> unresolved" in result.stdout
    missing = run_cli("--vault", str(obsidian_vault), "links", "Nobody Here")
    assert missing.exit_code == 1
    assert "Error: no file of the vault answers to 'Nobody Here'" in missing.stderr
    none = run_cli("--vault", str(obsidian_vault), "backlinks", "board.canvas")
    assert (none.exit_code, none.stdout, none.stderr) == (0, "", "no backlinks\n")


def test_a_note_added_later_resolves_the_links_that_named_it(obsidian_vault: Path) -> None:
    (obsidian_vault / "notes" / "Nowhere.md").write_text("# Nowhere\n\n- now somewhere\n")
    with Vault(obsidian_vault) as vault:
        (link,) = [link for link in vault.links("Rocket") if link.target == "Nowhere"]
        assert link.resolved == "notes/Nowhere.md"
        assert vault.status()["unresolved_links"] == 0


def test_status_lists_unresolved_links_and_skipped_files(
    obsidian_vault: Path,
    run_cli: Callable[..., Any],
) -> None:
    result = run_cli("--vault", str(obsidian_vault), "status", "--json")
    info = json.loads(result.stdout)
    assert info["unresolved_links"] == 1
    assert [(u["source"], u["line"], u["target"]) for u in info["unresolved"]] == [
        ("projects/Rocket.md", 21, "Nowhere")
    ]
    assert "not valid UTF-8" in info["skipped"]["notes/latin1.md"]
    assert info["drift"] == {"new": 0, "changed": 0, "deleted": 0}
    text = run_cli("--vault", str(obsidian_vault), "status").stdout
    assert "unresolved    1 link leads to no file" in text
    assert "unresolved    projects/Rocket.md:21 -> Nowhere" in text
    assert "skipped       notes/latin1.md: not valid UTF-8" in text


# -- canvas, excluded files, attachments, unreadable files --------------------------------------


def test_canvas_text_nodes_are_searched_and_cited(obsidian_vault: Path) -> None:
    (hit,) = search(obsidian_vault, "countdown checklist telemetry", limit=1)
    assert (hit.path, hit.start_line, hit.heading) == ("board.canvas", 4, "board > Launch day")
    assert "board.canvas" in paths(search(obsidian_vault, "tag:#launch"))


def test_files_obsidian_ignores_are_never_indexed(obsidian_vault: Path) -> None:
    with Vault(obsidian_vault) as vault:
        indexed = {row[0] for row in vault.cache.store.conn.execute("SELECT path FROM files")}
    assert indexed == {
        "MEMORY.md",
        "notes/people/Priya Raman.md",
        "notes/people/Jonas Berg.md",
        "projects/Rocket.md",
        "notes/runbook.md",
        "memory/2026-11-20.md",
        "board.canvas",
    }
    hits = search(obsidian_vault, "static fire desert canceled", limit=20)
    assert "archive/Old plan.md" not in paths(hits)


def test_excluded_files_follow_obsidians_settings(obsidian_vault: Path) -> None:
    (obsidian_vault / ".obsidian" / "app.json").write_text(
        json.dumps({"userIgnoreFilters": ["notes/runbook.md"]})
    )
    with Vault(obsidian_vault) as vault:
        report = vault.index()
        assert (report.new, report.deleted) == (1, 1)  # archive/ in, the runbook out
        assert "archive/Old plan.md" in paths(vault.search("desert canceled"))


def test_an_unreadable_file_is_reported_once_per_change(
    obsidian_vault: Path,
    vault_warnings: Callable[[], list[str]],
) -> None:
    for _ in range(2):
        with Vault(obsidian_vault) as vault:
            assert vault.index().warnings == []
            vault.search("static fire")
    assert vault_warnings() == []
    (obsidian_vault / "notes" / "latin1.md").write_bytes(b"- \xe9t\xe9 again\n")
    with Vault(obsidian_vault) as vault:
        (warning,) = vault.index().warnings
        assert "notes/latin1.md" in warning and "UTF-8" in warning
        vault.search("static fire")
        assert vault.index().warnings == []
    # Mended: indexed, no longer listed as skipped.
    (obsidian_vault / "notes" / "latin1.md").write_text("- café notes, fixed\n")
    with Vault(obsidian_vault) as vault:
        assert vault.index().new == 1
        assert "notes/latin1.md" not in vault.status()["skipped"]
        assert "notes/latin1.md" in paths(vault.search("café notes fixed"))


def test_a_broken_canvas_is_skipped_with_the_reason(obsidian_vault: Path) -> None:
    (obsidian_vault / "bad.canvas").write_text("{ not json")
    with Vault(obsidian_vault) as vault:
        (warning,) = vault.index().warnings
        assert "bad.canvas" in warning and "not a JSON Canvas file" in warning
        assert "not a JSON Canvas file" in vault.status()["skipped"]["bad.canvas"]


def test_deleting_the_cache_rebuilds_the_same_fields(obsidian_vault: Path) -> None:
    expected = sorted(paths(search(obsidian_vault, "tag:#person")))
    shutil.rmtree(obsidian_vault / ".vault")
    with Vault(obsidian_vault) as vault:
        vault.index()
    assert sorted(paths(search(obsidian_vault, "tag:#person"))) == expected


def test_links_never_reveal_a_file_of_a_scope_the_view_may_not_see(
    tmp_path: Path,
    loaded_embedder: Any,
) -> None:
    from vault_memory.errors import VaultError

    root = Vault.init(tmp_path / "vault").root
    write_files(
        root,
        {
            "notes/Shared.md": "# Shared\n\n- Everyone sees this note.\n",
            "scopes/acme/alpha/notes/Plan.md": "# Plan\n\n- See [[Secret]] and [[Shared]].\n",
            "scopes/acme/beta/notes/Secret.md": "# Secret\n\n- Beta's own note. [[Plan]]\n",
        },
    )
    with Vault(root) as vault:
        vault.index()
        # The whole vault sees both sides.
        (secret, shared) = vault.links("scopes/acme/alpha/notes/Plan.md")
        assert (secret.resolved, shared.resolved) == (
            "scopes/acme/beta/notes/Secret.md",
            "notes/Shared.md",
        )
        alpha = vault.scope("acme", "alpha")
        (secret, shared) = alpha.links("Plan")
        assert (secret.resolved, shared.resolved) == (None, "notes/Shared.md")
        assert [b.source for b in alpha.backlinks("Shared")] == ["scopes/acme/alpha/notes/Plan.md"]
        assert alpha.status()["unresolved"][0]["target"] == "Secret"
        with pytest.raises(VaultError):
            alpha.links("Secret")
        beta = vault.scope("acme", "beta")
        assert beta.backlinks("Secret") == []  # alpha's link is not beta's to see
        assert [link.resolved for link in beta.links("Secret")] == [None]
