"""A search bound to a scope never returns a unit it may not see (property-tested over random
scope trees, files and queries, with the real index and model), and ranks what it sees as a
vault holding only those files would."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vault_memory import Vault
from vault_memory.files import scope_of, sees

from ..support import scoped

WORDS = [
    "billing",
    "invoice",
    "postgres",
    "deploy",
    "oslo",
    "tuesday",
    "vendor",
    "password",
    "friday",
    "release",
    "budget",
    "coffee",
]
NAMES = ["a", "b", "c"]

scope_paths = st.lists(
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(tuple), min_size=1, max_size=6
)
sentences = st.lists(st.sampled_from(WORDS), min_size=2, max_size=6).map(" ".join)
file_kinds = st.sampled_from(
    ["MEMORY.md", "memory/2026-11-20.md", "notes/n.md", "dreams/2026-11-20.md"]
)


@st.composite
def vaults(draw: Any) -> tuple[dict[str, str], list[tuple[str, ...]]]:
    """Files of a random scope tree: every scope of the tree (ancestors included) and the root
    hold a few files of random words."""
    tree: set[tuple[str, ...]] = {()}
    for path in draw(scope_paths):
        tree.update(path[:depth] for depth in range(len(path) + 1))
    files: dict[str, str] = {}
    for scope in sorted(tree):
        prefix = "/".join(("scopes", *scope)) + "/" if scope else ""
        for kind in draw(st.lists(file_kinds, min_size=1, max_size=3, unique=True)):
            lines = draw(st.lists(sentences, min_size=1, max_size=4))
            files[prefix + kind] = "# Title\n\n" + "".join(f"- {line}\n" for line in lines)
    return files, sorted(tree)


def write(root: Path, files: dict[str, str]) -> None:
    Vault.init(root)
    for relpath, text in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")


def check_scoped_searches(
    vault: tuple[dict[str, str], list[tuple[str, ...]]],
    queries: list[str],
    mode: str,
    diary: bool,
) -> None:
    files, tree = vault
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "v"
        write(root, files)
        on_disk = {
            p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".vault" not in p.parts
        }
        with Vault(root) as whole:
            whole.index()
            kinds = ("diary", "memory", "daily", "note") if diary else ()
            for scope in tree:
                view = whole.scope(*scope)
                visible = {path for path in on_disk if sees(scope, scope_of(path))}
                for query in queries:
                    hits = view.search(query, limit=200, mode=mode, kinds=kinds, fresh=False)
                    shown = {h.path for h in hits}
                    assert shown <= visible, (scope, shown - visible)


search_cases = given(
    vaults(),
    st.lists(sentences, min_size=1, max_size=3),
    st.sampled_from(["hybrid", "keyword", "semantic"]),
    st.booleans(),
)


@pytest.mark.slow
@settings(
    max_examples=20, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@search_cases
def test_a_scoped_search_returns_only_what_the_scope_may_see(
    loaded_embedder: Any,
    vault: tuple[dict[str, str], list[tuple[str, ...]]],
    queries: list[str],
    mode: str,
    diary: bool,
) -> None:
    check_scoped_searches(vault, queries, mode, diary)


@pytest.mark.slow
@settings(
    max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@search_cases
def test_a_scoped_search_returns_only_what_the_scope_may_see_at_length(
    loaded_embedder: Any,
    vault: tuple[dict[str, str], list[tuple[str, ...]]],
    queries: list[str],
    mode: str,
    diary: bool,
) -> None:
    check_scoped_searches(vault, queries, mode, diary)


@pytest.fixture
def alpha_and_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loaded_embedder: Any
) -> tuple[Path, Path]:
    """The scoped vault of tests/support/scoped.py, and a vault holding only the files alpha
    sees."""
    monkeypatch.setenv("VAULT_NOW", scoped.NOW)
    whole = scoped.build(tmp_path / "whole")
    alone = tmp_path / "alone"
    Vault.init(alone)
    for relpath in scoped.FILES:
        if sees(scoped.ALPHA, scope_of(relpath)):
            (alone / relpath).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(whole / relpath, alone / relpath)
    (alone / scoped.ALPHA_DIR / "notes" / "up.md").symlink_to(Path("../../MEMORY.md"))
    with Vault(alone) as vault:
        vault.index()
    return whole, alone


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
@pytest.mark.parametrize(
    "query",
    [
        "billing database password",
        "Betacanary hunter2",
        "when do invoices go out",
        "PostgreSQL",
        "Oslo office",
    ],
)
def test_a_scope_ranks_as_if_the_vault_held_only_what_it_sees(
    alpha_and_alone: tuple[Path, Path], mode: str, query: str
) -> None:
    whole, alone = alpha_and_alone
    with Vault(whole) as vault, Vault(alone) as only:
        scoped_hits = vault.scope(*scoped.ALPHA).search(query, limit=20, mode=mode, fresh=False)
        alone_hits = only.search(query, limit=20, mode=mode, fresh=False)
        unscoped = vault.search(query, limit=20, mode=mode, fresh=False)
    assert [(h.path, h.start_line, h.end_line) for h in scoped_hits] == [
        (h.path, h.start_line, h.end_line) for h in alone_hits
    ]
    for mine, theirs in zip(scoped_hits, alone_hits, strict=True):
        # float32 cosines: a product over a slice of the matrix may round its last bit apart
        assert mine.score == pytest.approx(theirs.score, rel=1e-5)
        assert mine.scores == pytest.approx(theirs.scores, rel=1e-5, abs=1e-7)
    if query.startswith("Betacanary"):  # the sibling's line is found only without a scope
        assert unscoped and unscoped[0].path == f"{scoped.BETA_DIR}/MEMORY.md"
        assert not [h for h in scoped_hits if "Betacanary" in h.text]
