"""Hostile cases, family "links": hard links in a scope's folder to a sibling scope's file and
to a file outside the vault. A hard link is a second name of the same file, made anywhere on
the disk, so no path check tells whose file it is: a scope's view must neither read nor write
it, and unscoped reads must say that they left it out.

The vault of every case: scopes agents/alice and agents/bob, each with a MEMORY.md; bob with a
log of the day; alice with a note of her own, `memory/DAY.md` (a hard link to bob's log of the
day) and `notes/out.md` (a hard link to a file beside the vault). Each case runs what users
run (`python -m vault_memory` subprocesses; the library, the agent tools and the MCP server
over stdio for theirs) and checks: bob's files and the outside file byte-identical, none of
their words in what alice is shown, one `Error:` line naming the path and the setting for a
refused command, no `Traceback`, no temp files left.

Run by bench/hostile.py (each case in a child process); `python bench/hostile_cases/links.py`
runs them here, one after the other.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

FAMILY = "links"

NOW = "2026-11-22T09:30"
DAY = "2026-11-22"
ALICE = "scopes/agents/alice"
BOB = "scopes/agents/bob"
SCOPE = "agents/alice"
LINKED_LOG = f"{ALICE}/memory/{DAY}.md"
LINKED_OUT = f"{ALICE}/notes/out.md"
HIDDEN = ("Boblogcanary", "Bobmemorycanary", "Outsidecanary", "hunter2")
#: (tool, arguments, refused?) of an agent bound to alice.
TOOL_CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("get_memory", {"path": LINKED_LOG}, True),
    ("get_memory", {"path": LINKED_OUT, "start_line": 1, "end_line": 3}, True),
    ("search_memory", {"query": "billing invoices key", "limit": 20}, False),
    ("manage_memory", {"action": "create", "content": "Kumquat entry"}, True),
    ("manage_memory", {"action": "update", "content": "x", "id": f"{LINKED_LOG}#L4"}, True),
    ("manage_memory", {"action": "delete", "id": f"{LINKED_LOG}:4"}, True),
]
CONVERSATION = [
    {"role": "user", "content": "We decided to deploy the kumquat service on Fridays."},
    {"role": "assistant", "content": "Noted: kumquat deploys on Fridays."},
]
TIMEOUT = 180.0
REPO = Path(__file__).resolve().parents[2]


def build(scratch: Path, index: bool = True) -> Path:
    """The vault in `scratch/vault` (indexed unless `index` is False), the outside file beside."""
    root = scratch / "vault"
    run(root, "init", str(root), vault=False)
    plant(root)
    if index:
        run(root, "index")
    return root


def plant(root: Path) -> None:
    """Alice's and bob's files and the two hard links, in the initialised vault at `root` (the
    outside file beside it). tests/test_hardlinks.py plants the same."""
    files = {
        f"{ALICE}/MEMORY.md": "# MEMORY\n\n- Alicecanary: alice tracks the billing plan.\n",
        f"{ALICE}/notes/own.md": "# Own\n\nAlicenotecanary: the billing plan moves in March.\n",
        f"{BOB}/MEMORY.md": "# MEMORY\n\n- Bobmemorycanary: the billing password is hunter2.\n",
        f"{BOB}/memory/{DAY}.md": (
            f"# {DAY}\n\n## 09:00 · note\n- Boblogcanary: billing invoices go out on Fridays.\n"
        ),
    }
    for relpath, text in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    outside = root.parent / "outside.md"
    outside.write_text("# Outside\n\nOutsidecanary: the billing key of another system.\n")
    (root / ALICE / "memory").mkdir()
    os.link(root / BOB / "memory" / f"{DAY}.md", root / LINKED_LOG)
    os.link(outside, root / LINKED_OUT)


def env(**extra: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_")}
    return {**kept, "VAULT_NOW": NOW, "PYTHONPATH": str(REPO), **extra}


def run(root: Path, *args: str, vault: bool = True, **extra: str) -> subprocess.CompletedProcess:
    where = ["--vault", str(root)] if vault else []
    return subprocess.run(
        [sys.executable, "-m", "vault_memory", *where, *args],
        capture_output=True,
        text=True,
        env=env(**extra),
        cwd=root.parent,
        timeout=TIMEOUT,
    )


def foreign(root: Path) -> dict[str, bytes]:
    """Bob's files and the outside file, with their bytes."""
    found = {
        p.relative_to(root.parent).as_posix(): p.read_bytes()
        for p in (root / BOB).rglob("*")
        if p.is_file()
    }
    found["outside.md"] = (root.parent / "outside.md").read_bytes()
    return found


