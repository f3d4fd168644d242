"""config: defaults < vault.toml < VAULT_* environment < flags, errors, and vault discovery."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.config import (
    BUNDLED_MODEL,
    Config,
    DreamSettings,
    IndexSettings,
    SearchSettings,
    find_vault_root,
    load_config,
)
from vault_memory.errors import ConfigError, NotAVaultError, VaultNotFoundError
from vault_memory.vault import template_dir


def write_toml(root: Path, text: str) -> Path:
    path = root / "vault.toml"
    path.write_text(text)
    return path


def test_defaults_without_vault_toml(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ={})
    assert config.root == tmp_path
    assert config.index == IndexSettings()
    assert config.index.model == BUNDLED_MODEL
    assert config.search == SearchSettings()
    assert config.dream == DreamSettings()
    assert dict(config.sources) == {}
    assert config.warnings == ()
    assert config.cache_dir == tmp_path / ".vault"
    assert config.as_dict()["search"] == {
        "limit": 10,
        "half_life_days": 90.0,
        "freshness_max_files": 20,
        "server": "off",
        "server_idle_minutes": 10.0,
        "on_server": True,
    }


def test_the_shipped_vault_toml_is_valid_and_matches_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "vault.toml").write_bytes((template_dir() / "vault" / "vault.toml").read_bytes())
    config = load_config(tmp_path, environ={})
    assert config.warnings == ()
    assert config.as_dict() == Config(root=tmp_path).as_dict()
    assert set(config.sources.values()) == {"vault.toml"}


def test_precedence_defaults_toml_env_flags(tmp_path: Path) -> None:
    write_toml(
        tmp_path,
        """
[search]
limit = 20
half_life_days = 30

