"""Isolation of a scope, tested as an attack: a vault bound to org/acme/agent-alpha
is given, through every tool, facade method, CLI command and MCP call, paths and ids of its
sibling (agent-beta), its descendant (agent-alpha/sub), a cousin (other) and a file outside
the vault, spelled plainly, with `..`, through symlinks, through a folder passed on the way,
as content hashes, and as a scope argument of a tool call. For every attempt:

- no canary word of a file it may not see comes back (tests/support/scoped.py plants one per file);
- an audit hook (tests/support/audit.py) sees no file it may not see opened, written, renamed or
  removed, in this process and in the MCP server's;
- no file but its own (not its ancestors', not its siblings') has changed afterwards.

Each test counts its attempts (`ATTEMPTS`); test_attempts_are_counted prints the total."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from vault_memory import Vault
from vault_memory.agents.mcp_server import read_resource_text
from vault_memory.agents.tools import call_tool, make_tools
from vault_memory.files import sha256_text

from ..agents.test_mcp import WORKTREE, server_env, text_of
from ..support import audit, scoped
from ..support.scoped import (
    ALPHA,
    ALPHA_DIR,
    BETA_DIR,
    HIDDEN,
    OTHER_DIR,
    SUB_DIR,
    TODAY,
    YESTERDAY,
)

SCOPE = "org/acme/agent-alpha"
ATTEMPTS: Counter[str] = Counter()

#: Paths of files alpha may not read, every way of spelling them the tests could think of.
READ_ATTACKS = [
    f"{BETA_DIR}/MEMORY.md",
    f"{BETA_DIR}/memory/{TODAY}.md",
    f"{BETA_DIR}/dreams/{YESTERDAY}.md",
    f"{BETA_DIR}/notes/plan.md",
    f"{BETA_DIR}/",
    BETA_DIR,
    f"{ALPHA_DIR}/../agent-beta/MEMORY.md",
    f"{ALPHA_DIR}/memory/../../agent-beta/MEMORY.md",
    f"{ALPHA_DIR}/./../agent-beta/notes/plan.md",
    f"{BETA_DIR}/../agent-beta/MEMORY.md",
    f"{BETA_DIR}/../agent-alpha/MEMORY.md",  # its own file, by way of the sibling's folder
    "scopes/org/acme/agent-beta//MEMORY.md",
    f"{ALPHA_DIR}/notes/peek.md",  # a symlink into beta
    f"{ALPHA_DIR}/notes/peekdir/MEMORY.md",  # a symlinked folder into beta
    f"{ALPHA_DIR}/notes/peekdir/notes/plan.md",
    f"{ALPHA_DIR}/notes/peekdir",
    "notes/peek-beta.md",  # the root's symlink into beta
    f"{ALPHA_DIR}/notes/away.md",  # a symlink out of the vault
    f"{SUB_DIR}/MEMORY.md",
    f"{ALPHA_DIR}/sub/../sub/MEMORY.md",
    SUB_DIR,
    f"{OTHER_DIR}/MEMORY.md",
    "scopes/org/../other/MEMORY.md",
    "memory/../scopes/other/MEMORY.md",
    "../outside/secret.md",
    "scopes/../../outside/secret.md",
    "/etc/passwd",
    "~/.bashrc",
    "scopes\\org\\acme\\agent-beta\\MEMORY.md",
    f"{BETA_DIR}/MEMORY.md\x00.txt",
    "agent-beta/MEMORY.md",
    "../agent-beta/MEMORY.md",
]
#: Files alpha may read but not write (its ancestors', and a symlink into one), plus its own
#: note (manage writes only MEMORY.md and daily logs).
WRITE_ONLY_ATTACKS = [
    "MEMORY.md",
    "scopes/org/MEMORY.md",
    "scopes/org/acme/MEMORY.md",
    f"memory/{TODAY}.md",
    f"scopes/org/acme/memory/{YESTERDAY}.md",
    f"{ALPHA_DIR}/notes/up.md",
    f"{ALPHA_DIR}/notes/plan.md",
    f"{ALPHA_DIR}/../MEMORY.md",
]
#: Entries of other scopes' files, named by their content hash.
HASHES = [
    sha256_text("- Betacanary: the billing database password is hunter2.")[:12],
    sha256_text("- Rootcanary: the office is in Oslo. #important")[:12],
    sha256_text("- Acmecanary: Acme deploys on Tuesdays.")[:12],
    sha256_text("- Subcanary: the child keeps its own counsel.")[:12],
]
QUERIES = [
    "Betacanary",
    "hunter2 password",
    "Betalogcanary Fridays",
    "Subcanary counsel",
    "Othercanary secrets",
    "Outsidecanary billing key",
    "Betadiarycanary",
    "Betanotecanary plan",
    "billing invoices database password secrets",
]


@pytest.fixture
def vault_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loaded_embedder: Any) -> Path:
    monkeypatch.setenv("VAULT_NOW", scoped.NOW)
    return scoped.build(tmp_path / "vault")


@pytest.fixture
def attack(vault_root: Path) -> Iterator[Callable[..., Any]]:
    """`attack(surface, result, *echo)`: count one attempt and check its result holds no canary
    of a file alpha may not see (`echo`: what the attacker sent, such as a query). While the
    test runs, the audit hook watches; afterwards nothing alpha may not see was touched and
    only alpha's own files changed."""
    before = scoped.not_own(vault_root)

    def check(surface: str, result: Any, *echo: str) -> Any:
        ATTEMPTS[surface] += 1
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        for given in echo:  # what the attacker sent may come back (a query) and is no leak
            text = text.replace(given, "").replace(json.dumps(given)[1:-1], "")
        leaked = [word for word in HIDDEN if word in text]
        assert not leaked, (surface, leaked, text[:500])
        return result

    with audit.watching(scoped.forbidden(vault_root)) as recorder:
        yield check
    assert recorder.touched == []
    assert recorder.seen > 0  # the hook did watch
    assert scoped.not_own(vault_root) == before