def problems(root: Path, before: dict[str, bytes], shown: str) -> str | None:
    """What went wrong, in one line: a foreign file changed, a word of one shown, a temp file
    left in the vault, a traceback."""
    if foreign(root) != before:
        changed = [p for p, data in foreign(root).items() if before.get(p) != data]
        return f"changed across the link: {', '.join(changed)}"
    leaked = [word for word in HIDDEN if word in shown]
    if leaked:
        return f"shown to alice: {', '.join(leaked)}"
    left = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if ".vault" not in p.parts
        and (p.name.endswith((".tmp", ".partial")) or p.name.endswith(".append"))
    ]
    if left:
        return f"left behind: {', '.join(left)}"
    if "Traceback" in shown:
        return "a traceback"
    return None


def refused(result: subprocess.CompletedProcess, path: str) -> str | None:
    """Exit 1 and stderr one `Error:` line naming `path` and the setting, stdout empty."""
    lines = result.stderr.strip().splitlines()
    if result.returncode != 1:
        return f"exit {result.returncode}, not 1: {result.stderr.strip()[-200:]}"
    if len(lines) != 1 or not lines[0].startswith("Error: "):
        return f"stderr is not one Error: line: {lines[:3]}"
    if path not in lines[0] or "allow_hardlinks" not in lines[0]:
        return f"the Error: line names neither {path} nor the setting: {lines[0][:200]}"
    if result.stdout:
        return f"printed on stdout: {result.stdout[:100]!r}"
    return None


def warned_once(result: subprocess.CompletedProcess) -> str | None:
    """Exit 0, and one warning naming alice's two links and nothing of bob's."""
    if result.returncode != 0:
        return f"exit {result.returncode}: {result.stderr.strip()[-200:]}"
    said = [line for line in result.stderr.splitlines() if "hard links" in line]
    if len(said) != 1:
        return f"{len(said)} warnings about hard links, not one"
    if LINKED_LOG not in said[0] or LINKED_OUT not in said[0] or BOB in said[0]:
        return f"the warning names other files: {said[0][:200]}"
    return None


# -- the CLI bound to alice -----------------------------------------------------------------------


def cli_read(*args: str) -> Callable[[Path], str | None]:
    def case(scratch: Path) -> str | None:
        root = build(scratch)
        before = foreign(root)
        result = run(root, *args, "--scope", SCOPE)
        return warned_once(result) or problems(root, before, result.stdout + result.stderr)

    return case


def cli_get(path: str) -> Callable[[Path], str | None]:
    def case(scratch: Path) -> str | None:
        root = build(scratch)
        before = foreign(root)
        result = run(root, "get", path, "--scope", SCOPE)
        return refused(result, path) or problems(root, before, result.stdout + result.stderr)

    return case


def cli_write(*args: str) -> Callable[[Path], str | None]:
    def case(scratch: Path) -> str | None:
        root = build(scratch)
        before = foreign(root)
        (scratch / "conversation.json").write_text(json.dumps(CONVERSATION))
        argv = [str(scratch / "conversation.json") if a == "CONVERSATION" else a for a in args]
        result = run(root, *argv, "--scope", SCOPE)
        return refused(result, LINKED_LOG) or problems(root, before, result.stdout + result.stderr)

    return case


# -- the library, the agent tools, the MCP server --------------------------------------------------


