"""The house: the import graph of vault_memory, read with `ast` (run-time imports only: those
under `if TYPE_CHECKING:` are annotations), must have no circle, no import from a lower layer
up to a higher one, and no module that the facade imports importing the facade back.

    cli, __init__, __main__                      the doors
    agents (tools, MCP server, window), tools    handed a Vault by their caller
    adapters (LangGraph store, Agents SDK session)
    vault                                        the facade
    search, capture, dream, live, sessions, transfer      the features
    index                                        the derived cache
    files, llm                                   the source of truth; the model client
    config, errors, clock, text, relative_dates  the ground
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "vault_memory"

LAYERS = {
    "config": 0,
    "errors": 0,
    "clock": 0,
    "text": 0,
    "relative_dates": 0,
    "files": 1,
    "llm": 1,
    "index": 2,
    "search": 3,
    "capture": 3,
    "dream": 3,
    "live": 3,
    "sessions": 3,
    "transfer": 3,
    "vault": 4,
    "agents": 5,
    "adapters": 5,
    "tools": 5,
    "cli": 6,
    "": 6,  # "": the package's own __init__
    "__main__": 7,
}
ABOVE_THE_FACADE = {"agents", "adapters", "tools", "cli", "", "__main__"}


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test run (the tests only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def runtime_imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the package that `name` imports when it runs (function bodies included,
    `if TYPE_CHECKING:` blocks not)."""
    tree = parsed(path)
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{alias.name}" for alias in node.names]
            modules_named = [sub for sub in subs if sub in known]
            targets = modules_named + ([target] if len(modules_named) < len(subs) else [])
        own_package = ".".join(package) if path.name != "__init__.py" else None
        for target in targets:
            # a module naming its own package's __init__ (`from . import fsutil`) is inside it
            if target in known and target != name and target != own_package:
                found.add(target)
    return found


@functools.cache
def _graph() -> tuple[tuple[str, frozenset[str]], ...]:
    known = modules()
    return tuple(
        (name, frozenset(runtime_imports(name, path, known))) for name, path in known.items()
    )


def graph() -> dict[str, set[str]]:
    """The import graph, read once per test run (2 s of parsing) and copied for each test."""
    return {name: set(imports) for name, imports in _graph()}


def layer(module: str) -> int:
    parts = module.split(".")[1:]
    return LAYERS[parts[0] if parts else ""]


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer(name)  # KeyError: a new top-level module or subpackage needs its place here


def test_no_import_circle() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                circle = path[path.index(nxt) :] + [nxt]
                raise AssertionError("import circle: " + " -> ".join(circle))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_no_import_runs_up_a_layer() -> None:
    upward = [
        f"{src} (layer {layer(src)}) -> {dst} (layer {layer(dst)})"
        for src, targets in graph().items()
        for dst in targets
        if layer(dst) > layer(src)
    ]
    assert upward == []


def test_nothing_the_facade_imports_imports_it_back() -> None:
    edges = graph()
    reached, todo = set(), ["vault_memory.vault"]
    while todo:
        for nxt in edges[todo.pop()]:
            if nxt not in reached:
                reached.add(nxt)
                todo.append(nxt)
    assert "vault_memory.vault" not in reached
    below = [
        name
        for name in edges
        if name.split(".")[1:2]
        and name.split(".")[1] not in ABOVE_THE_FACADE
        and name != "vault_memory.vault"
    ]
    assert [name for name in below if "vault_memory.vault" in edges[name]] == []


def test_the_top_level_holds_at_most_ten_modules() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 10, top


def test_the_checks_see_a_circle_and_an_upward_import(tmp_path: Path) -> None:
    """The walker itself: a package made for the test, with both faults, is caught."""
    pkg = tmp_path / "vault_memory"
    (pkg / "files").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "files" / "__init__.py").write_text("")
    (pkg / "vault.py").write_text("from .files import notes\n")
    (pkg / "files" / "notes.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .. import errors\n"
        "def f():\n    from ..vault import Vault\n"
    )
    known = {
        "vault_memory": pkg / "__init__.py",
        "vault_memory.vault": pkg / "vault.py",
        "vault_memory.files": pkg / "files" / "__init__.py",
        "vault_memory.files.notes": pkg / "files" / "notes.py",
        "vault_memory.errors": pkg / "errors.py",
    }
    assert runtime_imports(
        "vault_memory.files.notes", known["vault_memory.files.notes"], known
    ) == {"vault_memory.vault"}  # the annotation is not counted
    assert runtime_imports("vault_memory.vault", known["vault_memory.vault"], known) == {
        "vault_memory.files.notes"
    }
    (pkg / "files" / "layout.py").write_text("from . import notes\nfrom .. import __version__\n")
    known["vault_memory.files.layout"] = pkg / "files" / "layout.py"
    # its own package's __init__ is not an arrow; the package above it is
    assert runtime_imports(
        "vault_memory.files.layout", known["vault_memory.files.layout"], known
    ) == {"vault_memory.files.notes", "vault_memory"}


def test_other_packages_import_a_subpackage_only_through_its_init() -> None:
    """`from ..files import Layout`, never `from ..files.layout import Layout` from outside
    files/: each subpackage's __init__ names what it offers."""
    subpackages = {name.split(".")[1] for name in modules() if name.count(".") >= 2}
    reaching_in = []
    for name, path in modules().items():
        tree = parsed(path)
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level or not node.module:
                continue
            base = package[: len(package) - (node.level - 1)]
            target = base + node.module.split(".")
            inside = package[1:2] == target[1:2]
            if len(target) > 2 and target[1] in subpackages and not inside:
                reaching_in.append(f"{name}: from {'.'.join(target)} import ...")
    assert reaching_in == []
