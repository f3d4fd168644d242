"""Whoosh (whoosh-reloaded) BM25F index over the same units as SQLite, in `.vault/whoosh/`.

Stemming analyzer with a full English stop list (Whoosh's default list keeps "what", "did",
"how", which flood question queries), and OR grouping at query time: natural questions share
few words with their answers, so AND finds almost nothing.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

INDEX_NAME = "units"
BM25_K1 = 1.2
BM25_B = 0.5  # units are short and of similar length


class FullTextDamaged(Exception):
    """Whoosh could not read its index (a damaged table of contents or segment)."""


def _guarded(read: Callable[[], T]) -> T:
    """`read()`, with Whoosh's errors on damaged files turned into `FullTextDamaged`. Whoosh
    leaves a file open when it fails that way; it is closed here, without the ResourceWarning
    its collection would raise (the caller rebuilds the index)."""
    import gc
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            return read()
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
        gc.collect()
    raise FullTextDamaged(problem)


@functools.cache
def stop_words() -> frozenset[str]:
    from whoosh.lang.stopwords import stoplists

    extra = {"would", "could", "should", "might", "must", "shall", "also", "ever", "yet", "us"}
    return frozenset(stoplists["en"]) | extra


#: Whoosh's RegexTokenizer default: runs of word characters, dots inside (v2.1, e.g).
_TOKEN = re.compile(r"[\w\*]+(\.?[\w\*]+)*", re.UNICODE)


@functools.cache
def _stem() -> Any:
    from whoosh.lang.porter import stem  # the porter module alone: 4 ms to import

    return functools.lru_cache(maxsize=100_000)(stem)


def terms_of(text: str) -> list[str]:
    """The analyzed terms of `text`, exactly as `analyzer()` gives them (tokenize, lower-case,
    drop stop words, Porter-stem; tests/test_fulltext_terms.py compares the two), without
    Whoosh's token objects: 5x faster, and a cold query does not import whoosh.analysis."""
    stops = stop_words()
    stem = _stem()
    return [
        stem(word)
        for match in _TOKEN.finditer(text)
        if (word := match.group().lower()) not in stops
    ]


@functools.cache
def analyzer() -> Any:
    from whoosh.analysis import StemmingAnalyzer

    # minsize=1 keeps one-letter tokens such as the parts of "v2" or "C"; ids stay whole
    # because the tokenizer keeps runs of word characters (ERR_LEDGER_409).
    return StemmingAnalyzer(stoplist=stop_words(), minsize=1)


def schema() -> Any:
    from whoosh.fields import ID, STORED, TEXT, Schema

    ana = analyzer()
    return Schema(
        # Only read back from hits, never searched: a NUMERIC field would index 16 terms per
        # unit, about a third of the keyword index's build time (bench/index.py).
        id=STORED(),
        path=ID(stored=False),
        text=TEXT(analyzer=ana, phrase=False),
        heading=TEXT(analyzer=ana, phrase=False),
        date=ID(),
        kind=ID(),
    )


@functools.cache
def weighting() -> Any:
    """BM25F with B=0.5 (units are short and of similar length) and Robertson's idf
    log(1 + (N - n + 0.5) / (n + 0.5)): Whoosh's log(N / (n + 1)) + 1 keeps a floor of 1 that
    over-rewards words found in most units."""
    import math

    from whoosh import scoring

    class RobertsonBM25F(scoring.BM25F):
        def idf(self, searcher: Any, fieldname: str, text: Any) -> float:
            parent = searcher.get_parent()
            n = parent.doc_frequency(fieldname, text)
            total = parent.doc_count_all()
            return math.log(1.0 + (total - n + 0.5) / (n + 0.5))

    return RobertsonBM25F(B=BM25_B, K1=BM25_K1)


@contextlib.contextmanager
def _committing(writer: Any, **commit: Any) -> Iterator[None]:
    """Commit the writer's changes if the block finishes, cancel them all if it raises."""
    try:
        yield
    except BaseException:
        writer.cancel()
        raise
    writer.commit(**commit)


