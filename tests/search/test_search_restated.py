"""A MEMORY.md entry that only restates the daily-log line it was promoted from is left out of
the ranking and the line stands for it: the line brings its day (the log's path) and its
neighbours, and the context does not pay for the provenance comment. An entry that says more
than its lines is served as it is. End to end with the real bundled model; `restates` is
pure."""

from __future__ import annotations

from pathlib import Path

from vault_memory import Vault
from vault_memory.search.restated import restates

LOG = """\
# 2026-11-20

## 14:03 · flush · session s1
- Ines: I adopted a greyhound called Pixel from the shelter in Braga.
- Tomas: What a lovely name. How old is Pixel?
- Ines: Pixel is three years old and very shy.
"""

SOURCE = "<!-- src: memory/2026-11-20.md#L4 -->"
RESTATED = f"""\
# MEMORY

## People
- Ines adopted a greyhound called Pixel from the shelter in Braga. {SOURCE}
"""

SAYS_MORE = f"""\
# MEMORY

## People
- Ines adopted a greyhound called Pixel from the shelter in Braga on 2026-11-18, her first dog.
  {SOURCE}
"""


def _search(vault_dir: Path, memory: str, query: str) -> list[tuple[str, int, int, str]]:
    (vault_dir / "memory" / "2026-11-20.md").write_text(LOG, encoding="utf-8")
    (vault_dir / "MEMORY.md").write_text(memory, encoding="utf-8")
    with Vault(vault_dir) as vault:
        vault.index()
        hits = vault.search(query, limit=10, fresh=False)
    return [(h.path, h.start_line, h.end_line, h.text) for h in hits]


def test_restates() -> None:
    line = "- Ines: I adopted a greyhound called Pixel from the shelter in Braga. #preference"
    assert restates(
        "- “I adopted a greyhound called Pixel.” — Ines #preference <!-- src: x -->", [line]
    )
    assert restates("- Ines adopted a greyhound called Pixel. <!-- src: memory/a.md#L4 -->", [line])
    assert not restates("- Ines adopted a greyhound called Pixel on 2026-11-18.", [line])
    assert not restates("- Ines adopted a whippet called Pixel.", [line])
    assert not restates("<!-- src: memory/a.md#L4 -->", [line])  # no words at all


def test_an_entry_that_restates_its_line_is_served_as_that_line(vault_dir: Path) -> None:
    hits = _search(vault_dir, RESTATED, "What dog did Ines adopt?")
    assert hits, hits
    assert all(path != "MEMORY.md" for path, *_ in hits), hits
    path, start, end, text = hits[0]
    assert path == "memory/2026-11-20.md" and start <= 4 <= end, hits
    assert "greyhound" in text


def test_an_entry_that_says_more_than_its_line_is_served_as_it_is(vault_dir: Path) -> None:
    hits = _search(vault_dir, SAYS_MORE, "What dog did Ines adopt?")
    assert any(path == "MEMORY.md" for path, *_ in hits), hits


def test_an_entry_stands_for_its_line_when_the_filters_leave_the_line_out(
    vault_dir: Path,
) -> None:
    (vault_dir / "memory" / "2026-11-20.md").write_text(LOG, encoding="utf-8")
    (vault_dir / "MEMORY.md").write_text(RESTATED, encoding="utf-8")
    with Vault(vault_dir) as vault:
        vault.index()
        hits = vault.search("What dog did Ines adopt?", limit=10, kinds=("memory",), fresh=False)
    assert [h.path for h in hits] == ["MEMORY.md"], hits
