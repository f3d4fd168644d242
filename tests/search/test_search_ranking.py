"""The ranking decisions of search.py as pure functions on plain data: normalisation, fusion,
context windows, coalescing, recency, exact tokens, lead-in labels, questions and the
embedded query. No files, no model."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from vault_memory.index import lead_label
from vault_memory.search.ranking import (
    best_rows,
    coalesce,
    contains_token,
    dense_query,
    exact_tokens,
    fuse,
    is_question,
    lift,
    lift_named,
    max_norm,
    minmax_norm,
    rank_scores,
    recency_factor,
    recency_factors,
    running_bm25,
    running_sum,
    window_bm25,
    window_sums,
)

# -- normalisation and fusion -----------------------------------------------------------------
# Scores are per-unit arrays: keyword = raw BM25 (0 = no match), vector = cosine.

KEYWORD = np.array([12.0, 6.0, 0.0, 0.0, 3.0])
VECTOR = np.array([0.1, 0.9, 0.6, 0.3, 0.1])


def test_max_norm_divides_by_the_best_and_keeps_non_matches_at_zero() -> None:
    np.testing.assert_allclose(max_norm(KEYWORD), [1.0, 0.5, 0.0, 0.0, 0.25])


def test_max_norm_of_no_matches_is_all_zero() -> None:
    np.testing.assert_array_equal(max_norm(np.zeros(3)), np.zeros(3))
    assert max_norm(np.zeros(0)).size == 0


def test_minmax_norm_maps_the_range_to_zero_one() -> None:
    np.testing.assert_allclose(minmax_norm(VECTOR), [0.0, 1.0, 0.625, 0.25, 0.0])


def test_minmax_norm_of_equal_scores_is_all_zero() -> None:
    np.testing.assert_array_equal(minmax_norm(np.full(4, 0.4)), np.zeros(4))
    assert minmax_norm(np.zeros(0)).size == 0


def test_rank_scores_are_reciprocal_ranks() -> None:
    np.testing.assert_allclose(
        rank_scores(VECTOR, 60, only_positive=False), [1 / 64, 1 / 61, 1 / 62, 1 / 63, 1 / 65]
    )  # ties: stable order


def test_rank_scores_can_leave_non_matches_at_zero() -> None:
    np.testing.assert_allclose(
        rank_scores(KEYWORD, 60, only_positive=True), [1 / 61, 1 / 62, 0.0, 0.0, 1 / 63]
    )


def test_weighted_fusion_sums_normalised_components() -> None:
    fused = fuse(KEYWORD, VECTOR, method="weighted", vector_weight=0.5)
    np.testing.assert_allclose(fused, 0.5 * max_norm(KEYWORD) + 0.5 * minmax_norm(VECTOR))
    assert int(np.argmax(fused)) == 1  # good on both beats best on one


def test_weighted_fusion_applies_the_vector_weight() -> None:
    fused = fuse(KEYWORD, VECTOR, method="weighted", vector_weight=0.25)
    np.testing.assert_allclose(fused, 0.75 * max_norm(KEYWORD) + 0.25 * minmax_norm(VECTOR))


def test_rrf_fusion_scores_by_rank_not_by_raw_score() -> None:
    fused = fuse(KEYWORD, VECTOR, method="rrf", vector_weight=0.5, rrf_k=60)
    assert fused[1] == pytest.approx(0.5 / 62 + 0.5 / 61)
    assert fused[2] == pytest.approx(0.5 / 62)  # no keyword match: only its vector rank
    scaled = fuse(KEYWORD * 1000, VECTOR * 0.01, method="rrf", vector_weight=0.5, rrf_k=60)
    np.testing.assert_allclose(scaled, fused)


def test_rrf_k_flattens_the_rank_curve() -> None:
    sharp = fuse(KEYWORD, None, method="rrf", rrf_k=1)
    flat = fuse(KEYWORD, None, method="rrf", rrf_k=1000)
    assert sharp[0] / sharp[4] > flat[0] / flat[4]


@pytest.mark.parametrize("method", ["weighted", "rrf"])
def test_a_unit_found_by_one_side_only_scores_from_that_side(method: str) -> None:
    keyword = np.array([5.0, 0.0, 0.0])
    vector = np.array([0.2, 0.9, 0.2])
    fused = fuse(keyword, vector, method=method, vector_weight=0.5)
    only_vector = fuse(None, vector, method=method)
    assert fused[1] == pytest.approx(0.5 * only_vector[1])  # no keyword part
    assert fused[0] > fused[2]  # same cosine, the keyword match wins


@pytest.mark.parametrize("method", ["weighted", "rrf"])
def test_one_side_missing_is_that_side_alone(method: str) -> None:
    only_keyword = fuse(KEYWORD, None, method=method, vector_weight=0.5)
    only_vector = fuse(None, VECTOR, method=method, vector_weight=0.5)
    assert only_keyword[2] == only_keyword[3] == 0.0
    assert int(np.argmax(only_keyword)) == 0
    assert int(np.argmax(only_vector)) == 1


@pytest.mark.parametrize("method", ["weighted", "rrf"])
def test_fusing_empty_arrays(method: str) -> None:
    empty = np.zeros(0)
    assert fuse(empty, empty, method=method).size == 0
    assert fuse(empty, None, method=method).size == 0


def test_fusing_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="nothing to fuse"):
        fuse(None, None)


@pytest.mark.parametrize("method", ["weighted", "rrf"])
def test_vector_weight_zero_is_keyword_only_and_one_is_vector_only(method: str) -> None:
    keyword_only = fuse(KEYWORD, VECTOR, method=method, vector_weight=0.0)
    vector_only = fuse(KEYWORD, VECTOR, method=method, vector_weight=1.0)
    np.testing.assert_allclose(keyword_only, fuse(KEYWORD, None, method=method))
    np.testing.assert_allclose(vector_only, fuse(None, VECTOR, method=method))


def test_unknown_fusion_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fusion method 'sum'"):
        fuse(KEYWORD, VECTOR, method="sum")


# -- context windows --------------------------------------------------------------------------
# Units 0-3 of one section, windows of 2 units: (0,1), (1,2), (2,3). Membership pairs are
# (unit rows, window rows) for the first and the second unit of every window.

WINDOW_MEMBERSHIP = [
    (np.array([0, 1, 2]), np.array([0, 1, 2])),
    (np.array([1, 2, 3]), np.array([0, 1, 2])),
]
WINDOW_STARTS, WINDOW_LENGTHS = np.array([0, 1, 2]), np.array([2, 2, 2])


def test_window_sums_add_up_the_units_of_each_window() -> None:
    scores = np.array([1.0, 0.0, 2.0, 4.0])
    np.testing.assert_allclose(window_sums(scores, WINDOW_STARTS, WINDOW_LENGTHS), [1.0, 2.0, 6.0])


def test_window_sums_of_uneven_windows() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    starts, lengths = np.array([0, 1, 3, 4]), np.array([3, 3, 1, 1])
    np.testing.assert_allclose(window_sums(x, starts, lengths), [6.0, 9.0, 4.0, 5.0])
    assert len(window_sums(x, starts[:0], lengths[:0])) == 0


def test_window_bm25_saturates_a_repeated_term() -> None:
    matched = {"ledger": np.array([1.0, 1.0, 1.0, 0.0]), "idempot": np.array([0, 0, 0, 1.0])}
    idf = {"ledger": 1.0, "idempot": 2.0}
    starts, lengths = np.array([0, 1]), np.array([3, 3])
    got = window_bm25(matched, idf, starts, lengths)
    # window 0: "ledger" three times; window 1: "ledger" twice + "idempot" once
    three = 3 * 2.2 / (3 + 1.2)
    two_and_one = 2 * 2.2 / (2 + 1.2) + 2.0 * 1 * 2.2 / (1 + 1.2)
    np.testing.assert_allclose(got, [three, two_and_one])
    assert got[1] > got[0]  # different query words beat one word repeated


def test_running_counts_made_once_serve_windows_of_every_size() -> None:
    # A query's running counts are made once and read by the windows of each size: the
    # same scores, to the last bit, as counting each window's units afresh (a variant's
    # match counts a share, so the counts are fractions; halves add up exactly).
    rng = np.random.default_rng(7)
    matched = {
        "ledger": rng.choice([0.0, 0.0, 1.0, 0.5], 50),
        "idempot": rng.choice([0.0, 0.0, 0.0, 1.0], 50),
    }
    idf = {"ledger": 0.7, "idempot": 2.3}
    running = [running_sum(matched[t]) for t in matched]
    weights = [idf[t] for t in matched]
    k1 = 1.2
    for size in (1, 3, 5):
        starts = np.arange(0, 50 - size + 1)
        lengths = np.full(len(starts), size)
        alone = np.zeros(len(starts))  # each window counted by itself, from its own units
        for term, held in matched.items():
            tf = np.array([held[a : a + size].sum() for a in starts])
            alone += idf[term] * tf * (k1 + 1.0) / (tf + k1)
        shared = running_bm25(weights, running, starts, starts + lengths)
        assert alone.tolist() == shared.tolist()
        assert window_bm25(matched, idf, starts, lengths).tolist() == alone.tolist()
        assert alone.max() > 0


def test_lift_adds_the_best_window_holding_each_unit() -> None:
    units = np.array([1.0, 0.0, 2.0, 4.0])
    windows = np.array([1.0, 2.0, 6.0])
    np.testing.assert_allclose(
        lift(units, windows, WINDOW_MEMBERSHIP, weight=0.5),
        [1.0 + 0.5, 0.0 + 1.0, 2.0 + 3.0, 4.0 + 3.0],
    )
    np.testing.assert_allclose(lift(units, windows, WINDOW_MEMBERSHIP, weight=0.0), units)


# -- coalescing ranked units into spans -------------------------------------------------------

SECTIONS = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 2])  # the section of each unit row
ONE_LINE = np.ones(10, dtype=np.int64)  # every unit one line long


def spans(ranked: list[int], lines: np.ndarray = ONE_LINE, depth: int = 10) -> list[list[int]]:
    return coalesce(ranked, SECTIONS, lines, depth=depth, max_units=3, max_lines=5)


def test_spans_stop_at_max_lines() -> None:
    assert spans([5, 6, 7], lines=np.full(10, 2, dtype=np.int64)) == [[5, 6], [7]]


def test_neighbours_of_one_section_merge_into_a_span() -> None:
    assert spans([5, 6, 1, 9, 4]) == [[4, 5, 6], [1], [9]]


def test_a_row_one_away_fills_the_gap() -> None:
    assert spans([5, 7]) == [[5, 6, 7]]


def test_spans_never_cross_sections() -> None:
    assert spans([3, 4]) == [[3], [4]]


def test_spans_stop_at_max_units() -> None:
    assert spans([5, 6, 7, 8]) == [[5, 6, 7], [8]]


def test_only_the_first_depth_rows_merge() -> None:
    assert spans([5, 0, 6], depth=2) == [[5], [0], [6]]


def test_a_row_already_inside_a_span_is_dropped() -> None:
    assert spans([5, 7, 6, 2]) == [[5, 6, 7], [2]]


def test_coalesce_of_nothing() -> None:
    assert spans([]) == []


# -- recency ----------------------------------------------------------------------------------

TODAY = dt.date(2026, 11, 22)


def test_undated_units_never_decay() -> None:
    assert recency_factor(None, TODAY, half_life_days=30, weight=0.2) == 1.0


def test_todays_units_keep_their_score() -> None:
    assert recency_factor(TODAY, TODAY, half_life_days=30, weight=0.2) == 1.0


def test_future_dates_count_as_today() -> None:
    assert recency_factor(TODAY + dt.timedelta(days=5), TODAY, 30, 0.2) == 1.0


@pytest.mark.parametrize("weight", [0.2, 0.5, 1.0])
def test_one_half_life_loses_half_the_weight(weight: float) -> None:
    day = TODAY - dt.timedelta(days=30)
    assert recency_factor(day, TODAY, half_life_days=30, weight=weight) == pytest.approx(
        1 - weight / 2
    )


def test_recency_decays_monotonically_towards_one_minus_weight() -> None:
    factors = [
        recency_factor(TODAY - dt.timedelta(days=d), TODAY, 30, 0.2) for d in range(0, 730, 7)
    ]
    assert all(a > b for a, b in zip(factors, factors[1:], strict=False))
    assert min(factors) > 0.8
    ancient = recency_factor(TODAY - dt.timedelta(days=20_000), TODAY, 30, 0.2)
    assert ancient == pytest.approx(0.8) and ancient >= 0.8


def test_weight_zero_or_no_half_life_turns_recency_off() -> None:
    old = TODAY - dt.timedelta(days=3650)
    assert recency_factor(old, TODAY, half_life_days=30, weight=0.0) == 1.0
    assert recency_factor(old, TODAY, half_life_days=0, weight=0.2) == 1.0


@pytest.mark.parametrize(("half_life", "weight"), [(30, 0.2), (90, 0.5), (0, 0.2), (30, 0.0)])
def test_recency_factors_match_recency_factor_elementwise(half_life: float, weight: float) -> None:
    days = [
        None,
        TODAY,
        TODAY - dt.timedelta(days=1),
        TODAY - dt.timedelta(days=30),
        TODAY - dt.timedelta(days=400),
        TODAY + dt.timedelta(days=3),
    ]
    ordinals = np.array([d.toordinal() if d else 0 for d in days], dtype=np.int64)
    expected = [recency_factor(d, TODAY, half_life, weight) for d in days]
    np.testing.assert_allclose(
        recency_factors(ordinals, TODAY.toordinal(), half_life, weight), expected
    )


# -- exact tokens -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "tokens"),
    [
        ("ERR_LEDGER_409", ["err_ledger_409"]),
        ("why do refunds fail with ERR_LEDGER_409?", ["err_ledger_409"]),
        ("BIL-1423", ["bil-1423"]),
        ("what was the root cause of BIL-1423", ["bil-1423"]),
        ("did we upgrade to v2.3.1 yet", ["v2.3.1"]),
        ("the renderer logged RENDER_E_FONT_MISSING", ["render_e_font_missing"]),
        ('why was "Noto Sans" missing', ["noto sans"]),
        ("what does `make ci-fast` run", ["make ci-fast"]),
        ("when did we last talk to Jonas about the runbook", ["jonas"]),
        ("what did Maya and Priya agree on", ["maya", "priya"]),
        ("which ticket did Tomás escalate", ["tomás"]),
        ("ticket 1048576 was closed", ["1048576"]),  # long numbers are ids
        ("BIL-1423 and bil-1423 again", ["bil-1423"]),  # deduplicated, lower-cased
        ("ERR_LEDGER_409 after BIL-1423", ["err_ledger_409", "bil-1423"]),  # query order
    ],
)
def test_exact_tokens_finds_ids_quotes_and_names(query: str, tokens: list[str]) -> None:
    assert exact_tokens(query) == tokens


@pytest.mark.parametrize(
    "query",
    [
        "what happened in 2023",  # years are not ids
        "three tenants in 12 invoices",  # nor small counts
        "Jonas said what about the cutover",  # the first word of the question
        "We met at noon. Then we left",  # the first word of a later sentence
        "which database did we pick for billing",  # ordinary words
        "how does the refund handler retry",
        "",
    ],
)
def test_exact_tokens_ignores_years_sentence_starts_and_plain_words(query: str) -> None:
    assert exact_tokens(query) == []


def test_exact_tokens_finds_names_ending_in_accented_letters() -> None:
    assert exact_tokens("How does Zoë like product changes explained?") == ["zoë"]


# -- contains_token ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("Filed BIL-1423.", "bil-1423"),
        ("Root cause of BIL-1423 / `ERR_LEDGER_409`: the refund handler", "err_ledger_409"),
        ("(err_ledger_409)", "ERR_LEDGER_409"),
        ("upgraded to v2.3.1 today", "v2.3.1"),
        ("Renderer needs Noto Sans installed", "noto sans"),
        ("BIL-1423", "BIL-1423"),
    ],
)
def test_contains_token_matches_whole_tokens_case_insensitively(text: str, token: str) -> None:
    assert contains_token(text, token)


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("Filed BIL-1423.", "BIL-142"),  # a prefix of a longer id
        ("Filed BIL-1423.", "IL-1423"),  # a suffix
        ("XERR_LEDGER_409", "err_ledger_409"),
        ("ERR_LEDGER_4091", "err_ledger_409"),
        ("Jonasson wrote it", "jonas"),
        ("nothing here", "bil-1423"),
    ],
)
def test_contains_token_rejects_parts_of_longer_tokens(text: str, token: str) -> None:
    assert not contains_token(text, token)


def test_contains_token_does_not_match_a_shorter_version_inside_a_longer_one() -> None:
    assert not contains_token("upgraded to v2.3.1 today", "v2.3")


# -- subjects, questions and the embedded query -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("- **Caroline**: I went to a support group yesterday.", "Caroline"),
        ("- **Decision:** move billing to Postgres", "Decision"),
        ("* **Open question** : who owns the runners?", "Open question"),
        ("1. **Alice**: ships the fix", "Alice"),
        ("- [x] **Release**: cut 2.4 on Friday", "Release"),
        ("- Jonas Berg: Head of Engineering and Maya's manager.", "Jonas Berg"),
        ("- Jürgen's birthday: 3 December.", "Jürgen's birthday"),
        ("- Billing cutover window: Friday 13 Nov, 22:00–02:00 CET.", "Billing cutover window"),
        ("Bob: are we still on for Thursday?", "Bob"),
        ("- **Zoë**: plain language, please\n  and a second line: ignored", "Zoë"),
    ],
)
def test_lead_label_is_the_subject_before_the_colon(text: str, label: str) -> None:
    assert lead_label(text) == label


@pytest.mark.parametrize(
    "text",
    [
        "- Maya uses Neovim and wants config snippets in Lua, not Vimscript.",
        "- We met at 10:30 to plan the cutover.",  # a time is no label
        "- See https://example.com/docs for the API.",  # nor a URL scheme
        "- The plan is simple, really, and everyone agreed on it: dual writes.",  # a sentence
        "- Done. Next: the backfill",  # sentence punctuation before the colon
        "- **bold words** in a sentence, then a colon: here",
        "- 2024: a year",  # no letter
        "",
    ],
)
def test_lines_without_a_lead_in_label(text: str) -> None:
    assert lead_label(text) is None


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("- **Melanie**: What kind of art do you make?", True),
        ("- Should we move to Postgres? #decision", True),
        ("- Is the cutover still on? (asked in #billing) <!-- src: memory/x.md#L4 -->", True),
        ("- **Melanie**: Wow! What did you paint?\n  (shared a photo: a lake)", True),
        ("- Any news from Jürgen? #followup #billing", True),
        ("?", True),
        ("- **Caroline**: I paint abstract art.", False),
        ("- We still use C#", False),
        ("- A stray bracket )", False),
        ("(only a remark)", False),
        ("- Why we chose Postgres? Because of JSONB. It fits.", False),  # ends by telling
        ('- The question "who owns CI?" is settled: Jürgen.', False),
        ("", False),
    ],
)
def test_is_question_looks_at_how_a_unit_ends(text: str, asks: bool) -> None:
    assert is_question(text) is asks


LABELS = {"carolin", "melani", "jona"}


@pytest.mark.parametrize(
    ("query", "embedded"),
    [
        ("What kind of art does Caroline make?", "What kind of art does make?"),
        ("Caroline's favourite books?", "favourite books?"),
        ("What do Caroline and Melanie both like?", "What do and both like?"),
        ("What did Jonas say about the Berlin hosts?", "What did say about the Berlin hosts?"),
        ("caroline art", "caroline art"),  # lower case: a word, not a name
        ("Caroline", "Caroline"),  # nothing would be left
        ("Caroline and Melanie?", "Caroline and Melanie?"),
        ("What does the user prefer?", "What does the user prefer?"),  # no label named
    ],
)
def test_dense_query_leaves_out_names_that_are_labels(query: str, embedded: str) -> None:
    assert dense_query(query, LABELS.__contains__) == embedded


# -- a note the query names --------------------------------------------------------------------


def test_lift_named_puts_the_best_units_of_a_named_note_first() -> None:
    score = np.array([0.9, 0.2, 0.1, 0.3, 0.05, 0.8, -np.inf])
    files = np.array([1, 2, 2, 2, 2, 3, 2])
    named = files == 2
    lifted = lift_named(score, named, files, per_note=2)
    order = [int(i) for i in np.argsort(-lifted, kind="stable")]
    assert order[:2] == [3, 1]  # the note's two best units, in their own order
    assert order[2:4] == [0, 5]  # then the rest as they were
    assert lifted[2] == score[2] and lifted[4] == score[4]  # the note's others compete as usual
    assert lifted[6] == -np.inf  # what a filter left out stays out
    assert (lift_named(score, np.zeros(7, dtype=bool), files) == score).all()


def test_best_rows_ranks_ties_in_row_order_and_keeps_the_first_tied_rows_at_the_cut() -> None:
    score = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0, -np.inf, 2.0])
    assert best_rows(score, 8).tolist() == [1, 3, 2, 4, 5, 7, 0, 6]
    assert best_rows(score, 4).tolist() == [1, 3, 2, 4]  # of the four tied 2.0s, the first two
    assert best_rows(score, 1).tolist() == [1]
    assert best_rows(score, 0).tolist() == [] and best_rows(score, 20).tolist()[:2] == [1, 3]


def test_best_rows_is_the_same_whatever_order_the_partition_leaves() -> None:
    """The rows a stable sort of the whole array gives, on scores with many ties (a
    keyword-only search): nothing is left to the CPU's partition kernel."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        score = rng.integers(0, 4, size=int(rng.integers(1, 400))).astype(np.float64)
        k = int(rng.integers(1, len(score) + 1))
        expected = np.argsort(-score, kind="stable")[:k]
        assert best_rows(score, k).tolist() == expected.tolist()
