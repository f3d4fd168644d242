"""The stages of a search (search/stages.py), each on plain data: a unit table built from a few
rows, numpy arrays, settings. No index, no model: the searcher's own tests run them together."""

from __future__ import annotations

import dataclasses
import datetime as dt
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from vault_memory.index import BM25_B, BM25_K1, terms_of
from vault_memory.search.ranking import RankSettings
from vault_memory.search.stages import (
    Evidence,
    Factors,
    Fusion,
    Subjects,
    Words,
    admissible,
    assemble,
    competing_rows,
    exact_shares,
    fusion,
    guard_rows,
    has_evidence,
    keyword_signal,
    let_in_told,
    narrowed,
    no_subjects,
    pool,
    subject_turns,
    subjects,
    weigh,
    with_aliases,
)
from vault_memory.search.table import UnitTable

DIMS = 4


def table_of(
    texts: list[str], sections: list[int] | None = None, dates: list[str | None] | None = None
) -> UnitTable:
    """A unit table of one line a text, in one file; `sections`: each row's heading number,
    `dates`: each row's date."""
    sections = sections or [0] * len(texts)
    dates = dates or [None] * len(texts)
    rows = [
        (
            uid,
            1,
            f"# S{sections[uid - 1]}",
            dates[uid - 1],
            1.0,
            None,
            1,
            " ".join(terms_of(text)),
            text,
        )
        for uid, text in enumerate(texts, start=1)
    ]
    return UnitTable.build(rows, DIMS, (3,))


def words(query: str, aliases: dict[str, list[str]] | None = None, **kw: Any) -> Words:
    terms = with_aliases(terms_of(query, query=True), aliases or {})
    return Words(terms, aliases or {}, kw.get("partners", {}), kw.get("variants", {}))


def test_narrowed_and_the_days_text_names_let_in() -> None:
    by_date = np.array([True, False, False, True])
    told = np.array([True, True, False, False])
    assert narrowed(None, by_date) is by_date
    assert narrowed(by_date, np.array([True, True, True, False])).tolist() == [
        True,
        False,
        False,
        False,
    ]
    allowed, let_in = let_in_told(by_date.copy(), told.copy())
    assert allowed.tolist() == [True, True, False, True]
    assert let_in is not None and let_in.tolist() == [False, True, False, False]  # only new ones
    assert let_in_told(by_date, None) == (by_date, None)


def test_aliases_follow_their_word_once() -> None:
    assert with_aliases(["jo", "trip", "jo"], {"jo": ["joanna", "jo"]}) == ["jo", "joanna", "trip"]


def test_keyword_signal_is_the_tables_bm25_with_variants_at_their_share() -> None:
    table = table_of(
        ["the ledger conflict", "ledger retry", "coffee break", "the ledgr again", "ledger"]
    )
    s = RankSettings()
    plain = keyword_signal(table, words("ledger"), None, None, s)
    rows, scores = table.text.bm25(table.vocab["ledger"], BM25_K1, BM25_B)
    expected = np.zeros(5)
    expected[rows] = scores
    assert np.allclose(plain.scores, expected) and plain.has_term.tolist() == [1, 1, 0, 0, 1]
    assert plain.idf["ledger"] == table.text.idf(table.vocab["ledger"])
    slip = words("ledger", variants={"ledger": [("ledgr", 0.5, "spelling")]})
    found = keyword_signal(table, slip, None, None, s)
    assert found.scores[3] > 0 and found.otherwise["spelling"].tolist() == [0, 0, 0, 1, 0]
    # a rarer spelling weighs what the word does: its share scaled by the idf ratio
    share = 0.5 * min(1.0, plain.idf["ledger"] / table.text.idf(table.vocab["ledgr"]))
    assert found.matched["ledger"][3] == pytest.approx(share)
    assert not found.otherwise["form"].any()


def test_keyword_signal_keeps_the_filters_rows_and_the_best_candidates() -> None:
    table = table_of(["ledger ledger ledger", "ledger", "ledger and more words here", "tea"])
    allowed = np.array([False, True, True, True])
    kept = keyword_signal(table, words("ledger"), None, allowed, RankSettings())
    assert kept.scores[0] == 0 and kept.has_term.tolist() == [False, True, True, False]
    best = keyword_signal(table, words("ledger"), None, None, RankSettings(candidates=1))
    assert np.flatnonzero(best.scores).tolist() == [0]  # the best match only
    assert best.has_term.sum() == 3  # ...of the rows holding the word
    assert best.matched["ledger"].tolist() == [1.0, 0.0, 0.0, 0.0]