def errors_of(fn: Callable[[], Any]) -> str:
    try:
        return json.dumps(fn(), default=lambda o: getattr(o, "__dict__", str(o)))
    except Exception as exc:  # a refusal is an answer too: its message must not leak
        return f"{type(exc).__name__}: {exc}"


def test_the_tools_of_a_scope(vault_root: Path, attack: Callable[..., Any]) -> None:
    with Vault(vault_root) as vault:
        tools = make_tools(vault.scope(*ALPHA))
        for path in READ_ATTACKS + WRITE_ONLY_ATTACKS[:5]:
            for args in ({"path": path}, {"path": path, "start_line": 1, "end_line": 50}):
                data = json.loads(attack("tools", call_tool(tools, "get_memory", args)))
                if path in READ_ATTACKS:
                    assert "error" in data, (path, data)
        for path in READ_ATTACKS + WRITE_ONLY_ATTACKS:
            for action, entry_id in (
                ("create", path),
                ("create", f"{path}#Inbox"),
                ("update", f"{path}#L3"),
                ("update", f"{path}:4"),
                ("delete", f"{path}#L4"),
                ("delete", f"{path}:3-4"),
            ):
                data = json.loads(
                    attack(
                        "tools",
                        call_tool(
                            tools,
                            "manage_memory",
                            {"action": action, "content": "x", "id": entry_id},
                        ),
                    )
                )
                if action == "create" and path == "MEMORY.md":  # means its own MEMORY.md
                    assert data["path"] == f"{ALPHA_DIR}/MEMORY.md", data
                else:
                    assert "error" in data, (action, entry_id, data)
        for digest in HASHES:
            for action in ("update", "delete"):
                for entry_id in (digest, f"{BETA_DIR}/MEMORY.md#{digest}"):
                    data = json.loads(
                        attack(
                            "tools",
                            call_tool(
                                tools,
                                "manage_memory",
                                {"action": action, "content": "x", "id": entry_id},
                            ),
                        )
                    )
                    assert "error" in data
        for query in QUERIES:
            for limit in (5, 20):
                data = json.loads(
                    attack(
                        "tools",
                        call_tool(tools, "search_memory", {"query": query, "limit": limit}),
                        query,
                    )
                )
                assert all(
                    r["path"].startswith(
                        (
                            f"{ALPHA_DIR}/",
                            "scopes/org/acme/MEMORY.md",
                            "scopes/org/acme/memory/",
                            "scopes/org/MEMORY",
                            "MEMORY.md",
                            "memory/",
                        )
                    )
                    for r in data["results"]
                ), data
        for name, args in (
            ("search_memory", {"query": "Betacanary", "scope": BETA_DIR}),
            ("get_memory", {"path": f"{BETA_DIR}/MEMORY.md", "scope": "/"}),
            ("get_memory", {"path": "MEMORY.md", "scope": "org/acme/agent-beta"}),
            ("manage_memory", {"action": "create", "content": "x", "scope": "org/acme/agent-beta"}),
        ):
            sent = [str(value) for value in args.values()]
            data = json.loads(attack("tools", call_tool(tools, name, args), *sent))
            assert "unknown argument" in data["error"]
        # what it may do still works: its own memory, and what is shared above it
        own = json.loads(
            call_tool(
                tools,
                "manage_memory",
                {"action": "create", "content": "Alpha drinks tea.", "id": "MEMORY.md#Preferences"},
            )
        )
        assert own["path"] == f"{ALPHA_DIR}/MEMORY.md"
        shared = json.loads(call_tool(tools, "get_memory", {"path": "scopes/org/MEMORY.md"}))
        assert "Orgcanary" in shared["text"]


