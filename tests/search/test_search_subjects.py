"""Subjects and questions in the ranking, end to end with the real bundled model: a line whose
lead-in label names the person asked about outranks another person's line that mentions
them, a statement outranks a question on the same topic, and the factors are shown by
`--explain`. The pure rules (`lead_label`, `is_question`, `dense_query`) are tested in
test_search_ranking.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from vault_memory import Vault

STANDUP = """\
# 2026-11-02

## 10:00 — standup

- **Jonas**: Priya, how do you like code reviews done? Written comments or a call?
- **Priya**: Pairing on a call, always. Written review comments feel slow to me.
- **Jonas**: Good to know. I like one-page written proposals better than meetings.
- **Priya**: The flaky CI job is test_proration_across_dst again.
"""

PEOPLE = """\
# People

- Jonas Berg: Head of Engineering. Reads one-page proposals the evening before.
- Priya Raman: backend engineer since June; mentored by Maya.
- Zoë Okafor: product manager for invoicing.
"""


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    (vault_dir / "memory" / "2026-11-02.md").write_text(STANDUP, encoding="utf-8")
    (vault_dir / "people.md").write_text(PEOPLE, encoding="utf-8")
    opened = Vault(vault_dir)
    opened.index()
    return configure(opened, coalesce_depth=0)  # units ranked one by one: no merged spans


def configure(vault: Vault, **settings: object) -> Vault:
    searcher = vault.searcher
    searcher.settings = dataclasses.replace(searcher.settings, **settings)  # type: ignore[arg-type]
    return vault


def plain(vault: Vault) -> Vault:
    """The same vault ranked without subjects and questions, for comparison."""
    return configure(vault, subject_boost=0.0, question_penalty=0.0, subject_free_vector=False)


def first_line(vault: Vault, query: str) -> tuple[str, int]:
    hit = vault.search(query, limit=5, fresh=False)[0]
    return hit.path, hit.start_line


def test_the_person_asked_about_answers_before_the_one_who_asked_them(vault: Vault) -> None:
    query = "How does Priya like code reviews done?"
    hits = vault.search(query, limit=5, fresh=False)
    assert (hits[0].path, hits[0].start_line) == ("memory/2026-11-02.md", 6), hits[0].text
    assert hits[0].scores["subject"] == 1.5 and hits[0].scores["question"] == 1.0
    asked = next(h for h in hits if h.start_line == 5)
    assert asked.scores["subject"] == 1.0 and asked.scores["question"] == 0.85
    # Without the two rules, Jonas's question (it has every word of the query) comes first.
    assert first_line(plain(vault), query) == ("memory/2026-11-02.md", 5)


def test_a_plain_lead_in_label_is_a_subject_too(vault: Vault) -> None:
    hits = vault.search("What does Zoë do?", limit=3, fresh=False)
    assert (hits[0].path, hits[0].start_line) == ("people.md", 5)
    assert hits[0].scores["subject"] == 1.5


def test_a_label_that_no_query_word_names_changes_nothing(vault: Vault) -> None:
    hits = vault.search("flaky CI job", limit=3, fresh=False)
    assert (hits[0].path, hits[0].start_line) == ("memory/2026-11-02.md", 8)
    assert all(h.scores["subject"] == 1.0 for h in hits)


def test_keyword_mode_weighs_subjects_and_semantic_mode_does_not(vault: Vault) -> None:
    keyword = vault.search("Priya reviews", limit=5, mode="keyword", fresh=False)
    assert keyword[0].scores["subject"] == 1.5
    semantic = vault.search("Priya reviews", limit=5, mode="semantic", fresh=False)
    assert all(h.scores["subject"] == 1.0 for h in semantic)


def test_explain_shows_the_factors(run_cli, vault: Vault) -> None:
    result = run_cli(
        "--vault",
        str(vault.root),
        "search",
        "How does Priya like code reviews?",
        "--explain",
        "-n",
        "1",
    )
    assert result.exit_code == 0, result.stderr
    assert "subject=1.500" in result.stdout and "question=1.000" in result.stdout
