"""The stages of a search, each a function of plain data (the unit table's arrays, the query's
words, settings) that can be called and tested on its own. `Searcher._search` runs them in
this order; what needs the index (reading rows back, the query encoder, caches kept between
queries) stays in the searcher and hands its results to the next stage.

    candidates  the rows a search may return: filters, scope, operators
                (`Searcher._candidates`; `narrowed`, `let_in_told` here)
    expansion   the query's words, each with the names and spellings that stand for it
                (`Searcher._expansion`; `with_aliases` here)
    signals     `keyword_signal` (BM25F from the table's postings), `subjects` (the rows whose
                speaker or person a query word names), vector cosines (`cosines`)
    fusion      `fusion`: keyword and vector fused, each row lifted by its best context window
    weighing    `weigh`: subject, question, short-turn, when and date factors, recency and
                salience; `exact_shares` and `guard_exact` for the exact tokens a query holds
    ranking     `admissible` (filters and the keyword mode as -inf), `pool`, `subject_turns`
    assembly    `assemble`: coalesced spans read back, merged, deduplicated and explained as
                `Hit`s

The formulas themselves (fusion, normalisation, windows, guards) are `ranking`'s.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..index import BM25_B, BM25_K1, terms_of
from .dates import asked_days, on_days
from .hits import Hit, hit_flags
from .kinds import united_bm25
from .ranking import (
    RankSettings,
    asks_when,
    at_rows,
    best_rows,
    best_window,
    capped_context,
    cited_lines,
    contains_token,
    exact_tokens,
    fuse,
    lift_named,
    max_norm,
    minmax_norm,
    running_bm25,
    running_sum,
    take_turns,
)
from .table import Restriction, RunPairs, UnitTable

if TYPE_CHECKING:
    import numpy as np

    from .served import Served

#: A query word -> the vault's other spellings of it: (variant, weight, "spelling" or "form").
Variants = Mapping[str, Sequence[tuple[str, float, str]]]


# -- candidates ------------------------------------------------------------------------------


@dataclass
class Candidates:
    """The rows a search ranks and what it may return of them."""

    table: UnitTable  # the whole index's, or the candidates an index server picked
    store: Any  # what reads rows back: the index's store, or the server's `Served`
    served: Served | None
    within: Restriction | None  # the rows of the scopes a bound search sees (None: all)
    listing: bool  # operators without free text: every row they select, nothing to rank by
    allowed: np.ndarray | None = None  # the rows the filters keep (None: every row)
    told: np.ndarray | None = None  # the rows let in by the days their text names


def narrowed(allowed: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
    """The rows both `allowed` (None: every row) and `mask` keep."""
    return mask if allowed is None else allowed & mask


def let_in_told(
    allowed: np.ndarray, told: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """`allowed` (the rows the date filters keep by their file's date) with the rows `told`
    (whose text names days inside the range) let in too; `told` reduced to the rows it let
    in. Both changed in place."""
    if told is not None:
        told &= ~allowed  # only those the file's date left out
        allowed |= told
    return allowed, told


# -- expansion -------------------------------------------------------------------------------


@dataclass
class Words:
    """The query's analyzed words, each followed by the labels it names under another name."""

    terms: list[str]
    #: a query word -> the labels it stands for (a nickname, a misspelling, "call me Bob", a
    #: named speaker's other label)
    aliases: dict[str, list[str]]
    #: a label the query names -> its person's other labels (`Jo` for `Joanna`)
    partners: dict[str, list[str]]
    variants: Variants
    #: words a deep search's model named for the question, each with the share it counts
    #: (search/deep.py; empty otherwise)
    expanded: Mapping[str, float] = field(default_factory=dict)
    #: the kind the question asks for ("instruments") -> the term numbers of its instances
    #: the vault holds ("clarinet", "violin": search/kinds.py)
    kinds: Mapping[str, list[int]] = field(default_factory=dict)


def with_aliases(terms: Sequence[str], aliases: Mapping[str, Sequence[str]]) -> list[str]:
    """The terms, each followed by its aliases, each once, in that order."""
    return list(dict.fromkeys([t for term in terms for t in [term, *aliases.get(term, ())]]))


# -- signals ---------------------------------------------------------------------------------


@dataclass
class KeywordSignal:
    """BM25F of every row (the text's and the heading's), kept for the best `candidates`
    rows only, with what the other stages read of it."""

    scores: np.ndarray
    #: a query word -> per row, 1 where the word matched (a variant's share where only a
    #: variant did), 0 where it did not or the row's score was cut
    matched: dict[str, np.ndarray]
    #: "spelling" / "form" -> the rows a variant of that kind matched
    otherwise: dict[str, np.ndarray]
    idf: dict[str, float]  # a query word -> its idf (of its rarest variant when it has none)
    has_term: np.ndarray  # the rows holding a query word (before the cut)


def keyword_signal(
    table: UnitTable,
    words: Words,
    within: Restriction | None,
    allowed: np.ndarray | None,
    s: RankSettings,
) -> KeywordSignal:
    """BM25F over the text and heading fields, from the postings arrays of the table: the
    formula and idf of the Whoosh index (fulltext.weighting), without its pure-Python matcher
    (10-100 ms a query; bench/search.py). A query word's variants add their share."""
    import numpy as np

    n = len(table.ids)
    keyword = np.zeros(n, dtype=np.float64)
    matched = {t: np.zeros(n, dtype=np.float64) for t in words.terms}
    # units matched by a typing slip of a query word, by a short form of it, by an instance
    # of the kind it names, by a word a deep search's model named
    otherwise = {kind: np.zeros(n, dtype=bool) for kind in VARIANT_KINDS}
    idf = {}
    for term in words.terms:
        idf[term] = _add_term(
            table, term, words.variants.get(term, ()), within, s, keyword, matched[term], otherwise
        )
        if term in words.kinds and s.kind_weight:
            add_instances(table, words.kinds[term], s, within, keyword, matched[term])
            otherwise["kind"] |= matched[term] == s.kind_weight
    for term, share in words.expanded.items():
        if term not in matched:
            matched[term] = np.zeros(n, dtype=np.float64)
            idf[term] = add_expanded(table, term, share, within, keyword, matched[term], s)
            otherwise["deep"] |= matched[term] > 0
    if allowed is not None:  # filters restrict the keyword signal before it is scaled
        keyword *= allowed
    has_term = keyword > 0
    nonzero = np.flatnonzero(keyword)
    if s.candidates and len(nonzero) > s.candidates:
        # Only the best keyword matches count as keyword evidence, as a search engine's
        # top-N would; a unit holding one common query word among thousands does not.
        values = keyword[nonzero]
        cut = np.partition(values, len(values) - s.candidates)[len(values) - s.candidates]
        keyword[nonzero[values < cut]] = 0.0
    for marks in matched.values():
        marks *= keyword > 0
    return KeywordSignal(keyword, matched, otherwise, idf, has_term)


#: What matched a row besides a query word itself (`KeywordSignal.otherwise`, `--explain`).
VARIANT_KINDS = ("spelling", "form", "kind", "deep")


def add_instances(
    table: UnitTable,
    members: list[int],
    s: RankSettings,
    within: Restriction | None,
    keyword: np.ndarray,
    matched: np.ndarray,
) -> None:
    """Add the instances of a kind the question asks for (`members`: term numbers), as one
    word at `s.kind_weight` of a word (`kinds.united_bm25`); mark the rows they matched and
    the kind word did not at that share."""
    import numpy as np

    share = s.kind_weight
    b = table.by_chattiness(BM25_B, s.chatty_b)
    units, scores, _ = united_bm25(table.text, members, BM25_K1, b, within)
    keyword[units] += share * scores
    matched[units] = np.maximum(matched[units], share)


def add_expanded(
    table: UnitTable,
    term: str,
    share: float,
    within: Restriction | None,
    keyword: np.ndarray,
    matched: np.ndarray,
    s: RankSettings,
) -> float:
    """Add a word the deep mode's model named at `share` of its BM25 (text field only: a
    heading or a speaker's name is no instance of a kind), mark its rows at that share; its
    idf."""
    number = table.vocab.get(term)
    units, scores = table.text.bm25(
        number, BM25_K1, table.by_chattiness(BM25_B, s.chatty_b), within
    )
    keyword[units] += share * scores
    matched[units] = share
    return table.text.idf(number, within)


def _add_term(
    table: UnitTable,
    term: str,
    variants: Sequence[tuple[str, float, str]],
    within: Restriction | None,
    s: RankSettings,
    keyword: np.ndarray,
    matched: np.ndarray,
    otherwise: dict[str, np.ndarray],
) -> float:
    """Add one query word's BM25 (and its variants') to `keyword`, mark the rows it matched
    in `matched` and `otherwise`; its idf (the idf of the vault's rarest spelling of it when
    the vault holds it only otherwise)."""
    import numpy as np

    number = table.vocab.get(term)
    b = table.by_chattiness(BM25_B, s.chatty_b)
    units, scores = table.text.bm25(number, BM25_K1, b, within)
    keyword[units] += scores
    matched[units] = 1.0
    idf = table.text.idf(number, within)
    if s.heading_boost:
        units, scores = table.heading.bm25(number, BM25_K1, b, within)
        keyword[units] += s.heading_boost * scores
    spelt_idf = 0.0  # the idf of the vault's other spellings, the rarest
    for variant, weight, kind in variants:  # a slip, a short form
        units, scores, own_idf = spelt(table, variant, within, b)
        if not len(units):
            continue
        spelt_idf = max(spelt_idf, own_idf)
        # a rare spelling weighs what the word does (its own idf would be higher)
        share = weight * (min(1.0, idf / own_idf) if idf else 1.0)
        keyword[units] += share * scores
        matched[units] = np.maximum(matched[units], share)
        otherwise[kind][units] = True
    # the vault spells it otherwise only: its windows count the vault's spellings (marked
    # at their shares)
    return idf or spelt_idf


def spelt(
    table: UnitTable, variant: str, within: Restriction | None, b: float | np.ndarray = BM25_B
) -> tuple[np.ndarray, np.ndarray, float]:
    """The units holding `variant` (a term of the vault, or two, "road trip", for a query
    word typed as one: the units holding both), its BM25 in each (of two: their mean), and
    its idf (of two: the rarer's)."""
    import numpy as np

    if " " not in variant:
        number = table.vocab[variant]
        units, scores = table.text.bm25(number, BM25_K1, b, within)
        return units, scores, table.text.idf(number, within)
    first, second = (table.vocab[part] for part in variant.split(" "))
    units_a, scores_a = table.text.bm25(first, BM25_K1, b, within)
    units_b, scores_b = table.text.bm25(second, BM25_K1, b, within)
    units, at_a, at_b = np.intersect1d(units_a, units_b, assume_unique=True, return_indices=True)
    return (
        units,
        (scores_a[at_a] + scores_b[at_b]) / 2,
        max(table.text.idf(first, within), table.text.idf(second, within)),
    )


@dataclass
class Subjects:
    """The rows whose lead-in label (their speaker, person or field) a query word names."""

    rows: np.ndarray
    by_alias: np.ndarray  # ...named through a nickname or misspelling
    labels: set[str]  # the query's words that name a label (and the aliases of those)


def no_subjects(n: int) -> Subjects:
    import numpy as np

    return Subjects(np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), set())


