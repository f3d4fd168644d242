"""Keyword search in every script: CJK text as character pairs, accents,
case and width folded for matching, other scripts' marks kept inside their words."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from vault_memory import Vault
from vault_memory.index.words import ANALYZER, fold, words
from vault_memory.search.ranking import contains_token

from ..support.multilingual_corpus import NOTES, QUERIES


def write_notes(root: Path) -> None:
    (root / "notes").mkdir(parents=True, exist_ok=True)
    for note in NOTES:
        (root / "notes" / f"{note.name}.md").write_text(
            f"# {note.name}\n\n{note.text}\n", encoding="utf-8"
        )


@pytest.fixture
def keyword_vault(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Vault:
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")  # keyword search needs no model
    write_notes(vault_dir)
    vault = Vault(vault_dir)
    vault.index()
    return vault


def found_first(vault: Vault, query: str, limit: int = 1) -> list[str]:
    return [hit.path for hit in vault.search(query, mode="keyword", limit=limit)]


# -- the words of a text -----------------------------------------------------------------------


def test_a_cjk_run_gives_its_characters_and_pairs_and_a_query_asks_for_the_pairs() -> None:
    assert list(words("東京タワー")) == [
        "東",
        "東京",
        "京",
        "京タ",
        "タ",
        "タワ",
        "ワ",
        "ワー",
        "ー",
    ]
    assert list(words("東京タワー", query=True)) == ["東京", "京タ", "タワ", "ワー"]
    assert list(words("猫", query=True)) == ["猫"]  # one character: itself
    assert list(words("iPhone15を買った", query=True)) == ["iphone15", "を買", "買っ", "った"]


def test_a_part_of_a_run_gives_a_contiguous_part_of_the_runs_words() -> None:
    """A name's key (its words joined) is found inside a longer run (index/store names)."""
    whole = " ".join(words("東京タワーに行った"))
    assert " ".join(words("東京タワー")) in whole


def test_folding_unifies_what_a_reader_does_not_tell_apart() -> None:
    assert fold("Café CRÈME Straße") == "cafe creme strasse"
    assert fold("ＡＰＩ ｶﾀｶﾅ ﬁle ①") == "api カタカナ file 1"
    assert fold("Ёлка Αθήνα Łódź Søren Ærø") == "елка αθηνα lodz soren aero"
    assert fold("plain ASCII") == "plain ascii"


def test_folding_keeps_the_marks_that_make_another_letter_in_other_scripts() -> None:
    assert fold("が") != fold("か")  # Japanese voicing is not an accent
    assert fold("서울") == "서울"  # Hangul stays composed
    assert list(words("नमस्ते दुनिया")) == ["नमस्ते", "दुनिया"]  # vowel signs inside the word
    assert list(words("שָׁלוֹם עולם")) == ["שָׁלוֹם", "עולם"]


def test_an_exact_token_is_found_inside_a_cjk_run_and_across_accents() -> None:
    assert contains_token("支付服务迁移到新的数据库服务器", "数据库")
    assert contains_token("Rendez-vous au café de la gare", "cafe")
    assert contains_token("Lunch with ZOË", "Zoe")
    assert not contains_token("the code BIL-1423", "BIL-142")


# -- search ----------------------------------------------------------------------------------


def test_exact_phrases_are_found_in_every_script(keyword_vault: Vault) -> None:
    """Recall of the phrases as written, first hit, by script: 0 for Chinese and Japanese
    before pairs (a sentence was one word), see bench/languages.py."""
    scripts = {n.name: n.script for n in NOTES}
    found: dict[str, list[bool]] = defaultdict(list)
    for q in QUERIES:
        assert q.variant or q.text in next(n.text for n in NOTES if n.name == q.note), q
        found[scripts[q.note] + ("+typed" if q.variant else "")].append(
            f"notes/{q.note}.md" in found_first(keyword_vault, q.text)
        )
    written = [ok for group, oks in found.items() if "+typed" not in group for ok in oks]
    typed = [ok for group, oks in found.items() if "+typed" in group for ok in oks]
    assert sum(written) / len(written) >= 0.9, dict(found)
    assert sum(typed) / len(typed) >= 0.9, dict(found)
    for group, oks in found.items():
        assert sum(oks) / len(oks) >= 0.8, (group, oks)


