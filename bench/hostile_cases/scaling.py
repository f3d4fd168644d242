"""Input that used to take an afternoon: many conversations on one day. Four times the
conversations must cost at most five times as much (CPU seconds of `vault import`, measured
side by side); a flush that read and parsed the day's whole log for each conversation made
it eleven times. bench/import_scaling.py measures 500 against 2,000."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _support import init_vault, succeeded, vault

FAMILY = "scaling"
SMALL, LARGE = 250, 1000
BOUND = 5.0
DAY_START = 1757066400.0


def conversation(rng: random.Random, number: int) -> dict[str, Any]:
    stamp = DAY_START + number * 20
    mapping: dict[str, Any] = {"r": {"id": "r", "message": None, "parent": None, "children": []}}
    parent = "r"
    for i in range(rng.randrange(4, 9)):
        role = "user" if i % 2 == 0 else "assistant"
        text = (
            f"I prefer tool {number}-{i} over tool {rng.randrange(10**6)} for project {number}."
            if role == "user"
            else f"Noted: project {number} uses tool {number}-{i - 1} from now on."
        )
        node = f"n{i}"
        message = {
            "author": {"role": role},
            "content": {"content_type": "text", "parts": [text]},
            "create_time": stamp + i,
        }
        mapping[node] = {"id": node, "message": message, "parent": parent, "children": []}
        mapping[parent]["children"].append(node)
        parent = node
    return {
        "title": f"Conversation {number}",
        "create_time": stamp,
        "mapping": mapping,
        "current_node": parent,
        "id": f"{number:08x}-aaaa",
    }


def export(path: Path, count: int) -> Path:
    rng = random.Random(count)
    chats = [conversation(rng, n) for n in range(count)]
    path.write_text(json.dumps(chats), encoding="utf-8")
    return path


def linear(scratch: Path) -> str | None:
    small, large = export(scratch / "small.json", SMALL), export(scratch / "large.json", LARGE)
    cpu: dict[int, list[float]] = {SMALL: [], LARGE: []}
    for run in range(2):  # side by side: small, large, small, large
        for count, source in ((SMALL, small), (LARGE, large)):
            root = init_vault(scratch / f"vault-{count}-{run}")
            result = vault(root, "import", str(source), timeout=900)
            problem = succeeded(result)
            if problem:
                return problem
            cpu[count].append(result.cpu_s)
    ratio = min(cpu[LARGE]) / min(cpu[SMALL])
    if ratio > BOUND:
        return f"t({LARGE})/t({SMALL}) = {ratio:.2f} CPU seconds, over {BOUND:g} ({cpu})"
    return None


CASES: list[tuple[str, Callable[[Path], str | None]]] = [
    (f"import: {LARGE} on one day cost <= {BOUND:g}x {SMALL}", linear),
]
