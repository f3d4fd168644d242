"""LangGraph's long-term memory store (`langgraph.store.base.BaseStore`) kept in a vault: a
namespace is a scope, an item a note of it (items.py).

    from langgraph.graph import StateGraph
    from vault_memory.adapters.langgraph_store import VaultStore

    store = VaultStore("~/notes")                   # or VaultStore(Vault(...))
    store.put(("users", "alice"), "preferences", {"theme": "dark"})
    store.get(("users", "alice"), "preferences").value      # {"theme": "dark"}
    store.search(("users",), query="what does alice like?")  # the vault's hybrid search
    graph = StateGraph(...).compile(store=store)

`put`, `get`, `delete`, `search` (a namespace prefix; `filter` with exact values and the
operators `$eq $ne $gt $gte $lt $lte`; `query` ranked by the vault's search, then the other
items; `limit`, `offset`), `list_namespaces` (prefix and suffix with `*`, `max_depth`,
`limit`, `offset`), `batch` and `abatch` as the base class asks. A namespace label must be a
scope name (letters, digits, `. _ - @ +`, not one of the vault's own folder names):
`InvalidNamespaceError` says why otherwise. Items have no time to live (`supports_ttl` is
False). Values' strings are redacted like everything the vault writes (`redact=False` keeps
them as given).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ImportError as exc:  # pragma: no cover - said once, at import
    raise ImportError(
        "the LangGraph store needs langgraph: pip install 'vault-memory[langgraph]'"
    ) from exc

from ..errors import ScopeNameError, VaultError
from ..files import split_scope
from ..vault import Vault
from .items import STORE_FOLDER, BrokenItemError, ItemFiles, Namespace, StoredItem

log = logging.getLogger("vault_memory")
SEARCH_UNITS = 50  # units of the vault's search read per query, at least


class VaultStore(BaseStore):
    """A LangGraph store whose namespaces are the vault's scopes (below `scope`)."""

    supports_ttl = False

    def __init__(
        self,
        vault: Vault | str | Path,
        *,
        scope: Sequence[str] = (),
        redact: bool = True,
    ) -> None:
        self.vault = vault if isinstance(vault, Vault) else Vault(vault)
        if self.vault.scope_path is not None:
            raise VaultError(
                "give VaultStore the vault itself (not a scope's view of it); put its "
                "namespaces below a scope with scope=('org', 'acme')."
            )
        max_bytes = self.vault.config.index.max_file_bytes
        self.files = ItemFiles(self.vault.root, tuple(scope), max_bytes)
        self.redact = redact
        self._written: set[str] = set()  # item files changed since the index last saw them
        self._lock = threading.Lock()  # one operation at a time on the vault's handles

    # -- the base class's two methods ------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Each operation in order, its result in its place."""
        with self._lock:
            return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        try:
            if isinstance(op, GetOp):
                return self._get(op)
            if isinstance(op, PutOp):
                self._put(op)
                return None
            if isinstance(op, SearchOp):
                return self._search(op)
            if isinstance(op, ListNamespacesOp):
                return self._list_namespaces(op)
        except ScopeNameError as exc:
            raise InvalidNamespaceError(
                f"{exc} (a namespace is a scope of the vault, its labels scope names)"
            ) from None
        raise TypeError(f"unknown store operation: {op!r}")

    # -- operations ------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        found = self.files.get(tuple(op.namespace), op.key)
        return _item(found) if found is not None else None

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        if not namespace:
            raise InvalidNamespaceError("a namespace cannot be empty")
        if op.ttl is not None:
            raise NotImplementedError("items of a vault have no time to live (ttl)")
        if op.value is None:
            relpath = self.files.delete(namespace, op.key)
        else:
            relpath = self.files.put(namespace, op.key, dict(op.value), self.redact)
        if relpath is not None:
            self._written.add(relpath)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        items = self._items(prefix)
        if op.filter:
            items = [
                i for i in items if all(_matches(i.value.get(k), v) for k, v in op.filter.items())
            ]
        items.sort(key=lambda i: (i.updated, i.relpath), reverse=True)
        scores = self._scores(op.query, prefix) if op.query and items else {}
        if scores:  # ranked by the vault's search, then the items it did not find
            items.sort(key=lambda i: -scores.get(i.relpath, float("-inf")))
        chosen = items[op.offset : op.offset + op.limit]
        return [_search_item(i, scores.get(i.relpath)) for i in chosen]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = {namespace for _, namespace in self.files.walk()}
        conditions = op.match_conditions or ()
        kept = [ns for ns in found if all(_namespace_matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            kept = list({ns[: op.max_depth] for ns in kept})
        return sorted(kept)[op.offset : op.offset + op.limit]

    # -- the files and the vault's search -------------------------------------------------

    def _items(self, prefix: Namespace) -> list[StoredItem]:
        items = []
        for relpath, namespace in self.files.walk(prefix):
            try:
                items.append(self.files.read(relpath, namespace))
            except BrokenItemError as exc:
                log.warning("%s; the store leaves it out", exc)
        return items

    def _scores(self, query: str, prefix: Namespace) -> dict[str, float]:
        """The vault's hybrid search within the namespace: item file -> its best unit's score."""
        if self._written:
            self.vault.index(paths=sorted(self._written))
            self._written.clear()
        within = self.files.folder(prefix)
        hits = self.vault.search(query, limit=SEARCH_UNITS, within=within)
        scores: dict[str, float] = {}
        for hit in hits:
            _, rest = split_scope(hit.path)
            if rest.startswith(STORE_FOLDER + "/"):
                scores[hit.path] = max(scores.get(hit.path, float("-inf")), float(hit.score))
        return scores


def _item(found: StoredItem) -> Item:
    return Item(
        value=found.value,
        key=found.key,
        namespace=found.namespace,
        created_at=found.created,
        updated_at=found.updated,
    )


def _search_item(found: StoredItem, score: float | None) -> SearchItem:
    return SearchItem(found.namespace, found.key, found.value, found.created, found.updated, score)


def _namespace_matches(condition: MatchCondition, namespace: Namespace) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    if not path:
        return True
    return all(want in ("*", have) for want, have in zip(path, part, strict=True))


_OPERATORS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _matches(value: Any, wanted: Any) -> bool:
    """A filter's condition on one field: exact (objects field by field, lists element by
    element), or operators (`{"$gt": 4.99}`); values that cannot be compared do not match."""
    if isinstance(wanted, dict) and wanted and all(str(k).startswith("$") for k in wanted):
        try:
            return all(_OPERATORS[op](value, operand) for op, operand in wanted.items())
        except KeyError as exc:
            raise ValueError(f"unsupported filter operator {exc.args[0]!r}") from None
        except TypeError:
            return False
    if isinstance(wanted, dict):
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list)
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)
