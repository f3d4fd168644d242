"""Hard links are foreign until proven otherwise: a file with more than one hard link may be
another scope's file or one outside the vault, and no path check can tell. In a vault where
alice's folder holds a hard link to bob's daily log and one to a file outside the vault, every
entry point bound to alice (CLI, library, agent tools, the MCP server over stdio) neither reads
nor writes them: bob's files and the outside file stay byte-identical and none of their words
comes back. Unscoped reads say what they left out; `[security] allow_hardlinks = true` is the
one switch, and even then a write replaces the file instead of writing through the link."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import Result

from vault_memory import Vault
from vault_memory.agents.mcp_server import read_resource_text
from vault_memory.agents.tools import call_tool, make_tools
from vault_memory.errors import HardLinkedError
from vault_memory.files import fsutil
from vault_memory.index import indexer

from .conftest import load_script
from .test_mcp import session_run, text_of
from .test_watch import index_units, start_watcher, wait_until  # noqa: F401 - the fixture

CASES = Path(__file__).resolve().parent.parent / "bench" / "hostile_cases" / "links.py"
#: The hostile cases of the family: their vault (`plant`) and attempts are this module's too.
links = load_script(CASES, "hostile_links_under_test")
NOW, TODAY, SCOPE = links.NOW, links.DAY, links.SCOPE
ALICE, BOB, HIDDEN = links.ALICE, links.BOB, links.HIDDEN
LINKED_LOG = links.LINKED_LOG  # alice's log of the day: a hard link to bob's
LINKED_OUT = links.LINKED_OUT  # alice's note: a hard link to a file outside the vault
LINKED_WORDS = ["Boblogcanary", "Outsidecanary"]  # what the linked files hold (unscoped reads)
CONVERSATION = links.CONVERSATION
ALLOW = "\n[security]\nallow_hardlinks = true\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Alice and bob each with a MEMORY.md, bob with a log of the day, alice with a note of her
    own and two hard links: to bob's log, to a file outside the vault (bench/hostile_cases)."""
    monkeypatch.setenv("VAULT_NOW", NOW)
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")  # isolation, not ranking: keywords do
    root = Vault.init(tmp_path / "vault").root
    links.plant(root)
    return root


foreign = links.foreign  # bob's files and the outside file, with their bytes


def leaks(text: str) -> list[str]:
    return [word for word in HIDDEN if word in text]