def test_a_quoted_phrase_filters_inside_cjk_runs_and_across_accents(keyword_vault: Vault) -> None:
    assert found_first(keyword_vault, '"東京タワー"', limit=10) == ["notes/ja-tower.md"]
    assert found_first(keyword_vault, '"cafe de la gare"', limit=10) == ["notes/fr-cafe.md"]
    assert set(found_first(keyword_vault, '"数据库"', limit=10)) == {
        "notes/zh-server.md",
        "notes/zh-db.md",
    }


def test_a_one_character_query_finds_its_word(keyword_vault: Vault) -> None:
    assert set(found_first(keyword_vault, "猫", limit=10)) == {"notes/zh-cat.md", "notes/ja-cat.md"}


# -- an index written by the analyzer before this one ---------------------------------------


def _as_written_before(root: Path) -> None:
    """Make the index look as an earlier version left it: its words by the old analyzer
    (runs of word characters, lower-cased; Whoosh's default), the analyzer not recorded."""
    import re

    old = re.compile(r"[\w\*]+(\.?[\w\*]+)*")
    conn = sqlite3.connect(root / ".vault" / "index.sqlite")
    with conn:
        for uid, text in conn.execute("SELECT id, text FROM chunks").fetchall():
            terms = " ".join(m.group().lower() for m in old.finditer(text))
            conn.execute("UPDATE chunks SET terms=? WHERE id=?", (terms, uid))
        conn.execute("DELETE FROM meta WHERE key='analyzer'")
    conn.close()


def _change_meta(root: Path, statement: str) -> None:
    """Run `statement` on the index's meta table: what an earlier version left recorded."""
    conn = sqlite3.connect(root / ".vault" / "index.sqlite")
    with conn:
        conn.execute(statement)
    conn.close()


def _index_meta(root: Path, key: str) -> Any:
    conn = sqlite3.connect(root / ".vault" / "index.sqlite")
    try:
        row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    finally:
        conn.close()
    return row[0] if row else None


def test_an_index_of_the_old_analyzer_gets_its_words_again_and_keeps_its_vectors(
    vault_dir: Path, loaded_embedder: Any
) -> None:
    (vault_dir / "notes").mkdir()
    (vault_dir / "notes" / "tower.md").write_text("週末に東京タワーへ行った。\n", "utf-8")
    (vault_dir / "notes" / "cafe.md").write_text("Rendez-vous au café avec Hélène.\n", "utf-8")
    (vault_dir / "notes" / "plain.md").write_text("Plain English: the deploy moved.\n", "utf-8")
    with Vault(vault_dir) as vault:
        first = vault.index()
        assert first.units_embedded == first.units > 0
    _as_written_before(vault_dir)
    with Vault(vault_dir) as vault:
        assert found_first(vault, "東京タワー", 10) == ["notes/tower.md"]  # the search heals it
    with Vault(vault_dir) as vault:
        report = vault.index()
        assert (report.modified, report.units_embedded) == (0, 0)  # done; nothing re-embedded
        assert found_first(vault, "Helene", 10) == ["notes/cafe.md"]
    assert _index_meta(vault_dir, "analyzer") == str(ANALYZER)