def test_the_facade_of_a_scope(vault_root: Path, attack: Callable[..., Any]) -> None:
    with Vault(vault_root) as vault:
        alpha = vault.scope(*ALPHA)
        for path in READ_ATTACKS:
            assert "Error" in attack("library", errors_of(lambda p=path: alpha.get(p)))
            assert "Error" in attack(
                "library", errors_of(lambda p=path: alpha.search("bill", within=p))
            )
        for query in QUERIES:
            attack(
                "library", errors_of(lambda q=query: [h.to_dict() for h in alpha.search(q)]), query
            )
            attack("library", errors_of(lambda q=query: alpha.search(q, kinds=["diary"])), query)
            attack("library", alpha.context(4000, query=query), query)
        attack("library", errors_of(lambda: alpha.session("beta-7")))
        attack("library", errors_of(lambda: [s.to_dict() for s in alpha.sessions()]))
        attack("library", errors_of(alpha.status))
        attack("library", errors_of(lambda: [s.to_dict() for s in alpha.scopes()]))
        conversation = [{"role": "user", "content": "The billing invoices go out on Fridays."}]
        attack("library", errors_of(lambda: alpha.flush(conversation, session="beta-7")))
        attack("library", errors_of(lambda: alpha.dream(dry_run=True)))
        attack("library", errors_of(lambda: alpha.dream()))
        attack("library", errors_of(lambda: alpha.undo_dream()))
        for uri in (
            "vault://MEMORY.md",
            "vault://today",
            "vault://context",
            f"vault://{BETA_DIR}/MEMORY.md",
        ):
            attack("library", errors_of(lambda u=uri: read_resource_text(alpha, u)))


def test_the_cli_bound_to_a_scope(
    vault_root: Path, run_cli: Callable[..., Any], attack: Callable[..., Any]
) -> None:
    def vault(*args: str, **kwargs: Any) -> Any:
        result = run_cli("--vault", str(vault_root), *args, "--scope", SCOPE, **kwargs)
        attack("cli", result.stdout + result.stderr, *args)
        return result

    for path in READ_ATTACKS:
        if "\x00" in path:
            continue  # not an argument a shell can pass
        assert vault("get", path).exit_code == 1
        assert vault("get", f"{path}:1-3").exit_code == 1
        assert vault("search", "billing", "--in", path).exit_code == 1
    for query in QUERIES:
        vault("search", query, "--json")
        vault("search", query, "--kind", "diary", "--kind", "note")
        vault("context", "--query", query, "--budget", "4000")
    for args in (
        ("sessions",),
        ("sessions", "--json"),
        ("status",),
        ("status", "--json"),
        ("dream", "--dry-run"),
        ("dream",),
        ("dream", "--undo"),
        ("context",),
    ):
        vault(*args)
    assert vault("sessions", "show", "beta-7").exit_code == 1
    chat = json.dumps([{"role": "user", "content": "Our invoices go out on Fridays."}])
    vault("flush", "-", "--session", "beta-7", input=chat)
    vault("add", "Alpha was here.")
    for bad in (
        "org/acme/agent-beta/../agent-alpha",
        "../org",
        "org/acme/agent-alpha/..",
        "org/acme/memory",
        "org\\acme",
        "./org",
    ):
        result = run_cli("--vault", str(vault_root), "get", "MEMORY.md", "--scope", bad)
        attack("cli", result.stdout + result.stderr)
        assert result.exit_code == 1 and "is not a scope name" in result.stderr


