"""The shape the code keeps, checked on every run: no function in the package over 120 lines
(ruff's C901 holds complexity to 30), tests that reach into private names only where no public
seam exists (at most 30 places), and no text that sends a reader to an issue tracker."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "vault_memory"
TESTS = REPO / "tests"

MAX_FUNCTION_LINES = 120
# A test that reads `obj._name` breaks when the code is reorganised without any change a user
# could see; each place left is one where a public seam would be a worse design (a third-party
# object's internals, a cached table whose identity is the point).
MAX_PRIVATE_REACH_INS = 30
# A tracker's numbers or the old design contract's sections mean nothing to a reader: the
# reason must stand in the text itself. (Written with the escape so this line passes too.)
TRACKER = re.compile(r"\bissues? #?\d+|DESIGN \u00a7", re.IGNORECASE)
TEXT_SUFFIXES = {".py", ".pyi", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".mjs", ".sh"}
SKIPPED_DIRS = {".git", ".vault", "__pycache__", "site", "build", "dist", ".venv", "node_modules"}


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def function_lengths(root: Path) -> list[tuple[int, str]]:
    """(lines, "path:line name") of every function under `root`, decorators included."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in _functions(ast.parse(path.read_text(encoding="utf-8"))):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = (node.end_lineno or node.lineno) - start + 1
            found.append((lines, f"{path.relative_to(root)}:{node.lineno} {node.name}"))
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _reaches_in(node: ast.AST) -> Iterator[str]:
    """The private names `node` touches from outside their object: `obj._name` (but not
    `self._name`), `from vault_memory... import _name`, `setattr(obj, "_name", ...)`."""
    if isinstance(node, ast.Attribute) and _is_private(node.attr):
        if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            yield node.attr
    elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vault_memory"):
        yield from (alias.name for alias in node.names if _is_private(alias.name))
    elif isinstance(node, ast.Call) and len(node.args) >= 2:
        function = node.func
        called = function.attr if isinstance(function, ast.Attribute) else None
        called = function.id if isinstance(function, ast.Name) else called
        name = node.args[1]
        if (
            called in ("setattr", "getattr", "delattr")
            and isinstance(name, ast.Constant)
            and isinstance(name.value, str)
            and _is_private(name.value)
        ):
            yield name.value


def private_reach_ins(root: Path) -> list[str]:
    """Every place a test module under `root` touches a private name (see `_reaches_in`)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for name in _reaches_in(node):
                found.append(f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)} {name}")
    return found


def _texts() -> Iterator[Path]:
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        for name in files:
            path = Path(folder, name)
            if path.suffix in TEXT_SUFFIXES or path.parent.name == ".ci":
                yield path


def test_no_function_in_the_package_is_over_120_lines() -> None:
    long = [
        f"{where} ({n} lines)" for n, where in function_lengths(PACKAGE) if n > MAX_FUNCTION_LINES
    ]
    assert long == [], "split these into named stages:\n" + "\n".join(long)


def test_the_length_check_counts_decorators_and_body(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"@staticmethod\ndef long():\n{body}\n")
    assert function_lengths(tmp_path) == [(MAX_FUNCTION_LINES + 2, "long.py:2 long")]


def test_tests_reach_into_private_names_at_most_30_times() -> None:
    found = private_reach_ins(TESTS)
    assert len(found) <= MAX_PRIVATE_REACH_INS, (
        f"{len(found)} reach-ins (at most {MAX_PRIVATE_REACH_INS}): test through a public "
        "seam instead:\n" + "\n".join(found)
    )


def test_the_reach_in_count_sees_each_kind() -> None:
    source = (
        "from vault_memory.x import _hidden, shown\n"
        "obj._private\nself._own\nobj.__class__\n"
        "monkeypatch.setattr(module, '_switch', 1)\n"
    )
    names = [n for node in ast.walk(ast.parse(source)) for n in _reaches_in(node)]
    assert sorted(names) == ["_hidden", "_private", "_switch"]


def test_nothing_points_at_an_issue_tracker() -> None:
    found = []
    for path in _texts():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if TRACKER.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == [], "say the reason itself:\n" + "\n".join(found)