def one_error(result: Result, path: str) -> None:
    """Exit 1, and stderr is one `Error:` line naming the path and the setting."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 1, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert path in lines[0] and "allow_hardlinks" in lines[0]
    assert not leaks(result.stdout + result.stderr)


# -- the file primitives ------------------------------------------------------------------------


def test_reads_and_writes_refuse_a_file_with_two_links(tmp_path: Path) -> None:
    one, two = tmp_path / "one.md", tmp_path / "two.md"
    one.write_text("# One\n\n- kept\n")
    os.link(one, two)
    with pytest.raises(HardLinkedError, match="2 hard links") as caught:
        fsutil.read_text(two, "two.md")
    assert "allow_hardlinks" in str(caught.value) and "nothing was read or written" in str(
        caught.value
    )
    seen = fsutil.read_text(two, "two.md", allow_hardlinks=True)
    with pytest.raises(HardLinkedError):
        fsutil.write_atomic(two, "# Two\n", seen.sha256, "two.md")
    with pytest.raises(HardLinkedError):
        fsutil.append_entry(two, "- added\n")
    assert one.read_text() == two.read_text() == "# One\n\n- kept\n"
    assert os.stat(one).st_nlink == 2 and not list(tmp_path.glob(".*"))


def test_allowed_writes_replace_the_file_and_never_write_through(tmp_path: Path) -> None:
    """Allowed, an append or a rewrite replaces the file (temp, fsync, rename): the other
    name keeps its bytes, as a backup made of hard links must."""
    one, two = tmp_path / "one.md", tmp_path / "two.md"
    one.write_text("# One\n\n- kept\n")
    os.link(one, two)
    first = fsutil.append_entry(two, "- added\n", allow_hardlinks=True)
    assert first == 4 and two.read_text() == "# One\n\n- kept\n- added\n"
    assert one.read_text() == "# One\n\n- kept\n" and os.stat(one).st_nlink == 1
    os.unlink(two)
    os.link(one, two)
    seen = fsutil.read_text(two, "two.md", allow_hardlinks=True)
    fsutil.write_atomic(two, "# Two\n", seen.sha256, "two.md", allow_hardlinks=True)
    assert two.read_text() == "# Two\n" and one.read_text() == "# One\n\n- kept\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_an_append_completed_after_a_crash_is_not_written_through_a_link(tmp_path: Path) -> None:
    """A killed append leaves its journal; the file is hard-linked before the next writer
    completes it: completed by replacing the file, the other name unchanged."""
    log, other = tmp_path / "log.md", tmp_path / "other.md"
    log.write_text("# Log\n- half")
    data = b"- half of it\n"
    record = {"size": 6, "sha256": fsutil.sha256_bytes(b"# Log\n"), "data": data.decode()}
    (tmp_path / ".log.md.append").write_text(json.dumps(record))
    os.link(log, other)
    with fsutil.locked(log):
        done = fsutil.recover_file(log)
    assert any("completed an append" in line for line in done)
    assert log.read_text() == "# Log\n- half of it\n"
    assert other.read_text() == "# Log\n- half"


# -- the index ------------------------------------------------------------------------------------


def test_the_scan_skips_hard_linked_files_and_says_why(root: Path) -> None:
    skipped: dict[str, str] = {}
    linked: dict[str, int] = {}
    found = indexer.scan(root, skipped=skipped, hard_linked=linked)
    assert set(linked) == {LINKED_LOG, LINKED_OUT, f"{BOB}/memory/{TODAY}.md"}
    assert not set(linked) & set(found) and f"{ALICE}/notes/own.md" in found
    assert "2 hard links" in skipped[LINKED_OUT] and "allow_hardlinks" in skipped[LINKED_OUT]
    assert LINKED_OUT in indexer.scan(root, allow_hardlinks=True)


def test_the_index_holds_no_unit_of_a_hard_linked_file(root: Path) -> None:
    with Vault(root) as vault:
        report = vault.index()
        assert report.skipped_links == 3
        assert [w for w in report.warnings if "hard links" in w] == [
            f"left out 3 files with several hard links (each may be another scope's file or "
            f"one outside the vault): {LINKED_LOG}, {LINKED_OUT}, {BOB}/memory/{TODAY}.md. "
            "`vault status` lists them; set [security] allow_hardlinks = true in vault.toml if "
            "every hard link in this vault is yours."
        ]
        texts = json.dumps([h.text for h in vault.search("billing", limit=50)])
        assert "Bobmemorycanary" in texts and not any(w in texts for w in LINKED_WORDS)
        linked = {LINKED_LOG, LINKED_OUT, f"{BOB}/memory/{TODAY}.md"}
        assert set(vault._index.hard_linked()) == linked


def test_a_file_linked_after_it_was_indexed_leaves_the_index(root: Path) -> None:
    """A new link changes neither the file's mtime nor its size: the link count is what a
    search's freshness check sees, and the file leaves the index; unlinked, it comes back."""
    own = root / ALICE / "notes" / "own.md"

    def found(vault: Vault) -> list[str]:
        return [h.path for h in vault.search("Alicenotecanary") if "Alicenotecanary" in h.text]

    with Vault(root) as vault:
        vault.index()
        alice = vault.scope("agents", "alice")
        assert found(alice) == [f"{ALICE}/notes/own.md"]
        os.link(own, root.parent / "copy.md")
        assert found(alice) == []
        assert f"{ALICE}/notes/own.md" in vault._index.hard_linked()
        os.unlink(root.parent / "copy.md")
        assert found(alice) == [f"{ALICE}/notes/own.md"]
        assert f"{ALICE}/notes/own.md" not in vault._index.hard_linked()


def test_the_watcher_keeps_linked_files_out(
    root: Path,
    start_watcher: Callable[..., Any],  # noqa: F811
) -> None:
    """A hard link made in the vault is an event for its new name only (inotify reports a
    link count change to no folder): the new name never enters the index, the file's older
    name leaves it at the watcher's next reconcile, and comes back once the link is gone."""
    own, copy = f"{ALICE}/notes/own.md", f"{ALICE}/notes/copy.md"
    watcher = start_watcher(root, reconcile_minutes=0.02)
    wait_until(lambda: own in index_units(root), 30, "alice's note to be indexed")
    os.link(root / own, root / copy)
    wait_until(lambda: own not in index_units(root), 30, "the linked note to leave the index")
    assert copy not in index_units(root)
    assert {own, copy} <= set(watcher.vault._index.hard_linked())
    os.unlink(root / copy)
    wait_until(lambda: own in index_units(root), 30, "the note to come back")


# -- the CLI bound to alice -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("search", "billing", "-n", "20"),
        ("search", "Boblogcanary Outsidecanary"),
        ("context", "--query", "billing invoices key"),
        ("export",),
    ],
)
def test_cli_reads_bound_to_a_scope_leave_linked_files_out(
    root: Path, run_cli: Callable[..., Result], args: tuple[str, ...]
) -> None:
    before = foreign(root)
    assert run_cli("--vault", str(root), "index").exit_code == 0  # as a vault in use is
    result = run_cli("--vault", str(root), *args, "--scope", SCOPE)
    assert result.exit_code == 0, result.output
    assert not leaks(result.stdout), result.stdout
    assert "Traceback" not in result.stderr
    warned = [line for line in result.stderr.splitlines() if "hard links" in line]
    assert len(warned) == 1, result.stderr  # once, naming alice's two links, not bob's file
    assert LINKED_LOG in warned[0] and LINKED_OUT in warned[0] and BOB not in warned[0]
    assert foreign(root) == before


