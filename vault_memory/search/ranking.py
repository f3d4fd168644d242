"""The ranking decisions of a search, as pure functions over plain data: fusion of keyword
and vector scores, context windows, recency, the exact-token guard, the shape of a line (its
lead-in label, whether it asks), the text given to the model, and coalesced spans. Tested
without files; `Searcher` gathers their inputs.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..index import after_label, fold, terms_of, whole
from .people import names_meant

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class RankSettings:
    """The knobs of the ranking, with the values measured best on the retrieval benchmark
    (bench/eval_search.py; the figures are in the README)."""

    fusion: str = "weighted"  # "weighted" (normalised sum) or "rrf"; weighted measured better
    vector_weight: float = 0.6
    rrf_k: int = 60
    candidates: int = 200  # keyword evidence: the best N BM25 units (0: every matching unit)
    heading_boost: float = 0.5
    windows: tuple[int, ...] = (3, 5)  # context windows (consecutive units of one section)
    window_weight: float = 1.0  # a unit gains this times the best window holding it
    # In a conversation, windows of as many turns too (one speaker's messages in a row are a
    # turn: `table._turn_windows`): a chat sent in short messages is read as one whose turns
    # are single lines. The same windows where every turn is one unit.
    turn_windows: bool = True
    # A message of a run (one speaker's messages in a row) is lifted by its own speaker's
    # other messages only by the query words it shares with them (`stages.shared_lifts`):
    # the other speakers' turns around it lift it as before.
    shared_context: bool = True
    subject_boost: float = 0.5  # a unit whose lead-in label names a query word gains this share
    # A query's name also names the speaker labelled by its full name or a nickname of it
    # ("Kate" for `Katherine`, "Mike" for `Michael`; `people.nickname_names`): a chat
    # export labels people by their contact names, and people call them otherwise.
    nicknames: bool = True
    question_penalty: float = 0.15  # a unit that ends by asking loses this share
    subject_free_vector: bool = True  # hybrid: names found as labels leave the embedded query
    coalesce_depth: int = 3  # among the first N hits, adjacent units of a section merge...
    coalesce_max_units: int = 3  # ...into spans of at most this many units
    coalesce_max_lines: int = 5  # ...and lines
    recency_weight: float = 0.2  # at most this share of a score is lost to age
    half_life_days: float = 90.0
    # A hit holding no query word whose cosine is below this is flagged "weak": it may not
    # answer the query. 0.25 for the bundled MiniLM, measured on sample_vault/: nonsense
    # queries peak at 0.17-0.23 ("asdf" at 0.33), answers that share no word with their
    # question at 0.26-0.6 ("which database did we pick" / "Chose PostgreSQL for billing":
    # 0.26). No threshold separates them all; other models differ.
    weak_cosine: float = 0.25
    # A query word that is not a label but names one in short or misspelt (`Mel` for the
    # speaker Melanie, `Carolyne` for Caroline: a prefix of 3+ letters, or one edit away)
    # counts as that label: as a subject and as a keyword (`resolve_names`).
    name_aliases: bool = True
    # A query that names two or more subjects ("What do Joanna and Nate both like?") is asked
    # of each: their lines take turns in the ranking (`take_turns`), so one person's lines
    # cannot fill the budget.
    subject_turns: bool = True
    # A label the query names also names the labels that are the same person under another
    # name, used in one session with it (`Jo` and `Joanna`, `Carolyn` and `Caroline`:
    # `label_partners`): their lines are that person's too.
    label_partners: bool = True
    # A line of one word at most besides its label ("lol", "ok", "yes!!") that holds no query
    # word loses this share: it states nothing on its own, and ranks only as the context of
    # its neighbours (a coalesced span takes it in with them).
    short_penalty: float = 0.5
    # A question asking when ("When did…", "what day…") raises by this share the lines that
    # tell a day relative to their own ("yesterday", "last Fri"): they carry the answer.
    when_boost: float = 0.1
    # A question that names a day ("on 25 May, 2022", "in June 2022", "last week": seen from
    # today) raises by this share the lines of that day's logs, and those that tell of that
    # one day ("yesterday" in the next day's log): `dates.asked_days`.
    date_boost: float = 0.5
    # A query word of five letters or more also matches the vault's words one typing slip
    # away that read as slips of it (`spelling_variants`: "restuarant", "resturant" for
    # "restaurant"), at this share of its own weight: people type fast in chats.
    typo_weight: float = 0.5
    # A query word also matches the short forms a chat types for it ("bday" for "birthday",
    # "bf" for "boyfriend": search/spelling.py), and a short form its word, at this share.
    form_weight: float = 1.0
    # A query's name that the chat's messages give a speaker ("I'm Kate", "call me Bob") or
    # call them by ("Thanks, Kate!": the other speaker of a chat of two) names that speaker,
    # however they are labelled (`people.py`; `alias` in --explain).
    message_names: bool = True
    # Measured and off: 0.15 cost both splits (LoCoMo 0.826 -> 0.822, real chats 0.648).
    # A unit longer than the vault's typical one (the median of its words) is weighed by
    # (median / words) ** length_cost: a reader pays for a hit by its length, and a long one
    # matches more words and sits nearer more queries only by saying more (`length_factors`).
    length_cost: float = 0.0
    # In the sessions of a chat sent as runs of quick messages, a unit's lift by its context
    # windows is at most this many times its own fused score (`capped_context`): context
    # helps a message that matches, it does not make a hit of a neighbour that says nothing
    # the query asks. Real chats r@2000ch 0.644 -> 0.672 (1: 0.666, 4: 0.650 uncapped in
    # turns that alternate too); where whole turns alternate (LoCoMo) nothing changes.
    context_cap: float = 2.0
    # BM25's length normalisation `b` in the sections of a chat sent as quick messages
    # (`UnitTable.by_chattiness`); elsewhere BM25_B (0.5), chosen for turns of similar length. A
    # chat's messages run from "lol" to a paragraph: there the textbook 0.75 lets a long
    # message that holds a query word among many say less than a short one about it. Real
    # chats r@2000ch 0.667 -> 0.679 (multi-hop 0.488 -> 0.500); where whole turns alternate
    # (LoCoMo) nothing changes; 0.75 everywhere cost LoCoMo 0.826 -> 0.823.
    chatty_b: float = 0.75
    # The vector's weight in those sessions (`vector_weight` elsewhere), in the fused score
    # and in the context windows: a quick message holds a few words, so its keyword match is
    # thin evidence, and what it means carries more. With `chatty_b`, real chats r@2000ch
    # 0.679 -> 0.690 (multi-hop 0.500 -> 0.525; 0.7: 0.681, 0.75: 0.674, 0.8: 0.667);
    # LoCoMo unchanged. 0.7 everywhere cost LoCoMo 0.826 -> 0.806 (multi-hop 0.532 ->
    # 0.492): its multi-hop questions lean on the keywords.
    chatty_vector_weight: float = 0.65
    # In those sessions, a message loses this share when neither it nor a message before it
    # in its run speaks of its sender (no "I", "my", "we", "our": `UnitTable.in_own_account`):
    # there one tells of one's own life in the first person, and a message that begins a
    # turn without it is mostly a reaction to the other ("omg a lake cabin", "how was it?")
    # that shares the topic's words. Real chats r@2000ch 0.690 -> 0.701 (multi-hop 0.525 ->
    # 0.545; 0.15: 0.696, 0.5: 0.701; each message by its own words alone: 0.699 / 0.534).
    # Where whole turns alternate a turn holds the reaction and the speaker's news together:
    # everywhere it cost LoCoMo 0.826 -> 0.804. A session where hardly a message says "I"
    # (another language) is left alone (`table.SELF_SHARE_READ`).
    chatty_no_self_penalty: float = 0.3
    # The lift of each larger window size counts this share of the one before it (sizes in
    # `windows` order): farther turns say less about a message than nearer ones. Measured
    # and off (with no cap): 0.5 LoCoMo 0.826 -> 0.821, real chats 0.644 -> 0.649; 0.7:
    # 0.819, 0.644.
    window_decay: float = 1.0
    # A question asking for a kind ("What instruments does she play?") also matches the
    # lines naming an instance of it ("clarinet": search/kinds.py), as one word at this share:
    # below a word of the question, so a line saying "instruments" keeps ranking first.
    kind_weight: float = 0.4
    # A deep search (`--deep`: search/deep.py) adds the words a small generative model names
    # for the question, each at this share of a query word: below the question's own words.
    deep_weight: float = 0.15


# -- scores -------------------------------------------------------------------


def length_factors(words: np.ndarray, cost: float) -> np.ndarray:
    """Each unit's weight for its length: 1 up to the median number of analyzed words of
    the units that have any, then (median / words) ** cost. A budget of characters holds
    fewer long hits; ranking them by what they say per word keeps them from crowding out
    the short message that answers."""
    import numpy as np

    held = words[words > 0]
    if not cost or not len(held):
        return np.ones(len(words))
    typical = max(float(np.median(held)), 1.0)
    found: np.ndarray = (typical / np.maximum(words, typical)) ** cost
    return found


def capped_context(
    context: np.ndarray, fused: np.ndarray, cap: float, chatty: np.ndarray | None = None
) -> np.ndarray:
    """Context lifts a unit at most `cap` times its own fused score (0: as they are): a
    message gains from its neighbours in proportion to what it matches itself, and one that
    matches nothing gains nothing from a match it does not share. Only where `chatty` holds
    (None: everywhere), the sessions of a chat whose people send runs of quick messages:
    there a window holds many messages on many things; where whole turns alternate, a turn
    is the answer to the question before it, and keeps its lift."""
    import numpy as np

    if not cap:
        return context
    capped: np.ndarray = np.minimum(context, cap * np.maximum(fused, 0.0))
    if chatty is not None:
        capped = np.where(chatty, capped, context)
    return capped


def max_norm(x: np.ndarray) -> np.ndarray:
    """Keyword scores -> [0, 1] by the best one; units without a match stay 0."""
    import numpy as np

    hi = float(x.max()) if x.size else 0.0
    return x / hi if hi > 0 else np.zeros_like(x)


def minmax_norm(x: np.ndarray) -> np.ndarray:
    import numpy as np

    if not x.size:
        return x
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def best_rows(score: np.ndarray, k: int) -> np.ndarray:
    """The rows of the `k` highest scores, best first, equal scores in row order (file order).
    `np.argpartition` alone would do, but the order it leaves ties in (and which of the
    tied rows at the cut it keeps) is not specified: it follows the partition kernel numpy
    picks for the CPU and the array. A keyword-only search, whose scores tie often, ranked
    two tied units the other way round on the AVX2 machines of 2026-12 than where its tests
    were written, and two tests failed there."""
    import numpy as np

    k = min(k, len(score))
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    negated = -score
    kth = np.partition(negated, k - 1)[k - 1]
    better = np.flatnonzero(negated < kth)
    tied = np.flatnonzero(negated == kth)[: k - len(better)]
    rows = np.concatenate([better, tied])
    return rows[np.lexsort((rows, negated[rows]))]


def rank_scores(x: np.ndarray, rrf_k: int, only_positive: bool) -> np.ndarray:
    """Reciprocal-rank scores 1/(k + rank) of an array of raw scores (rank 1 = best)."""
    import numpy as np

    order = np.argsort(-x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.arange(1, len(x) + 1)
    out = 1.0 / (rrf_k + ranks)
    return np.where(x > 0, out, 0.0) if only_positive else out


def at_rows(value: float | np.ndarray, rows: Any) -> Any:
    """A setting's value at `rows`: one number as it is, one a row (`UnitTable.by_chattiness`)
    taken at those rows."""
    return value if isinstance(value, float | int) else value[rows]


def fuse(
    keyword: np.ndarray | None,
    vector: np.ndarray | None,
    method: str = "weighted",
    vector_weight: float | np.ndarray = 0.5,
    rrf_k: int = 60,
) -> np.ndarray:
    """Combine per-unit keyword (BM25, 0 = no match) and vector (cosine) scores.

    "weighted": (1 - w) * keyword / max + w * min-max(cosine). "rrf": the same weights over
    reciprocal ranks. Either side may be None (keyword-only or semantic search). `w` one
    number, or one a unit (`UnitTable.by_chattiness`).
    """
    if keyword is None and vector is None:
        raise ValueError("nothing to fuse")
    if method == "weighted":
        kw = max_norm(keyword) if keyword is not None else None
        vec = minmax_norm(vector) if vector is not None else None
    elif method == "rrf":
        kw = rank_scores(keyword, rrf_k, True) if keyword is not None else None
        vec = rank_scores(vector, rrf_k, False) if vector is not None else None
    else:
        raise ValueError(f"unknown fusion method {method!r}")
    if vec is None:
        assert kw is not None
        return kw
    if kw is None:
        return vec
    return (1.0 - vector_weight) * kw + vector_weight * vec


def running_sum(x: np.ndarray) -> np.ndarray:
    """0 and then the running sum of `x` (float64): the sum over rows a..b-1 is
    `running[b] - running[a]`, for any number of windows of any sizes."""
    import numpy as np

    return np.concatenate(([0.0], np.cumsum(x, dtype=np.float64)))


def window_sums(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per window (the `lengths[i]` consecutive units from `starts[i]`), the sum of `x` over
    its units: two lookups in a running sum, whatever the window size."""
    running = running_sum(x)
    return running[starts + lengths] - running[starts]


