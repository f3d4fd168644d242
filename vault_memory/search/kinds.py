"""Kinds and their instances: a question that asks for a kind ("What instruments does Sam
play?", "Which countries has Ria been to?") also matches the lines that name an instance of
it ("I play clarinet", "two weeks in Portugal"), which share no word with it.

The kind is read from the question's form: the words between "what" or "which" (and "kind
of", "type of", "sort of") and the verb that follows ("does", "has", "did" …), at most
three. Its instances are the nouns below it in WordNet 3.0 (`kinds.txt`: each noun's
hypernyms up to six levels above its first two senses, instance hypernyms too, read upward;
written down by `bench/build_kinds.py`), kept where the bundled model's WordPiece vocabulary
holds the word whole, and kinds of at most 1,500 such instances. A line holding instances
scores as if it held the kind word once per instance, in a field of its own (BM25 over the
instances' postings united, their joint idf), at `kind_weight` of a query word: below the
question's own words, so an exact word keeps winning.

Every query word matching its instances (not only the asked kind), which is what expanding
each unit's text with all its words' kinds when indexed scores, lost 0.012 on the LoCoMo dev
split and gained nothing over this on real chats (lab notes): "what do you think" or "the
event" name no kind asked for, and the common kinds ("activity", "event") are everywhere.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..index import terms_of
from .ranking import at_rows

if TYPE_CHECKING:
    import numpy as np

    from .table import FieldPostings, Restriction

log = logging.getLogger("vault_memory")

KINDS_FILE = Path(__file__).resolve().parent / "kinds.txt"
MOST_KIND_WORDS = 3

_ASKED = re.compile(
    r"\b(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?"
    rf"((?:[\w'-]+\s+){{1,{MOST_KIND_WORDS}}}?)"
    r"(?:does|did|do|has|have|had|is|are|was|were|can|could|would|will)\b",
    re.IGNORECASE,
)


def asked_kinds(question: str) -> list[str]:
    """The analyzed words of the kind a question asks for ("What musical instruments does
    she play?" -> ["music", "instrument"]), [] when it asks for none in that form."""
    found = _ASKED.search(question)
    return terms_of(found[1], query=True) if found else []


@functools.cache
def _kinds_bytes() -> bytes:
    """`kinds.txt` as bytes (read once, 0.6 MB; only by a question that asks for a kind);
    empty when it cannot be read (a damaged install: then no kind is matched)."""
    try:
        return b"\n" + KINDS_FILE.read_bytes()
    except OSError as exc:
        log.warning("kinds are not matched: %s cannot be read (%s)", KINDS_FILE.name, exc)
        return b""


def instances(kind: str) -> list[str]:
    """The analyzed words of the instances of `kind` (an analyzed word), [] for none."""
    data = _kinds_bytes()
    at = data.find(b"\n" + kind.encode("utf-8", "replace") + b" ")
    if at < 0:
        return []
    end = data.find(b"\n", at + 1)
    return data[at + 1 : end if end >= 0 else len(data)].decode("utf-8").split()[1:]


def asked_instances(question: str, terms: Collection[str]) -> list[str]:
    """The analyzed words of every instance of the kinds `question` asks for that are
    among its `terms` (none of the terms themselves): what an index server is asked for,
    which knows no vocabulary here to look them up in."""
    kinds = [kind for kind in dict.fromkeys(asked_kinds(question)) if kind in terms]
    found = (word for kind in kinds for word in instances(kind) if word not in terms)
    return list(dict.fromkeys(found))


def kind_members(
    question: str, terms: Collection[str], vocab: Mapping[str, int], skip: Collection[str]
) -> dict[str, list[int]]:
    """The kind words of `question` that are among its `terms` (and not in `skip`: names),
    each with the term numbers of the instances the vault holds (none of the query's own,
    nor a name: "sam" is a missile, and Sam a speaker)."""
    found: dict[str, list[int]] = {}
    for kind in asked_kinds(question):
        if kind not in terms or kind in skip or kind in found:
            continue
        members = [
            vocab[i] for i in instances(kind) if i in vocab and i not in terms and i not in skip
        ]
        if members:
            found[kind] = members
    return found


def united_bm25(
    field: FieldPostings,
    members: list[int],
    k1: float,
    b: float | np.ndarray,
    within: Restriction | None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """BM25 of the instances `members` taken as one word: (rows holding any, their scores,
    the joint idf), each row's frequency the sum of its instances'."""
    import numpy as np

    parts = [field.postings(m, within) for m in members]
    every = np.concatenate([p[0] for p in parts])
    if not len(every):
        return every, np.zeros(0), 0.0
    rows, at = np.unique(every, return_inverse=True)
    tf = np.bincount(at, weights=np.concatenate([p[1] for p in parts]))
    units = field.units if within is None else within.units
    idf = math.log(1.0 + (units - len(rows) + 0.5) / (len(rows) + 0.5))
    average = (field.average if within is None else within.averages[field.field]) or 1.0
    b = at_rows(b, rows)  # one number, or one a unit (`UnitTable.by_chattiness`)
    norm = k1 * ((1.0 - b) + b * field.lengths[rows] / average)
    return rows, idf * tf * (k1 + 1.0) / (tf + norm), idf