def test_cli_reads_of_her_own_files_still_work(root: Path, run_cli: Callable[..., Result]) -> None:
    found = run_cli("--vault", str(root), "search", "Alicenotecanary", "--scope", SCOPE)
    assert "Alicenotecanary" in found.stdout
    block = run_cli("--vault", str(root), "context", "--scope", SCOPE)
    assert "Alicecanary" in block.stdout and not leaks(block.stdout)


@pytest.mark.parametrize("path", [LINKED_LOG, LINKED_OUT, f"{LINKED_OUT}:1-3"])
def test_cli_get_bound_to_a_scope_refuses_a_linked_file(
    root: Path, run_cli: Callable[..., Result], path: str
) -> None:
    before = foreign(root)
    result = run_cli("--vault", str(root), "get", path, "--scope", SCOPE)
    one_error(result, path.split(":")[0])
    assert result.stdout == "" and foreign(root) == before


def test_cli_writes_bound_to_a_scope_never_write_through_a_link(
    root: Path, run_cli: Callable[..., Result], tmp_path: Path
) -> None:
    before = foreign(root)
    alice_log = (root / LINKED_LOG).read_bytes()
    one_error(run_cli("--vault", str(root), "add", "Kumquat entry", "--scope", SCOPE), LINKED_LOG)
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION))
    flushed = run_cli("--vault", str(root), "flush", str(conversation), "--scope", SCOPE)
    one_error(flushed, LINKED_LOG)
    assert foreign(root) == before and (root / LINKED_LOG).read_bytes() == alice_log
    assert not (root / ALICE / "sessions").exists()  # the entries first: nothing was written


# -- the library ----------------------------------------------------------------------------------


def test_the_library_bound_to_a_scope(root: Path) -> None:
    before = foreign(root)
    with Vault(root) as vault:
        alice = vault.scope("agents", "alice")
        hits = alice.search("billing invoices key", limit=20)
        assert not leaks(json.dumps([h.text for h in hits]))
        assert any("hard links" in w for w in hits.warnings)
        assert not leaks(alice.context(query="billing invoices key"))
        for path in (LINKED_LOG, LINKED_OUT):
            with pytest.raises(HardLinkedError):
                alice.get(path)
        with pytest.raises(HardLinkedError):
            alice.add("Kumquat entry")
        with pytest.raises(HardLinkedError):
            alice.manage("Kumquat entry", "create")
        with pytest.raises(HardLinkedError):
            alice.manage("", "delete", f"{LINKED_LOG}#L4")
        with pytest.raises(HardLinkedError):
            alice.flush(CONVERSATION)
        out = io.StringIO()
        report = alice.export(out)
        assert not leaks(out.getvalue()) and len(report.skipped) == 2
    assert foreign(root) == before


def test_a_dream_leaves_a_linked_log_out_and_refuses_a_linked_memory(root: Path) -> None:
    before = foreign(root)
    with Vault(root) as vault:
        alice = vault.scope("agents", "alice")
        alice.dream()
        assert not leaks((root / ALICE / "MEMORY.md").read_text())
        (root / ALICE / "MEMORY.md").unlink()
        os.link(root / BOB / "MEMORY.md", root / ALICE / "MEMORY.md")
        with pytest.raises(HardLinkedError):
            alice.dream()
    assert foreign(root) == before


def test_a_linked_memory_is_left_out_of_the_context_once(
    root: Path, vault_warnings: Callable[[], list[str]]
) -> None:
    (root / ALICE / "MEMORY.md").unlink()
    os.link(root / BOB / "MEMORY.md", root / ALICE / "MEMORY.md")
    with Vault(root) as vault:
        alice = vault.scope("agents", "alice")
        for _ in range(2):  # the first builds the index, whose run says it; nobody again
            assert not leaks(alice.context(query="billing password"))
        said = [w for w in vault_warnings() if f"{ALICE}/MEMORY.md" in w]
        assert len(said) == 1 and "hard links" in said[0]