def library(scratch: Path) -> str | None:
    """Search, context, get, add, manage, flush and export of a view bound to alice."""
    os.environ.update(env())
    from vault_memory import Vault
    from vault_memory.errors import HardLinkedError

    root = build(scratch)
    before = foreign(root)
    shown: list[str] = []
    with Vault(root) as vault:
        alice = vault.scope("agents", "alice")
        hits = alice.search("billing invoices key", limit=20)
        shown += [h.text for h in hits] + list(hits.warnings)
        shown.append(alice.context(query="billing invoices key"))
        out = io.StringIO()
        alice.export(out)
        shown.append(out.getvalue())
        attempts: list[tuple[str, Callable[[], Any]]] = [
            ("get the link to bob's log", lambda: alice.get(LINKED_LOG)),
            ("get the link outside", lambda: alice.get(LINKED_OUT)),
            ("add", lambda: alice.add("Kumquat entry")),
            ("manage create", lambda: alice.manage("Kumquat entry", "create")),
            ("manage delete", lambda: alice.manage("", "delete", f"{LINKED_LOG}#L4")),
            ("flush", lambda: alice.flush(CONVERSATION)),
        ]
        for what, attempt in attempts:
            try:
                shown.append(str(attempt()))
                return f"{what} went through"
            except HardLinkedError as exc:
                shown.append(str(exc))
    return problems(root, before, "\n".join(shown))


def tools(scratch: Path) -> str | None:
    """The agent tools bound to alice: get_memory, search_memory, manage_memory."""
    os.environ.update(env())
    from vault_memory import Vault
    from vault_memory.agents.tools import call_tool, make_tools

    root = build(scratch)
    before = foreign(root)
    shown = []
    with Vault(root) as vault:
        made = make_tools(vault.scope("agents", "alice"))
        for name, arguments, refusal in TOOL_CALLS:
            reply = json.loads(call_tool(made, name, arguments))
            shown.append(json.dumps(reply))
            if ("error" in reply) != refusal:
                return f"{name} {arguments}: {'answered' if refusal else 'refused'}: {reply}"
    return problems(root, before, "\n".join(shown))


def mcp_server(scratch: Path) -> str | None:
    """`vault mcp --scope agents/alice`, driven by the official SDK's client over stdio."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root = build(scratch)
    before = foreign(root)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vault_memory", "--vault", str(root), "mcp", "--scope", SCOPE],
        env={"VAULT_NOW": NOW, "PYTHONPATH": str(REPO)},
        cwd=str(scratch),
    )
    shown: list[str] = []
    wrong: list[str] = []

    async def script(session: Any) -> None:
        for path in (LINKED_LOG, LINKED_OUT):
            result = await session.call_tool("get_memory", {"path": path})
            shown.append(result.content[0].text)
            if not result.is_error:
                wrong.append(f"get_memory {path} answered")
        for extra in ({"action": "create"}, {"action": "update", "id": f"{LINKED_LOG}#L4"}):
            result = await session.call_tool("manage_memory", {"content": "Kumquat", **extra})
            shown.append(result.content[0].text)
            if not result.is_error:
                wrong.append(f"manage_memory {extra['action']} went through")
        deadline = anyio.current_time() + 120
        while True:  # the server brings the index up to date in the background first
            result = await session.call_tool("search_memory", {"query": "billing", "limit": 20})
            if '"index"' not in result.content[0].text or anyio.current_time() > deadline:
                break
            await anyio.sleep(0.05)
        shown.append(result.content[0].text)
        for uri in ("vault://MEMORY.md", "vault://context"):
            shown.append((await session.read_resource(uri)).contents[0].text)
        try:
            today = await session.read_resource("vault://today")
            wrong.append("vault://today (a hard link) was read")
            shown.append(today.contents[0].text)
        except Exception as exc:  # the MCP error the server answers with
            shown.append(str(exc))

    async def main() -> None:
        with open(scratch / "server.err", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await script(session)

    anyio.run(main)
    if wrong:
        return "; ".join(wrong)
    shown.append((scratch / "server.err").read_text())
    return problems(root, before, "\n".join(shown))


# -- unscoped reads and the switch ----------------------------------------------------------------


def unscoped_status(scratch: Path) -> str | None:
    """`vault status` and `vault doctor` name every hard-linked file with the setting."""
    root = build(scratch, index=False)
    before = foreign(root)
    expected = {LINKED_LOG, LINKED_OUT, f"{BOB}/memory/{DAY}.md"}
    status = run(root, "status", "--json")
    skipped = json.loads(status.stdout)["skipped"] if status.returncode == 0 else {}
    if not expected <= set(skipped):
        return f"status skipped {sorted(skipped)}, not {sorted(expected)}"
    if not all("allow_hardlinks" in skipped[p] for p in expected):
        return "a reason in status does not name the setting"
    doctor = run(root, "doctor", "--json")
    named = {f["artefact"] for f in json.loads(doctor.stdout or "{}").get("findings", [])}
    if not expected <= named:
        return f"doctor named {sorted(named)}, not {sorted(expected)}"
    return problems(root, before, status.stderr + doctor.stderr)


def unscoped_search(scratch: Path) -> str | None:
    """An unscoped search never shows the linked files' words and says it left them out."""
    root = build(scratch)
    before = foreign(root)
    result = run(root, "search", "billing invoices key", "-n", "20")
    said = [line for line in result.stderr.splitlines() if "hard links" in line]
    if result.returncode != 0 or len(said) != 1:
        return f"exit {result.returncode}, {len(said)} warnings about hard links, not one"
    if "Boblogcanary" in result.stdout or "Outsidecanary" in result.stdout:
        return "a linked file's words were shown"
    return problems(root, before, result.stderr)