def subjects(table: UnitTable, words: Words, within: Restriction | None) -> Subjects:
    """The rows labelled by a query word, or by a label one of its aliases stands for."""
    found = no_subjects(len(table.ids))
    for term in words.terms:
        units, _ = table.label.postings(table.vocab.get(term), within)
        if len(units):
            found.rows[units] = True
            found.labels.add(term)
    for alias, named_labels in words.aliases.items():
        if any(label in found.labels for label in named_labels):
            found.labels.add(alias)  # left out of the embedded query with the names
            for label in named_labels:
                units, _ = table.label.postings(table.vocab.get(label), within)
                found.by_alias[units] = True
    return found


def cosines(table: UnitTable, query: np.ndarray, within: Restriction | None) -> np.ndarray:
    """Every unit's cosine to the query vector (unit vectors: a dot product). Restricted to a
    scope, only its rows are multiplied (the others' vectors are never read), and the others
    get the lowest of its cosines, so they take no part in min-max scaling."""
    if within is None:
        return table.cosines(query)
    return floored(table.cosines(query, within.ranges), within.mask)


def floored(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """`values` with every entry outside `keep` set to the lowest kept one (0 with none)."""
    import numpy as np

    kept = values[keep]
    return np.where(keep, values, float(kept.min()) if len(kept) else 0.0)


def has_evidence(
    keyword: KeywordSignal | None,
    vector: np.ndarray | None,
    guard: Sequence[str],
    named: np.ndarray | None,
) -> bool:
    """Whether anything can rank: vectors, a keyword match, an exact token, a named note."""
    return not (
        vector is None
        and keyword is not None
        and not keyword.scores.any()
        and not guard
        and (named is None or not named.any())
    )


# -- fusion ----------------------------------------------------------------------------------


@dataclass
class Fusion:
    fused: np.ndarray  # keyword and vector fused (ones for a listing: nothing to rank by)
    components: dict[str, np.ndarray]  # "keyword" and "vector", each normalised
    context: np.ndarray  # the lift of each row's best context window
    by_turns: np.ndarray  # the rows a window of turns lifted more than one of units
    shared: np.ndarray | None = None  # the rows their own speaker's other messages lifted less

    @property
    def relevance(self) -> np.ndarray:
        relevance: np.ndarray = self.fused + self.context
        return relevance


def fusion(
    table: UnitTable,
    keyword: KeywordSignal | None,
    vector: np.ndarray | None,
    within: Restriction | None,
    s: RankSettings,
    listing: bool,
) -> Fusion:
    """The keyword and vector signals fused (`s.fusion`), and each row's lift by the best
    of the context windows it lies in."""
    import numpy as np

    n = len(table.ids)
    scores = keyword.scores if keyword is not None else None
    weight = table.by_chattiness(s.vector_weight, s.chatty_vector_weight)
    fused = np.ones(n) if listing else fuse(scores, vector, s.fusion, weight, s.rrf_k)
    components = {"keyword": fused * 0, "vector": fused * 0}
    if scores is not None:
        components["keyword"] = max_norm(scores)
    if vector is not None:
        components["vector"] = minmax_norm(vector)
    if listing:
        return Fusion(fused, components, np.zeros(n), np.zeros(n, dtype=bool), fused < 0)
    context, by_turns, shared = window_context(table, keyword, vector, within, s, weight)
    if s.context_cap:
        context = capped_context(context, fused, s.context_cap, table.in_chatty_section())
    return Fusion(fused, components, context, by_turns, shared)


def window_context(
    table: UnitTable,
    keyword: KeywordSignal | None,
    vector: np.ndarray | None,
    within: Restriction | None,
    s: RankSettings,
    weight: np.ndarray | float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's lift by its best window of each size (of units, and of turns where the
    table has them: then whether a window of turns gave the better lift), and the rows whose
    lift counted their own speaker's other messages only by the words they share
    (`shared_lifts`). `weight`: the vector's, one number or one a row (a window takes its
    first row's)."""
    import numpy as np

    n = len(table.ids)
    context = np.zeros(n)
    by_turns = np.zeros(n, dtype=bool)  # units lifted by a window of turns
    shared = np.zeros(n, dtype=bool)  # units whose run-mates lifted them less
    if not table.windows:
        return context, by_turns, shared
    sums = running_sums(keyword, vector)  # once: every size's windows read them
    for k, size in enumerate(table.windows):
        starts, lengths, norms, by_units, by_turns_of = table.context_windows(size, s.turn_windows)
        ends = starts + lengths
        w_kw = running_bm25(sums.idf, sums.words, starts, ends) if keyword is not None else None
        w_vec = None
        if sums.cosines is not None:
            w_vec = (sums.cosines[ends] - sums.cosines[starts]) / norms
        if w_vec is not None and within is not None:  # others' windows: no part in scaling
            w_vec = floored(w_vec, within.mask[starts])
        window_scores = fuse(w_kw, w_vec, s.fusion, at_rows(weight, starts), s.rrf_k)
        lifted = best_window(window_scores, by_units, n)
        of_turns = best_window(window_scores, by_turns_of, n) if by_turns_of else np.zeros(n)
        pairs = table.run_pairs(size, s.turn_windows) if s.shared_context else None
        if pairs is not None and s.fusion == "weighted":
            scores = window_scores[pairs.wins]
            scores[pairs.mates] = shared_lifts(pairs, sums, w_kw, w_vec, norms, weight)
            best = np.maximum.reduceat(scores, pairs.groups)
            rows = pairs.rows
            before = np.maximum(lifted[rows], of_turns[rows])
            for family, held in enumerate((lifted, of_turns)):
                mine = pairs.family == family
                held[rows[mine]] = best[mine]
            shared[rows[np.maximum(lifted[rows], of_turns[rows]) < before - 1e-12]] = True
        if by_turns_of:  # windows of turns too: the better lifts, and says so
            by_turns |= of_turns > lifted
            lifted = np.maximum(lifted, of_turns)
        context += s.window_weight * s.window_decay**k * lifted
    return context, by_turns, shared


@dataclass
class RunningSums:
    """Running sums over the rows of what a window counts, made once a query and read by the
    windows of every size (`window_context`) and by `shared_lifts`: per query word the rows
    it matched, and the cosines. Summing them again for each size cost a pass over every row
    a word a size: at a million units, about 30 of a hybrid query's 190 ms of CPU."""

    idf: np.ndarray  # of the query words matched anywhere, one a row of `matched`
    matched: list[np.ndarray]  # per query word, its rows' matches (`KeywordSignal.matched`)
    words: np.ndarray  # query words x (rows + 1), running
    vector: np.ndarray | None
    cosines: np.ndarray | None  # rows + 1, running


def running_sums(keyword: KeywordSignal | None, vector: np.ndarray | None) -> RunningSums:
    import numpy as np

    terms = [t for t, held in keyword.matched.items() if held.any()] if keyword else []
    n = len(vector) if vector is not None else len(keyword.scores) if keyword else 0
    matched = [keyword.matched[t] for t in terms] if keyword else []
    idf = np.array([keyword.idf[t] for t in terms]) if keyword and terms else np.zeros(0)
    words = np.zeros((len(terms), n + 1))  # (a variant's match counts a share: floats)
    for row, held in zip(words, matched, strict=True):
        np.cumsum(held, out=row[1:])
    cosines = running_sum(vector) if vector is not None else None
    return RunningSums(idf, matched, words, vector, cosines)


def shared_lifts(
    pairs: RunPairs,
    sums: RunningSums,
    w_kw: np.ndarray | None,
    w_vec: np.ndarray | None,
    norms: np.ndarray,
    weight: np.ndarray | float,
) -> np.ndarray:
    """The score of each window as one of its messages sees it (`pairs` that hold another
    message of its run): its own speaker's other messages in a row count only by the query
    words the message holds too; their cosines not at all. People send a turn as several
    messages, often on several things; a window counting them all lifted a whole monologue
    for one matching word, and the filler around the message that matched took the budget
    (real chats: r@2000ch 0.630 with such windows, 0.644 without what the run-mates do not
    share). The other speakers' turns, a question and its answer, count as before, and so
    does the message itself. Scaled as `fuse` scales the windows' scores (weighted: the best
    keyword window, the vector windows' range), the vector's `weight` the message's own."""
    import numpy as np

    rows, wins, lo, hi = pairs.mate_rows, pairs.mate_wins, pairs.lo, pairs.hi
    w = at_rows(weight, rows)
    first, last = pairs.first, pairs.last
    score = np.zeros(len(rows))
    has_keyword = len(sums.idf) and w_kw is not None and float(w_kw.max()) > 0
    if has_keyword and w_kw is not None:
        own = np.stack([held[rows] for held in sums.matched])  # only the rows asked for
        tf = sums.words[:, last] - sums.words[:, first]
        mates = sums.words[:, hi] - sums.words[:, lo] - own
        tf = np.where(own > 0, tf, tf - mates)
        weighed = sums.idf[:, None] * tf * (BM25_K1 + 1.0) / (tf + BM25_K1)
        keyword = weighed.sum(axis=0) / float(w_kw.max())
        score += keyword if w_vec is None else (1.0 - w) * keyword
    if sums.cosines is not None and sums.vector is not None and w_vec is not None:
        running = sums.cosines
        mates = running[hi] - running[lo] - sums.vector[rows]
        total = running[last] - running[first] - mates
        low, high = float(w_vec.min()), float(w_vec.max())
        scaled = (total / norms[wins] - low) / (high - low) if high > low else total * 0.0
        score += scaled if w_kw is None else w * scaled
    return score


# -- weighing --------------------------------------------------------------------------------


@dataclass
class Factors:
    """The factors each row's relevance was multiplied by (a float: 1 for every row)."""

    subject: np.ndarray
    question: np.ndarray
    no_self: Any
    short: Any
    when: Any
    date: Any
    recency: np.ndarray
    relevance: np.ndarray  # relevance times the factors above but recency
    score: np.ndarray  # relevance times recency and salience


def weigh(
    table: UnitTable,
    relevance: np.ndarray,
    subject_rows: np.ndarray,
    one_word: np.ndarray | None,
    has_term: np.ndarray | None,
    query: str,
    today: dt.date,
    s: RankSettings,
    listing: bool,
) -> Factors:
    """Relevance weighed by the rows' subjects, by whether they ask or tell, whether a quick
    message speaks of its sender, whether they say anything at all (`one_word`: the rows of
    one word but the label, None: no such penalty), whether they tell when (for a "when"
    question) or of a day the query names; then recency and salience."""
    import numpy as np

    subject_factor = np.where(subject_rows, 1.0 + s.subject_boost, 1.0)
    question_factor = np.where(table.question > 0, 1.0 - s.question_penalty, 1.0)
    relevance = relevance * subject_factor * question_factor
    no_self_factor: Any = 1.0
    if s.chatty_no_self_penalty and not listing:  # a reaction, not one's own account
        no_self = table.in_chatty_section() & ~table.in_own_account()
        if no_self.any():
            no_self_factor = np.where(no_self, 1.0 - s.chatty_no_self_penalty, 1.0)
            relevance = relevance * no_self_factor
    short_factor: Any = 1.0
    if one_word is not None:  # "lol", "ok": one word at most but the label
        short = one_word & ~has_term if has_term is not None else one_word
        short_factor = np.where(short, 1.0 - s.short_penalty, 1.0)
        relevance = relevance * short_factor
    when_factor: Any = 1.0
    if s.when_boost and not listing and asks_when(query):
        when_factor = np.where(table.tells(), 1.0 + s.when_boost, 1.0)
        relevance = relevance * when_factor
    date_factor: Any = 1.0
    if s.date_boost and not listing:
        days = asked_days(query, today)
        if days:  # lines of a day the question names, or telling of that one day
            date_factor = np.where(
                on_days(table.day_numbers, days) | table.tells_day_of(days),
                1.0 + s.date_boost,
                1.0,
            )
            relevance = relevance * date_factor
    if s.length_cost and not listing:  # long hits pay for their length
        relevance = relevance * table.length_factors(s.length_cost)
    recency = table.recency(today.toordinal(), s.half_life_days, s.recency_weight)
    score = relevance * recency * table.salience
    return Factors(
        subject_factor,
        question_factor,
        no_self_factor,
        short_factor,
        when_factor,
        date_factor,
        recency,
        relevance,
        score,
    )


def guard_rows(
    table: UnitTable, guard: Sequence[str], within: Restriction | None, allowed: np.ndarray | None
) -> tuple[list[str], np.ndarray]:
    """The exact tokens' analyzed terms, and the rows (that the filters keep) holding one."""
    import numpy as np

    terms = list(dict.fromkeys(t for token in guard for t in terms_of(token, query=True)))
    holders = np.unique(
        np.concatenate([table.text.postings(table.vocab.get(t), within)[0] for t in terms])
    )
    if allowed is not None:
        holders = holders[allowed[holders]]
    return terms, holders


def exact_shares(table: UnitTable, held: Mapping[int, Any], guard: Sequence[str]) -> np.ndarray:
    """Per row, the share of the exact tokens its text (`held`: unit id -> its row, read
    back) spells as given."""
    import numpy as np

    exact = np.zeros(len(table.ids))
    for position, chunk in zip(table.positions(list(held)), held.values(), strict=True):
        if position >= 0:
            exact[position] = sum(contains_token(chunk.text, t) for t in guard) / len(guard)
    return exact


def competing_rows(
    matched: Mapping[str, np.ndarray], guard_terms: Sequence[str], n: int
) -> np.ndarray:
    """The rows (of `n`) a query word other than the exact tokens matched."""
    import numpy as np

    competing = np.zeros(n, dtype=bool)
    for term, marks in matched.items():
        if term not in guard_terms:
            competing |= marks > 0
    return competing


# -- ranking ---------------------------------------------------------------------------------


def admissible(
    score: np.ndarray,
    allowed: np.ndarray | None,
    relevance: np.ndarray,
    named: np.ndarray | None,
    keyword_only: bool,
    file_ids: np.ndarray,
) -> np.ndarray:
    """`score` with the rows the filters leave out at -inf; in the keyword mode also those
    that no query word matches (nor their neighbours) outside a note the query names; the
    notes the query names lifted."""
    import numpy as np

    if allowed is not None:
        score = np.where(allowed, score, -np.inf)
    if keyword_only:
        score = np.where((relevance > 0) | (named if named is not None else False), score, -np.inf)
    if named is not None:
        score = lift_named(score, named, file_ids)
    return score


def pool(score: np.ndarray, limit: int) -> list[int]:
    """The best rows, best first, three for each hit asked for (at least 30)."""
    import numpy as np

    size = min(len(score), max(limit * 3, 30))
    return [int(r) for r in best_rows(score, size) if np.isfinite(score[r])]


def subject_turns(
    ranked: list[int],
    table: UnitTable,
    query: str,
    words: Words,
    labels: set[str],
    within: Restriction | None,
) -> tuple[list[int], set[int]]:
    """The ranked rows with the people the query names (two or more) taking turns, and the
    rows that moved up. Names only (capitalised words, nicknames): not a field label such as
    "decision"."""
    capitalised = {t for token in exact_tokens(query) for t in terms_of(token)}
    nicknamed = {t for named in words.aliases.values() for t in named}
    other_names = {o for same in words.partners.values() for o in same}  # one person's
    named_subjects = sorted(
        t
        for t in labels
        if t in words.terms and t not in other_names and (t in capitalised or t in nicknamed)
    )
    if len(named_subjects) < 2:
        return ranked, set()
    groups = [
        set().union(
            *(
                table.label.postings(table.vocab.get(name), within)[0].tolist()
                for name in [t, *words.partners.get(t, ())]
            )
        )
        for t in named_subjects
    ]
    turned = take_turns(ranked, groups)
    before = {row: at for at, row in enumerate(ranked)}
    return turned, {row for at, row in enumerate(turned) if at < before[row]}


# -- assembly --------------------------------------------------------------------------------


@dataclass
class Evidence:
    """Per row of the table: its final score and what a hit's `scores` explain and its flags
    judge."""

    score: np.ndarray
    fusion: Fusion
    factors: Factors
    exact: np.ndarray
    subjects: Subjects
    told: np.ndarray | None  # the rows let in by the days their text names
    raised: set[int]  # the rows the subjects' turns moved up
    keyword: KeywordSignal | None
    vector: np.ndarray | None
    named: np.ndarray | None
    listing: bool
    weak_cosine: float


def assemble(
    spans: Sequence[list[int]],
    rows: Mapping[int, Any],
    judged: set[int] | None,
    table: UnitTable,
    evidence: Evidence,
    allowed: np.ndarray | None,
    limit: int,
) -> list[Hit]:
    """The hits of the ranked `spans`: each the line-contiguous run of its span around its
    best row (`rows`: unit id -> the unit read back), the same lines once, a promoted entry
    and the log lines it cites once; at most `limit`. `judged`: the units flagged as
    instructions when indexed (None: judged from the text)."""
    hits: list[Hit] = []
    seen_text: set[str] = set()
    cited: set[tuple[str, int]] = set()  # lines the returned entries were promoted from
    returned: set[tuple[str, int]] = set()
    for span in spans:
        if any(int(table.ids[r]) not in rows for r in span):
            continue  # rewritten by a writer after the table was read: the next query has it
        parts, span = contiguous([rows[int(table.ids[r])] for r in span], span, evidence, allowed)
        text = "\n".join(p.text for p in parts)
        if text in seen_text:
            continue  # the same lines elsewhere (a copied entry): no budget spent twice
        lines = {(parts[0].path, n) for n in range(parts[0].start_line, parts[-1].end_line + 1)}
        cites = cited_lines(text)
        if lines <= cited or (cites and cites <= returned):
            continue  # a promoted entry and the log lines it came from: the same, once
        seen_text.add(text)
        cited |= cites
        returned |= lines
        hits.append(make_hit(parts, span, text, table, evidence, judged))
        if len(hits) >= limit:
            break
    return hits


def contiguous(
    parts: list[Any], span: list[int], evidence: Evidence, allowed: np.ndarray | None
) -> tuple[list[Any], list[int]]:
    """The units of a span (and their rows) line-contiguous with its best one: and (with
    search operators) only units the filter keeps, as a bridged gap may be one it left out."""
    score = evidence.score
    best_at = max(range(len(span)), key=lambda i: score[span[i]])
    lo, hi = best_at, best_at
    while (
        lo > 0
        and parts[lo].start_line == parts[lo - 1].end_line + 1
        and (allowed is None or allowed[span[lo - 1]])
    ):
        lo -= 1
    while (
        hi < len(parts) - 1
        and parts[hi + 1].start_line == parts[hi].end_line + 1
        and (allowed is None or allowed[span[hi + 1]])
    ):
        hi += 1
    return parts[lo : hi + 1], span[lo : hi + 1]


def make_hit(
    parts: list[Any],
    span: list[int],
    text: str,
    table: UnitTable,
    evidence: Evidence,
    judged: set[int] | None,
) -> Hit:
    """The hit of contiguous units `parts` (rows `span`), scored and explained by its best."""
    best = max(span, key=lambda r: evidence.score[r])
    first = parts[0]
    has_term = evidence.keyword.has_term if evidence.keyword is not None else None
    named = evidence.named
    worded = bool(evidence.exact[best]) or (has_term is not None and bool(has_term[span].any()))
    worded = worded or evidence.listing or (named is not None and bool(named[best]))
    vector = evidence.vector
    similar = vector is not None and float(vector[best]) >= evidence.weak_cosine
    return Hit(
        first.path,
        first.start_line,
        parts[-1].end_line,
        first.heading,
        text,
        float(evidence.score[best]),
        explain(evidence, best, table),
        first.date,
        first.kind,
        hit_flags(
            text,
            not (worded or similar),
            None if judged is None else any(p.id in judged for p in parts),
        ),
    )


def explain(evidence: Evidence, best: int, table: UnitTable) -> dict[str, float]:
    """A hit's `scores`: each component of its best row's score."""
    import numpy as np

    n = len(table.ids)
    fused, factors = evidence.fusion, evidence.factors
    keyword = evidence.keyword
    return {
        "keyword": float(fused.components["keyword"][best]),
        "vector": float(fused.components["vector"][best]),
        "context": float(fused.context[best]),
        "turn_window": float(fused.by_turns[best]),
        "shared_context": float(fused.shared is not None and bool(fused.shared[best])),
        "recency": float(factors.recency[best]),
        "salience": float(table.salience[best]),
        "subject": float(factors.subject[best]),
        "question": float(factors.question[best]),
        "no_self": float(np.broadcast_to(factors.no_self, (n,))[best]),
        "short": float(np.broadcast_to(factors.short, (n,))[best]),
        "exact": float(evidence.exact[best]),
        "alias": float(evidence.subjects.by_alias[best]),
        "told_date": float(evidence.told is not None and bool(evidence.told[best])),
        "turn": float(best in evidence.raised),
        "when": float(np.broadcast_to(factors.when, (n,))[best]),
        "date": float(np.broadcast_to(factors.date, (n,))[best]),
        **{
            kind: float(
                keyword is not None
                and bool(keyword.otherwise[kind][best])
                and keyword.scores[best] > 0
            )
            for kind in VARIANT_KINDS
        },
    }