@pytest.mark.slow
def test_the_mcp_server_bound_to_a_scope(
    vault_root: Path, tmp_path: Path, attack: Callable[..., Any]
) -> None:
    """The server runs in a subprocess under the audit hook (its touches go to a log)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    log = tmp_path / "touched.jsonl"
    forbidden = [str(p) for p in scoped.forbidden(vault_root)]
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            str(Path(audit.__file__)),
            str(log),
            *forbidden,
            "--",
            "-m",
            "vault_memory",
            "--vault",
            str(vault_root),
            "mcp",
            "--scope",
            SCOPE,
        ],
        env=server_env(PYTHONPATH=str(WORKTREE), VAULT_NOW=scoped.NOW),
        cwd=str(vault_root.parent),
    )

    async def script(session: Any) -> None:
        listed = await session.list_tools()
        attack("mcp", [t.model_dump() for t in listed.tools])
        assert all(SCOPE in t.description for t in listed.tools)
        for path in READ_ATTACKS:
            result = await session.call_tool("get_memory", {"path": path})
            assert result.is_error, path
            attack("mcp", text_of(result))
        for path in READ_ATTACKS[:12] + WRITE_ONLY_ATTACKS:
            for action, entry_id in (
                ("update", f"{path}#L3"),
                ("delete", f"{path}:4"),
                ("create", f"{path}/x" if path == "MEMORY.md" else path),
            ):
                result = await session.call_tool(
                    "manage_memory", {"action": action, "content": "x", "id": entry_id}
                )
                assert result.is_error, (action, entry_id)
                attack("mcp", text_of(result))
        for query in QUERIES:
            result = await session.call_tool("search_memory", {"query": query, "limit": 20})
            attack("mcp", text_of(result), query)
        for args in (
            {"query": "Betacanary", "scope": BETA_DIR},
            {"query": "Betacanary", "path": f"{BETA_DIR}/MEMORY.md"},
        ):
            result = await session.call_tool("search_memory", args)
            assert result.is_error
            attack("mcp", text_of(result), "Betacanary")
        resources = await session.list_resources()
        attack("mcp", [r.model_dump(mode="json") for r in resources.resources])
        for uri in ("vault://MEMORY.md", "vault://today", "vault://context"):
            read = await session.read_resource(uri)
            attack("mcp", read.contents[0].text)
        own = (await session.read_resource("vault://MEMORY.md")).contents[0].text
        assert "Alphacanary" in own
        try:
            await session.read_resource(f"vault://{BETA_DIR}/MEMORY.md")
        except Exception as exc:  # an unknown resource
            attack("mcp", str(exc))

    async def main() -> None:
        with open(tmp_path / "server.err", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=60) as session,
            ):
                await session.initialize()
                await script(session)

    anyio.run(main)
    assert log.read_text() == ""  # the server touched nothing alpha may not see
    assert "Traceback" not in (tmp_path / "server.err").read_text()


def test_the_audit_hook_sees_a_forbidden_read(vault_root: Path) -> None:
    """The check itself: reading a sibling's file through the symlink in alpha's folder is
    seen, in-process and in a subprocess."""
    with audit.watching(scoped.forbidden(vault_root)) as recorder:
        (vault_root / ALPHA_DIR / "notes" / "peek.md").read_text()
    assert recorder.touched == [("open", str((vault_root / BETA_DIR / "MEMORY.md").resolve()))]
    log = vault_root.parent / "sub.jsonl"
    (vault_root.parent / "probe.py").write_text(
        f"open({str(vault_root / 'notes' / 'peek-beta.md')!r}).close()\n"
    )
    subprocess.run(
        [sys.executable, audit.__file__, str(log), str(vault_root / BETA_DIR), "--", "-m", "probe"],
        check=True,
        cwd=vault_root.parent,
        env={**os.environ, "PYTHONPATH": str(vault_root.parent)},
    )
    assert "agent-beta/MEMORY.md" in log.read_text()


def test_attempts_are_counted() -> None:
    """Run last in this file: the attempts made above (`pytest -s` shows them)."""
    if set(ATTEMPTS) != {"tools", "library", "cli", "mcp"}:
        pytest.skip("run with the rest of tests/files/test_scopes_isolation.py")
    total = sum(ATTEMPTS.values())
    print(f"\nisolation attempts: {dict(ATTEMPTS)}, total {total}")
    assert total >= 400