def test_unscoped_reads_say_what_they_left_out(root: Path, run_cli: Callable[..., Result]) -> None:
    status = run_cli("--vault", str(root), "status", "--json")
    skipped = json.loads(status.stdout)["skipped"]
    assert {LINKED_LOG, LINKED_OUT, f"{BOB}/memory/{TODAY}.md"} <= set(skipped)
    assert all("allow_hardlinks" in skipped[p] for p in (LINKED_LOG, LINKED_OUT))
    found = run_cli("--vault", str(root), "search", "billing", "-n", "20")
    assert found.exit_code == 0 and not any(w in found.stdout for w in LINKED_WORDS)
    assert found.stderr.count("hard links") == 1 and "Traceback" not in found.stderr
    with Vault(root) as vault:
        report = vault.doctor()
    named = {f.artefact for f in report.findings if "hard links" in f.problem}
    assert named == {LINKED_LOG, LINKED_OUT, f"{BOB}/memory/{TODAY}.md"}


# -- agent tools and the MCP server ---------------------------------------------------------------


def test_the_agent_tools_bound_to_a_scope(root: Path) -> None:
    before = foreign(root)
    with Vault(root) as vault:
        tools = make_tools(vault.scope("agents", "alice"))
        for name, arguments, refused in links.TOOL_CALLS:
            reply = json.loads(call_tool(tools, name, json.dumps(arguments)))
            assert ("error" in reply) == refused, (name, reply)
            assert not leaks(json.dumps(reply)), reply
            if refused:
                assert "hard links" in reply["error"] and "allow_hardlinks" in reply["error"]
        with pytest.raises(HardLinkedError):
            read_resource_text(vault.scope("agents", "alice"), "vault://today")
    assert foreign(root) == before


def test_the_mcp_server_bound_to_a_scope_over_stdio(root: Path, tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    before = foreign(root)
    seen: list[str] = []

    async def script(session: Any) -> None:
        await session.initialize()
        for path in (LINKED_LOG, LINKED_OUT):
            result = await session.call_tool("get_memory", {"path": path})
            assert result.is_error and "hard links" in text_of(result)["error"]
            seen.append(result.content[0].text)
        for extra in ({"action": "create"}, {"action": "update", "id": f"{LINKED_LOG}#L4"}):
            args = {"content": "Kumquat entry", **extra}
            result = await session.call_tool("manage_memory", args)
            assert result.is_error, (extra, result)
            seen.append(result.content[0].text)
        deadline = anyio.current_time() + 60
        while True:  # the server indexes in the background first
            result = await session.call_tool("search_memory", {"query": "billing", "limit": 20})
            if "index" not in text_of(result) or anyio.current_time() > deadline:
                break
            await anyio.sleep(0.05)
        seen.append(result.content[0].text)
        assert "Alicenotecanary" in seen[-1]
        for uri in ("vault://MEMORY.md", "vault://context"):
            seen.append((await session.read_resource(uri)).contents[0].text)
        with pytest.raises(MCPError, match="hard links"):
            await session.read_resource("vault://today")

    with open(tmp_path / "server.err", "w") as errlog:
        anyio.run(session_run, root, errlog, script, "--scope", SCOPE)
    assert not leaks("\n".join(seen)), seen
    assert "Traceback" not in (tmp_path / "server.err").read_text()
    assert foreign(root) == before


def test_a_scope_s_settings_file_with_two_links_is_not_read(root: Path) -> None:
    (root / BOB / "vault.toml").write_text("[search]\nlimit = 3\n")
    os.link(root / BOB / "vault.toml", root / ALICE / "vault.toml")
    alice = Vault(root).scope("agents", "alice")
    assert alice.config.search.limit == 10
    assert any("hard links" in w and "not read" in w for w in alice.config.warnings)
    (root / "vault.toml").write_text((root / "vault.toml").read_text() + ALLOW)
    assert Vault(root).scope("agents", "alice").config.search.limit == 3


# -- the one switch -------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["vault.toml", "environment"])
def test_allow_hardlinks_lets_every_path_read_them_and_writes_replace(
    root: Path, run_cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "vault.toml":
        (root / "vault.toml").write_text((root / "vault.toml").read_text() + ALLOW)
    else:
        monkeypatch.setenv("VAULT_SECURITY_ALLOW_HARDLINKS", "true")
    before = foreign(root)
    got = run_cli("--vault", str(root), "get", LINKED_OUT, "--scope", SCOPE)
    assert got.exit_code == 0 and "Outsidecanary" in got.stdout
    found = run_cli("--vault", str(root), "search", "Outsidecanary", "--scope", SCOPE)
    assert "Outsidecanary" in found.stdout and "hard links" not in found.stderr
    with Vault(root) as vault:
        tools = make_tools(vault.scope("agents", "alice"))
        reply = call_tool(tools, "get_memory", {"path": LINKED_OUT})
        assert "Outsidecanary" in json.loads(reply)["text"]
    added = run_cli("--vault", str(root), "add", "Kumquat entry", "--scope", SCOPE)
    assert added.exit_code == 0, added.output
    assert foreign(root) == before  # replaced, not written through: bob's log is his
    assert "Kumquat entry" in (root / LINKED_LOG).read_text()
    assert os.stat(root / LINKED_LOG).st_nlink == 1
