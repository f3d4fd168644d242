"""Where a chat is sent as quick messages (`UnitTable.by_chattiness`): BM25's length
normalisation `b` 0.75 in such a session (`chatty_b`), 0.5 where whole turns alternate, so a
long message that holds a query word among many says less of it than a short one about it;
and the vector's weight 0.65 there, 0.6 elsewhere (`chatty_vector_weight`). Real SQLite and
Whoosh; keyword-only searches, so the figures are the index's own."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from vault_memory import Vault
from vault_memory.search.ranking import max_norm, minmax_norm
from vault_memory.search.stages import KeywordSignal, fusion

from ..support.vaults import indexed_logs
from .test_search_subjects import configure

CHAT = """\
# 2024-05-02

## 20:15 — session 2

- **Ria**: hiii
- **Sam**: hey
- **Ria**: ok so this weekend was a lot, we drove up to the coast, stopped at my aunt's, \
we went kayaking twice, once at dawn, her kayaking club is tiny and lovely and so cold
- **Ria**: lol
- **Sam**: nice
- **Sam**: kayaking is my thing now
- **Sam**: haha
- **Ria**: wait since when
- **Ria**: tell me everything
"""

TURNS = """\
# 2024-05-03

## 09:00 — session 3

- **Ria**: Morning! Did you sleep well after all that paddling yesterday?
- **Sam**: Like a stone. My arms still ache, but it was worth every stroke.
"""

LONG = 7  # Ria's weekend, kayaking twice among many other things
SHORT = 10  # "kayaking is my thing now" (its filler joined to it)


@pytest.fixture
def chat(vault_dir: Path) -> Vault:
    vault = indexed_logs(vault_dir, {"2024-05-02": CHAT, "2024-05-03": TURNS})
    # each unit alone, by its own keyword score
    return configure(vault, coalesce_depth=0, window_weight=0.0)


def first_hit(vault: Vault, query: str) -> range:
    hit = vault.search(query, limit=1, fresh=False, mode="keyword")[0]
    return range(hit.start_line, hit.end_line + 1)


def test_a_short_message_about_a_word_outranks_a_long_one_that_mentions_it(chat: Vault) -> None:
    """With the normalisation of whole turns (0.5) the long message's two mentions win;
    with a chat's (0.75) the short message about kayaking does."""
    assert first_hit(configure(chat, chatty_b=0.5), "kayaking") == range(LONG, LONG + 1)
    assert SHORT in first_hit(configure(chat, chatty_b=0.75), "kayaking")


def test_only_the_sessions_of_quick_messages_take_the_chats_normalisation(chat: Vault) -> None:
    table = chat.searcher.table(None)
    chatty = table.in_chatty_section()
    b = table.by_chattiness(0.5, 0.75)
    assert chatty.any() and not chatty.all()
    assert set(b[chatty].tolist()) == {0.75} and set(b[~chatty].tolist()) == {0.5}
    assert table.by_chattiness(0.5, 0.5) == 0.5  # one number when every row has the same


def test_the_vector_weighs_more_in_the_sessions_of_quick_messages(chat: Vault) -> None:
    """A quick message's keyword match is thin evidence: its fused score takes 0.65 of its
    cosine and 0.35 of its keyword score; a turn of a session whose turns alternate 0.6 and
    0.4, as before."""
    table = chat.searcher.table(None)
    chatty = table.in_chatty_section()
    n = len(table.ids)
    scores = np.linspace(0.0, 3.0, n)
    cosines = np.linspace(0.5, -0.1, n)
    keyword = KeywordSignal(scores, {}, {}, {}, scores > 0)
    settings = chat.searcher.settings
    fused = fusion(table, keyword, cosines, None, settings, False).fused
    weight = np.where(chatty, 0.65, 0.6)
    expected = (1 - weight) * max_norm(scores) + weight * minmax_norm(cosines)
    assert np.allclose(fused, expected)
    off = dataclasses.replace(settings, chatty_vector_weight=settings.vector_weight)
    plain = fusion(table, keyword, cosines, None, off, False).fused
    assert np.allclose(plain, 0.4 * max_norm(scores) + 0.6 * minmax_norm(cosines))
