"""MkDocs hook: a page's `<!-- generated: NAME -->` marker becomes the Markdown that
`reference.py` makes from the code or from `bench/results/` at build time."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def _reference() -> Any:
    spec = importlib.util.spec_from_file_location("vault_docs_reference", HERE / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if "<!-- generated: " not in markdown:
        return markdown
    if str(REPO) not in sys.path:  # the checkout's package, also when it is not installed
        sys.path.insert(0, str(REPO))
    reference = _reference()
    makers = {
        "cli": reference.cli_markdown,
        "config": reference.config_markdown,
        "json": reference.json_markdown,
        "evaluation": lambda: reference.evaluation_markdown(REPO / "bench" / "results"),
    }
    for name, make in makers.items():
        marker = f"<!-- generated: {name} -->"
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


def on_config(config: Any) -> Any:
    # `mkdocs serve` rebuilds when the results or the code the reference is made from change.
    config.setdefault("watch", [])
    for folder in (REPO / "bench" / "results", REPO / "vault_memory"):
        if folder.is_dir() and str(folder) not in config["watch"]:
            config["watch"].append(str(folder))
    return config
