"""The unit table a query is scored on: its window layout, its file cache in `.vault/`."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from vault_memory import Vault
from vault_memory.index.arrays import MAGIC, read_arrays, write_arrays
from vault_memory.search.ranking import best_window
from vault_memory.search.table import (
    TURN_UNITS_MOST,
    UnitTable,
    _turn_windows,
    _turns_on,
    _windows,
)


def naive_windows(section: list[int], size: int) -> tuple[list[int], list[list[int]]]:
    """Windows of `size` consecutive units inside each section, as lists of unit rows."""
    windows: list[list[int]] = []
    begin = 0
    for i in range(1, len(section) + 1):
        if i == len(section) or section[i] != section[begin]:
            rows = list(range(begin, i))
            if len(rows) <= size:
                windows.append(rows)
            else:
                windows += [rows[k : k + size] for k in range(len(rows) - size + 1)]
            begin = i
    return [len(w) for w in windows], windows


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_windows_match_a_naive_layout(size: int) -> None:
    rng = random.Random(size)
    for _ in range(50):
        lengths = [rng.randint(1, 9) for _ in range(rng.randint(1, 12))]
        section = [s for s, n in enumerate(lengths) for _ in range(n)]
        got_lengths, membership = _windows(np.array(section), size)
        want_lengths, want = naive_windows(section, size)
        assert got_lengths.tolist() == want_lengths
        got: list[list[int]] = [[] for _ in want]
        for unit_rows, window_rows in membership:
            for unit, window in zip(unit_rows.tolist(), window_rows.tolist(), strict=True):
                got[window].append(unit)
        assert [sorted(w) for w in got] == want


def test_windows_of_an_empty_table() -> None:
    lengths, membership = _windows(np.zeros(0, dtype=np.int64), 3)
    assert len(lengths) == 0 and len(membership) == 3


def naive_turn_windows(section: list[int], speaker: list[int], size: int) -> list[list[int]]:
    """Windows of `size` turns (a speaker's units in a row; 0: no label, a turn of its own)
    inside each section, at most TURN_UNITS_MOST units a turn, that hold more than `size`
    units, as lists of unit rows."""
    turns: list[list[int]] = []
    for row in range(len(section)):
        if (
            turns
            and section[row] == section[turns[-1][0]]
            and speaker[row]
            and speaker[row] == speaker[turns[-1][-1]]
        ):
            turns[-1].append(row)
        else:
            turns.append([row])
    windows = []
    begin = 0
    for i in range(1, len(turns) + 1):
        if i == len(turns) or section[turns[i][0]] != section[turns[begin][0]]:
            held = turns[begin:i]
            spans = (
                [held]
                if len(held) <= size
                else [held[k : k + size] for k in range(len(held) - size + 1)]
            )
            for span in spans:
                rows = [r for turn in span for r in turn][: TURN_UNITS_MOST * size]
                if len(rows) > size:
                    windows.append(rows)
            begin = i
    return windows


@pytest.mark.parametrize("size", [1, 3, 5])
def test_windows_of_turns_match_a_naive_layout(size: int) -> None:
    """In a section where two speakers or more talk, the units of one speaker in a row are a
    turn; a window of `size` turns is kept where it is no window of `size` units."""
    rng = random.Random(size)
    for _ in range(80):
        lengths = [rng.randint(1, 14) for _ in range(rng.randint(1, 8))]
        section = [s for s, n in enumerate(lengths) for _ in range(n)]
        speaker = [rng.choice([0, 1, 1, 2, 2, 3]) for _ in section]
        for row in range(1, len(section)):  # people send several messages in a row
            if rng.random() < 0.5:
                speaker[row] = speaker[row - 1]
        labels = [["ria"], ["sam"], ["jo", "mart"]]
        flat = [t for who in speaker if who for t in labels[who - 1]]
        sizes = [len(labels[who - 1]) if who else 0 for who in speaker]
        turn_on = _turns_on((flat, sizes), np.array(section))
        talking = {
            s
            for s in set(section)
            if len({w for w, x in zip(speaker, section, strict=True) if x == s and w}) > 1
        }
        # one speaker's log (and unlabelled prose) is no conversation: each unit its own turn
        heard = [w if x in talking else 0 for w, x in zip(speaker, section, strict=True)]
        lengths_got, membership = _turn_windows(np.array(section), turn_on, size)
        assert len(membership) == TURN_UNITS_MOST * size
        got: list[list[int]] = [[] for _ in lengths_got]
        for unit_rows, window_rows in membership:
            for unit, window in zip(unit_rows.tolist(), window_rows.tolist(), strict=True):
                got[window].append(unit)
        assert [sorted(w) for w in got] == naive_turn_windows(section, heard, size)
        assert [len(w) for w in got] == lengths_got.tolist()


def test_a_log_of_one_speaker_holds_no_turns() -> None:
    """A flushed session's `User: …` entries, a run of one label, and unlabelled lines: each
    unit is a turn of its own, so no window of turns is made."""
    user = (["user"] * 6, [1] * 6)
    assert not _turns_on(user, np.zeros(6, dtype=np.int32)).any()
    prose = ([], [0] * 4)
    assert not _turns_on(prose, np.zeros(4, dtype=np.int32)).any()
    chat = (["ria", "ria", "sam", "sam", "user", "user"], [1] * 6)
    assert _turns_on(chat, np.array([0, 0, 0, 0, 1, 1])).tolist() == [0, 1, 0, 1, 0, 0]
    lengths, _ = _turn_windows(np.zeros(6, dtype=np.int32), np.zeros(6, dtype=np.uint8), 3)
    assert len(lengths) == 0


def test_best_window_of_each_unit() -> None:
    """The best score of the windows holding each unit, 0 for a unit in none."""
    scores = np.array([0.2, 0.9, 0.5])
    membership = [
        (np.array([0, 1]), np.array([0, 1])),
        (np.array([1, 2]), np.array([0, 1])),
        (np.array([0]), np.array([2])),
    ]
    assert best_window(scores, membership, 4).tolist() == [0.5, 0.9, 0.9, 0.0]


def test_positions_of_unit_ids() -> None:
    rows = [(uid, 1, "h", None, 1.0, None, 1, "", "") for uid in (40, 7, 19, 3)]
    table = UnitTable.build(rows, 4, (3,))
    assert table.positions([7, 3, 40, 19, 5, 100]).tolist() == [1, 3, 0, 2, -1, -1]
    assert UnitTable.build([], 4, (3,)).positions([1]).tolist() == [-1]


def test_candidates_score_bm25_with_the_whole_indexs_statistics() -> None:
    """A table of candidates (read from an index server) scores BM25 as the table of the
    whole index would: its idf and length normalisation come from the `Restriction`'s counts,
    not from the few rows it holds."""
    from vault_memory.search.table import Restriction

    whole_rows = [
        (uid, uid, "h", None, 1.0, None, 1, terms, "")
        for uid, terms in enumerate(
            [
                "ledger conflict",
                "ledger",
                "ledger retry",
                "conflict",
                "lunch plans",
                "coffee",
                "tea",
                "lunch",
                "ledger",
            ],
            start=1,
        )
    ]
    whole = UnitTable.build(whole_rows, 4, (3,))
    picked = [r for r in whole_rows if "conflict" in r[7]]
    part = UnitTable.build(picked, 4, (3,))
    term = "ledger"  # 4 units hold it, 1 of the candidates
    held = len(whole.text.postings(whole.vocab[term])[0])
    within = Restriction(
        np.ones(len(picked), dtype=bool),
        ((0, len(picked)),),
        len(whole_rows),
        {"tx": whole.text.average, "hd": whole.heading.average, "lb": whole.label.average},
        {"tx": {part.vocab[term]: held}},
    )
    rows_w, scores_w = whole.text.bm25(whole.vocab[term], 1.2, 0.75)
    rows_p, scores_p = part.text.bm25(part.vocab[term], 1.2, 0.75, within)
    assert held == 4 and part.ids[rows_p].tolist() == [1]
    assert np.allclose(scores_p, scores_w[whole.ids[rows_w] == 1])
    assert part.text.idf(part.vocab[term], within) == whole.text.idf(whole.vocab[term])
    assert part.text.frequency(part.vocab[term], within) == 4
    # without the counts, the candidates alone give another idf
    alone = Restriction(within.mask, within.ranges, within.units, within.averages)
    assert part.text.idf(part.vocab[term], alone) != whole.text.idf(whole.vocab[term])


def test_a_memo_of_earlier_builds_gives_the_same_table() -> None:
    """Tables of overlapping candidates built with a memo (what earlier builds derived from
    the texts) are array for array the tables built without one."""
    texts = [
        "- Priya: the cutover is tomorrow?",
        "- Jonas: yesterday we shipped it",
        "- decision: Postgres 16",
        "plain words here",
    ]
    rows = [
        (
            uid,
            uid // 3,
            f"## {uid // 3}",
            "2026-11-1" + str(uid % 9),
            1.0,
            None,
            1,
            "cutov tomorrow",
            texts[uid % 4],
            "",
        )
        for uid in range(1, 13)
    ]
    memo: dict[str, dict] = {}
    for chosen in (rows[:8], rows[4:], rows[2:10]):
        plain = UnitTable.build(chosen, 4, (3,))
        kept = UnitTable.build(chosen, 4, (3,), memo=memo)
        assert plain.arrays.keys() == kept.arrays.keys()
        for name, array in plain.arrays.items():
            assert np.array_equal(array, kept.arrays[name]), name
    assert memo["told"] and memo["question"] and memo["analyzed"]


def test_arrays_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.arrays"
    arrays = {
        "a": np.arange(10, dtype=np.int64),
        "m": np.ones((3, 5), dtype=np.float32),
        "empty": np.zeros(0, dtype=np.float64),
        "flag": np.array([True]),
    }
    write_arrays(path, {"v": 1, "w": [3, 5]}, dict(arrays))
    loaded = read_arrays(path, {"v": 1, "w": [3, 5]})
    assert loaded is not None
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype
        assert np.array_equal(loaded[name], array)
    assert read_arrays(path, {"v": 2, "w": [3, 5]}) is None  # another index state
    assert read_arrays(tmp_path / "missing.arrays", {"v": 1}) is None
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 64])  # truncated
    assert read_arrays(path, {"v": 1, "w": [3, 5]}) is None
    path.write_bytes(b"garbage" * 10)
    assert read_arrays(path, {"v": 1, "w": [3, 5]}) is None
    path.write_bytes(MAGIC + b"\xff" * 8)
    assert read_arrays(path, {"v": 1, "w": [3, 5]}) is None
    # no temp files left (t.arrays.ok: its sums were checked, index/arrays.py)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.arrays", "t.arrays.ok"]


def test_a_new_process_maps_the_saved_table(
    indexed_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = "how does Zoë like product changes explained?"
    with Vault(indexed_sample) as vault:
        first = vault.search(query, limit=5)
    saved = sorted(p.name for p in (indexed_sample / ".vault").glob("units-*.arrays"))
    assert len(saved) == 2 and saved[0] == "units-vectors.arrays"
    assert saved[1].startswith("units-vectors.base-")  # its vectors, in a file of their own

    def no_build(*args: object, **kwargs: object) -> UnitTable:
        raise AssertionError("the saved table should have been used")

    with monkeypatch.context() as mp:
        mp.setattr(UnitTable, "build", no_build)
        with Vault(indexed_sample) as vault:
            again = vault.search(query, limit=5)
    assert [h.to_dict() for h in again] == [h.to_dict() for h in first]


def test_an_index_change_replaces_the_saved_table(indexed_sample: Path) -> None:
    with Vault(indexed_sample) as vault:
        vault.search("release checklist", limit=3)
        saved = (indexed_sample / ".vault" / "units-vectors.arrays").read_bytes()
        vault.add("The zebracorn migration is owned by Quentin.")
        vault.index()
    with Vault(indexed_sample) as vault:  # a new process: the old file must not be trusted
        hits = vault.search("who owns the zebracorn migration?", limit=3)
    assert "zebracorn" in hits[0].text
    assert (indexed_sample / ".vault" / "units-vectors.arrays").read_bytes() != saved


def test_a_table_saved_with_other_windows_is_made_anew(indexed_sample: Path) -> None:
    """A search whose settings ask for other context windows than the saved table holds
    (a library caller's `RankSettings`, the benchmark's `--set windows=(3,)`) makes its own
    table, and the default one is made again after it: neither fails on the other's file."""
    import dataclasses

    query = "release checklist"
    with Vault(indexed_sample) as vault:
        before = [h.to_dict() for h in vault.search(query, limit=3, fresh=False)]
    for windows in [(3,), (3, 5)]:
        with Vault(indexed_sample) as vault:
            searcher = vault.searcher
            searcher.settings = dataclasses.replace(searcher.settings, windows=windows)
            hits = vault.search(query, limit=3, fresh=False)
        assert hits
    assert [h.to_dict() for h in hits] == before


def test_a_cache_that_cannot_be_written_still_answers(
    indexed_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vault_memory import index
    from vault_memory.index import arrays

    def refuse(*args: object) -> None:
        raise PermissionError(13, "Permission denied")

    for path in (indexed_sample / ".vault").glob("units-*.arrays"):
        path.unlink()
    monkeypatch.setattr(arrays, "write_arrays", refuse)
    # and the name the package offers (lazy_loader keeps a name once it is loaded)
    monkeypatch.setattr(index, "write_arrays", refuse)
    with Vault(indexed_sample) as vault:
        hits = vault.search("release checklist", limit=3, fresh=False)
    assert hits
    assert not list((indexed_sample / ".vault").glob("units-*.arrays"))


@pytest.mark.parametrize(
    "query",
    [
        "how does Zoë like product changes explained?",
        "ERR_LEDGER_409 idempotency",
        "release checklist postgres migration cutover",
    ],
)
def test_the_postings_give_the_whoosh_indexs_bm25f_scores(indexed_sample: Path, query: str) -> None:
    """Queries are scored from the table's postings arrays; they must agree with the Whoosh
    index's own BM25F: the same units with the same scores."""
    from vault_memory.index.fulltext import BM25_B, BM25_K1
    from vault_memory.index.words import terms_of

    with Vault(indexed_sample) as vault:
        index = vault.cache
        table = vault.searcher.table(index.store.get_meta("model_id"))
        terms = list(dict.fromkeys(terms_of(query)))
        whoosh = {uid: score for uid, score, _ in index.fulltext.search_terms(terms, 10**6, 0.5)}
        ours = np.zeros(len(table.ids))
        for term in terms:
            number = table.vocab.get(term)
            rows, scores = table.text.bm25(number, BM25_K1, BM25_B)
            ours[rows] += scores
            rows, scores = table.heading.bm25(number, BM25_K1, BM25_B)
            ours[rows] += 0.5 * scores
    mine = {int(table.ids[i]): float(ours[i]) for i in np.flatnonzero(ours)}
    assert whoosh and set(mine) == set(whoosh)
    for uid, score in whoosh.items():
        assert mine[uid] == pytest.approx(score, rel=1e-4)