[dream]
enabled = true
lookback_days = 7
""",
    )
    environ = {
        "VAULT_SEARCH_LIMIT": "30",
        "VAULT_DREAM_ENABLED": "off",
        "VAULT_LLM_MODEL": "llama3.1",
        "VAULT_PATH": "/ignored/here",
        "UNRELATED": "1",
    }
    overrides = {"search.limit": 40, "dream.lookback_days": None, "index.batch_size": "8"}
    config = load_config(tmp_path, overrides=overrides, environ=environ)

    assert config.search.limit == 40
    assert config.search.half_life_days == 30.0
    assert isinstance(config.search.half_life_days, float)
    assert config.dream.enabled is False
    assert config.dream.lookback_days == 7  # a None flag is "not given"
    assert config.llm.model == "llama3.1"
    assert config.index.batch_size == 8
    assert config.index.max_file_bytes == 5_000_000
    assert dict(config.sources) == {
        "search.limit": "flag",
        "search.half_life_days": "vault.toml",
        "dream.enabled": "VAULT_DREAM_ENABLED",
        "dream.lookback_days": "vault.toml",
        "llm.model": "VAULT_LLM_MODEL",
        "index.batch_size": "flag",
    }


def test_environment_defaults_to_os_environ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_toml(tmp_path, "[search]\nlimit = 20\n")
    monkeypatch.setenv("VAULT_SEARCH_LIMIT", "25")
    config = Vault(tmp_path).config
    assert config.search.limit == 25
    assert config.sources["search.limit"] == "VAULT_SEARCH_LIMIT"
    assert Vault(tmp_path, overrides={"search.limit": 5}).config.search.limit == 5


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("TRUE", True),
        (" yes ", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
    ],
)
def test_boolean_words_from_the_environment(tmp_path: Path, raw: str, expected: bool) -> None:
    config = load_config(tmp_path, environ={"VAULT_DREAM_GIT_COMMIT": raw})
    assert config.dream.git_commit is expected


def test_invalid_toml(tmp_path: Path) -> None:
    path = write_toml(tmp_path, "[search]\nlimit = = 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, environ={})
    message = str(info.value)
    assert message.startswith(f"{path} is not valid TOML (")
    assert "line 2" in message
    assert message.endswith("Fix the file and retry.")


def test_vault_toml_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "vault.toml"
    path.write_bytes(b'[llm]\nmodel = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=rf"^{path} is not valid UTF-8 \(byte 18\)\. Re-save it"):
        load_config(tmp_path, environ={})


def test_unreadable_vault_toml(tmp_path: Path, make_unreadable) -> None:
    path = write_toml(tmp_path, "[search]\nlimit = 3\n")
    make_unreadable(path)
    with pytest.raises(ConfigError, match=rf"^cannot read {path}: Permission denied\.$"):
        load_config(tmp_path, environ={})


@pytest.mark.parametrize(
    ("toml", "environ", "overrides", "message"),
    [
        (
            '[search]\nlimit = "ten"\n',
            {},
            {},
            "vault.toml: search.limit must be int, got 'ten'. Fix the value and retry.",
        ),
        ("[search]\nlimit = true\n", {}, {}, "vault.toml: search.limit must be int, got True."),
        ("[search]\nlimit = 2.5\n", {}, {}, "vault.toml: search.limit must be int, got 2.5."),
        ("[dream]\nenabled = 1\n", {}, {}, "vault.toml: dream.enabled must be bool, got 1."),
        ("[llm]\nmodel = 3\n", {}, {}, "vault.toml: llm.model must be str, got 3."),
        (
            '[search]\nhalf_life_days = "soon"\n',
            {},
            {},
            "vault.toml: search.half_life_days must be float, got 'soon'.",
        ),
        (
            "",
            {"VAULT_SEARCH_LIMIT": "lots"},
            {},
            "VAULT_SEARCH_LIMIT: search.limit must be int, got 'lots'.",
        ),
        (
            "",
            {"VAULT_DREAM_ENABLED": "maybe"},
            {},
            "VAULT_DREAM_ENABLED: dream.enabled must be bool, got 'maybe'.",
        ),
        ("", {}, {"search.limit": "x"}, "flag: search.limit must be int, got 'x'."),
        ("search = 3\n", {}, {}, "vault.toml: [search] must be a table. Fix the file and retry."),
    ],
)
def test_wrong_types_give_a_clear_config_error(
    tmp_path: Path, toml: str, environ: dict[str, str], overrides: dict[str, str], message: str
) -> None:
    write_toml(tmp_path, toml)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, overrides=overrides, environ=environ)
    assert str(info.value).startswith(message.removesuffix(".")), str(info.value)


def test_unknown_keys_and_sections_are_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_toml(tmp_path, "top = 1\n[search]\nlimit = 3\nlimt = 4\n[plugins]\nx = 1\n")
    config = load_config(tmp_path, environ={})
    assert config.search.limit == 3
    assert config.warnings == (
        "vault.toml: unknown setting search.limt (ignored)",
        "vault.toml: unknown section [top] (ignored)",
        "vault.toml: unknown section [plugins] (ignored)",
    )
    with caplog.at_level(logging.WARNING, logger="vault_memory"):
        assert Vault(tmp_path).config.search.limit == 3
    assert [r.getMessage() for r in caplog.records] == list(config.warnings)


# -- discovery -----------------------------------------------------------------------------


def test_discovery_walks_up_from_a_nested_folder(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    nested = root / "notes" / "a" / "b"
    nested.mkdir(parents=True)
    write_toml(root, "")
    assert find_vault_root(None, cwd=nested) == root.resolve()
    assert find_vault_root(None, cwd=root) == root.resolve()
    assert Vault.discover(cwd=nested).root == root.resolve()


def test_discovery_uses_the_process_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_toml(tmp_path, "")
    (tmp_path / "memory").mkdir()
    monkeypatch.chdir(tmp_path / "memory")
    assert find_vault_root(None) == tmp_path.resolve()


def test_the_nearest_vault_wins(tmp_path: Path) -> None:
    inner = tmp_path / "notes" / "inner"
    inner.mkdir(parents=True)
    write_toml(tmp_path, "")
    write_toml(inner, "")
    assert find_vault_root(None, cwd=inner / ".") == inner.resolve()


def test_a_folder_named_vault_toml_does_not_count(tmp_path: Path) -> None:
    root = tmp_path / "real"
    (root / "sub" / "vault.toml").mkdir(parents=True)
    write_toml(root, "")
    assert find_vault_root(None, cwd=root / "sub") == root.resolve()


def test_an_explicit_folder_must_hold_vault_toml(tmp_path: Path) -> None:
    """`vault --vault ~/code search foo` once indexed a whole source tree and wrote .vault/
    into it: an explicit folder must be a vault, as discovery requires."""
    plain = tmp_path / "plain-notes"
    plain.mkdir()
    with pytest.raises(NotAVaultError) as info:
        find_vault_root(plain)
    assert str(info.value) == (
        f"{plain} is not a vault (it holds no vault.toml, MEMORY.md or memory/). Make it one "
        f"with `Vault.init({str(plain)!r})` (or open it with `Vault({str(plain)!r}, "
        "create=True)`), or give the folder of an existing vault."
    )
    (plain / "vault.toml").write_text("")
    assert find_vault_root(plain) == plain.resolve()
    assert find_vault_root(str(plain / ".." / "plain-notes")) == plain.resolve()
    assert load_config(plain, environ={}).search.limit == 10


@pytest.mark.parametrize("shape", ["MEMORY.md", "memory/"])
def test_a_folder_shaped_like_a_vault_needs_no_vault_toml(tmp_path: Path, shape: str) -> None:
    """A vault made by hand or by another tool (a memory/ folder of daily logs, or MEMORY.md)
    is used with the default settings; an arbitrary folder is not."""
    made = tmp_path / "made-by-hand"
    if shape.endswith("/"):
        (made / shape).mkdir(parents=True)
    else:
        made.mkdir()
        (made / shape).write_text("# MEMORY\n")
    assert find_vault_root(made) == made.resolve()
    assert load_config(made, environ={}).search.limit == 10


def test_an_explicit_path_expands_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "agent-memory").mkdir()
    (tmp_path / "agent-memory" / "vault.toml").write_text("")
    assert find_vault_root("~/agent-memory") == (tmp_path / "agent-memory").resolve()


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_an_explicit_path_must_be_a_folder(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "target"
    if kind == "file":
        target.write_text("x")
    with pytest.raises(NotAVaultError) as info:
        find_vault_root(target)
    assert info.value.path == target
    assert str(info.value) == (
        f"{target} is a file, not a vault folder. Give the folder that holds vault.toml."
        if kind == "file"
        else f"{target} does not exist. Give an existing vault folder, "
        f"or create one with `Vault.init({str(target)!r})`."
    )


def test_no_vault_found(tmp_path: Path) -> None:
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)
    with pytest.raises(VaultNotFoundError) as info:
        find_vault_root(None, cwd=start)
    assert info.value.start == start.resolve()
    assert str(info.value) == (
        f"no vault found at or above {start.resolve()} (no vault.toml). Create one with "
        "`Vault.init(path)`, or give the path of an existing vault."
    )
