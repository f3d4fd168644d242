"""The agent tools: OpenAI-format schemas, good calls against a real vault, and hostile input
(path traversal, bad arguments, unknown tools) that must come back as an error message,
never an exception, and never read or write outside the vault."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from vault_memory import Vault
from vault_memory.agents.background import BackgroundIndex
from vault_memory.agents.tools import (
    MAX_CONTENT_CHARS,
    MAX_GET_LINES,
    MAX_QUERY_CHARS,
    ToolArgumentError,
    call_tool,
    check_arguments,
    make_tools,
    run_tool,
)
from vault_memory.files import fsutil

from ..support.waiting import wait_until

# Each must be refused by every tool that takes a path. The `vault` fixture provides leak.md,
# leakdir/ and memory/2026-11-19.md: symlinks to ../outside, which holds secret.md (SECRET).
HOSTILE_PATHS = [
    "../outside/secret.md",
    "../../../../etc/passwd",
    "/etc/passwd",
    "/",
    "~/.bashrc",
    "~root/.ssh/id_rsa",
    "notes/../../outside/secret.md",
    "./../outside/secret.md",
    "memory/../../outside/secret.md",
    "leak.md",
    "leakdir/secret.md",
    "leakdir/../leak.md",
    "memory/2026-11-19.md",
    "MEMORY.md\x00.txt",
    "memory/\x00",
    ".vault/index.sqlite",
    ".vault/../../outside/secret.md",
    ".git/config",
    ".obsidian/workspace.md",
    "notes/../.git/HEAD",
    "vault.toml",
    "..",
    ".",
    "",
    "   ",
    "..\\outside\\secret.md",
    "%2e%2e/outside/secret.md",
    "file:///etc/passwd",
]


@pytest.fixture(autouse=True)
def _keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")


def make_hostile(small_vault: Path) -> Path:
    """The small vault, plus symlinks leading out of it, one staying in, and secrets in .git/
    and .obsidian/ (the setting of HOSTILE_PATHS; tests/agents/test_mcp.py uses it too)."""
    outside = small_vault.parent / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("SECRET\n")
    (small_vault / "leak.md").symlink_to(outside / "secret.md")
    (small_vault / "leakdir").symlink_to(outside, target_is_directory=True)
    (small_vault / "memory" / "2026-11-19.md").symlink_to(outside / "secret.md")
    (small_vault / "alias.md").symlink_to(Path("notes") / "renderer.md")
    (small_vault / ".git").mkdir()
    (small_vault / ".git" / "config").write_text("[core] SECRET\n")
    (small_vault / ".git" / "HEAD").write_text("SECRET\n")
    (small_vault / ".obsidian").mkdir()
    (small_vault / ".obsidian" / "workspace.md").write_text("SECRET\n")
    return small_vault


@pytest.fixture
def vault(small_vault: Path) -> Vault:
    return Vault(make_hostile(small_vault))


def result(tools, name: str, arguments: Any) -> dict[str, Any]:
    text = call_tool(tools, name, arguments)
    assert isinstance(text, str)
    return json.loads(text)


def outside_state(root: Path) -> dict[str, bytes]:
    """Everything next to the vault (the `outside` folder): must never change."""
    return {
        str(p): p.read_bytes()
        for p in root.parent.rglob("*")
        if p.is_file() and not p.is_symlink() and root not in p.parents
    }


# -- schemas --------------------------------------------------------------------------------------


def test_schemas_are_openai_function_definitions(vault: Vault) -> None:
    tools = make_tools(vault)
    assert [t.name for t in tools] == ["search_memory", "manage_memory", "get_memory"]
    for tool in tools:
        schema = json.loads(json.dumps(tool.schema))  # plain JSON
        assert schema["type"] == "function"
        function = schema["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert function["name"] == tool.name and len(function["description"]) > 40
        parameters = function["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])
        for spec in parameters["properties"].values():
            assert spec["type"] in ("string", "integer") and spec["description"]
    assert tools[1].parameters["properties"]["action"]["enum"] == ["create", "update", "delete"]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("search_memory", {"query": "x", "limit": 0}),
        ("search_memory", {"query": "x", "limit": 21}),
        ("search_memory", {"query": "q" * (MAX_QUERY_CHARS + 1)}),
        ("search_memory", {"query": 5}),
        ("search_memory", {"limit": 3}),
        ("search_memory", {"query": "x", "mode": "semantic"}),
        ("manage_memory", {"action": "rename", "content": "x"}),
        ("manage_memory", {"action": "create", "content": "x" * (MAX_CONTENT_CHARS + 1)}),
        ("manage_memory", {"content": "x"}),
        ("get_memory", {"path": "MEMORY.md", "start_line": 0}),
        ("get_memory", {"path": "MEMORY.md", "start_line": True}),
        ("get_memory", {"start_line": 1}),
    ],
)
def test_arguments_the_schema_rejects_come_back_as_errors(
    vault: Vault, name: str, arguments: dict[str, Any]
) -> None:
    tools = make_tools(vault)
    tool = next(t for t in tools if t.name == name)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(arguments, tool.parameters)
    data = result(tools, name, arguments)
    assert set(data) == {"error", "tool"} and data["tool"] == name, data


INTEGER_WANTED = "must be a whole number written as a JSON integer (e.g. 5, no quotes, no fraction)"


@pytest.mark.parametrize(
    ("arguments", "sent"),
    [
        ({"query": "x", "limit": "5"}, 'the string "5"'),
        ({"query": "x", "limit": " 5 "}, 'the string " 5 "'),
        ({"query": "x", "limit": "-1"}, 'the string "-1"'),
        ({"query": "x", "limit": 2.5}, "2.5"),
        ({"query": "x", "limit": True}, "true"),
        ({"query": "x", "limit": [5]}, "a list"),
    ],
)
def test_integer_arguments_are_refused_not_converted(
    vault: Vault, arguments: dict[str, Any], sent: str
) -> None:
    """ "5" was turned into 5. A model that sends the wrong type is told so and
    corrects itself; nothing is searched meanwhile. (5.0 is an integer to JSON Schema.)"""
    data = result(make_tools(vault), "search_memory", arguments)
    assert data == {
        "error": f"argument 'limit' {INTEGER_WANTED}, not {sent}.",
        "tool": "search_memory",
    }


def test_range_errors_name_the_bounds_the_schema_has(vault: Vault) -> None:
    """A schema with only a minimum said "between 1 and None"."""
    tools = make_tools(vault)
    for arguments, expected in [
        ({"query": "x", "limit": 0}, "argument 'limit' is 0; it must be between 1 and 20."),
        ({"query": "x", "limit": 21}, "argument 'limit' is 21; it must be between 1 and 20."),
    ]:
        assert result(tools, "search_memory", arguments)["error"] == expected
    for name in ("start_line", "end_line"):
        data = result(tools, "get_memory", {"path": "MEMORY.md", name: 0})
        assert data["error"] == f"argument {name!r} is 0; it must be at least 1."
    only_max = {
        "type": "object",
        "properties": {"n": {"type": "integer", "description": "n", "maximum": 9}},
    }
    with pytest.raises(ToolArgumentError) as caught:
        check_arguments(only_max, {"n": 10})
    assert str(caught.value) == "argument 'n' is 10; it must be at most 9."
    assert check_arguments(only_max, {"n": -3}) == {"n": -3}


# -- search_memory --------------------------------------------------------------------------------


def test_search_memory_returns_cited_hits_with_ids(vault: Vault) -> None:
    tools = make_tools(vault)
    data = result(tools, "search_memory", {"query": "ERR_LEDGER_409", "limit": 3})
    assert data["query"] == "ERR_LEDGER_409" and 1 <= len(data["results"]) <= 3
    top = data["results"][0]
    assert top["path"] == "memory/2026-11-21.md" and "ERR_LEDGER_409" in top["text"]
    assert top["id"] == f"memory/2026-11-21.md#L{top['start_line']}"
    assert "scores" not in top
    lines = fsutil.split_lines((vault.root / top["path"]).read_text())
    assert "\n".join(lines[top["start_line"] - 1 : top["end_line"]]) == top["text"]


def test_search_memory_with_an_empty_query(vault: Vault) -> None:
    data = result(make_tools(vault), "search_memory", {"query": "   "})
    assert "the query is empty" in data["error"]


# -- manage_memory --------------------------------------------------------------------------------


def test_manage_memory_create_update_delete_round_trip(vault: Vault) -> None:
    tools = make_tools(vault)
    created = result(
        tools,
        "manage_memory",
        {"action": "create", "content": "Invoices close on the 3rd.", "id": "MEMORY.md"},
    )
    assert created["changed"] and created["path"] == "MEMORY.md"
    found = result(tools, "search_memory", {"query": "invoices close 3rd"})["results"][0]
    assert found["id"] == created["id"]
    updated = result(
        tools,
        "manage_memory",
        {"action": "update", "content": "Invoices close on the 5th.", "id": found["id"]},
    )
    assert updated["previous"] == "- Invoices close on the 3rd."
    deleted = result(tools, "manage_memory", {"action": "delete", "id": updated["hash"]})
    assert deleted["changed"] and deleted["text"] == "- Invoices close on the 5th."
    assert "Invoices" not in (vault.root / "MEMORY.md").read_text()


def test_manage_memory_cannot_delete_pinned_memory(vault: Vault, tree_state) -> None:
    before = tree_state(vault.root)
    data = result(make_tools(vault), "manage_memory", {"action": "delete", "id": "MEMORY.md#L4"})
    assert "is pinned (#pin) and was not deleted" in data["error"]
    data = result(
        make_tools(vault),
        "manage_memory",
        {"action": "delete", "id": "MEMORY.md#L4", "force": True},
    )
    assert "unknown argument(s) force" in data["error"]
    assert tree_state(vault.root) == before


@pytest.mark.parametrize("action", ["create", "update"])
def test_manage_memory_needs_content(vault: Vault, action: str) -> None:
    data = result(make_tools(vault), "manage_memory", {"action": action, "id": "MEMORY.md#L4"})
    assert f"{action} needs 'content'" in data["error"]


# -- get_memory -----------------------------------------------------------------------------------


def test_get_memory_reads_a_file_or_a_range(vault: Vault) -> None:
    tools = make_tools(vault)
    whole = result(tools, "get_memory", {"path": "MEMORY.md"})
    assert whole["text"] == (vault.root / "MEMORY.md").read_text()
    assert "next_start_line" not in whole
    part = result(
        tools, "get_memory", {"path": "memory/2026-11-21.md", "start_line": 4, "end_line": 5}
    )
    assert (
        part["text"]
        == "- ERR_LEDGER_409 comes from retried refunds.\n- Call the dentist on Friday. #todo\n"
    )
    assert (part["start_line"], part["end_line"], part["total_lines"]) == (4, 5, 5)
    alias = result(tools, "get_memory", {"path": "alias.md"})  # a symlink that stays inside
    assert alias["path"] == "notes/renderer.md" and alias["text"].startswith("# Renderer\n")


def test_get_memory_pages_long_files(vault: Vault) -> None:
    lines = [f"- line {i}" for i in range(1, 451)]
    (vault.root / "notes" / "long.md").write_text("\n".join(lines) + "\n")
    tools = make_tools(vault)
    first = result(tools, "get_memory", {"path": "notes/long.md"})
    assert (first["start_line"], first["end_line"], first["next_start_line"]) == (
        1,
        MAX_GET_LINES,
        201,
    )
    asked = result(
        tools, "get_memory", {"path": "notes/long.md", "start_line": 101, "end_line": 450}
    )
    assert (asked["end_line"], asked["next_start_line"]) == (300, 301)
    last = result(tools, "get_memory", {"path": "notes/long.md", "start_line": 401})
    assert last["end_line"] == 450 and "next_start_line" not in last
    assert (
        "out of range"
        in result(tools, "get_memory", {"path": "notes/long.md", "start_line": 451})["error"]
    )
    assert (
        "before start_line"
        in result(tools, "get_memory", {"path": "notes/long.md", "start_line": 9, "end_line": 3})[
            "error"
        ]
    )


# -- hostile input --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_get_memory_refuses_paths_outside_the_memory(vault: Vault, path: str) -> None:
    data = result(make_tools(vault), "get_memory", {"path": path, "start_line": 1})
    assert set(data) == {"error", "tool"}, data
    assert "SECRET" not in json.dumps(data) and "root:" not in json.dumps(data)


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_manage_memory_refuses_paths_outside_the_memory(
    vault: Vault, tree_state, path: str
) -> None:
    tools = make_tools(vault)
    before, outside = tree_state(vault.root), outside_state(vault.root)
    for action, entry_id in (("create", path), ("update", f"{path}#L1"), ("delete", f"{path}:1")):
        if action == "create" and path.strip() in ("", "."):
            continue  # "" and "." are not paths for create: today's log is meant
        data = result(tools, "manage_memory", {"action": action, "content": "x", "id": entry_id})
        assert set(data) == {"error", "tool"}, (action, entry_id, data)
        assert "SECRET" not in json.dumps(data)
    assert tree_state(vault.root) == before
    assert outside_state(vault.root) == outside


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("delete_everything", {}, "there is no tool 'delete_everything'"),
        ("search_memory", "{not json", "not valid JSON"),
        ("search_memory", "[1, 2]", "must be a JSON object"),
        ("search_memory", '"text"', "must be a JSON object"),
        ("search_memory", "x" * 30_000, "over 20,000 characters"),
        ("search_memory", None, "argument 'query' is required"),
        ("search_memory", "", "argument 'query' is required"),
        ("get_memory", {"path": ["MEMORY.md"]}, "must be a string"),
        ("get_memory", {"path": "MEMORY.md", "start_line": "one"}, "whole number"),
        ("get_memory", {"path": "MEMORY.md", "start_line": 1.5}, "whole number"),
        ("manage_memory", {"action": "update", "content": "x", "id": "zz"}, "name the entry"),
        ("manage_memory", {"action": "delete", "id": "MEMORY.md#L3"}, "is a heading"),
        ("manage_memory", {"action": "delete", "id": "abcdef123"}, "no entry with hash"),
    ],
    ids=lambda value: value[:30] if isinstance(value, str) else None,
)
def test_mistakes_come_back_as_messages(
    vault: Vault, name: str, arguments: Any, message: str
) -> None:
    data = result(make_tools(vault), name, arguments)
    assert message in data["error"], data


def test_arguments_may_be_a_json_string_and_tools_are_plain_callables(vault: Vault) -> None:
    tools = make_tools(vault)
    as_text = call_tool(
        tools, "get_memory", '{"path": "MEMORY.md", "start_line": 1, "end_line": 1}'
    )
    assert json.loads(as_text)["text"] == "# MEMORY\n"
    get_memory = tools[2]
    assert (
        json.loads(get_memory(path="MEMORY.md", start_line=1, end_line=1))["text"] == "# MEMORY\n"
    )
    outcome = run_tool(tools, "get_memory", {"path": "../x"})
    assert outcome.is_error and "climbs out" in outcome.text


# -- search_memory while a BackgroundIndex builds the index ------------------------------------


def test_search_memory_reads_the_index_as_it_is_while_it_is_brought_up_to_date(
    vault: Vault,
) -> None:
    """A search during the background run neither waits for it nor indexes: it
    reads what is indexed (keywords only) and says so. The test holds the writer lock, as
    another process writing the index would, so the run cannot finish before the searches."""
    vault.index()
    (vault.root / "notes" / "osprey.md").write_text("# Osprey\n\n- OSPREY_7 nests here.\n")
    indexing = BackgroundIndex(vault)
    tools = make_tools(vault, indexing)
    with fsutil.lock_file(vault.cache_dir / "write.lock", "test", 5):
        indexing.start()
        wait_until(lambda: indexing.describe().startswith("waiting"), 10, "the run to wait")
        old = result(tools, "search_memory", {"query": "ERR_LEDGER_409"})
        new = result(tools, "search_memory", {"query": "OSPREY_7"})
        assert indexing.state == "building"
    assert old["index"] == new["index"] == "building"
    assert old["results"][0]["path"] == "memory/2026-11-21.md"
    assert "vector" not in old["results"][0]  # keywords only: no model loaded meanwhile
    assert new["results"] == []  # not indexed yet
    assert new["note"] == (
        "The memory index is being brought up to date in the background (waiting for another "
        "process that is writing it): these results come from a keyword search over what is "
        "indexed so far and may be incomplete. Search again in a moment for complete results."
    )
    assert indexing.wait(30) and indexing.state == "ready" and indexing.error is None
    assert indexing.report is not None and indexing.report.new == 1
    found = result(tools, "search_memory", {"query": "OSPREY_7"})
    assert set(found) == {"query", "results"}
    assert found["results"][0]["path"] == "notes/osprey.md"


def test_a_failed_background_run_is_logged_and_tried_again(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Errors of the background run go to the log, never out of a tool call; the next search
    starts the run again and says why the last one failed."""
    real_index = Vault.index

    def broken(self: Vault, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Vault, "index", broken)
    indexing = BackgroundIndex(vault).start()
    assert indexing.wait(10) and indexing.state == "failed"
    assert indexing.error == "RuntimeError: disk on fire"
    assert "could not bring the index up to date" in caplog.text
    assert "RuntimeError: disk on fire" in caplog.text  # with its traceback, for a bug report
    tools = make_tools(vault, indexing)
    data = result(tools, "search_memory", {"query": "ERR_LEDGER_409"})
    assert data["index"] == "building" and data["results"] == []
    assert data["note"].endswith(
        "nothing can be searched yet. Search again in a moment. The last attempt failed: "
        "RuntimeError: disk on fire."
    )
    monkeypatch.setattr(Vault, "index", real_index)
    assert indexing.wait(10)
    result(tools, "search_memory", {"query": "ERR_LEDGER_409"})  # starts a run that works
    assert indexing.wait(30) and indexing.state == "ready" and indexing.error is None
    data = result(tools, "search_memory", {"query": "ERR_LEDGER_409"})
    assert set(data) == {"query", "results"}
    assert data["results"][0]["path"] == "memory/2026-11-21.md"


