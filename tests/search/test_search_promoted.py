"""A MEMORY.md entry a dream promoted and the daily-log lines it came from (its `<!-- src: … -->`)
say the same thing: a search returns it once, whichever ranks first, so the context budget is
not paid twice. End to end with the real bundled model; `cited_lines` is pure."""

from __future__ import annotations

from pathlib import Path

from vault_memory import Vault
from vault_memory.search.ranking import cited_lines

LOG = """\
# 2026-11-20

## 14:03 · flush · session s1
- Ines: I adopted a greyhound called Pixel from the shelter in Braga.
- Ines: The kitchen of the new flat needs new tiles.
"""

MEMORY = """\
# MEMORY

## People
- Ines adopted a greyhound, Pixel, in Braga. <!-- src: memory/2026-11-20.md#L4 -->
- Tomas builds wooden boats. <!-- src: memory/2026-11-19.md#L4-L5 -->
"""


def test_cited_lines() -> None:
    assert cited_lines(MEMORY) == {
        ("memory/2026-11-20.md", 4),
        ("memory/2026-11-19.md", 4),
        ("memory/2026-11-19.md", 5),
    }
    assert cited_lines("- a fact <!-- src: memory/a.md#L2, memory/b.md#L7-L8 -->") == {
        ("memory/a.md", 2),
        ("memory/b.md", 7),
        ("memory/b.md", 8),
    }
    assert cited_lines("- no provenance here") == set()
    assert cited_lines("<!-- src: MEMORY.md, not-a-line -->") == set()


def test_a_promoted_entry_and_its_source_are_returned_once(vault_dir: Path) -> None:
    (vault_dir / "memory" / "2026-11-20.md").write_text(LOG, encoding="utf-8")
    (vault_dir / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    with Vault(vault_dir) as vault:
        vault.index()
        hits = vault.search("What dog did Ines adopt?", limit=10, fresh=False)
    spans = [(h.path, h.start_line, h.end_line) for h in hits]
    greyhound = [s for s, h in zip(spans, hits, strict=True) if "greyhound" in h.text]
    assert len(greyhound) == 1, spans  # the entry or its log line, not both
    # other lines of the same log are still returned
    assert any(h.path == "memory/2026-11-20.md" and "tiles" in h.text for h in hits)


def test_an_entry_citing_lines_not_returned_is_kept(vault_dir: Path) -> None:
    (vault_dir / "memory" / "2026-11-20.md").write_text(LOG, encoding="utf-8")
    (vault_dir / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    with Vault(vault_dir) as vault:
        vault.index()
        hits = vault.search("Who builds boats?", limit=10, fresh=False)
    assert any(h.path == "MEMORY.md" and "boats" in h.text for h in hits)
