"""The docs site: its reference is complete (every command, long option and vault.toml key the
code offers appears, with its type and default), every page is in the navigation, the
evaluation page reads every results file, and no page sends a reader to an issue tracker."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import click
import pytest

from vault_memory.config import SECTIONS

from .test_readme import DOCS, WORKTREE, doc_pages

MIN_PAGES = 15
# A tracker's numbers or the design contract's sections mean nothing to a reader: say the
# reason itself.
TRACKER = re.compile(r"\bissues? #?\d+|DESIGN §", re.IGNORECASE)


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_reference", DOCS / "_generate" / "reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    return _reference()


def _every_command() -> list[tuple[str, click.Command]]:
    from vault_memory.cli import cli

    found = []

    def walk(name: str, command: click.Command) -> None:
        found.append((name, command))
        for sub, child in getattr(command, "commands", {}).items():
            walk(f"{name} {sub}", child)

    walk("vault", cli)
    return found


def _sections(markdown: str) -> dict[str, str]:
    """Each command's part of the CLI reference, by its heading."""
    parts = re.split(r"^#{2,3} `(vault[^`]*)`.*$", markdown, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_command_and_long_option_is_in_the_reference(reference: ModuleType) -> None:
    sections = _sections(reference.cli_markdown())
    for name, command in _every_command():
        assert name in sections, f"{name} is missing from the CLI reference"
        for param in command.params:
            for option in [*param.opts, *param.secondary_opts]:
                if option.startswith("--"):
                    assert re.search(rf"`[^`]*{re.escape(option)}\b", sections[name]), (
                        f"{name} {option} is missing from the CLI reference"
                    )


def test_every_config_key_is_in_the_reference_with_type_and_default(
    reference: ModuleType,
) -> None:
    markdown = reference.config_markdown()
    for section, cls in SECTIONS.items():
        part = markdown.split(f"### `[{section}]`", 1)[1].split("\n### ", 1)[0]
        for field in dataclasses.fields(cls):
            row = re.search(rf"^\| `{field.name}` \|(.*)$", part, re.M)
            assert row, f"[{section}] {field.name} is missing from the configuration reference"
            cells = [c.strip() for c in row[1].split(" | ")]
            assert cells[0] == str(field.type)
            default = reference._toml_value(field.default)
            assert cells[1] == f"`{default}`".replace("|", "\\|")
            assert cells[2] == f"`VAULT_{section.upper()}_{field.name.upper()}`"


def test_every_config_key_is_described(reference: ModuleType) -> None:
    """A setting's description is the comment beside it in config.py (or, for the few without
    one, the reference's own line): a new setting comes with one."""
    assert [k[:2] for k in reference.config_keys() if not k[4]] == []


def test_every_command_with_json_output_is_in_the_json_reference(reference: ModuleType) -> None:
    covered = {title.removesuffix(" --stop") for title, _, _ in reference.JSON_COMMANDS}
    for name, command in _every_command():
        flags = {o for p in command.params for o in p.opts}
        if "--json" in flags or (name == "vault graph"):
            assert name in covered, f"{name} --json is missing from the JSON reference"


def test_the_reference_pages_hold_their_generated_parts() -> None:
    for page, marker in [
        ("reference/cli.md", "cli"),
        ("reference/configuration.md", "config"),
        ("reference/json.md", "json"),
        ("evaluation.md", "evaluation"),
    ]:
        assert f"<!-- generated: {marker} -->" in (DOCS / page).read_text(encoding="utf-8")


def _nav_pages() -> list[str]:
    text = (WORKTREE / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text.split("\nnav:\n", 1)[1]
    return re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, re.M)


def test_every_page_is_in_the_navigation_and_every_entry_exists() -> None:
    nav = _nav_pages()
    pages = [str(p.relative_to(DOCS)) for p in doc_pages() if "_generate" not in p.parts]
    assert len(nav) >= MIN_PAGES
    assert sorted(nav) == sorted(pages)


def test_the_evaluation_page_reads_every_results_file(
    reference: ModuleType, tmp_path: Path
) -> None:
    results = WORKTREE / "bench" / "results"
    markdown = reference.evaluation_markdown(results)
    assert "Could not be read" not in markdown
    for path in results.glob("*.json"):
        assert f"bench/results/{path.name}" in markdown
    # A new file appears by itself; one that is not JSON is named on the page, not a failure.
    (tmp_path / "new.json").write_text('{"name": "new", "figures": {"a": {"x": 1.5}}}')
    (tmp_path / "broken.json").write_text("{")
    markdown = reference.evaluation_markdown(tmp_path)
    assert "### new" in markdown and "| a | 1.500 |" in markdown
    assert "`broken.json`" in markdown and "Could not be read" in markdown


def test_no_page_points_at_an_issue_tracker() -> None:
    texts = [WORKTREE / "README.md", WORKTREE / "CHANGELOG.md", WORKTREE / "CONTRIBUTING.md"]
    texts += sorted(DOCS.rglob("*.md")) + sorted((DOCS / "_generate").glob("*.py"))
    for path in texts:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not TRACKER.search(line), f"{path.relative_to(WORKTREE)}:{number}: {line}"
