"""Key-value items as Markdown files of a scope: what a store keeps under a namespace and a key
(LangGraph's `BaseStore`), one file per item, a person can read and edit:

    scopes/users/alice/notes/store/preferences.md

    ---
    key: "preferences"
    namespace: ["users", "alice"]
    created: "2026-03-10T12:00:00.123456+00:00"
    updated: "2026-03-10T12:05:00.654321+00:00"
    ---

    ```json
    {
      "theme": "dark",
      "note": "Prefers short answers with code first."
    }
    ```

The namespace is the scope (the folder); the file's name is the key, percent-encoded where a
character could not be in a file name (the key itself is in the frontmatter). The value is
the JSON block, read back exactly (a value's strings are redacted like every other text the
vault writes, unless the store is told otherwise). `notes/` is a scope's notes folder, so the
items are searched, seen by the scope and those below it, and never taken for a scope.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from .. import clock
from ..errors import VaultError
from ..files import check_scope, fsutil, scopes, split_scope

STORE_FOLDER = "notes/store"
SUFFIX = ".md"
MAX_NAME_BYTES = 180  # of a file name's key part (file systems allow 255)
_FENCE = re.compile(r"^(`{3,})json[ \t]*$")
_FIELD = re.compile(r"^(key|namespace|created|updated):[ \t]*(.*)$")

Namespace = tuple[str, ...]


class BrokenItemError(VaultError):
    """An item file that cannot be read back (a person's edit broke its JSON)."""

    def __init__(self, relpath: str, what: str) -> None:
        self.relpath = relpath
        super().__init__(
            f"{relpath}: {what}. Fix its ```json block (a JSON object) or delete the file."
        )


@dataclass(frozen=True)
class StoredItem:
    namespace: Namespace  # below the store's own scope
    key: str
    value: dict[str, Any]
    created: dt.datetime
    updated: dt.datetime
    relpath: str


def file_name(key: str) -> str:
    """The file of a key: the key where it can be a file name, percent-encoded where not
    (and a long key cut, with a hash of it, so that two keys never share a file)."""
    name = quote(key, safe="-_~@+=,")
    if name.startswith(".") or not name:
        name = "%2E" + name[1:] if name else "%00"
    if len(name.encode()) > MAX_NAME_BYTES:
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{name[: MAX_NAME_BYTES - 17]}-{digest}"
    return name + SUFFIX


def render_item(
    namespace: Namespace,
    key: str,
    value: dict[str, Any],
    created: dt.datetime,
    updated: dt.datetime,
) -> str:
    body = json.dumps(value, ensure_ascii=False, indent=2)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)  # a value holding ``` cannot close the block early
    return (
        "---\n"
        f"key: {json.dumps(key, ensure_ascii=False)}\n"
        f"namespace: {json.dumps(list(namespace), ensure_ascii=False)}\n"
        f'created: "{created.isoformat()}"\n'
        f'updated: "{updated.isoformat()}"\n'
        "---\n\n"
        f"{fence}json\n{body}\n{fence}\n"
    )


def parse_item(relpath: str, text: str, namespace: Namespace) -> StoredItem:
    """An item file read back; `BrokenItemError` when its JSON block is not an object."""
    lines = fsutil.split_lines(text.removeprefix("\ufeff"))
    fields: dict[str, Any] = {}
    start = 0
    if lines and lines[0].strip() == "---":
        for number, line in enumerate(lines[1:], 1):
            if line.strip() == "---":
                start = number + 1
                break
            match = _FIELD.match(line)
            if match:
                try:
                    fields[match[1]] = json.loads(match[2])
                except (ValueError, RecursionError):
                    fields[match[1]] = match[2].strip()
    value = _json_block(relpath, lines[start:])
    key = fields.get("key")
    if not isinstance(key, str):
        key = unquote(relpath.rsplit("/", 1)[-1].removesuffix(SUFFIX))
    created = _time(fields.get("created"))
    updated = _time(fields.get("updated")) or created
    now = clock.now(dt.UTC)
    return StoredItem(namespace, key, value, created or now, updated or now, relpath)


