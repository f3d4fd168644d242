"""Obsidian's `.canvas` files (JSON Canvas 1.0), read without changing them: text nodes are
Markdown to search, file nodes are links. Pure: parses the text it is given.

A node is cited by the line of the file its `"id"` is on (Obsidian writes one node per line),
so `path:line` points at it; a text node inside a group carries the group's label as its
heading.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

from . import boundedjson
from .boundedjson import JsonLimitError
from .obsidian import Link, links_in_line


class CanvasError(ValueError):
    """The text is not a JSON Canvas document."""


@dataclass(frozen=True)
class CanvasText:
    """A text node: its Markdown, the line of the file it is on, the label of its group."""

    text: str
    line: int
    group: str = ""


@dataclass(frozen=True)
class Canvas:
    relpath: str
    texts: list[CanvasText] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _inside(node: dict[str, Any], group: dict[str, Any]) -> bool:
    x, y = _number(node.get("x")), _number(node.get("y"))
    gx, gy = _number(group.get("x")), _number(group.get("y"))
    return (
        gx <= x
        and gy <= y
        and x + _number(node.get("width")) <= gx + _number(group.get("width"))
        and y + _number(node.get("height")) <= gy + _number(group.get("height"))
    )


def parse_canvas(relpath: str, text: str) -> Canvas:
    """The text nodes and links of a canvas file; `CanvasError` when it is not one."""
    try:
        data = boundedjson.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise CanvasError(f"invalid JSON: {exc}") from None
    except JsonLimitError as exc:
        raise CanvasError(f"its JSON is {exc.reason}") from None
    if not isinstance(data, dict):
        raise CanvasError("the document is not a JSON object")
    nodes = data.get("nodes", [])
    if not isinstance(nodes, list):
        raise CanvasError('"nodes" is not a list')
    nodes = [n for n in nodes if isinstance(n, dict)]
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(node: dict[str, Any]) -> int:
        node_id = node.get("id")
        if isinstance(node_id, str):
            quoted = re.escape(json.dumps(node_id)[1:-1])
            match = re.search(rf'"id"\s*:\s*"{quoted}"', text)
            if match:
                return bisect.bisect_right(starts, match.start())
        return 1

    groups = [n for n in nodes if n.get("type") == "group"]
    texts: list[CanvasText] = []
    links: list[Link] = []
    for node in nodes:
        kind = node.get("type")
        if kind == "text" and isinstance(node.get("text"), str) and node["text"].strip():
            line = line_of(node)
            # The innermost group holding the node (the smallest one) names its section.
            holders = [g for g in groups if g is not node and _inside(node, g)]
            holder = min(
                holders,
                key=lambda g: _number(g.get("width")) * _number(g.get("height")),
                default=None,
            )
            label = holder.get("label") if holder is not None else None
            texts.append(CanvasText(node["text"], line, label if isinstance(label, str) else ""))
            for text_line in node["text"].split("\n"):
                links.extend(
                    Link(
                        line,
                        found.target,
                        found.subpath,
                        found.display,
                        found.embed,
                        found.kind,
                        f"[canvas text] {found.text}",
                    )
                    for found in links_in_line(text_line, line)
                )
        elif kind == "file" and isinstance(node.get("file"), str) and node["file"].strip():
            subpath = node.get("subpath")
            links.append(
                Link(
                    line_of(node),
                    node["file"].strip(),
                    subpath if isinstance(subpath, str) else "",
                    "",
                    True,
                    "canvas",
                    f"[canvas file node] {node['file'].strip()}",
                )
            )
    return Canvas(relpath, texts, links)
