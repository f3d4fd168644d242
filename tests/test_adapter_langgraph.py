"""The LangGraph store adapter against the real `langgraph` package: the `BaseStore` contract
(what LangGraph's own store test suites expect of a store: batch order and results, put/get/
update/delete, search by prefix, filter, query, limit and offset, list_namespaces with prefix,
suffix, wildcards, depth and paging, the invalid namespaces), the same answers as LangGraph's
own InMemoryStore for the same operations, a compiled graph using it, and the items as files
of the vault's scopes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import (  # noqa: E402
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore  # noqa: E402

from vault_memory import Vault  # noqa: E402
from vault_memory.adapters.items import BrokenItemError, file_name  # noqa: E402
from vault_memory.adapters.langgraph_store import VaultStore  # noqa: E402

Ops = Iterable[GetOp | PutOp | SearchOp | ListNamespacesOp]


@pytest.fixture
def store(vault_dir: Path) -> VaultStore:
    return VaultStore(vault_dir)


def test_it_is_a_langgraph_store(store: VaultStore) -> None:
    assert isinstance(store, BaseStore)
    assert store.supports_ttl is False
    with pytest.raises(NotImplementedError):
        store.put(("a",), "k", {"v": 1}, ttl=5)


def test_batch_keeps_the_order_of_its_operations(store: VaultStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        cast(
            Ops,
            [
                GetOp(("test", "foo"), "key1"),
                PutOp(("test", "bar"), "key2", {"data": "value2"}),
                SearchOp(("test",), filter={"data": "value1"}, limit=10, offset=0),
                ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
                GetOp(("test",), "key3"),
                PutOp(("test",), "key3", {"data": "value3"}),
                GetOp(("test",), "key3"),
                PutOp(("test",), "key3", None),
                GetOp(("test",), "key3"),
            ],
        )
    )
    assert len(results) == 9
    first = results[0]
    assert isinstance(first, Item)
    assert (first.namespace, first.key, first.value) == (
        ("test", "foo"),
        "key1",
        {"data": "value1"},
    )
    assert results[1] is None
    found = cast(list[Item], results[2])
    assert [(i.key, i.value) for i in found] == [("key1", {"data": "value1"})]
    assert {("test", "foo"), ("test", "bar")} <= set(cast(list[Any], results[3]))
    assert results[4] is None and results[5] is None
    assert isinstance(results[6], Item) and results[6].value == {"data": "value3"}
    assert results[7] is None and results[8] is None
    assert asyncio.run(store.abatch([GetOp(("test", "bar"), "key2")]))[0].value == {  # type: ignore[union-attr]
        "data": "value2"
    }


def test_put_get_update_delete(store: VaultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    namespace = ("test", "documents")
    monkeypatch.setenv("VAULT_NOW", "2026-03-10T12:00:00+00:00")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item is not None
    assert (item.namespace, item.key) == (namespace, "doc1")
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}
    monkeypatch.setenv("VAULT_NOW", "2026-03-10T12:05:00+00:00")
    store.put(namespace, "doc1", {"title": "Updated Document"})
    updated = store.get(namespace, "doc1")
    assert updated is not None and updated.value == {"title": "Updated Document"}
    assert updated.created_at == item.created_at
    assert updated.updated_at > item.updated_at
    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None
    store.delete(namespace, "doc1")  # deleting what is not there is no error
    assert asyncio.run(store.aget(namespace, "doc1")) is None
    asyncio.run(store.aput(namespace, "doc2", {"n": 2}))
    assert asyncio.run(store.aget(namespace, "doc2")).value == {"n": 2}  # type: ignore[union-attr]


def test_search_by_prefix_filter_and_pages(store: VaultStore) -> None:
    data = [
        (
            ("test", "docs"),
            "doc1",
            {"title": "First", "author": "Alice", "score": 4.5, "meta": {"lang": "en"}},
        ),
        (
            ("test", "docs"),
            "doc2",
            {"title": "Second", "author": "Bob", "score": 3.0, "meta": {"lang": "de"}},
        ),
        (
            ("test", "images"),
            "img1",
            {"title": "Image 1", "author": "Alice", "score": 5.0, "tags": ["a", "b"]},
        ),
        (("prod", "docs"), "doc3", {"title": "Prod", "author": "Alice", "score": 1.0}),
    ]
    for namespace, key, value in data:
        store.put(namespace, key, value)
    assert len(store.search(("test",))) == 3
    docs = store.search(("test", "docs"))
    assert {i.key for i in docs} == {"doc1", "doc2"}
    assert all(i.namespace == ("test", "docs") for i in docs)
    assert {i.key for i in store.search(("test",), filter={"author": "Alice"})} == {"doc1", "img1"}
    assert {i.key for i in store.search((), filter={"author": "Alice"})} == {"doc1", "img1", "doc3"}
    assert {i.key for i in store.search(("test",), filter={"score": {"$gt": 4.0}})} == {
        "doc1",
        "img1",
    }
    assert {i.key for i in store.search(("test",), filter={"score": {"$lte": 3.0}})} == {"doc2"}
    assert {i.key for i in store.search(("test",), filter={"author": {"$ne": "Alice"}})} == {"doc2"}
    assert [i.key for i in store.search(("test",), filter={"meta": {"lang": "de"}})] == ["doc2"]
    assert [i.key for i in store.search(("test",), filter={"tags": ["a", "b"]})] == ["img1"]
    assert len(store.search(("test",), limit=2)) == 2
    assert len(store.search(("test",), offset=2)) == 1
    assert store.search(("nothing",)) == []


def test_search_with_a_query_ranks_by_the_vaults_search(
    store: VaultStore, loaded_embedder: Any
) -> None:
    store.put(("users", "alice"), "prefs", {"note": "Prefers short answers with code first."})
    store.put(("users", "bob"), "prefs", {"note": "Enjoys long walks and sourdough baking."})
    store.put(("users", "carol"), "prefs", {"note": "Keeps a garden of tomatoes."})
    found = store.search(("users",), query="who wants code in the answers?")
    assert found[0].namespace == ("users", "alice")
    assert found[0].score is not None
    assert len(found) == 3  # the others follow, as a vector store returns every item
    # an item written after a search is found by the next
    store.put(("users", "dave"), "prefs", {"note": "Plays the cello every evening."})
    assert store.search(("users",), query="cello music", limit=1)[0].namespace == ("users", "dave")
    assert store.search(("users", "bob"), query="code answers")[0].namespace == ("users", "bob")


def test_list_namespaces(store: VaultStore) -> None:
    namespaces = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]
    for namespace in namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})
    assert store.list_namespaces() == sorted(namespaces)
    assert len(store.list_namespaces(prefix=("test",))) == 4
    assert store.list_namespaces(suffix=("public",)) == sorted(
        n for n in namespaces if n[-1] == "public"
    )
    assert store.list_namespaces(prefix=("*", "documents")) == sorted(
        n for n in namespaces if n[1] == "documents"
    )
    assert store.list_namespaces(prefix=("test",), suffix=("*", "private")) == [
        ("test", "documents", "private"),
        ("test", "images", "private"),
    ]
    assert store.list_namespaces(max_depth=2) == [
        ("prod", "documents"),
        ("test", "documents"),
        ("test", "images"),
    ]
    assert len(store.list_namespaces(limit=3)) == 3
    assert store.list_namespaces(limit=3, offset=3) == sorted(namespaces)[3:]
    for namespace in namespaces:
        store.delete(namespace, "dummy")
    assert store.list_namespaces() == []


def test_invalid_namespaces_are_refused(store: VaultStore) -> None:
    for bad in [(), ("a.b",), ("langgraph", "x"), ("with space",), ("notes",), ("memory", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError, match="scope"):
        store.batch([PutOp(("sessions",), "k", {"v": 1})])


def test_same_answers_as_langgraphs_in_memory_store(store: VaultStore) -> None:
    reference = InMemoryStore()
    operations: list[Any] = [
        PutOp(("app", "users", "u1"), "profile", {"name": "Ada", "age": 36, "lang": "en"}),
        PutOp(("app", "users", "u2"), "profile", {"name": "Linus", "age": 54, "lang": "fi"}),
        PutOp(("app", "users", "u2"), "notes", {"text": "Prefers mailing lists."}),
        PutOp(("app", "teams"), "core", {"members": ["u1", "u2"]}),
        PutOp(("app", "users", "u1"), "profile", {"name": "Ada", "age": 37, "lang": "en"}),
        PutOp(("app", "users", "u2"), "notes", None),
        PutOp(("other",), "x", {"v": True}),
    ]
    queries: list[Any] = [
        GetOp(("app", "users", "u1"), "profile"),
        GetOp(("app", "users", "u2"), "notes"),
        SearchOp(("app", "users"), filter={"age": {"$gte": 37}}, limit=10),
        SearchOp(("app",), filter={"lang": "en"}, limit=10),
        SearchOp(("app", "users"), limit=10),
        SearchOp((), filter={"v": True}, limit=10),
        ListNamespacesOp(limit=100),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("app", "*")),), limit=100),
        ListNamespacesOp(max_depth=1, limit=100),
    ]
    for target in (store, reference):
        target.batch(operations)
    ours, theirs = store.batch(queries), reference.batch(queries)

    def plain(result: Any) -> Any:
        if isinstance(result, Item):
            return (result.namespace, result.key, json.dumps(result.value, sort_keys=True))
        if isinstance(result, list):
            return sorted(plain(r) for r in result)
        return result

    assert [plain(r) for r in ours] == [plain(r) for r in theirs]


def test_a_graph_uses_it(store: VaultStore) -> None:
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        user: str
        text: str
        remembered: int

    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
        store.put(
            ("users", state["user"]),
            "said-" + str(abs(hash(state["text"]))),
            {"text": state["text"]},
        )
        return {"remembered": len(store.search(("users", state["user"])))}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    graph = builder.compile(store=store)
    assert (
        graph.invoke({"user": "zoe", "text": "Zoë liebt Kaffee ☕", "remembered": 0})["remembered"]
        == 1
    )
    out = graph.invoke({"user": "zoe", "text": "and short meetings", "remembered": 0})
    assert out["remembered"] == 2
    assert store.list_namespaces() == [("users", "zoe")]


# -- the files --------------------------------------------------------------------------------


def test_items_are_files_of_the_scope(vault_dir: Path, store: VaultStore) -> None:
    value = {
        "text": "Zoë prefers ``` fenced ``` answers — 短く",
        "n": 1.5,
        "ok": True,
        "none": None,
    }
    store.put(("users", "zoe"), "a key/with spaces", value)
    path = (
        vault_dir / "scopes" / "users" / "zoe" / "notes" / "store" / file_name("a key/with spaces")
    )
    assert path.name == "a%20key%2Fwith%20spaces.md"
    text = path.read_text(encoding="utf-8")
    assert 'key: "a key/with spaces"' in text and "````json" in text
    item = store.get(("users", "zoe"), "a key/with spaces")
    assert item is not None and item.value == value
    # the vault sees it as the scope's note: a search bound to the scope finds it
    hits = Vault(vault_dir).scope("users", "zoe").search("fenced answers", mode="keyword")
    assert hits and hits[0].path.endswith(path.name)
    # a person's edit is what the store reads next
    path.write_text(text.replace('"n": 1.5', '"n": 2'), encoding="utf-8")
    edited = store.get(("users", "zoe"), "a key/with spaces")
    assert edited is not None and edited.value["n"] == 2
    long_key = "k" * 400
    store.put(("users", "zoe"), long_key, {"v": 1})
    assert store.get(("users", "zoe"), long_key).value == {"v": 1}  # type: ignore[union-attr]
    assert store.get(("users", "zoe"), ".hidden") is None
    store.put(("users", "zoe"), ".hidden", {"v": 2})
    assert store.get(("users", "zoe"), ".hidden").value == {"v": 2}  # type: ignore[union-attr]


def test_secrets_are_redacted_unless_asked(vault_dir: Path) -> None:
    secret = "sk-proj-Xk4P9vQ2mR7tL1wZ8yN3bC6dF0gH5jK2sA9eU4iO7pT1qW6r"
    VaultStore(vault_dir).put(("ops",), "creds", {"note": f"the key is {secret}", "id": "x"})
    item = VaultStore(vault_dir).get(("ops",), "creds")
    assert item is not None and item.value == {
        "note": "the key is [REDACTED:openai-key]",
        "id": "x",
    }
    assert secret not in "".join(p.read_text() for p in (vault_dir / "scopes").rglob("*.md"))
    VaultStore(vault_dir, redact=False).put(("ops",), "kept", {"note": secret})
    assert VaultStore(vault_dir).get(("ops",), "kept").value == {"note": secret}  # type: ignore[union-attr]


def test_a_broken_item_is_named_and_left_out_of_searches(
    vault_dir: Path, store: VaultStore, vault_warnings: Any
) -> None:
    store.put(("a",), "good", {"v": 1})
    store.put(("a",), "bad", {"v": 2})
    bad = vault_dir / "scopes" / "a" / "notes" / "store" / "bad.md"
    bad.write_text(bad.read_text().replace('"v": 2', '"v": 2,,'), encoding="utf-8")
    with pytest.raises(BrokenItemError, match="bad.md"):
        store.get(("a",), "bad")
    assert [i.key for i in store.search(("a",))] == ["good"]
    assert any("bad.md" in w for w in vault_warnings())
    store.put(("a",), "bad", {"v": 3})  # writing it again repairs it
    assert store.get(("a",), "bad").value == {"v": 3}  # type: ignore[union-attr]


def test_namespaces_below_a_scope(vault_dir: Path) -> None:
    store = VaultStore(vault_dir, scope=("org", "acme"))
    store.put(("users", "ines"), "k", {"v": 1})
    assert (vault_dir / "scopes/org/acme/users/ines/notes/store/k.md").is_file()
    assert store.list_namespaces() == [("users", "ines")]
    assert VaultStore(vault_dir).list_namespaces() == [("org", "acme", "users", "ines")]


def test_a_scopes_view_is_refused(vault_dir: Path) -> None:
    from vault_memory.errors import VaultError

    with pytest.raises(VaultError, match="give VaultStore the vault itself"):
        VaultStore(Vault(vault_dir).scope("org"))
