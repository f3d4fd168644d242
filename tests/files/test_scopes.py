"""Scopes: names, a file's scope from its path, visibility, the bound `Layout`,
settings per scope, and each facade method of a view: where it reads and where it writes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from vault_memory import Vault
from vault_memory.config import load_config
from vault_memory.errors import ScopeAccessError, ScopeNameError
from vault_memory.files import Layout, check_scope, parse_scope, scope_of, sees, split_scope
from vault_memory.files.notes import note_kind
from vault_memory.files.scopes import find_scopes, lexical_scopes, name_problem, visible_scopes
from vault_memory.index.store import SCHEMA_VERSION

from ..support import scoped
from ..support.scoped import ALPHA, ALPHA_DIR, BETA_DIR, HIDDEN, TODAY, YESTERDAY

# -- names and paths (pure) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["acme", "agent-alpha", "u-123", "zoë", "a.b", "x@y.z", "_x", "Team+1", "a" * 64]
)
def test_good_scope_names(name: str) -> None:
    assert check_scope([name]) == (name,)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "empty"),
        (".", "folder of its own"),
        ("..", "folder of its own"),
        ("a/b", "no '/'"),
        ("a\\b", "no '/'"),
        (".hidden", "dot"),
        ("a" * 65, "at most 64"),
        ("two words", "no spaces"),
        ("memory", "vault's own"),
        ("Dreams", "vault's own"),
        ("sessions", "vault's own"),
        ("notes", "vault's own"),
        ("scopes", "vault's own"),
        ("vault.toml", "vault's own"),
        ("MEMORY.md", "vault's own"),
        ("x.md", "file name"),
        ("trailing.", "dot"),
        ("-dash", "letters"),
        ("a\x00b", "letters"),
        (3, "not int"),
    ],
)
def test_bad_scope_names_say_why(name: object, why: str) -> None:
    problem = name_problem(name)
    assert problem is not None and why in problem
    with pytest.raises(ScopeNameError) as caught:
        check_scope(["org", name])
    assert "is not a scope name" in str(caught.value) and "org/acme/agent-alpha" in str(
        caught.value
    )


def test_parse_scope() -> None:
    assert parse_scope("org/acme/agent-alpha") == ALPHA
    assert parse_scope("/org/acme/") == ("org", "acme")
    assert parse_scope("/") == ()
    for bad in ("", "  ", "org//acme", "org/../acme", "org/memory"):
        with pytest.raises(ScopeNameError):
            parse_scope(bad)


@pytest.mark.parametrize(
    ("relpath", "scope", "inside", "kind"),
    [
        ("MEMORY.md", (), "MEMORY.md", "memory"),
        ("memory/2026-11-22.md", (), "memory/2026-11-22.md", "daily"),
        ("notes/a.md", (), "notes/a.md", "note"),
        ("scopes/readme.md", (), "scopes/readme.md", "note"),
        ("scopes/memory/2026-11-22.md", (), "scopes/memory/2026-11-22.md", "note"),
        ("scopes/a/MEMORY.md", ("a",), "MEMORY.md", "memory"),
        ("scopes/a/b/MEMORY.md", ("a", "b"), "MEMORY.md", "memory"),
        ("scopes/a/b/memory/2026-11-22.md", ("a", "b"), "memory/2026-11-22.md", "daily"),
        ("scopes/a/b/memory/x.md", ("a", "b"), "memory/x.md", "note"),
        ("scopes/a/b/dreams/2026-11-22.md", ("a", "b"), "dreams/2026-11-22.md", "diary"),
        ("scopes/a/b/dreams/archive.md", ("a", "b"), "dreams/archive.md", "diary"),
        ("scopes/a/notes/x/y.md", ("a",), "notes/x/y.md", "note"),
        ("scopes/a/Notes/y.md", ("a",), "Notes/y.md", "note"),
        ("scopes/a/sessions/s.md", ("a",), "sessions/s.md", "note"),
        ("scopes/a/recipes/pasta.md", ("a", "recipes"), "pasta.md", "note"),
        ("scopes/Maya Lindqvist/MEMORY.md", ("Maya Lindqvist",), "MEMORY.md", "memory"),
    ],
)
def test_a_files_scope_comes_from_its_path(
    relpath: str, scope: tuple[str, ...], inside: str, kind: str
) -> None:
    assert split_scope(relpath) == (scope, inside)
    assert note_kind(relpath) == kind


scope_trees = st.lists(st.sampled_from(["a", "b", "c"]), max_size=4).map(tuple)


@given(scope_trees, scope_trees)
def test_visibility_is_the_scope_and_its_ancestors(
    viewer: tuple[str, ...], owner: tuple[str, ...]
) -> None:
    assert sees(viewer, owner) == (owner in visible_scopes(viewer))
    assert sees(viewer, owner) == (viewer[: len(owner)] == owner)
    assert sees(None, owner)  # unbound sees everything
    if sees(viewer, owner) and sees(owner, viewer):
        assert owner == viewer
    path = "/".join(("scopes", *owner, "notes", "x.md")) if owner else "notes/x.md"
    assert scope_of(path) == owner


def test_the_folders_a_path_passes_through() -> None:
    passed = list(lexical_scopes(f"{BETA_DIR}/../agent-alpha/MEMORY.md"))
    assert ("org", "acme", "agent-beta") in passed and passed[-1] == ALPHA


# -- the bound layout -----------------------------------------------------------------------------


@pytest.fixture
def vault_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loaded_embedder: object) -> Path:
    monkeypatch.setenv("VAULT_NOW", scoped.NOW)
    return scoped.build(tmp_path / "vault")


def layout_of(root: Path, scope: tuple[str, ...] | None) -> Layout:
    return Layout(load_config(root, scope=scope))


def test_a_bound_layout_names_the_scopes_files(tmp_path: Path) -> None:
    layout = layout_of(tmp_path, ALPHA)
    assert layout.bound and layout.scope == ALPHA
    assert layout.memory_relpath == f"{ALPHA_DIR}/MEMORY.md"
    assert layout.daily_relpath(TODAY) == f"{ALPHA_DIR}/memory/{TODAY}.md"
    assert layout.diary_relpath(TODAY) == f"{ALPHA_DIR}/dreams/{TODAY}.md"
    assert layout.shared_memory() == [
        "scopes/org/acme/MEMORY.md",
        "scopes/org/MEMORY.md",
        "MEMORY.md",
    ]
    unbound = layout_of(tmp_path, None)
    assert not unbound.bound and unbound.memory_relpath == "MEMORY.md"
    assert unbound.shared_memory() == [] and unbound.daily_relpath(TODAY) == f"memory/{TODAY}.md"
    root_scope = layout_of(tmp_path, ())
    assert root_scope.bound and root_scope.memory_relpath == "MEMORY.md"


@pytest.mark.parametrize(
    ("given", "write", "allowed"),
    [
        ("MEMORY.md", False, True),
        ("MEMORY.md", True, False),
        ("scopes/org/acme/MEMORY.md", False, True),
        ("scopes/org/acme/MEMORY.md", True, False),
        (f"{ALPHA_DIR}/MEMORY.md", True, True),
        (f"{ALPHA_DIR}/notes/plan.md", False, True),
        (f"{ALPHA_DIR}/notes/up.md", False, True),  # a symlink into acme
        (f"{ALPHA_DIR}/notes/up.md", True, False),
        (f"{BETA_DIR}/MEMORY.md", False, False),
        (f"{ALPHA_DIR}/../agent-beta/MEMORY.md", False, False),
        (f"{BETA_DIR}/../agent-alpha/MEMORY.md", False, False),  # passes through beta
        (f"{ALPHA_DIR}/notes/peek.md", False, False),  # a symlink into beta
        (f"{ALPHA_DIR}/notes/peekdir/MEMORY.md", False, False),
        ("notes/peek-beta.md", False, False),
        (f"{ALPHA_DIR}/sub/MEMORY.md", False, False),
        ("scopes/other/MEMORY.md", False, False),
        ("scopes/org/acme", False, True),
        (BETA_DIR, False, False),
    ],
)
def test_a_bound_layout_resolves_only_what_its_scope_may_see(
    vault_root: Path, given: str, write: bool, allowed: bool
) -> None:
    layout = layout_of(vault_root, ALPHA)
    resolve = layout.resolve_own if write else layout.resolve
    if allowed:
        real, relpath = resolve(given)
        assert real.exists()
    else:
        with pytest.raises(ScopeAccessError) as caught:
            resolve(given)
        assert "refusing" in str(caught.value) and (
            "may not see" in str(caught.value) or "writes only" in str(caught.value)
        )
    unbound = layout_of(vault_root, None)
    assert unbound.resolve(given)[0].exists()  # unbound: everything in the vault


def test_scope_error_messages(vault_root: Path) -> None:
    layout = layout_of(vault_root, ALPHA)
    with pytest.raises(ScopeAccessError) as caught:
        layout.resolve(f"{BETA_DIR}/MEMORY.md")
    assert str(caught.value) == (
        f"refusing '{BETA_DIR}/MEMORY.md': it belongs to scope org/acme/agent-beta, which "
        "scope org/acme/agent-alpha may not see (a scope sees its own files and those of the "
        "scopes above it). Give a path of a file it may see."
    )
    with pytest.raises(ScopeAccessError) as caught:
        layout.resolve_own("MEMORY.md")
    assert str(caught.value) == (
        "refusing 'MEMORY.md': it belongs to the root scope, and scope org/acme/agent-alpha "
        f"writes only its own files (in {ALPHA_DIR}/). Give a path of a file it may write."
    )


# -- settings -------------------------------------------------------------------------------------


def test_a_scope_may_carry_its_own_settings(tmp_path: Path) -> None:
    root = Vault.init(tmp_path / "v").root
    (root / "vault.toml").write_text(
        '[dream]\nschedule = "30 3 * * *"\nlookback_days = 9\n[search]\nlimit = 7\n'
    )
    (root / "scopes/org").mkdir(parents=True)
    (root / "scopes/org/vault.toml").write_text(
        '[dream]\nschedule = "0 4 * * *"\n[index]\nmodel = "none"\n[nonsense]\nx = 1\n'
    )
    (root / "scopes/org/a").mkdir()
    (root / "scopes/org/a/vault.toml").write_text("[search]\nlimit = 3\n[flush]\ndedupe_days = 2\n")
    config = load_config(root, scope=("org", "a"), environ={})
    assert config.dream.schedule == "0 4 * * *" and config.dream.lookback_days == 9
    assert config.search.limit == 3 and config.flush.dedupe_days == 2
    assert config.index.model != "none"  # vault-wide: the root's vault.toml only
    assert config.sources["dream.schedule"] == "scopes/org/vault.toml"
    assert config.sources["search.limit"] == "scopes/org/a/vault.toml"
    assert any("[index] holds settings of the whole vault" in w for w in config.warnings)
    assert any("unknown section [nonsense]" in w for w in config.warnings)
    env = load_config(root, scope=("org", "a"), environ={"VAULT_SEARCH_LIMIT": "12"})
    assert env.search.limit == 12  # the environment still wins
    sibling = load_config(root, scope=("org", "b"), environ={})
    assert sibling.search.limit == 7 and sibling.dream.schedule == "0 4 * * *"
    assert load_config(root, environ={}).dream.schedule == "30 3 * * *"
    # a scope's settings show in its status
    assert Vault(root, scope=("org", "a")).status()["settings"]["search"]["limit"] == 3


def test_a_scopes_settings_behind_a_symlink_are_not_read(tmp_path: Path) -> None:
    root = Vault.init(tmp_path / "v").root
    (root / "scopes/a").mkdir(parents=True)
    (root / "scopes/b").mkdir(parents=True)
    (root / "scopes/b/vault.toml").write_text("[search]\nlimit = 2\n")
    (root / "scopes/a/vault.toml").symlink_to(root / "scopes/b/vault.toml")
    config = load_config(root, scope=("a",), environ={})
    assert config.search.limit == 10
    assert any("symlink" in w for w in config.warnings)


# -- the facade's views -------------------------------------------------------------------------


def test_views_share_the_vaults_index(vault_root: Path) -> None:
    with Vault(vault_root) as vault:
        alpha = vault.scope(*ALPHA)
        assert alpha is vault.scope("org", "acme").scope("agent-alpha")
        assert alpha.scope_name == "org/acme/agent-alpha" and vault.scope_name is None
        assert vault.scope().scope_name == ""
        assert repr(alpha) == f"Vault({str(vault_root)!r}, scope={ALPHA!r})"
        alpha.search("billing")
        assert alpha.cache is vault.cache and alpha.searcher is vault.searcher
        clone = alpha.clone()
        assert clone.scope_path == ALPHA and clone.cache is not vault.cache
        clone.close()
        with pytest.raises(ScopeNameError):
            vault.scope("org/acme")
        with pytest.raises(ScopeNameError):
            vault.scope("..")
        with pytest.raises(ScopeNameError):
            Vault(vault_root, scope=["org", "memory"])


def test_a_scope_writes_only_its_own_files(vault_root: Path) -> None:
    before = scoped.not_own(vault_root)
    with Vault(vault_root) as vault:
        alpha = vault.scope(*ALPHA)
        added = alpha.add("Alpha prefers tea.", tags=("preference",))
        assert added.path == f"{ALPHA_DIR}/memory/{TODAY}.md"
        created = alpha.manage("Alpha works from Bergen.", "create", "MEMORY.md#Preferences")
        assert created.path == f"{ALPHA_DIR}/MEMORY.md" and created.changed
        daily = alpha.manage("Alpha is on call today.", "create")
        assert daily.path == f"{ALPHA_DIR}/memory/{TODAY}.md"
        updated = alpha.manage("Alpha prefers green tea.", "update", created.hash)
        assert updated.path == f"{ALPHA_DIR}/MEMORY.md"
        report = alpha.flush(
            [{"role": "user", "content": "I prefer the blue dashboard."}], session="alpha-2"
        )
        assert report.path == f"{ALPHA_DIR}/memory/{TODAY}.md" and report.written
        for entry_id in (
            "MEMORY.md#L5",
            "scopes/org/acme/MEMORY.md:5",
            f"{BETA_DIR}/MEMORY.md#L5",
            f"memory/{TODAY}.md#L4",
        ):
            with pytest.raises(ScopeAccessError):
                alpha.manage("x", "update", entry_id)
        # a hash of an entry above it, or of a sibling's, is not found among its own files
        root_entry = "- Rootcanary: the office is in Oslo. #important"
        from vault_memory.files import sha256_text

        for text in (root_entry, "- Betacanary: the billing database password is hunter2."):
            with pytest.raises(Exception, match="no entry with hash"):
                alpha.manage(None, "delete", sha256_text(text)[:12])
    assert scoped.not_own(vault_root) == before


def test_a_scope_reads_what_it_may_see(vault_root: Path) -> None:
    with Vault(vault_root) as vault:
        alpha = vault.scope(*ALPHA)
        assert "Rootcanary" in alpha.get("MEMORY.md").text
        assert "Acmecanary" in alpha.get(f"{ALPHA_DIR}/notes/up.md").text
        for path in (
            f"{BETA_DIR}/MEMORY.md",
            f"{ALPHA_DIR}/notes/peek.md",
            f"{ALPHA_DIR}/sub/MEMORY.md",
            "notes/peek-beta.md",
        ):
            with pytest.raises(ScopeAccessError):
                alpha.get(path)
        text = json.dumps(
            [h.to_dict() for h in alpha.search("billing invoices database", limit=50)]
        )
        assert not [word for word in HIDDEN if word in text]
        assert "Alphalogcanary" in text
        with pytest.raises(ScopeAccessError):
            alpha.search("billing", within=BETA_DIR)
        assert vault.search("Betacanary", mode="keyword")  # unbound: everything
        assert vault.scope("org", "acme", "agent-beta").search("Betacanary", mode="keyword")


def test_the_context_of_a_scope(vault_root: Path) -> None:
    with Vault(vault_root) as vault:
        block = vault.scope(*ALPHA).context_block(2000, query="billing database")
    kinds = [(p.kind, p.path) for p in block.parts]
    assert kinds[:6] == [
        ("memory", f"{ALPHA_DIR}/MEMORY.md"),
        ("memory", "scopes/org/acme/MEMORY.md"),
        ("memory", "scopes/org/MEMORY.md"),
        ("memory", "MEMORY.md"),
        ("today", f"{ALPHA_DIR}/memory/{TODAY}.md"),
        ("yesterday", f"{ALPHA_DIR}/memory/{YESTERDAY}.md"),
    ]
    assert all(p.kind == "hit" for p in block.parts[6:])
    assert not [word for word in HIDDEN if word in block.text]
    assert "Rootlogcanary" not in block.text.split("<relevant")[0]  # the root's log: no part
    positions = [
        block.text.index(word)
        for word in ("Alphacanary", "Acmecanary", "Orgcanary", "Rootcanary", "Alphatodaycanary")
    ]
    assert positions == sorted(positions)


def test_a_scopes_context_cuts_the_farthest_memory_first(vault_root: Path) -> None:
    (vault_root / "MEMORY.md").write_text(
        "# MEMORY\n\n" + "".join(f"- Root fact number {n} about the office.\n" for n in range(200))
    )
    with Vault(vault_root) as vault:
        block = vault.scope(*ALPHA).context_block(400)
    assert block.tokens <= 400
    assert "Alphacanary" in block.text and "Acmecanary" in block.text
    assert block.notices[0].startswith("[MEMORY.md does not fit this block's budget: lines 1-202")
    assert "MEMORY.md" not in [part.path for part in block.parts]  # the farthest: left out


def test_sessions_and_status_per_scope(vault_root: Path) -> None:
    with Vault(vault_root) as vault:
        alpha = vault.scope(*ALPHA)
        assert [s.id for s in alpha.sessions()] == ["alpha-1"]
        assert alpha.session("alpha-1").scope == "org/acme/agent-alpha"
        with pytest.raises(Exception, match="no flushed session 'beta-7'"):
            alpha.session("beta-7")
        everyone = {(s.scope, s.id) for s in vault.sessions()}
        assert everyone == {("org/acme/agent-alpha", "alpha-1"), ("org/acme/agent-beta", "beta-7")}
        assert vault.session("beta-7").scope == "org/acme/agent-beta"
        vault.scope().flush(
            [{"role": "user", "content": "I prefer tea over coffee."}], session="beta-7"
        )
        with pytest.raises(Exception, match="flushed in several scopes"):
            vault.session("beta-7")  # unbound: which one is meant?
        assert vault.scope().session("beta-7").scope == ""
        info = alpha.status()
        assert info["scope"] == {
            "name": "org/acme/agent-alpha",
            "sees": ["", "org", "org/acme", "org/acme/agent-alpha"],
            "files": 5,
            "units": info["scope"]["units"],
        }
        assert info["scope"]["units"] >= 5
        assert info["files"] == 10  # root 2, org 1, acme 2, alpha 5 (its symlink into acme)
        assert not [p for p in info["skipped"] if p.startswith(BETA_DIR)]
        assert vault.status()["files"] > info["files"]


def test_scopes_are_listed_with_their_files_and_units(vault_root: Path) -> None:
    (vault_root / "scopes" / "Maya Lindqvist").mkdir()
    (vault_root / "scopes" / "Maya Lindqvist" / "MEMORY.md").write_text("# M\n\n- x\n")
    with Vault(vault_root) as vault:
        listed = {info.name: info for info in vault.scopes()}
        assert list(listed) == [
            "",
            "Maya Lindqvist",
            "org",
            "org/acme",
            "org/acme/agent-alpha",
            "org/acme/agent-alpha/sub",
            "org/acme/agent-beta",
            "other",
        ]
        alpha = listed["org/acme/agent-alpha"]
        assert (alpha.files, alpha.memory, alpha.daily_logs) == (5, True, 2) and alpha.units >= 5
        assert listed["org"].units == 1 and listed["org"].files == 1
        assert not listed["Maya Lindqvist"].bindable and listed["Maya Lindqvist"].units == 0
        seen = [info.name for info in vault.scope(*ALPHA).scopes()]
        assert seen == ["", "org", "org/acme", "org/acme/agent-alpha"]
    assert find_scopes(vault_root)[0] == ("Maya Lindqvist",)


def test_a_symlink_into_another_scope_is_not_indexed(vault_root: Path) -> None:
    with Vault(vault_root) as vault:
        report = vault.index()
        paths = {
            h.path for h in vault.search("Betacanary password hunter2", mode="keyword", limit=20)
        }
    assert paths == {f"{BETA_DIR}/MEMORY.md"}  # not alpha's notes/peek.md, not notes/peek-beta.md
    assert vault.status()["skipped"][f"{ALPHA_DIR}/notes/peek.md"] == (
        "a symlink into scope org/acme/agent-beta, which scope org/acme/agent-alpha may not see"
    )
    assert "notes/peek-beta.md" in vault.status()["skipped"]
    assert report.skipped_links == 3  # peek.md, peek-beta.md, away.md (out of the vault)


def test_an_index_of_the_previous_schema_is_rebuilt_with_one_warning(
    vault_root: Path, vault_warnings
) -> None:
    db = vault_root / ".vault" / "index.sqlite"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DROP INDEX files_scope")
        conn.execute("ALTER TABLE files DROP COLUMN scope")
        conn.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
    conn.close()
    with Vault(vault_root) as vault:
        hits = vault.scope(*ALPHA).search("Alphacanary", mode="keyword")
    assert hits and hits[0].path == f"{ALPHA_DIR}/MEMORY.md"
    warnings = [w for w in vault_warnings() if "schema version" in w]
    assert warnings == [
        f"the index has schema version 2, this vault-memory uses {SCHEMA_VERSION}: "
        "rebuilding it from the files; searching by keywords until `vault index` "
        "adds the vectors."
    ]
