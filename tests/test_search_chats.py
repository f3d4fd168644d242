"""Real chats in search (issue 20), end to end with the real bundled model: a photo shown on a
line of its own is found with the turn that shows it."""

from __future__ import annotations

from pathlib import Path

from vault_memory import Vault

from .test_search_subjects import configure

CHAT = """\
# 2023-05-08

## 13:56 — session 1

- **Caroline**: Hey Mel! How have you been?
- **Melanie**: Busy with the kids, but I finished something last week!
- (photo: a painting of a sunset over a lake)
- **Caroline**: Wow, the colours are lovely. I went to a support group yesterday.
- **Melanie**: How was it?
- **Caroline**: Really moving, people shared their stories about painting as therapy.
"""


def chat_vault(vault_dir: Path, text: str = CHAT) -> Vault:
    (vault_dir / "memory" / "2023-05-08.md").write_text(text, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.index()
    return vault


def test_a_photo_caption_is_found_with_the_turn_that_shows_it(vault_dir: Path) -> None:
    vault = configure(chat_vault(vault_dir), coalesce_depth=0)  # no spans merged at query time
    hit = vault.search("Did Melanie paint a sunset?", limit=3, fresh=False)[0]
    assert "finished something" in hit.text and "sunset over a lake" in hit.text
    assert hit.scores["subject"] == 1.5  # the photo is Melanie's: her line, her subject