def allowed_writes_replace(scratch: Path) -> str | None:
    """With `[security] allow_hardlinks = true`, `vault add --scope` writes alice's log by
    replacing it: bob's log keeps its bytes, alice's file has one link afterwards."""
    root = build(scratch)
    with open(root / "vault.toml", "a", encoding="utf-8") as toml:
        toml.write("\n[security]\nallow_hardlinks = true\n")
    before = foreign(root)
    result = run(root, "add", "Kumquat entry", "--scope", SCOPE)
    if result.returncode != 0:
        return f"add refused although allowed: {result.stderr.strip()[-200:]}"
    if "Kumquat entry" not in (root / LINKED_LOG).read_text():
        return "the entry is not in alice's log"
    if os.stat(root / LINKED_LOG).st_nlink != 1:
        return "alice's log is still linked after the write"
    return problems(root, before, result.stderr)


CASES: list[tuple[str, Callable[[Path], str | None]]] = [
    ("cli search --scope: hard links to a sibling and outside", cli_read("search", "billing")),
    ("cli context --scope", cli_read("context", "--query", "billing invoices key")),
    ("cli export --scope", cli_read("export")),
    ("cli get --scope: hard link to a sibling's log", cli_get(LINKED_LOG)),
    ("cli get --scope: hard link to a file outside", cli_get(LINKED_OUT)),
    ("cli add --scope: today's log is a hard link", cli_write("add", "Kumquat entry")),
    ("cli flush --scope: today's log is a hard link", cli_write("flush", "CONVERSATION")),
    ("library bound to a scope", library),
    ("agent tools bound to a scope", tools),
    ("mcp server bound to a scope (stdio)", mcp_server),
    ("unscoped status and doctor name them", unscoped_status),
    ("unscoped search says what it left out", unscoped_search),
    ("allow_hardlinks: writes replace, never through", allowed_writes_replace),
]


if __name__ == "__main__":
    import tempfile

    failed = 0
    for name, case in CASES:
        with tempfile.TemporaryDirectory(prefix="hostile-links-") as scratch:
            verdict = case(Path(scratch))
        failed += verdict is not None
        print(f"{FAMILY:6} {name:58} {'pass' if verdict is None else 'FAIL: ' + verdict}")
    sys.exit(1 if failed else 0)