def test_subjects_are_the_rows_a_query_word_or_its_alias_labels() -> None:
    table = table_of(
        [
            "- **Caroline**: I went to the support group.",
            "- **Melanie**: I painted a lake.",
            "- **Mel**: and the sunrise too.",
            "the support group met",
        ]
    )
    found = subjects(table, words("what did Caroline do?"), None)
    assert found.rows.tolist() == [True, False, False, False]
    assert found.labels == {"carolin"} and not found.by_alias.any()
    nick = subjects(table, words("what did Mel paint?", {"mel": ["melani"]}), None)
    assert nick.rows.tolist() == [False, True, True, False]  # the alias's label and its own
    assert nick.by_alias.tolist() == [False, True, False, False]
    assert nick.labels == {"mel", "melani"}
    assert no_subjects(2).labels == set() and not no_subjects(2).rows.any()


def test_evidence_is_a_vector_a_keyword_match_an_exact_token_or_a_named_note() -> None:
    table = table_of(["ledger", "tea"])
    none = keyword_signal(table, words("coffee"), None, None, RankSettings())
    some = keyword_signal(table, words("ledger"), None, None, RankSettings())
    assert not has_evidence(none, None, [], None)
    assert not has_evidence(none, None, [], np.zeros(2, dtype=bool))
    assert has_evidence(some, None, [], None)
    assert has_evidence(none, np.zeros(2), [], None)
    assert has_evidence(none, None, ["ERR_1"], None)
    assert has_evidence(none, None, [], np.array([False, True]))
    assert has_evidence(None, None, [], None)  # a listing: nothing to rank by, all to list


def test_fusion_of_a_listing_and_of_keywords_alone() -> None:
    table = table_of(["ledger conflict", "ledger", "tea", "coffee"], sections=[0, 0, 1, 1])
    s = RankSettings()
    listing = fusion(table, None, None, None, s, listing=True)
    assert listing.fused.tolist() == [1.0] * 4 and not listing.context.any()
    assert listing.relevance.tolist() == [1.0] * 4
    keyword = keyword_signal(table, words("ledger conflict"), None, None, s)
    fused = fusion(table, keyword, None, None, s, listing=False)
    assert fused.components["keyword"].max() == 1.0 and not fused.components["vector"].any()
    assert fused.context[:2].min() > 0 and not fused.context[2:].any()  # the ledger section's
    assert np.array_equal(fused.relevance, fused.fused + fused.context)


def test_weighing_by_subject_question_short_turn_and_recency() -> None:
    table = table_of(["- **Ann**: what about the ledger?", "- **Ann**: lol", "the ledger is done"])
    s = RankSettings()
    today = dt.date(2026, 11, 22)
    relevance = np.array([1.0, 1.0, 1.0])
    one_word = np.array([False, True, False])
    got = weigh(
        table, relevance, np.array([True, True, False]), one_word, None, "ledger", today, s, False
    )
    assert got.subject.tolist() == [1 + s.subject_boost] * 2 + [1.0]
    assert got.question.tolist() == [1 - s.question_penalty, 1.0, 1.0]
    assert np.asarray(got.short).tolist() == [1.0, 1 - s.short_penalty, 1.0]
    assert got.when == 1.0 and got.date == 1.0  # neither asks when nor names a day
    assert np.allclose(got.relevance, relevance * got.subject * got.question * got.short)
    assert np.allclose(got.score, got.relevance * got.recency * table.salience)
    held = weigh(
        table,
        relevance,
        np.zeros(3, bool),
        one_word,
        np.array([0, 1, 0], bool),
        "x",
        today,
        s,
        False,
    )
    assert np.asarray(held.short).tolist() == [1.0, 1.0, 1.0]  # a query word: no penalty
    plain = weigh(table, relevance, np.zeros(3, bool), None, None, "x", today, s, False)
    assert plain.short == 1.0