def test_an_old_index_of_ascii_text_is_not_indexed_again(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULT_MODEL_DISABLED", "1")
    (vault_dir / "notes").mkdir()
    (vault_dir / "notes" / "plain.md").write_text("Plain English: the deploy moved.\n", "utf-8")
    with Vault(vault_dir) as vault:
        vault.index()
    _as_written_before(vault_dir)
    with Vault(vault_dir) as vault:
        report = vault.index()
    assert report.modified == 0
    assert _index_meta(vault_dir, "analyzer") == str(ANALYZER)


# -- emoji (analyzer 3) ------------------------------------------------------------------------


def test_a_chat_line_with_an_emoji_is_found_by_the_word_it_stands_for(
    vault_dir: Path, loaded_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "got a 🐶 today!!" (real chats): found by "dog", keyword and hybrid; an
    index of analyzer 2 (emoji left out) gets the words of those files again, and keeps
    their vectors."""
    import vault_memory.index.words as words_module

    (vault_dir / "memory" / "2023-05-08.md").write_text(
        "# 2023-05-08\n\n## 20:01 — session 3\n\n"
        "- **Ria**: guess who got a 🐶 today!!\n"
        "- **Sam**: omg no way\n"
        "- **Ria**: and we had 🍕 for dinner to celebrate\n"
        "- **Sam**: I walked past the shelter on Main Street yesterday\n",
        "utf-8",
    )
    with monkeypatch.context() as before:  # the analyzer of the version before: no emoji
        before.setattr(words_module, "name_pictographs", lambda text: text)
        with Vault(vault_dir) as vault:
            first = vault.index()
            assert first.units_embedded == first.units > 0
            assert found_first(vault, "dog") == []
    _change_meta(vault_dir, "UPDATE meta SET value='2' WHERE key='analyzer'")
    with Vault(vault_dir) as vault:
        report = vault.index()
        assert (report.modified, report.units_embedded) == (1, 0)  # words again, no vectors
        assert "got a 🐶" in vault.search("Did Ria get a dog?", mode="keyword", limit=1)[0].text
        hit = vault.search("What did they eat? pizza", limit=1)[0]
        assert "🍕 for dinner" in hit.text
    assert _index_meta(vault_dir, "analyzer") == str(ANALYZER) == "3"


# -- emoji in the vectors (embedder.PICTOGRAPHS) -----------------------------------------------

PARTY = (
    "# 2023-05-08\n\n## 20:01 — session 3\n\n"
    "- **Ria**: 🎂🎉 best day ever!!\n"
    "- **Sam**: the printer at work jammed again\n"
    "- **Ria**: my train was late this morning\n"
    "- **Sam**: finished the tax forms, finally\n"
)


def test_the_bundled_model_reads_a_pictograph_as_its_words(
    loaded_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its vocabulary holds no emoji: "🎂🎉" was two [UNK]s, as far from a birthday as from
    anything. The full embedder and the light query encoder give them the same words."""
    from vault_memory.index.embedder import QueryEncoder
    from vault_memory.index.words import spelled_pictographs

    said = "🎂🎉 best day ever!!"
    assert spelled_pictographs(said) == " birthday cake  party popper  best day ever!!"
    assert spelled_pictographs("I ❤️ NY 😂") == "I  heart love  NY 😂"  # a face: how, not what
    document = loaded_embedder.embed([said])[0]
    spelled = loaded_embedder.embed([spelled_pictographs(said)])[0]
    assert float(document @ spelled) > 0.9999
    encoder = QueryEncoder()
    assert float(encoder.embed_query(said) @ document) > 0.999
    question = encoder.embed_query("When was the birthday party?")
    assert float(question @ document) > 0.45
    with monkeypatch.context() as before:  # what the model read before: [UNK] [UNK] best…
        before.setattr(loaded_embedder, "_text", None)
        unknown = loaded_embedder.embed([said])[0]
    assert float(question @ unknown) < 0.25  # under `weak_cosine`: nothing near


def test_a_line_of_emoji_is_found_by_meaning_and_an_old_index_embeds_it_again(
    vault_dir: Path, loaded_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vector-only search finds the line of emoji by what they stand for (before, it came
    first of four unrelated lines, flagged weak: nothing near); an index made before (emoji
    embedded as [UNK]) embeds those texts again once, the others kept."""
    import vault_memory.index.embedder as embedder_module

    (vault_dir / "memory" / "2023-05-08.md").write_text(PARTY, "utf-8")
    (vault_dir / "memory" / "2023-05-09.md").write_text(
        "# 2023-05-09\n\n## 09:00 — notes\n\n- Bought milk and bread.\n", "utf-8"
    )
    query = "When was the birthday party?"
    with monkeypatch.context() as before:  # the embedder of the version before
        before.setattr(embedder_module, "spelled_pictographs", lambda text: text)
        before.setattr(loaded_embedder, "_text", None)
        with Vault(vault_dir) as vault:
            first = vault.index()
            assert first.units_embedded == first.units > 0
            hit = vault.search(query, mode="semantic", limit=1)[0]
            assert hit.start_line == 5 and "weak" in hit.flags  # [UNK]s: nothing near
    _change_meta(vault_dir, "DELETE FROM meta WHERE key='pictographs'")
    with Vault(vault_dir) as vault:
        report = vault.index()
        assert (report.modified, report.units_embedded) == (1, 1)  # that text alone
        hit = vault.search(query, mode="semantic", limit=1)[0]
        assert (hit.path, hit.start_line, hit.flags) == ("memory/2023-05-08.md", 5, [])
        assert vault.index().units_embedded == 0  # once
    assert _index_meta(vault_dir, "pictographs") == "1"
