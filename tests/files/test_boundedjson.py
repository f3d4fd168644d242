"""JSON from outside within bounds (files/boundedjson.py): the streaming splitter gives what
`json.loads` gives, whatever the chunk boundaries cut; a value nested deeper than the limit or
a record over the size limit is refused while streaming, naming the record; and every door
where JSON enters (`vault import` in each format, `vault flush`, a `vault export` file, the
agent queue, a canvas, a model's reply) ends in one `Error:` line instead of a crash."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from vault_memory.files import boundedjson
from vault_memory.files.boundedjson import JsonBrokenError, JsonLimitError

from ..cli.test_cli_basic import error_of

# strings full of what a splitter could mistake for structure
TRICKY = st.text(alphabet='ab\\"[]{},: \né\u2028', max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=20,
)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


def elements(data: bytes, **limits: int) -> list[Any]:
    return [e.value for e in boundedjson.iter_values(io.BytesIO(data), **limits)]


@settings(max_examples=80, deadline=None)
@given(st.lists(VALUES, max_size=5), st.sampled_from([1, 3, 7, 64]), st.booleans())
def test_the_splitter_gives_what_json_loads_gives_whatever_the_chunks(
    items: list[Any], chunk: int, ascii: bool
) -> None:
    text = json.dumps(items, ensure_ascii=ascii).encode()
    old, boundedjson.CHUNK = boundedjson.CHUNK, chunk
    try:
        assert elements(text) == items
    finally:
        boundedjson.CHUNK = old


@settings(max_examples=80, deadline=None)
@given(VALUES, st.integers(0, 8), st.integers(1, 10), st.sampled_from([1, 5, 1 << 20]))
def test_the_depth_limit_is_exact(value: Any, wrap: int, limit: int, chunk: int) -> None:
    text = "[" * wrap + json.dumps(value) + "]" * wrap
    old, boundedjson.CHUNK = boundedjson.CHUNK, chunk
    try:
        within = depth(json.loads(text)) <= limit
        if within:
            boundedjson.check_depth(text, limit)
        else:
            with pytest.raises(JsonLimitError):
                boundedjson.check_depth(text, limit)
    finally:
        boundedjson.CHUNK = old


def test_a_hundred_thousand_brackets_are_refused_at_the_first_element_too_deep() -> None:
    with pytest.raises(JsonLimitError) as caught:
        elements(b"[" * 100_000 + b"]" * 100_000)
    assert caught.value.reason == "element 1 is nested deeper than the limit of 256 levels"
    with pytest.raises(JsonLimitError) as caught:
        elements(b'{"a":' * 50_000)
    assert "top-level value is nested deeper than the limit of 256 levels" in caught.value.reason


def test_elements_before_the_one_too_deep_are_given_first() -> None:
    data = b"[1, [2], " + b"[" * 300 + b"]" * 300 + b"]"
    got = []
    with pytest.raises(JsonLimitError) as caught:
        for element in boundedjson.iter_values(io.BytesIO(data)):
            got.append(element.value)
    assert got == [1, [2]]
    assert caught.value.reason.startswith("element 3 is nested deeper")


def test_an_element_over_the_size_limit_is_refused_before_it_is_read_whole() -> None:
    data = b'[1, "' + b"x" * 5000 + b'", 3]'
    with pytest.raises(JsonLimitError) as caught:
        elements(data, max_bytes=1000)
    assert caught.value.reason == "element 2 is over the limit of 1,000 bytes per record"
    assert elements(data, max_bytes=6000)[2] == 3


@pytest.mark.parametrize(
    ("data", "reason", "after"),
    [
        (b"[1,]", "an element is missing", 1),
        (b"[1,,2]", "an element is missing", 1),
        (b"[1", "it breaks off", 0),
        (b"[1] x", "more data follows the end of the list", 1),
        (b"[1 2]", "Extra data", 0),
    ],
)
def test_broken_json_says_how_and_after_which_element(data: bytes, reason: str, after: int) -> None:
    with pytest.raises(JsonBrokenError) as caught:
        elements(data)
    assert caught.value.reason.startswith(reason)
    assert caught.value.element == after


def test_lines_longer_than_the_limit_are_refused_without_reading_them_whole() -> None:
    fh = io.BytesIO(b'{"a": 1}\n' + b"x" * 100 + b"\n")
    lines = boundedjson.iter_lines(fh, max_bytes=50)
    assert next(lines) == (1, b'{"a": 1}\n')
    with pytest.raises(JsonLimitError, match="line 2 is over the limit of 50 bytes"):
        next(lines)
    assert fh.tell() <= 9 + 51


def test_loads_keeps_json_loads_errors_for_invalid_json() -> None:
    with pytest.raises(json.JSONDecodeError):
        boundedjson.loads("[1,")
    assert boundedjson.loads('{"a": [[["]]]]]]"]]]}') == {"a": [[["]]]]]]"]]]}


# -- every door ---------------------------------------------------------------------------------

DEEP = "[" * 5000 + '"x"' + "]" * 5000


def chatgpt(title: Any = "T", part: Any = "I prefer tea over coffee.") -> dict[str, Any]:
    message = {
        "author": {"role": "user"},
        "content": {"content_type": "text", "parts": [part]},
        "create_time": 1757000000,
    }
    node = {"id": "a", "message": message, "parent": None, "children": []}
    return {"title": title, "mapping": {"a": node}, "current_node": "a", "id": "c1"}


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("fmt", ["auto", "chatgpt", "claude", "openai"])
@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 50_000,
        json.dumps([chatgpt()]).replace('"T"', DEEP),
        json.dumps([chatgpt()]).replace('"I prefer tea over coffee."', DEEP),
        json.dumps({"messages": [{"role": "user", "content": "x"}]}).replace('"x"', DEEP),
    ],
    ids=["brackets", "objects", "title", "part", "value"],
)
def test_import_of_json_nested_too_deep_is_one_error_and_writes_nothing(
    run_cli: Any, vault_dir: Path, tree_state: Any, tmp_path: Path, fmt: str, content: str
) -> None:
    source = write(tmp_path / "hostile.json", content)
    before = tree_state(vault_dir)
    result = run_cli("import", source, "--format", fmt, cwd=vault_dir)
    error = error_of(result)
    assert error.startswith("cannot import hostile.json: ")
    assert "nested deeper than the limit of 256 levels" in error
    assert "Nothing was written" in error
    assert tree_state(vault_dir) == before


def test_import_of_jsonl_names_the_line_too_deep(
    run_cli: Any, vault_dir: Path, tmp_path: Path
) -> None:
    line = json.dumps({"messages": [{"role": "user", "content": "x"}]})
    source = write(tmp_path / "chats.jsonl", line + "\n" + line.replace('"x"', DEEP) + "\n")
    error = error_of(run_cli("import", source, cwd=vault_dir))
    assert error.startswith("cannot import chats.jsonl: line 2 is nested deeper than the limit")


def test_import_of_an_export_with_a_record_too_deep_or_too_long(
    run_cli: Any, vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = tmp_path / "export.jsonl"
    assert run_cli("export", "-o", str(exported), cwd=vault_dir).exit_code == 0
    lines = exported.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:-1] + ', "extra": ' + DEEP + "}"
    source = write(tmp_path / "deep.jsonl", "\n".join(lines) + "\n")
    error = error_of(run_cli("import", source, cwd=vault_dir))
    assert error.startswith("cannot import deep.jsonl: line 2 is nested deeper than the limit")
    monkeypatch.setattr(boundedjson, "MAX_RECORD_BYTES", 1000)
    long = write(tmp_path / "long.jsonl", lines[0] + "\n" + json.dumps({"x": "y" * 2000}) + "\n")
    error = error_of(run_cli("import", long, cwd=vault_dir))
    assert error.startswith("cannot import long.jsonl: line 2 is over the limit of 1,000 bytes")


@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 50_000,
        json.dumps([{"role": "user", "content": [{"type": "text", "text": "x"}]}]).replace(
            '"x"', DEEP
        ),
        json.dumps({"role": "user", "content": "a"})
        + "\n"
        + json.dumps({"role": "user", "content": "x"}).replace('"x"', DEEP),
    ],
    ids=["brackets", "objects", "json", "jsonl"],
)
def test_flush_of_json_nested_too_deep_names_the_file_and_the_limit(
    run_cli: Any, vault_dir: Path, tree_state: Any, tmp_path: Path, content: str
) -> None:
    source = write(tmp_path / "chat.json", content)
    before = tree_state(vault_dir)
    error = error_of(run_cli("flush", source, cwd=vault_dir))
    assert error.startswith("cannot read the conversation in ")
    assert "chat.json" in error
    assert "nested deeper than the limit of 256 levels" in error
    assert tree_state(vault_dir) == before


def test_a_skipped_conversation_is_named_by_its_text_only_and_shortly(
    run_cli: Any, vault_dir: Path, tmp_path: Path
) -> None:
    conversations = [
        chatgpt(),
        {"title": [[["a list"]]], "id": {"an": "object"}},
        {"title": "y" * 500, "id": "z" * 300},
    ]
    source = write(tmp_path / "conversations.json", json.dumps(conversations))
    result = run_cli("import", source, "--json", cwd=vault_dir)
    assert result.exit_code == 0, result.stderr
    skipped = json.loads(result.stdout)["skipped"]
    assert skipped[0] == 'conversations.json: conversation 2: it has no "mapping" of messages'
    assert len(skipped[1]) < 200 and "…" in skipped[1]


def test_a_canvas_refuses_what_is_too_deep() -> None:
    from vault_memory.files import CanvasError, parse_canvas

    with pytest.raises(CanvasError, match="nested deeper"):
        parse_canvas("board.canvas", '{"nodes": ' + DEEP + "}")


def test_the_agent_queue_refuses_messages_nested_too_deep(vault_dir: Path) -> None:
    from vault_memory import Vault

    nested: Any = "x"
    for _ in range(5000):
        nested = [nested]
    updates = Vault(vault_dir).updates
    try:
        updates.submit([{"role": "user", "content": nested}], session="deep")
        assert updates.stats.failed == 1
        assert "cannot be stored" in (updates.stats.last_error or "")
    finally:
        updates.close()


def test_a_model_reply_nested_too_deep_is_an_llm_error() -> None:
    from vault_memory.llm import LLMError, parse_json_reply

    with pytest.raises(LLMError, match="nested deeper than the limit"):
        parse_json_reply(DEEP)