def test_weighing_lifts_lines_that_tell_when_and_lines_of_the_day_asked_about() -> None:
    table = table_of(
        ["we finished the ledger yesterday", "the ledger is done", "lunch"],
        dates=["2026-11-20", "2026-11-18", "2026-11-20"],
    )
    s = RankSettings()
    today, ones = dt.date(2026, 11, 22), np.ones(3)
    when = weigh(
        table, ones, np.zeros(3, bool), None, None, "when was the ledger done?", today, s, False
    )
    assert np.asarray(when.when).tolist() == [1 + s.when_boost, 1.0, 1.0]
    day = weigh(
        table,
        ones,
        np.zeros(3, bool),
        None,
        None,
        "what did we do on 18 November 2026?",
        today,
        s,
        False,
    )
    assert np.asarray(day.date).tolist() == [1.0, 1 + s.date_boost, 1.0]
    listed = weigh(
        table, ones, np.zeros(3, bool), None, None, "when on 18 November 2026?", today, s, True
    )
    assert listed.when == 1.0 and listed.date == 1.0  # a listing ranks nothing


def test_the_exact_tokens_rows_and_shares() -> None:
    table = table_of(["ERR_LEDGER_409 again", "err_ledger_409x in a longer id", "tea"])
    terms, holders = guard_rows(table, ["ERR_LEDGER_409"], None, None)
    assert terms == terms_of("ERR_LEDGER_409", query=True) and holders.tolist() == [0]
    _, kept = guard_rows(table, ["ERR_LEDGER_409"], None, np.array([False, True, True]))
    assert kept.tolist() == []
    held = {
        1: SimpleNamespace(text="err_ledger_409 again"),  # folded: the token as given
        2: SimpleNamespace(text="ERR_LEDGER_4091 is another id"),
    }
    assert exact_shares(table, held, ["ERR_LEDGER_409"]).tolist() == [1.0, 0.0, 0.0]
    both = exact_shares(table, held, ["ERR_LEDGER_409", "again"])
    assert both.tolist() == [1.0, 0.0, 0.0]
    half = exact_shares(table, held, ["ERR_LEDGER_409", "tea"])
    assert half.tolist() == [0.5, 0.0, 0.0]
    matched = {"tea": np.array([0.0, 0.0, 1.0]), "err": np.array([1.0, 1.0, 0.0])}
    assert competing_rows(matched, ["err"], 3).tolist() == [False, False, True]
    assert competing_rows({}, [], 3).tolist() == [False] * 3


def test_admissible_scores() -> None:
    score = np.array([3.0, 2.0, 1.0, 0.5])
    relevance = np.array([1.0, 0.0, 1.0, 0.0])
    allowed = np.array([True, True, False, True])
    got = admissible(score, allowed, relevance, None, False, np.arange(4))
    assert got.tolist() == [3.0, 2.0, -np.inf, 0.5]
    only_words = admissible(score, None, relevance, None, True, np.arange(4))
    assert only_words.tolist() == [3.0, -np.inf, 1.0, -np.inf]
    named = np.array([False, False, False, True])
    lifted = admissible(score, None, relevance, named, True, np.array([1, 1, 1, 2]))
    assert lifted[3] > lifted[0] and lifted[1] == -np.inf  # a named note's row comes first


def test_pool_holds_three_rows_a_hit_and_no_excluded_row() -> None:
    score = np.arange(100, dtype=float)
    assert pool(score, 1) == list(range(99, 69, -1))  # at least 30
    assert len(pool(score, 20)) == 60
    score[98] = -np.inf
    assert 98 not in pool(score, 1) and pool(score, 1)[:2] == [99, 97]


def test_two_named_people_take_turns() -> None:
    table = table_of(
        [
            "- **Caroline**: one",
            "- **Caroline**: two",
            "- **Caroline**: three",
            "- **Melanie**: four",
        ]
    )
    query = "What do Caroline and Melanie both like?"
    found = words(query)
    labels = subjects(table, found, None).labels
    turned, raised = subject_turns([0, 1, 2, 3], table, query, found, labels, None)
    assert turned == [0, 3, 1, 2] and raised == {3}
    alone = words("what does Caroline like?")
    same, none = subject_turns([0, 1, 2, 3], table, "what does Caroline like?", alone, labels, None)
    assert same == [0, 1, 2, 3] and none == set()


def unit(uid: int, path: str, line: int, text: str) -> SimpleNamespace:
    return SimpleNamespace(
        id=uid,
        path=path,
        start_line=line,
        end_line=line,
        heading="H",
        text=text,
        date=None,
        kind="daily",
    )