class FullText:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._ix: Any = None
        self._searcher: Any = None

    def exists(self) -> bool:
        from whoosh import index

        if not self.folder.is_dir():
            return False
        try:
            return bool(_guarded(lambda: index.exists_in(str(self.folder), INDEX_NAME)))
        except FullTextDamaged:  # a damaged table of contents: there, but unreadable (`check`)
            return True

    def open(self) -> Any:
        """Open the index (creating it if missing). Damage surfaces as an exception here or
        on first search; the caller rebuilds."""
        if self._ix is None:
            from whoosh import index

            if self.exists():
                self._ix = _guarded(
                    lambda: index.open_dir(str(self.folder), indexname=INDEX_NAME))
            else:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._ix = index.create_in(str(self.folder), schema(), indexname=INDEX_NAME)
        return self._ix

    def reset(self) -> None:
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def fingerprint(self) -> str:
        """Names, sizes and mtimes of the index files: recorded after each write, so a file
        changed by anything else (damage that `check` may not reach) is noticed by a stat."""
        try:
            entries = sorted(
                (entry.name, entry.stat().st_size, entry.stat().st_mtime_ns)
                for entry in os.scandir(self.folder)
                if entry.is_file() and not entry.name.endswith("_WRITELOCK")
            )
        except OSError:
            return ""
        return ";".join(f"{name}:{size}:{mtime}" for name, size, mtime in entries)

    def check(self) -> None:
        """Read every segment's term and doc tables a little: raises if a segment is damaged."""
        ix = self.open()

        def read() -> None:
            with ix.searcher() as searcher:
                searcher.doc_count_all()
                reader = searcher.reader()
                for _ in zip(range(50), reader.all_stored_fields(), strict=False):
                    pass
                for _ in zip(range(50), reader.all_terms(), strict=False):
                    pass

        _guarded(read)

    def update(self, remove_paths: Iterable[str], docs: Sequence[dict[str, Any]]) -> None:
        """Remove every unit of `remove_paths`, then add `docs` (id, path, text, heading, date,
        kind) in one commit."""
        from whoosh.query import Term

        remove = list(remove_paths)
        if not remove and not docs:
            return
        writer = self.open().writer(timeout=30.0)
        with _committing(writer, merge=True):
            for path in remove:
                writer.delete_by_query(Term("path", path))
            for doc in docs:
                writer.add_document(**doc)

    def rebuild(self, docs: Iterable[dict[str, Any]]) -> None:
        self.reset()
        writer = self.open().writer(limitmb=128)
        with _committing(writer, optimize=True):
            for doc in docs:
                writer.add_document(**doc)

    def searcher(self) -> Any:
        """A searcher kept open between queries, refreshed when the index has changed."""
        if self._searcher is None:
            self._searcher = self.open().searcher(weighting=weighting())
        elif not self._searcher.up_to_date():
            self._searcher = self._searcher.refresh()
        return self._searcher

    def search_terms(
        self,
        terms: Sequence[str],
        limit: int,
        heading_boost: float = 0.5,
        allowed: Any = None,
    ) -> list[tuple[int, float, frozenset[str]]]:
        """Units matching any of the analyzed `terms`, best BM25F first: (unit id, score, the
        terms its text matched). Queries score from the unit table's postings instead
        (search.FieldPostings); this is the index's own answer they are tested against."""
        from whoosh.query import Or, Term

        if not terms:
            return []
        clauses = [Term("text", t) for t in terms]
        if heading_boost:
            clauses += [Term("heading", t, boost=heading_boost) for t in terms]
        query = Or(clauses)
        # Whoosh's automatic choice scores every matching unit of a segment under 5,000
        # documents (most segments, as the index grows in batches); the union tree skips
        # blocks that cannot reach the top `limit`. Same hits and scores, about 40% less time
        # (bench/search.py).
        query.matcher_type = Or.DEFAULT_MATCHER
        results = self.searcher().search(query, limit=limit, filter=allowed, terms=True)
        return [
            (
                hit["id"],
                float(hit.score),
                frozenset(
                    t.decode("utf-8") if isinstance(t, bytes) else t
                    for field, t in hit.matched_terms()
                    if field == "text"
                ),
            )
            for hit in results
        ]

    def analyze(self, text: str) -> list[str]:
        return terms_of(text)

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
        self._searcher = None
        self._ix = None