def _json_block(relpath: str, lines: list[str]) -> dict[str, Any]:
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if not match:
            continue
        fence = match[1]
        end = next((i for i in range(index + 1, len(lines)) if lines[i].strip() == fence), None)
        if end is None:
            raise BrokenItemError(relpath, "its ```json block is not closed")
        try:
            value = json.loads("\n".join(lines[index + 1 : end]))
        except RecursionError:
            raise BrokenItemError(relpath, "its JSON is nested too deep") from None
        except ValueError as exc:
            raise BrokenItemError(relpath, f"its JSON does not parse ({exc})") from None
        if not isinstance(value, dict):
            raise BrokenItemError(relpath, "its JSON is not an object")
        return value
    raise BrokenItemError(relpath, "it holds no ```json block")


def _time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def redact_value(value: Any) -> Any:
    """`value` with every string in it redacted (the keys of its objects are kept)."""
    from ..capture import redact_texts

    found: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for item in node.values():
                collect(item)
        elif isinstance(node, list | tuple):
            for item in node:
                collect(item)

    collect(value)
    clean = iter(redact_texts(found))

    def rebuild(node: Any) -> Any:
        if isinstance(node, str):
            return next(clean)
        if isinstance(node, dict):
            return {k: rebuild(v) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [rebuild(v) for v in node]
        return node

    return rebuild(value)


class ItemFiles:
    """The items of a vault below the scope `base` (namespaces are relative to it)."""

    def __init__(self, root: Path, base: Namespace = (), max_bytes: int = 5_000_000) -> None:
        self.root = root
        self.base = base
        self.max_bytes = max_bytes

    def relpath(self, namespace: Namespace, key: str) -> str:
        scope = check_scope((*self.base, *namespace))
        return f"{scopes.scope_prefix(scope)}{STORE_FOLDER}/{file_name(key)}"

    def folder(self, prefix: Namespace) -> str:
        """The vault-relative folder holding the namespaces that start with `prefix`."""
        scope = (*self.base, *prefix)
        return scopes.scope_prefix(check_scope(scope)).rstrip("/") if scope else "scopes"

    def get(self, namespace: Namespace, key: str) -> StoredItem | None:
        relpath = self.relpath(namespace, key)
        path = self.root / relpath
        if not path.is_file() or path.is_symlink():
            return None
        text = fsutil.read_text(path, relpath, self.max_bytes).text
        return parse_item(relpath, text, namespace)

    def put(self, namespace: Namespace, key: str, value: dict[str, Any], redact: bool) -> str:
        """Write the item (created, or replaced keeping its creation time); its relpath."""
        relpath = self.relpath(namespace, key)
        path = self.root / relpath
        now = clock.now(dt.UTC)
        created, expected = now, None
        if path.is_file():
            read = fsutil.read_text(path, relpath, self.max_bytes)
            expected = read.sha256
            with contextlib.suppress(BrokenItemError):  # a broken one is replaced, as asked
                created = parse_item(relpath, read.text, namespace).created
        stored = redact_value(value) if redact else value
        text = render_item(namespace, key, stored, created, now)
        path.parent.mkdir(parents=True, exist_ok=True)
        fsutil.write_atomic(path, text, expected, relpath)
        return relpath

    def delete(self, namespace: Namespace, key: str) -> str | None:
        relpath = self.relpath(namespace, key)
        try:
            os.unlink(self.root / relpath)
        except FileNotFoundError:
            return None
        return relpath

    def walk(self, prefix: Namespace = ()) -> Iterator[tuple[str, Namespace]]:
        """(relpath, namespace) of every item file in the namespaces starting with `prefix`."""
        start = check_scope((*self.base, *prefix)) if (self.base or prefix) else ()
        top = self.root / scopes.scope_prefix(start) if start else self.root / "scopes"
        for folder, dirs, files in os.walk(top):
            relfolder = Path(folder).relative_to(self.root).as_posix()
            scope, rest = split_scope(relfolder + "/x")
            rest = "" if relfolder == "scopes" else rest.removesuffix("x").removesuffix("/")
            if rest == STORE_FOLDER:
                dirs.clear()
                namespace = scope[len(self.base) :]
                for name in sorted(files):
                    if name.endswith(SUFFIX) and not name.startswith("."):
                        yield f"{relfolder}/{name}", namespace
                continue
            keep = STORE_FOLDER.split("/")[1] if rest == "notes" else None
            dirs[:] = sorted(
                d
                for d in dirs
                if (rest == "" and (d == "notes" or scopes.is_scope_name(d))) or d == keep
            )

    def read(self, relpath: str, namespace: Namespace) -> StoredItem:
        path = self.root / relpath
        text = fsutil.read_text(path, relpath, self.max_bytes).text
        return parse_item(relpath, text, namespace)