def test_stopping_the_background_run_ends_its_wait(vault: Vault) -> None:
    indexing = BackgroundIndex(vault)
    assert indexing.state == "idle"
    with fsutil.lock_file(vault.cache_dir / "write.lock", "test", 5):
        indexing.start()
        wait_until(lambda: indexing.describe().startswith("waiting"), 10, "the run to wait")
        assert indexing.stop(timeout=30)
    assert indexing.state == "failed" and indexing.error == "stopped before it finished"
    assert not (vault.cache_dir / "index.sqlite").exists()


def test_a_deleted_cache_is_rebuilt_in_the_background(vault: Vault) -> None:
    """After the build, `.vault/` deleted under the server: the next search does not rebuild
    it inside the call either."""
    indexing = BackgroundIndex(vault).start()
    tools = make_tools(vault, indexing)
    assert indexing.wait(30) and indexing.state == "ready"
    assert result(tools, "search_memory", {"query": "ERR_LEDGER_409"})["results"]
    shutil.rmtree(vault.cache_dir)  # the tools' handles stay open on the deleted files
    (vault.root / "notes" / "kestrel.md").write_text("# Kestrel\n\n- KESTREL_5 hovers.\n")
    with fsutil.lock_file(vault.cache_dir / "write.lock", "test", 5):
        data = result(tools, "search_memory", {"query": "KESTREL_5"})
        assert data["index"] == "building" and data["results"] == []
    assert indexing.wait(30) and indexing.state == "ready"
    data = result(tools, "search_memory", {"query": "KESTREL_5"})  # the new index, not the old
    assert set(data) == {"query", "results"}
    assert data["results"][0]["path"] == "notes/kestrel.md"
    assert not deleted_files_open(vault.cache_dir)  # the old handles were let go


def deleted_files_open(folder: Path) -> list[str]:
    """Files under `folder` this process still holds open after they were deleted (Linux)."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc/self/fd")
    found = []
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith(str(folder)) and target.endswith(" (deleted)"):
                found.append(target)
    return found


def test_an_integral_number_is_an_integer_as_json_schema_says(vault: Vault) -> None:
    data = result(make_tools(vault), "search_memory", {"query": "billing", "limit": 2.0})
    assert "error" not in data and len(data["results"]) <= 2
