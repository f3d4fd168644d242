"""The ranking levers for chats sent as quick messages, as pure functions of plain arrays:
what a long unit pays for its length (`length_factors`) and how far context may lift a unit
that matches little itself (`capped_context`)."""

from __future__ import annotations

import numpy as np

from vault_memory.search.ranking import capped_context, length_factors


def test_a_unit_up_to_the_typical_length_pays_nothing_and_a_longer_one_pays() -> None:
    words = np.array([4, 6, 6, 8, 24, 0])
    factors = length_factors(words, 0.5)
    assert factors[:3].tolist() == [1.0, 1.0, 1.0]  # the median of the units with words is 6
    assert factors[3] == (6 / 8) ** 0.5
    assert factors[4] == 0.5  # four times as long, cost 0.5
    assert factors[5] == 1.0  # a unit of no words (a photo alone) pays nothing


def test_no_cost_leaves_every_unit_as_it_is() -> None:
    assert length_factors(np.array([3, 300]), 0.0).tolist() == [1.0, 1.0]
    assert length_factors(np.array([], dtype=np.int64), 0.5).tolist() == []


def test_context_lifts_a_unit_at_most_cap_times_its_own_score_where_people_send_runs() -> None:
    context = np.array([1.0, 1.0, 1.0, 0.2])
    fused = np.array([0.0, 0.3, 0.3, 0.3])
    chatty = np.array([True, True, False, True])
    capped = capped_context(context, fused, 2.0, chatty)
    # no match of its own: no lift; a small one: at most twice it; whole turns: as before
    assert capped.tolist() == [0.0, 0.6, 1.0, 0.2]
    assert capped_context(context, fused, 0.0, chatty) is context
    assert capped_context(context, fused, 2.0).tolist() == [0.0, 0.6, 0.6, 0.2]
