"""Input that used to take the machine down: JSON nested past any sane depth, records past
any sane size, through every door where JSON enters (`vault import` in each format, `vault
flush`, a `vault export` file). Each command runs under a 2 GB address-space cap; each must
end in one `Error:` line naming the file, the record and the limit, and change nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _support import init_vault, leftovers, one_error, snapshot, succeeded, vault

FAMILY = "input"
DEEP = "[" * 5000 + '"x"' + "]" * 5000


def chatgpt(title: Any = "A title", part: Any = "I prefer tea over coffee.") -> dict[str, Any]:
    message = {
        "author": {"role": "user"},
        "content": {"content_type": "text", "parts": [part]},
        "create_time": 1757000000,
    }
    node = {"id": "a", "message": message, "parent": None, "children": []}
    return {"title": title, "mapping": {"a": node}, "current_node": "a", "id": "c1"}


def refused(
    command: str, content: str | bytes, name: str, *needles: str, fmt: str | None = None
) -> Callable[[Path], str | None]:
    """A case: `vault COMMAND FILE` of `content` ends in one error holding `needles` (and the
    file's name), the vault unchanged, nothing left behind."""

    def case(scratch: Path) -> str | None:
        root = init_vault(scratch / "vault")
        source = scratch / name
        source.write_bytes(content if isinstance(content, bytes) else content.encode())
        before = snapshot(root)
        args = [command, str(source)] + (["--format", fmt] if fmt else [])
        problem = one_error(vault(root, *args, timeout=120), name, *needles)
        if problem:
            return problem
        if snapshot(root) != before:
            return "the vault's files changed"
        left = leftovers(root)
        return f"left behind: {left}" if left else None

    return case


DEPTH = "nested deeper than the limit of 256 levels"
BRACKETS = "[" * 100_000 + "]" * 100_000  # 200 KB, valid JSON
OBJECTS = '{"a":' * 50_000


def export_with(scratch: Path, extra: str) -> bytes:
    """A `vault export` of a small vault, its first file record given `extra` JSON."""
    root = init_vault(scratch / "source-vault")
    out = scratch / "export.jsonl"
    result = vault(root, "export", "-o", str(out))
    if result.code != 0:
        raise RuntimeError(f"vault export failed: {result}")
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:-1] + f', "extra": {extra}}}'
    return ("\n".join(lines) + "\n").encode()


def export_deep(scratch: Path) -> str | None:
    data = export_with(scratch, DEEP)
    return refused("import", data, "deep-export.jsonl", "line 2", DEPTH)(scratch)


def export_long(scratch: Path) -> str | None:
    data = export_with(scratch, json.dumps("x" * (40 << 20)))
    return refused("import", data, "long-export.jsonl", "line 2", "33,554,432 bytes")(scratch)


def skipped_label(scratch: Path) -> str | None:
    """Conversations that cannot be read are skipped and named in one short line each, whatever
    their title and id hold (a nested list, a megabyte of text)."""
    root = init_vault(scratch / "vault")
    source = scratch / "conversations.json"
    chats = [
        chatgpt(),
        {"title": json.loads("[" * 200 + "1" + "]" * 200), "id": {"an": "object"}},
        {"title": "y" * 1_000_000, "id": "z" * 300},
    ]
    source.write_text(json.dumps(chats), encoding="utf-8")
    result = vault(root, "import", str(source), timeout=120)
    problem = succeeded(result)
    if problem:
        return problem
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning: ")]
    if len(warnings) != 2:
        return f"{len(warnings)} warnings, not 2: {result.stderr[:300]!r}"
    if max(len(line) for line in warnings) > 300:
        return "a warning longer than 300 characters"
    return None


def jsonl_chats(content: str) -> str:
    good = json.dumps({"messages": [{"role": "user", "content": "I prefer tea."}]})
    return good + "\n" + json.dumps({"messages": [{"role": "user", "content": content}]})


CASES: list[tuple[str, Callable[[Path], str | None]]] = [
    ("import: 100,000 nested [ (auto)", refused("import", BRACKETS, "brackets.json", DEPTH)),
    (
        "import: 100,000 nested [ (chatgpt)",
        refused("import", BRACKETS, "brackets.json", DEPTH, fmt="chatgpt"),
    ),
    (
        "import: 100,000 nested [ (claude)",
        refused("import", BRACKETS, "brackets.json", DEPTH, fmt="claude"),
    ),
    (
        "import: 100,000 nested [ (openai)",
        refused("import", BRACKETS, "brackets.json", DEPTH, fmt="openai"),
    ),
    ('import: {"a": x50,000 (auto)', refused("import", OBJECTS, "objects.json", DEPTH)),
    (
        'import: {"a": x50,000 (jsonl)',
        refused("import", OBJECTS, "objects.json", DEPTH, fmt="jsonl"),
    ),
    (
        "import: a title nested 5,000 levels",
        refused(
            "import",
            json.dumps([chatgpt()]).replace('"A title"', DEEP),
            "title.json",
            "element 1",
            DEPTH,
        ),
    ),
    (
        "import: a content part nested 5,000 levels",
        refused(
            "import",
            json.dumps([chatgpt()]).replace('"I prefer tea over coffee."', DEEP),
            "part.json",
            "element 1",
            DEPTH,
        ),
    ),
    (
        "import: an OpenAI value nested 5,000 levels",
        refused(
            "import",
            json.dumps({"messages": [{"role": "user", "content": "x"}]}).replace('"x"', DEEP),
            "messages.json",
            DEPTH,
        ),
    ),
    (
        "import: a JSONL line nested 5,000 levels",
        refused("import", jsonl_chats("x").replace('"x"', DEEP), "chats.jsonl", "line 2", DEPTH),
    ),
    ("import: an export record nested 5,000 levels", export_deep),
    ("import: an export line of 40 MB", export_long),
    ("import: skipped conversations named shortly", skipped_label),
    ("flush: 100,000 nested [", refused("flush", BRACKETS, "brackets.json", DEPTH)),
    ('flush: {"a": x50,000', refused("flush", OBJECTS, "objects.json", DEPTH)),
    (
        "flush: a content part nested 5,000 levels",
        refused(
            "flush",
            json.dumps([{"role": "user", "content": [{"type": "text", "text": "x"}]}]).replace(
                '"x"', DEEP
            ),
            "chat.json",
            DEPTH,
        ),
    ),
    (
        "flush: a JSONL line nested 5,000 levels",
        refused(
            "flush",
            json.dumps({"role": "user", "content": "hi"})
            + "\n"
            + json.dumps({"role": "user", "content": "x"}).replace('"x"', DEEP),
            "chat.jsonl",
            "JSONL line 2",
            DEPTH,
        ),
    ),
]