def window_bm25(
    matched: Mapping[str, np.ndarray],
    idf: Mapping[str, float],
    starts: np.ndarray,
    lengths: np.ndarray,
    k1: float = 1.2,
) -> np.ndarray:
    """BM25 of each window as one passage: per query term, the number of its units holding
    the term, saturated (a word repeated on every line counts less than several different
    query words), times the term's idf. `matched[t]` marks the units whose text holds t."""
    terms = [t for t, held in matched.items() if held.any()]
    running = [running_sum(matched[t]) for t in terms]
    return running_bm25([idf[t] for t in terms], running, starts, starts + lengths, k1)


def running_bm25(
    idf: Sequence[float] | np.ndarray,
    running: Sequence[np.ndarray] | np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    k1: float = 1.2,
) -> np.ndarray:
    """`window_bm25` from the terms' running counts of matched units (`running[i]`: term
    i's, as `running_sum` makes them, one row each), made once a query and read by the
    windows of every size: each window's count of a term is two lookups, not a pass over
    the rows."""
    import numpy as np

    out = np.zeros(len(starts), dtype=np.float64)
    for weight, counts in zip(idf, running, strict=True):
        tf = counts[ends] - counts[starts]
        out += weight * tf * (k1 + 1.0) / (tf + k1)
    return out


