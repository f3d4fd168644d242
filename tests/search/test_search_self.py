"""Where a chat is sent as quick messages, a message loses a share
(`chatty_no_self_penalty`) when neither it nor a message before it in its run speaks of its
sender (no "I", "my", "we": `speaks_of_self`, `UnitTable.in_own_account`): there a line that
tells of one's own life says so in the first person, and a reaction to the other shares the
topic's words without telling anything. Where whole turns alternate nothing changes. Real
SQLite and Whoosh; keyword-only searches, so the figures are the index's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.search.ranking import speaks_of_self

from ..support.vaults import indexed_logs
from .test_search_subjects import configure

CHAT = """\
# 2024-06-10

## 21:00 — session 4

- **Ria**: back!!
- **Ria**: we spent the week at a cabin up by the lake, my sister came for two days and \
we swam every single morning before breakfast
- **Ria**: the lake water was freezing though
- **Ria**: so good
- **Sam**: omg a lake cabin
- **Sam**: jealous
- **Sam**: so pretty
"""

TURNS = """\
# 2024-06-11

## 09:00 — session 5

- **Ria**: Morning! That lake cabin of yours looks wonderful in the photos.
- **Sam**: Thanks, it was a quiet week away from everything, just reading and swimming.
"""

TOLD = 6  # Ria's week at the lake cabin ("back!!" joined to it)
GOES_ON = 7  # Ria's account going on without a word of herself
REACTION = 9  # Sam's "omg a lake cabin" (with the fragments after it)


@pytest.fixture
def chat(vault_dir: Path) -> Vault:
    vault = indexed_logs(vault_dir, {"2024-06-10": CHAT, "2024-06-11": TURNS})
    return configure(vault, coalesce_depth=0, window_weight=0.0)  # each unit alone


def first_message(vault: Vault, query: str) -> range:
    """The lines of the chat's first hit (the turns of the next day aside)."""
    hits = vault.search(query, limit=5, fresh=False, mode="keyword")
    hit = next(h for h in hits if h.path.endswith("06-10.md"))
    return range(hit.start_line, hit.end_line + 1)


def test_the_message_that_tells_outranks_the_reaction_that_echoes_it(chat: Vault) -> None:
    """Without the rule the short reaction, all query words and little else, ranks first;
    with it the message telling of the week does."""
    assert REACTION in first_message(configure(chat, chatty_no_self_penalty=0.0), "lake cabin")
    assert TOLD in first_message(configure(chat, chatty_no_self_penalty=0.3), "lake cabin")


def test_the_factor_shows_in_the_scores_and_spares_turns_that_alternate(chat: Vault) -> None:
    hits = configure(chat, chatty_no_self_penalty=0.3).search(
        "lake cabin", limit=10, fresh=False, mode="keyword"
    )
    by_line = {
        (h.path[-8:], line): h.scores["no_self"]
        for h in hits
        for line in range(h.start_line, h.end_line + 1)
    }
    assert by_line[("06-10.md", REACTION)] == pytest.approx(0.7)
    assert by_line[("06-10.md", TOLD)] == 1.0
    assert by_line[("06-10.md", GOES_ON)] == 1.0  # her run has spoken of her already
    assert by_line[("06-11.md", 5)] == 1.0  # "That lake cabin of yours": a turn, not a message


@pytest.mark.parametrize(
    ("text", "of_self"),
    [
        ("- **Sam**: omg a lake cabin", False),
        ("- **Sam**: im so jealous", True),
        ("- **Sam**: I’ll come next time", True),
        ("- **Sam**: we should go", True),
        ("- **Me**: sounds great", False),  # a label is no word of the message
        ("- **Sam**: how was it?\n- **Sam**: my turn next", True),
    ],
)
def test_speaks_of_self(text: str, of_self: bool) -> None:
    assert speaks_of_self(text) is of_self


GERMAN = """\
# 2024-06-12

## 20:00 — session 6

- **Ria**: wieder da!!
- **Ria**: wir waren die ganze Woche in einer Hütte am See, meine Schwester kam für zwei Tage \
und wir sind jeden Morgen vor dem Frühstück geschwommen
- **Ria**: das Wasser war eiskalt
- **Sam**: omg eine Hütte am See
- **Sam**: neidisch
- **Sam**: so schön
"""


def test_a_chat_whose_language_the_rule_cannot_read_is_not_marked_down(vault_dir: Path) -> None:
    """The first-person words are English: in a chat in German no message says one, and
    marking them all down would only sink that chat below the rest of the vault."""
    vault = indexed_logs(vault_dir, {"2024-06-12": GERMAN, "2024-06-10": CHAT})
    vault = configure(vault, coalesce_depth=0, window_weight=0.0, chatty_no_self_penalty=0.3)
    hits = vault.search("Hütte See", limit=10, fresh=False, mode="keyword")
    german = [h.scores["no_self"] for h in hits if h.path.endswith("06-12.md")]
    assert german and all(factor == 1.0 for factor in german)
    english = vault.search("lake cabin", limit=10, fresh=False, mode="keyword")
    assert any(h.scores["no_self"] == pytest.approx(0.7) for h in english)  # English still read
