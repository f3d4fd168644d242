"""`vault graph`: a session's thread tree; sessions -> entries -> MEMORY.md items (provenance
from dreams) and wikilinks; Mermaid that a real Mermaid parser accepts, on hostile labels."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.sessions import Graph, escape_label
from vault_memory.sessions.graph import LABEL_CHARS, Edge, Node

HERE = Path(__file__).resolve().parent

HOSTILE = [
    'say "hi" [x] (y) {z} <b>bold</b> --> end',
    "emoji 😀🎉 ñ 漢字 🏳️‍🌈",
    "x" * 500,
    "a %% b %%{init: {'theme': 'dark'}}%% c",
    "`code` ~~s~~ *em* _u_ | pipe & amp ; semi # hash",
    "line\nbreak\ttab\x00nul\x1b",
    "-->",
    '"',
    "",
    "end",
    "style n0 fill:#f00",
    "click n0 call alert()",
    '\\ backslash \\" q',
    "&lt; #quot; #35;",
    "subgraph x",
    "A-->B; C",
    "\u2028\u2029",
    ")",
    "}",
    "]",
    "<script>alert(1)</script>",
    "[[wikilink|alias]]",
    "## heading",
]

CHAT = [
    {
        "role": "user",
        "content": "We decided to move billing-core to PostgreSQL 16. "
        "Please remember that decision.",
    },
    {"role": "assistant", "content": "Noted: billing-core moves to PostgreSQL 16."},
]


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T14:03")


def hostile_graph() -> Graph:
    graph = Graph("vault", notes=['session "x" {json} %% --> ]] ' + "y" * 300])
    for i, label in enumerate(HOSTILE):
        graph.nodes.append(Node(f"n{i}", "note", label))
        if i:
            graph.edges.append(Edge(f"n{i - 1}", f"n{i}", "links"))
    return graph


def test_labels_are_one_short_line_with_nothing_that_ends_them() -> None:
    for label in HOSTILE:
        escaped = escape_label(label)
        assert "\n" not in escaped and '"' not in escaped
        assert not any(c in escaped for c in "[]{}<>`\\&") and "-->" not in escaped
        assert len(escaped.replace("#quot;", '"')) <= LABEL_CHARS * 6
    assert escape_label('a "b" [c]') == "a #quot;b#quot; #91;c#93;"
    assert escape_label("x" * 500) == "x" * (LABEL_CHARS - 1) + "…"
    assert escape_label("😀 ñ") == "😀 ñ"


def test_a_session_graph_is_its_thread_tree(vault_dir: Path, run_cli) -> None:
    chat = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(6)
    ]
    Vault(vault_dir).flush(chat, session="tree")
    text = vault_dir / "sessions" / "2026-11-22-tree.md"
    # a person (or threads) made message 5 continue message 2
    text.write_text(
        text.read_text("utf-8").replace("id: 5 · parent: 4", "id: 5 · parent: 2"), encoding="utf-8"
    )
    graph = Vault(vault_dir).graph("tree")
    assert [n.id for n in graph.nodes] == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert [(e.source, e.target) for e in graph.edges] == [
        ("m1", "m2"),
        ("m2", "m3"),
        ("m3", "m4"),
        ("m2", "m5"),
        ("m5", "m6"),
    ]
    assert graph.nodes[0].label == "1 user: message 0"
    result = run_cli("--vault", str(vault_dir), "graph", "--session", "last", "--limit", "3")
    assert result.exit_code == 0
    assert result.stdout.startswith("flowchart LR\n")
    assert "m4[" in result.stdout and "m3[" not in result.stdout
    assert "m5 --> m6" in result.stdout
    assert "graph cut at 3 of 6 nodes" in result.stderr
    assert "%% graph cut at 3 of 6 nodes" in result.stdout


def test_the_vault_graph_follows_sessions_to_entries_to_memory(vault_dir: Path, run_cli) -> None:
    vault = Vault(vault_dir)
    report = vault.flush(CHAT, session="billing")
    assert report.entries
    daily = report.path
    first = report.start_line + 1
    (vault_dir / "MEMORY.md").write_text(
        "# MEMORY\n\n## Decisions\n"
        f"- billing-core runs on PostgreSQL 16 <!-- src: {daily}#L{first} -->\n"
        "- An item a person wrote\n"
        "- Deploys go out on Thursdays\n",
        encoding="utf-8",
    )
    # a diary's "Added" line is provenance too, for an item without a src comment
    (vault_dir / "dreams" / "2026-11-22.md").write_text(
        "# Dream diary 2026-11-22\n\n## 03:30 · dream · offline\n\n### Added\n\n"
        f"- to **Decisions**: Deploys go out on Thursdays ← `{daily}#L{first}` — recurs\n",
        encoding="utf-8",
    )
    (vault_dir / "notes").mkdir()
    (vault_dir / "notes" / "billing.md").write_text("See [[postgres|the DB notes]].\n")
    (vault_dir / "notes" / "postgres.md").write_text("# Postgres\nBack to [[billing]].\n")
    graph = vault.graph()
    kinds = {n.id: n.kind for n in graph.nodes}
    labels = {n.id: n.label for n in graph.nodes}
    session = next(n for n in graph.nodes if n.kind == "session")
    assert session.label.startswith("session billing · We decided")
    entries = [e.target for e in graph.edges if e.source == session.id and e.kind == "flushed"]
    assert len(entries) == len(report.entries)
    promoted = {
        (labels[e.source][:20], labels[e.target]) for e in graph.edges if e.kind == "promoted"
    }
    assert "Decisions: billing-core runs on PostgreSQL 16" in {t for _, t in promoted}
    assert "Decisions: Deploys go out on Thursdays" in {t for _, t in promoted}
    assert all(kinds[e.target] == "memory" for e in graph.edges if e.kind == "promoted")
    links = {(labels[e.source], labels[e.target]) for e in graph.edges if e.kind == "links"}
    assert links == {("notes/billing", "notes/postgres"), ("notes/postgres", "notes/billing")}
    # the CLI: JSON, and Mermaid in a ```mermaid block for a .md file
    data = json.loads(run_cli("--vault", str(vault_dir), "graph", "--format", "json").stdout)
    assert {n["kind"] for n in data["nodes"]} == {"session", "entry", "memory", "note"}
    out = vault_dir / "notes" / "graph.md"
    done = run_cli("--vault", str(vault_dir), "graph", "--out", str(out))
    assert done.exit_code == 0 and "nodes" in done.stderr
    assert out.read_text("utf-8").startswith("```mermaid\nflowchart LR\n")
    assert out.read_text("utf-8").endswith("```\n")
    # --since leaves older sessions out
    assert not [n for n in vault.graph(since="2026-11-23").nodes if n.kind == "session"]


def test_a_large_vault_graph_is_cut_and_says_so(vault_dir: Path, run_cli) -> None:
    vault = Vault(vault_dir)
    for i in range(8):
        vault.flush(
            [{"role": "user", "content": f"Remember: project {i} ships on day {i}."}],
            session=f"s{i}",
        )
    graph = vault.graph(limit=5)
    assert graph.cut and len(graph.nodes) == 5 and graph.total_nodes > 5
    assert graph.notes[0].startswith("graph cut at 5 of")
    bad = run_cli("--vault", str(vault_dir), "graph", "--limit", "0")
    assert bad.exit_code == 1 and "give 1 node or more" in bad.stderr


def mermaid_parser(tmp_path: Path) -> Path:
    """A real Mermaid parser (the `mermaid` npm package under jsdom), installed once into a
    cache folder outside the checkout ($MERMAID_PARSER_DIR, default
    ~/.cache/vault-memory-mermaid). Skips, saying why, when node or npm cannot provide it."""
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are needed for the Mermaid parser test")
    home = Path(
        os.environ.get("MERMAID_PARSER_DIR") or Path.home() / ".cache" / "vault-memory-mermaid"
    )
    home.mkdir(parents=True, exist_ok=True)
    if (
        not (home / "node_modules" / "mermaid").is_dir()
        or not (home / "node_modules" / "jsdom").is_dir()
    ):
        if not (home / "package.json").exists():
            (home / "package.json").write_text('{"private": true}\n')
        try:
            done = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "mermaid@11", "jsdom"],
                cwd=home,
                capture_output=True,
                text=True,
                timeout=600,
            )
        except subprocess.TimeoutExpired:
            pytest.skip("npm could not install mermaid within 10 minutes")
        if done.returncode != 0:
            pytest.skip(f"npm could not install mermaid: {done.stderr.strip()[-300:]}")
    script = home / "mermaid_parse.mjs"
    shutil.copyfile(HERE / "js" / "mermaid_parse.mjs", script)
    return script


@pytest.mark.slow
def test_mermaid_output_parses_with_a_real_mermaid_parser(vault_dir: Path, tmp_path: Path) -> None:
    script = mermaid_parser(tmp_path)
    vault = Vault(vault_dir)
    chat = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": label or "empty"}
        for i, label in enumerate(HOSTILE)
    ]
    vault.flush(chat, session="hostile")
    (vault_dir / "notes").mkdir()
    for i, label in enumerate(HOSTILE[:6]):
        (vault_dir / "notes" / f"n{i}.md").write_text(f"{label}\n[[n{i + 1}]]\n", encoding="utf-8")
    graphs = {
        "hostile": hostile_graph(),
        "session": vault.graph("hostile"),
        "vault": vault.graph(),
        "cut": vault.graph(limit=3),
    }
    files = []
    for name, graph in graphs.items():
        path = tmp_path / f"{name}.mmd"
        path.write_text(graph.mermaid(), encoding="utf-8")
        files.append(str(path))
    # and a file the parser must refuse: the check can fail
    broken = tmp_path / "broken.mmd"
    broken.write_text('flowchart LR\n  a["bad " quote"] --> b\n', encoding="utf-8")
    result = subprocess.run(
        ["node", str(script), *files], capture_output=True, text=True, timeout=300
    )
    verdicts = [json.loads(line) for line in result.stdout.splitlines()]
    assert [v["ok"] for v in verdicts] == [True] * len(files), verdicts
    assert all(v["type"].startswith("flowchart") for v in verdicts)
    refused = subprocess.run(
        ["node", str(script), str(broken)], capture_output=True, text=True, timeout=300
    )
    assert refused.returncode == 1 and '"ok":false' in refused.stdout


def test_a_real_dream_s_promotions_are_drawn(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, loaded_embedder: object
) -> None:
    vault = Vault(vault_dir)
    vault.flush(
        [
            {
                "role": "user",
                "content": "We decided to move billing-core to PostgreSQL 16. #important",
            },
            {"role": "assistant", "content": "Noted."},
            {
                "role": "user",
                "content": "I prefer hand-written SQL migrations over ORM-generated ones.",
            },
        ],
        session="dreamt",
    )
    monkeypatch.setenv("VAULT_NOW", "2026-11-22T05:00")
    report = vault.dream()
    assert len(report.added) == 2

    def promoted() -> set[tuple[str, str]]:
        graph = vault.graph()
        labels = {n.id: n.label for n in graph.nodes}
        return {
            (labels[e.source][:24], labels[e.target][:24])
            for e in graph.edges
            if e.kind == "promoted"
        }

    found = promoted()
    # (the dream states an entry without its speaker label: dream/wording.py)
    assert found == {
        ("User: We decided to move", "Decisions: We decided to"),
        ("User: I prefer hand-writ", "Preferences: I prefer ha"),
    }
    # without the src comments, the diary still says where the items came from
    memory = vault_dir / "MEMORY.md"
    memory.write_text(
        re.sub(r" <!-- src: [^>]*-->", "", memory.read_text("utf-8")), encoding="utf-8"
    )
    assert "src:" not in memory.read_text("utf-8")
    assert promoted() == found