def evidence_for(table: UnitTable, score: list[float], **kw: Any) -> Evidence:
    n = len(table.ids)
    zeros = np.zeros(n)
    fields: dict[str, Any] = {
        "score": np.array(score),
        "fusion": Fusion(zeros, {"keyword": zeros, "vector": zeros}, zeros, zeros.astype(bool)),
        "factors": Factors(zeros + 1, zeros + 1, 1.0, 1.0, 1.0, 1.0, zeros + 1, zeros, zeros),
        "exact": zeros,
        "subjects": Subjects(zeros.astype(bool), zeros.astype(bool), set()),
        "told": None,
        "raised": set(),
        "keyword": None,
        "vector": None,
        "named": None,
        "listing": True,  # every hit "worded": no weak flag to judge here
        "weak_cosine": 0.3,
    }
    return Evidence(**(fields | kw))


def test_assembly_merges_contiguous_lines_once_and_skips_rewritten_units() -> None:
    table = table_of(["a", "b", "c", "d", "e"])
    rows = {
        1: unit(1, "memory/x.md", 3, "- alpha"),
        2: unit(2, "memory/x.md", 4, "- beta"),
        3: unit(3, "memory/x.md", 6, "- gamma"),  # a gap: not merged
        4: unit(4, "notes/copy.md", 1, "- alpha\n- beta"),  # the same lines copied
    }
    ev = evidence_for(table, [1.0, 2.0, 3.0, 0.5, 0.1])
    hits = assemble([[0, 1, 2], [3], [4]], rows, set(), table, ev, None, 10)
    # the span's best row (gamma) stands alone: the gap before it breaks contiguity
    assert [(h.path, h.start_line, h.end_line) for h in hits] == [
        ("memory/x.md", 6, 6),
        ("notes/copy.md", 1, 1),
    ]  # unit 5 was never read back (rewritten meanwhile): skipped
    merged = assemble([[0, 1]], rows, None, table, ev, None, 10)
    assert merged[0].text == "- alpha\n- beta" and merged[0].score == 2.0
    assert assemble([[0, 1], [3]], rows, set(), table, ev, None, 10)[1:] == []  # same text once
    fenced = assemble([[0, 1]], rows, set(), table, ev, np.array([False, True] + [True] * 3), 10)
    assert fenced[0].text == "- beta"  # a unit the filter left out is not bridged
    assert len(assemble([[0], [2], [3]], rows, set(), table, ev, None, 2)) == 2


def test_assembly_returns_a_promoted_entry_or_its_sources_once() -> None:
    table = table_of(["a", "b"])
    rows = {
        1: unit(1, "MEMORY.md", 5, "- Billing runs on PostgreSQL <!-- src: memory/d.md#L4 -->"),
        2: unit(2, "memory/d.md", 4, "- Billing runs on PostgreSQL now"),
    }
    ev = evidence_for(table, [2.0, 1.0])
    hits = assemble([[0], [1]], rows, set(), table, ev, None, 10)
    assert [h.path for h in hits] == ["MEMORY.md"]


def test_a_hits_scores_explain_its_best_row() -> None:
    table = table_of(["ledger", "tea"])
    s = RankSettings()
    keyword = keyword_signal(table, words("ledger"), None, None, s)
    ev = evidence_for(
        table,
        [2.0, 1.0],
        keyword=keyword,
        listing=False,
        vector=np.array([0.1, 0.9]),
        told=np.array([True, False]),
        raised={0},
    )
    ev = dataclasses.replace(ev, exact=np.array([1.0, 0.0]))
    rows = {1: unit(1, "memory/d.md", 1, "ledger"), 2: unit(2, "memory/d.md", 9, "tea")}
    first, second = assemble([[0], [1]], rows, {2}, table, ev, None, 10)
    assert first.scores["exact"] == 1.0 and first.scores["told_date"] == 1.0
    assert first.scores["turn"] == 1.0 and first.scores["spelling"] == 0.0
    assert list(first.scores)[:3] == ["keyword", "vector", "context"]
    assert first.flags == [] and second.flags == ["instruction"]  # judged when indexed
    weak = dataclasses.replace(ev, vector=np.array([0.1, 0.2]))
    assert assemble([[1]], rows, set(), table, weak, None, 10)[0].flags == ["weak"]
