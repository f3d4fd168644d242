"""Responses-style input items (what the OpenAI Agents SDK keeps in a `Session`) as transcript
messages and back. Pure.

An item is one message of the transcript:

    {"role": "user", "content": "Hi"}                     ### user      Hi
    {"type": "message", "role": "assistant",              ### assistant  Hello!
     "content": [{"type": "output_text", "text": "Hello!", "annotations": []}], "id": …}
    {"type": "function_call", "name": "weather",          ### assistant  (tool call · weather)
     "arguments": "{\"city\": \"Oslo\"}", "call_id": "c1"}
    {"type": "function_call_output", "call_id": "c1",     ### tool       (tool result) Sunny
     "output": "Sunny"}
    {"type": "reasoning", …}  and any other item          ### assistant  (no text)

so that a person reads the conversation in the transcript and `vault sessions continue`
picks it up. An item the transcript's form does not hold whole (an id, a status, annotations,
a reasoning item) keeps its own form in the message's origin, its text left out there (it is
the message's): it comes back exactly as it was given, secrets redacted.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from ..sessions import Origin, ToolCall, Turn

#: Where the message's text goes back into an item's own form.
SLOT = "\u0000text"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_TEXT_PARTS = ("input_text", "output_text", "text")


def to_turn(item: Mapping[str, Any], origin: Origin) -> Turn:
    """The transcript message of an item (`origin` carries its id and its parent's)."""
    turn, slot = _read(item)
    canonical = to_item(turn)
    form = None
    if canonical != dict(item):
        template = copy.deepcopy(dict(item))
        if slot is not None:
            _put(template, slot, SLOT)
        form = json.dumps(template, ensure_ascii=False, separators=(",", ":"))
    return Turn(
        turn.role,
        turn.text,
        turn.name,
        turn.tool_calls,
        turn.tool_call_id,
        Origin(origin.ref, origin.parent, origin.at, form),
    )


def to_item(turn: Turn) -> dict[str, Any]:
    """The item a transcript message stands for: its own form when kept, else the plain one."""
    form = turn.origin.form if turn.origin is not None else None
    if form is not None:
        try:
            template = json.loads(form)
        except ValueError:
            template = None
        if isinstance(template, dict):
            text = turn.tool_calls[0].arguments if turn.tool_calls else turn.text
            return _fill(template, text)
    if turn.tool_calls:
        call = turn.tool_calls[0]
        return {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
    if turn.role == "tool":
        return {"type": "function_call_output", "call_id": turn.tool_call_id, "output": turn.text}
    return {"role": turn.role, "content": turn.text}


def _read(item: Mapping[str, Any]) -> tuple[Turn, list[Any] | None]:
    """The message, and where its text sits in the item (None: nowhere, or in pieces)."""
    kind, role = item.get("type"), item.get("role")
    if kind == "function_call":
        call = ToolCall(
            str(item.get("call_id") or ""),
            str(item.get("name") or "tool"),
            _text(item, "arguments"),
        )
        slot = ["arguments"] if isinstance(item.get("arguments"), str) else None
        return Turn("assistant", "", tool_calls=(call,)), slot
    if kind == "function_call_output":
        output = item.get("output")
        if isinstance(output, str):
            return Turn("tool", output, tool_call_id=str(item.get("call_id") or "")), ["output"]
        text, slot = _parts(output, ["output"])
        return Turn("tool", text, tool_call_id=str(item.get("call_id") or "")), slot
    if isinstance(role, str) and role in _ROLES and kind in (None, "message"):
        content = item.get("content")
        if isinstance(content, str):
            return Turn(_ROLES[role], content), ["content"]
        text, slot = _parts(content, ["content"])
        return Turn(_ROLES[role], text), slot
    return Turn("assistant", ""), None


def _parts(content: Any, where: list[Any]) -> tuple[str, list[Any] | None]:
    """The text of a list of content parts; its place when it is one part's."""
    if not isinstance(content, list):
        return "", None
    texts = [
        (index, part["text"])
        for index, part in enumerate(content)
        if isinstance(part, dict)
        and part.get("type") in _TEXT_PARTS
        and isinstance(part.get("text"), str)
    ]
    if len(texts) == 1:
        return texts[0][1], [*where, texts[0][0], "text"]
    return "\n".join(text for _, text in texts), None


#: The fields of an item that hold what was said (redacted); ids, statuses and encrypted
#: reasoning are the API's own and kept as they are.
SAID = frozenset({"text", "content", "arguments", "output"})


def redact_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """`item` with the secrets of what it says replaced (`[REDACTED:kind]`)."""
    from ..capture import redact_texts

    found: list[str] = []

    def walk(node: Any, said: bool, rebuild: bool) -> Any:
        if isinstance(node, str):
            if not said:
                return node
            if rebuild:
                return next(clean)
            found.append(node)
            return node
        if isinstance(node, dict):
            return {k: walk(v, k in SAID, rebuild) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, False, rebuild) for v in node]
        return node

    walk(dict(item), False, False)
    clean = iter(redact_texts(found))
    return dict(walk(dict(item), False, True))


def _text(item: Mapping[str, Any], key: str) -> str:
    value = item.get(key)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _put(node: Any, path: list[Any], value: Any) -> None:
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def _fill(node: Any, text: str) -> Any:
    if node == SLOT:
        return text
    if isinstance(node, dict):
        return {k: _fill(v, text) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, text) for v in node]
    return node