def lift(
    unit_scores: np.ndarray,
    window_scores: np.ndarray,
    membership: Sequence[tuple[np.ndarray, np.ndarray]],
    weight: float,
) -> np.ndarray:
    """A unit's score plus `weight` times the best score of the windows that hold it: a line
    whose neighbours also match is more likely the evidence (a question and its answer, a
    decision and its reason)."""
    return unit_scores + weight * best_window(window_scores, membership, len(unit_scores))


def best_window(
    window_scores: np.ndarray,
    membership: Sequence[tuple[np.ndarray, np.ndarray]],
    count: int,
) -> np.ndarray:
    """For each of `count` units, the best score of the windows that hold it (0: none).
    `membership`: (unit rows, window rows) pairs, a unit at most once a pair."""
    import numpy as np

    best = np.zeros(count, dtype=np.float64)
    for rows, windows in membership:
        best[rows] = np.maximum(best[rows], window_scores[windows])
    return best


def recency_factor(
    date: dt.date | None, today: dt.date, half_life_days: float, weight: float
) -> float:
    """1.0 for undated files (MEMORY.md, notes) and today's; older dated units lose up to
    `weight` of their score, half of it every `half_life_days`."""
    import numpy as np

    day = np.array([date.toordinal() if date else 0])
    return float(recency_factors(day, today.toordinal(), half_life_days, weight)[0])


