"""What a search returns: `Hit`s (a cited span of lines, its score and what explains it), their
flags, and `SearchResults` (the hits with the warnings of a search that gave less than asked)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Hit:
    path: str
    start_line: int
    end_line: int
    heading: str
    text: str
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    date: str | None = None
    kind: str = "note"
    # "weak": no query word, low similarity; "instruction": reads as an instruction to a model
    flags: list[str] = field(default_factory=list)
    # "path#Lline" of a newer hit stating a different value for the same subject and
    # attribute, or of the entry a dream marked this one superseded by (search/supersede.py)
    superseded_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {"superseded_by": self.superseded_by} if self.superseded_by else {}
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "heading": self.heading,
            "text": self.text,
            "score": round(self.score, 4),
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "date": self.date,
            "kind": self.kind,
            "flags": list(self.flags),
        } | found


def hit_flags(text: str, weak: bool, flagged: bool | None = None) -> list[str]:
    """A hit's flags: "weak" (found by neither a query word nor a close meaning) and
    "instruction" (its text would steer the agent it is read back to: files/injection.py).
    `flagged` is the judgement the index made of its units (any of them); None (an index
    that predates it, read-only) judges the text as returned."""
    if flagged is None:  # imported here: an index that judged its units needs none of it
        from ..files import is_instruction

        flagged = is_instruction(text)
    instruction = flagged
    return (["weak"] if weak else []) + (["instruction"] if instruction else [])


class SearchResults(list[Hit]):
    """The hits of a search, best first (a plain list), with `warnings`: why the search was
    less than asked for, e.g. keywords only because the embedding provider failed. The CLI's
    `--json` prints them as a top-level "warning"; each is also logged."""

    def __init__(self, hits: Any = (), warnings: list[str] | None = None) -> None:
        super().__init__(hits)
        self.warnings: list[str] = list(warnings or [])