def recency_factors(
    day_numbers: np.ndarray, today: int, half_life_days: float, weight: float
) -> np.ndarray:
    """`recency_factor` over an array of date ordinals (0 = undated)."""
    import numpy as np

    if half_life_days <= 0 or weight <= 0:
        return np.ones(len(day_numbers))
    age = np.maximum(today - day_numbers, 0)
    factors = 1.0 - weight + weight * np.power(0.5, age / half_life_days)
    return np.where(day_numbers > 0, factors, 1.0)


_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[_\-./:#@][A-Za-z0-9]+)+|\w*\d\w*|\w*_\w*")
_HAS_LETTER = re.compile(r"[A-Za-z]")
_QUOTED = re.compile(r"\"([^\"]{2,})\"|`([^`]{2,})`")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w'’-]*[^\W_]|[A-Z]{2,})\b")


def exact_tokens(query: str) -> list[str]:
    """Tokens of the query that must be matched literally when they occur: identifiers and
    error codes (digits, underscores, joined parts), quoted strings, and capitalised words
    inside the sentence (names). Lower-cased, in query order."""
    found: list[str] = []
    for match in _QUOTED.finditer(query):
        found.append((match[1] or match[2]).strip())
    rest = _QUOTED.sub(" ", query)
    for match in _IDENTIFIER.finditer(rest):
        token = match[0].strip("-./:#@_")
        is_code = _HAS_LETTER.search(token) and re.search(r"[\d_]", token)
        if is_code or (token.isdigit() and len(token) >= 5):  # not years or small counts
            found.append(token)
    for match in _CAPITALISED.finditer(rest.strip()):
        found.append(match[1])
    seen: dict[str, None] = {}
    for token in found:
        seen.setdefault(token.lower(), None)
    return list(seen)


def guard_exact(score: np.ndarray, exact: np.ndarray, competing: np.ndarray) -> np.ndarray:
    """Units holding the query's exact tokens (`exact` > 0, the share of tokens held) are lifted
    above every unit that does not hold them and matches none of the query's other words (a
    vaguely similar dense hit, a near-miss id like BIL-1447 for BIL-1423, a line carried by its
    neighbours); units that match other words of the query (`competing`) compete on relevance."""
    import numpy as np

    holders = exact > 0
    vague = (~holders) & (~competing)
    if not holders.any() or not vague.any():
        return score
    ceiling = float(score[vague].max())
    top = float(score[holders].max()) or 1.0
    # Just above the ceiling, in the holders' own order (more tokens held, then relevance).
    lifted = np.maximum(score, ceiling + 1e-3 * (exact + score / top))
    return np.where(holders, lifted, score)


NAMED_LIFT_UNITS = 3  # units of a named note lifted above the rest (its best ones)


def lift_named(
    score: np.ndarray, named: np.ndarray, file_ids: np.ndarray, per_note: int = NAMED_LIFT_UNITS
) -> np.ndarray:
    """The best `per_note` units of each note the query names (by its file name or an alias)
    above every other unit, in their own order: the note about a person outranks the lines
    that mention them, and its other units compete as usual (a question about the person may
    be answered elsewhere: a long note must not fill every place)."""
    import numpy as np

    finite = np.isfinite(score)
    rows = np.flatnonzero(named & finite)
    if not len(rows):
        return score
    rows = rows[np.lexsort((-score[rows], file_ids[rows]))]  # by note, best first
    files = file_ids[rows]
    first = np.r_[True, files[1:] != files[:-1]]
    starts = np.maximum.accumulate(np.where(first, np.arange(len(rows)), 0))
    holders = np.zeros(len(score), dtype=bool)
    holders[rows[np.arange(len(rows)) - starts < per_note]] = True
    others = finite & ~holders
    if not others.any():
        return score
    ceiling = float(score[others].max())
    top = float(np.abs(score[holders]).max()) or 1.0
    lifted = np.maximum(score, ceiling + 1e-3 * (1.0 + score / top))
    return np.where(holders, lifted, score)


def contains_token(text: str, token: str) -> bool:
    """Whole-token containment, as matching folds text (case, accents, width: index/words.py):
    `BIL-142` is not in `BIL-1423`, nor `v2.3` in `v2.3.1` (a joined part such as `.1` or `-b`
    continues the token); a CJK token may sit anywhere in a run of CJK characters."""
    token = fold(token)
    if not token:
        return False
    pattern = whole(
        re.escape(token), token[0], token[-1], r"(?<!\w)(?<!\w[.\-/:])", r"(?!\w)(?![.\-/:]\w)"
    )
    return re.search(pattern, fold(text), flags=re.IGNORECASE) is not None


#: The words a speaker speaks of themself by ("im", "ive" as chats type them), lower case,
#: and the words that may be one: a word starting with one of their letters (a cheap scan).
_SELF_WORDS = frozenset(
    [
        "i",
        "i'm",
        "im",
        "i've",
        "ive",
        "i'd",
        "i'll",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "we're",
        "we've",
        "we'd",
        "we'll",
        "us",
        "our",
        "ours",
        "ourselves",
    ]
)
_LONGEST_LEAD = 80  # a list marker, a checkbox and a label of at most 60 characters
_MAYBE_SELF = re.compile(r"\b[imuowIMUOW][\w'’]*")


def speaks_of_self(text: str) -> bool:
    """Whether a unit's messages (their lead-in labels aside) speak of their speaker: "I",
    "my", "we", "our" ("im", "ive" too, as chats type them)."""
    for found in _MAYBE_SELF.finditer(text):
        if found.group().lower().replace("’", "'") not in _SELF_WORDS:
            continue
        start = text.rfind("\n", 0, found.start()) + 1
        if found.start() - start > _LONGEST_LEAD:  # past where a label can end
            return True
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if found.start() - start >= len(line) - len(after_label(line)):  # not in its label
            return True
    return False


_TRAILING_TAG = re.compile(r"(?:^|\s)#[\w/-]+$")


def is_question(text: str) -> bool:
    """Whether a unit ends by asking (its last sentence ends with "?", a trailing remark in
    parentheses, a comment or tags aside): a question names a topic without stating a fact,
    the same reason `vault flush` keeps no questions."""
    end = text.rstrip()
    while end and not end.endswith("?"):
        if end.endswith("-->"):
            cut = end.rfind("<!--")
        elif end.endswith(")"):
            cut = end.rfind("(")
        else:
            tag = _TRAILING_TAG.search(end) if "#" in end else None
            cut = tag.start() if tag else -1
        if cut < 0:
            return False
        end = end[:cut].rstrip()
    return bool(end)


def within_one_edit(a: str, b: str) -> bool:
    """Whether `b` is `a` with at most one letter inserted, deleted, changed, or two
    neighbours swapped."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :] or (
            i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
        )
    return a[i:] == b[i + 1 :]


def resolve_names(
    words: Sequence[tuple[str, bool]],
    labels: Sequence[str],
    known: Callable[[str], bool],
    nicknames: bool = True,
) -> dict[str, list[str]]:
    """The labels (speakers, people: analyzed terms of the vault's lead-in labels) that query
    words name without spelling them: a nickname that begins the label (`mel` -> `melani`,
    3 letters at least) or a misspelling one edit away (`carolyn` -> `carolin`, 5 letters
    at least), two for names of 7 letters or more (`katherine` -> `kathrin`), or, with
    `nicknames`, a nickname or full name of it (`kate` -> `katherin`, `mike` -> `michael`:
    `people.nickname_names`). `words` are
    the query's analyzed terms, each with whether it was written
    capitalised; a word the vault's text never uses, or a capitalised one, may be a name,
    a lower-case common word (`art`, not `arthur`) is not. A word that could name two labels
    names neither; words that are labels themselves stay as they are."""
    label_set = set(labels)
    found: dict[str, list[str]] = {}
    for term, capitalised in words:
        if term in label_set or len(term) < 3 or not (capitalised or not known(term)):
            continue
        named = names_meant(term, labels, nicknames)
        if len(named) == 1:  # two labels it could name: it names neither
            found[term] = named
    return found


def label_partners(label: str, labels: Sequence[str]) -> list[str]:
    """The other labels that may be the same person as `label` under another name: a short
    form that begins the other (`jo` and `joanna`, 2 letters at least) or one edit apart
    (`carolin` and `carolyn`, 5 letters at least), as a chat that shows one person by their
    display name and by their first name has it. A short form that begins two labels (`jo`
    for `joanna` and `john`), or a name one edit from two, names neither. The caller keeps
    only those used in one session with `label` (`Searcher._partners`)."""
    found: list[str] = []
    longer = [other for other in labels if other != label and other.startswith(label)]
    if len(label) >= 2 and len(longer) == 1:
        found.append(longer[0])
    for size in range(2, len(label)):
        short = label[:size]
        if short in labels and sum(other.startswith(short) for other in labels) == 2:
            found.append(short)  # itself and `label`: a short form of it alone
    if len(label) >= 5:
        near = [
            other
            for other in labels
            if other != label and len(other) >= 5 and within_one_edit(label, other)
        ]
        if len(near) == 1:
            found.append(near[0])
    return list(dict.fromkeys(found))


# "call me Bob", "my name is Bob", "my name's Bob": a speaker gives the name others use.
_INTRODUCTION = re.compile(r"\b(?i:call me|my name is|my name's|name's)\s+([A-Z][\w'’-]*)")


def introduced_names(text: str) -> list[str]:
    """The names a line's speaker says they go by ("I'm Robert, but call me Bob" -> Bob)."""
    return [name.rstrip("'’-") for name in _INTRODUCTION.findall(text)]


def dense_query(query: str, is_label: Callable[[str], bool]) -> str:
    """The query to embed when the ranking already favours the units whose label a query
    word names: without those names (capitalised words all of whose terms are labels). A
    name says little to the embedding model except "lines that mention this name"; the rest
    of the question is what the evidence is about. The query itself if nothing would be left."""
    kept: list[str] = []
    dropped = False
    for word in query.split():
        core = word.strip("\"'“”‘’()[],.;:!?")
        terms = terms_of(core)
        if core[:1].isupper() and terms and all(is_label(t) for t in terms):
            dropped = True
            continue
        kept.append(word)
    rest = " ".join(kept)
    return rest if dropped and terms_of(rest) else query


_ASKS_WHEN = re.compile(
    r"^\s*when\b|\bwhen (?:did|do|does|was|were|is|will|are|has|have)\b|"
    r"\bwhat (?:day|date|time|year|month|week)\b|\bhow long\b"
    r"|\bsince when\b",
    re.IGNORECASE,
)


def asks_when(query: str) -> bool:
    """Whether a question asks for a time ("When did Mel paint?", "what day was the gig?",
    "How long has she had the dog?": a span that lasts up to the line's day tells when it
    began, `dates.told_ranges`)."""
    return _ASKS_WHEN.search(query) is not None


def take_turns(ranked: Sequence[int], groups: Sequence[set[int]]) -> list[int]:
    """`ranked` re-ordered so that the rows of the groups (the lines of each subject the query
    names) take turns in the places they held, each group keeping its own order and the
    group whose best row ranks first starting; the other rows keep their places."""
    queues: list[list[int]] = [[] for _ in groups]
    slots: list[int] = []
    for at, row in enumerate(ranked):
        home = next((k for k, group in enumerate(groups) if row in group), None)
        if home is not None:
            queues[home].append(row)
            slots.append(at)
    first = {row: at for at, row in enumerate(ranked)}
    queues = sorted((q for q in queues if q), key=lambda q: first[q[0]])
    turns: list[int] = []
    while queues:
        for queue in queues:
            turns.append(queue.pop(0))
        queues = [q for q in queues if q]
    out = list(ranked)
    for at, row in zip(slots, turns, strict=True):
        out[at] = row
    return out


def coalesce(
    ranked: Sequence[int],
    section: np.ndarray,
    line_counts: np.ndarray,
    depth: int,
    max_units: int,
    max_lines: int,
) -> list[list[int]]:
    """Ranked unit rows -> ranked spans of rows. Among the first `depth` rows, a row next to
    (or one row away from) a span of the same section extends it, up to `max_units` units and
    `max_lines` lines; a row already inside a span is dropped, so no context is paid for twice."""
    spans: list[list[int]] = []
    for rank, row in enumerate(ranked):
        placed = False
        for span in spans:
            lo, hi = span[0], span[-1]
            if lo <= row <= hi:
                placed = True
                break
            if rank < depth and section[row] == section[lo] and lo - 2 <= row <= hi + 2:
                merged = list(range(min(lo, row), max(hi, row) + 1))
                if len(merged) <= max_units and int(line_counts[merged].sum()) <= max_lines:
                    span[:] = merged
                    placed = True
                    break
        if not placed:
            spans.append([row])
    return spans


_SOURCE_COMMENT = re.compile(r"<!--\s*src:\s*(.*?)\s*-->", re.S)
_SOURCE_LINES = re.compile(r"^(?P<path>[^#\s]+)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")


def cited_lines(text: str) -> set[tuple[str, int]]:
    """The (path, line) pairs the provenance comments of `text` cite (`<!-- src:
    memory/2026-11-22.md#L4-L5 -->`): the lines an entry of MEMORY.md was promoted from."""
    lines: set[tuple[str, int]] = set()
    for comment in _SOURCE_COMMENT.findall(text):
        for source in re.split(r"[,\s]+", comment):
            match = _SOURCE_LINES.match(source)
            if match:
                start = int(match["start"])
                end = max(start, int(match["end"] or start))
                lines.update((match["path"], n) for n in range(start, min(end, start + 50) + 1))
    return lines
