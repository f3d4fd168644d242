"""Real chats in search, end to end with the real bundled model: a photo shown on a
line of its own is found with the turn that shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_memory import Vault
from vault_memory.search.ranking import introduced_names, label_partners
from vault_memory.search.spelling import (
    KNOWN_STEMS,
    derive_known_stems,
    joined_words,
    meant_by,
    short_forms,
    slips_of,
    spelling_variants,
    split_words,
    stretch_key,
    stretched_as,
    stretched_lines,
    stretched_terms,
    stretched_variants,
)

from .test_search_subjects import configure

CHAT = """\
# 2023-05-08

## 13:56 — session 1

- **Caroline**: Hey Mel! How have you been?
- **Melanie**: Busy with the kids, but I finished something last week!
- (photo: a painting of a sunset over a lake)
- **Caroline**: Wow, the colours are lovely. I went to a support group yesterday.
- **Melanie**: How was it?
- **Caroline**: Really moving, people shared their stories about painting as therapy.
"""


def chat_vault(vault_dir: Path, text: str = CHAT) -> Vault:
    (vault_dir / "memory" / "2023-05-08.md").write_text(text, encoding="utf-8")
    vault = Vault(vault_dir)
    vault.index()
    return vault


def test_a_photo_caption_is_found_with_the_turn_that_shows_it(vault_dir: Path) -> None:
    vault = configure(chat_vault(vault_dir), coalesce_depth=0)  # no spans merged at query time
    hit = vault.search("Did Melanie paint a sunset?", limit=3, fresh=False)[0]
    assert "finished something" in hit.text and "sunset over a lake" in hit.text
    assert hit.scores["subject"] == 1.5  # the photo is Melanie's: her line, her subject


TWO_NAMES = """\
# 2023-06-01

## 20:10 — session 4

- **Joanna**: Finally finished the screenplay draft tonight.
- **Nate**: That's huge! What is it about?
- **Jo**: A girl who trains turtles and runs away with a circus.
- **Nate**: Ha, I love it. My turtles would approve.
- **Nate**: I adopted a third turtle last week, I love turtles so much.
"""


def test_one_person_under_two_labels_is_one_subject(vault_dir: Path) -> None:
    """The same speaker shown as `Joanna` and as `Jo` in one session: a question
    about Joanna finds what Jo said as hers."""
    vault = configure(chat_vault(vault_dir, TWO_NAMES), coalesce_depth=0)
    hit = vault.search("Does Joanna like turtles?", limit=3, fresh=False)[0]
    assert "trains turtles" in hit.text
    assert hit.scores["subject"] == 1.5 and hit.scores["alias"] == 1.0  # Jo is Joanna
    before = configure(vault, label_partners=False).search(
        "Does Joanna like turtles?", limit=3, fresh=False
    )
    jo = next(h for h in before if "trains turtles" in h.text)
    assert jo.scores["subject"] == 1.0 and jo.scores["alias"] == 0.0  # without: someone else


def test_two_labels_never_in_one_session_are_two_people(vault_dir: Path) -> None:
    apart = TWO_NAMES.replace("- **Jo**:", "\n## 21:30 — session 5\n\n- **Jo**:")
    vault = configure(chat_vault(vault_dir, apart), coalesce_depth=0)
    hits = vault.search("Does Joanna like turtles?", limit=5, fresh=False)
    jo = next(h for h in hits if "trains turtles" in h.text)
    assert jo.scores["alias"] == 0.0 and jo.scores["subject"] == 1.0


def test_a_short_label_that_begins_two_names_names_neither() -> None:
    assert label_partners("joanna", ["jo", "joanna", "nate"]) == ["jo"]
    assert label_partners("jo", ["jo", "joanna", "nate"]) == ["joanna"]
    assert label_partners("joanna", ["jo", "joanna", "john"]) == []  # Jo: Joanna or John?
    assert label_partners("jo", ["jo", "joanna", "john"]) == []
    assert label_partners("carolin", ["carolyn", "carolin", "melani"]) == ["carolyn"]
    assert label_partners("nate", ["jo", "joanna", "nate"]) == []


SHORT_TURNS = """\
# 2023-08-20

## 10:00 — session 2

- **Ria**: sooo how was it
- **Sam**: omg
- **Ria**: tell me everything
- **Sam**: best concert of my life, she played three hours
- **Ria**: lol
- **Sam**: my voice is gone haha
- **Ria**: ok
- **Sam**: also we adopted a puppy named Biscuit
- **Ria**: omg
- **Sam**: so cute
"""


def test_a_turn_of_one_word_ranks_below_what_states_something(vault_dir: Path) -> None:
    """ "lol", "ok", "yes!!": lifted by the lines around them, they took the places
    of lines that say something; now they rank below them and come with their neighbours."""
    vault = configure(chat_vault(vault_dir, SHORT_TURNS), coalesce_depth=0)
    query = "How was the concert?"

    def said(hits: list) -> list[int]:  # the words of each hit's turn, its label aside
        return [len(h.text.split("**:", 1)[1].split()) for h in hits]

    first = vault.search(query, limit=3, fresh=False)
    assert min(said(first)) > 1, [h.text for h in first]  # no "omg", no "lol"
    hits = configure(vault, coalesce_depth=3).search(query, limit=10, fresh=False)
    lol = next(h for h in hits if h.text.endswith("lol"))
    assert lol.scores["short"] == 0.5  # --explain: `short`
    before = configure(vault, short_penalty=0.0, coalesce_depth=0).search(
        query, limit=3, fresh=False
    )
    assert min(said(before)) == 1  # without: "omg" among the first three


INTRODUCED = """\
# 2023-09-02

## 19:00 — session 1

- **Robert**: Hi, I'm Robert, but everyone calls me... well, call me Bob.
- **Ines**: Nice to meet you! I run a small bakery downtown.
- **Robert**: I restore old motorbikes on weekends, a 1972 Honda right now.
- **Ines**: My brother restores motorbikes too, he loves old Hondas.
"""


def test_a_name_a_speaker_asked_to_be_called_names_them(vault_dir: Path) -> None:
    """ "call me Bob" said by Robert: a question about Bob asks about Robert."""
    vault = configure(chat_vault(vault_dir, INTRODUCED), coalesce_depth=0)
    hit = vault.search("What does Bob restore?", limit=3, fresh=False)[0]
    assert "1972 Honda" in hit.text
    assert hit.scores["subject"] == 1.5 and hit.scores["alias"] == 1.0
    # Without it (and without the list of nicknames, where Bob is Robert's too) Bob is nobody.
    before = configure(vault, label_partners=False, nicknames=False).search(
        "What does Bob restore?", limit=3, fresh=False
    )[0]
    assert before.scores["subject"] == 1.0


def test_introduced_names() -> None:
    assert introduced_names("I'm Robert, but call me Bob.") == ["Bob"]
    assert introduced_names("My name is Jo, my name's Jo") == ["Jo", "Jo"]
    assert introduced_names("call me when you land") == []  # not a name


BURST = """\
# 2024-06-01

## 18:02 — session 4

- **Jo**: how was ur weekend
- **Sam**: so i went
- **Sam**: to the lake w my dad
- **Sam**: caught 3 fish!!
- **Jo**: no way
- **Sam**: yeah and mom made pie after
"""


def test_a_burst_is_found_and_read_as_one_message(vault_dir: Path) -> None:
    """One thought over three quick messages (real chats): the question names the
    fish, the answer (the lake) is in the message before; the burst is one hit holding both."""
    vault = configure(chat_vault(vault_dir, BURST), coalesce_depth=0)
    first = vault.search("Where did Sam catch fish?", limit=1, fresh=False)[0]
    assert (first.start_line, first.end_line) == (6, 8)
    assert "lake" in first.text and "fish" in first.text


PLAIN_TURNS = """\
# 2024-06-03

## 20:10 — chat

Jo: do you like dogs? my neighbour has three
Sam: I love turtles, always have
Jo: cool
"""


def test_a_pasted_chat_without_bullets_is_cut_at_each_turn(vault_dir: Path) -> None:
    """A chat pasted as plain lines (`Name: text`, no list items): each turn is a unit of its
    own speaker (real chats), so the subject's line is found as theirs; before, the
    three lines were one paragraph unit that Jo's label opened."""
    vault = configure(chat_vault(vault_dir, PLAIN_TURNS), coalesce_depth=0)
    first = vault.search("What animals does Sam love?", limit=1, fresh=False)[0]
    assert (first.start_line, first.end_line) == (6, 6)
    assert first.text.startswith("Sam:") and first.scores["subject"] > 1.0  # found as his


SLIPS = """\
# 2023-10-14

## 21:40 — session 6

- **Ria**: we finally tried that new restuarant on 5th, the ramen was insane
- **Sam**: jealous!! the last place i went had terrible service
- **Ria**: my sister is visiting next week, we might go again
- **Sam**: I need a break from work, honestly
- **Ria**: take a break! you deserve it
- **Sam**: I baked bread this morning, the break room loved it
- **Ria**: lol the break room gets all your bread
"""


def test_a_typing_slip_in_a_chat_is_found_by_the_word_it_meant(vault_dir: Path) -> None:
    """ "restuarant" typed for "restaurant" (real chats): a question that spells it
    right finds the line at half the word's weight; `spelling` in --explain says why."""
    vault = configure(chat_vault(vault_dir, SLIPS), coalesce_depth=0)
    query = "Which restaurant did Ria try?"
    hit = vault.search(query, mode="keyword", limit=3, fresh=False)[0]
    assert "restuarant on 5th" in hit.text and hit.scores["spelling"] == 1.0
    assert "restuarant" in vault.search(query, limit=1, fresh=False)[0].text  # hybrid too
    off = configure(vault, typo_weight=0.0).search(query, mode="keyword", limit=3, fresh=False)
    assert not any("restuarant" in h.text for h in off)  # without the lever: not a keyword hit


def test_a_misspelt_query_word_finds_the_vaults_spelling(vault_dir: Path) -> None:
    vault = configure(chat_vault(vault_dir, SLIPS), coalesce_depth=0)
    hits = vault.search("resturant", mode="keyword", limit=3, fresh=False)
    # the query's slip and the chat's: one edit apart, and only the lever finds it
    assert "restuarant on 5th" in hits[0].text and hits[0].scores["spelling"] == 1.0
    assert not configure(vault, typo_weight=0.0).search(
        "resturant", mode="keyword", limit=3, fresh=False
    )


def test_a_common_word_one_letter_away_is_another_word(vault_dir: Path) -> None:
    """ "bread" and "break" are one letter apart and both said here several times: neither is
    a slip of the other."""
    vault = configure(chat_vault(vault_dir, SLIPS), coalesce_depth=0)
    for word in ("bread", "break"):
        hits = vault.search(word, mode="keyword", limit=10, fresh=False)
        matched = [h for h in hits if h.scores["keyword"] > 0]
        assert matched and all(word in h.text for h in matched), word
        assert not any(h.scores["spelling"] for h in hits)


def test_slips_are_typing_slips() -> None:
    assert {"restuarant", "resaurant", "restaurnat", "restaurrant", "restsurant"} <= slips_of(
        "restaurant"
    )  # swapped, dropped, doubled, a key next to the meant one
    assert "definately" in slips_of("definitely")  # another vowel for the same sound
    assert "break" not in slips_of("bread") and "planet" not in slips_of("plant")
    for word in ("restaurant", "breakfast", "swimming"):
        assert all(word in meant_by(slip) for slip in slips_of(word))  # one the other's inverse


def test_spelling_variants_take_the_rarer_word_as_the_slip() -> None:
    held = {
        "restaurant": 40,
        "restuarant": 1,
        "definitely": 30,
        "definately": 4,
        "dinner": 5,
        "diner": 5,
        "state": 20,
        "stage": 1,
    }

    def count(word: str) -> int:
        return held.get(word, 0)

    def known(word: str) -> bool:  # English words (stems, in the search: known_stems.txt)
        return word in {"restaurant", "definitely", "dinner", "diner", "state", "stage", "bread"}

    assert spelling_variants("restaurant", count, known) == ["restuarant"]  # rare
    # never the commoner word for a rare one
    assert spelling_variants("restuarant", count, known) == []
    assert spelling_variants("definitely", count, known) == []  # 4: not rare, nor a tenth
    held["definitely"] = 40
    assert spelling_variants("definitely", count, known) == ["definately"]  # a tenth of 40
    assert spelling_variants("dinner", count, known) == []  # both words
    assert spelling_variants("state", count, known) == []  # "stage" is rare, but a word
    # a query word the vault never uses: what it may have meant, however common
    assert spelling_variants("resturant", count, known) == ["restaurant", "restuarant"]
    assert spelling_variants("restaurnt", count, known) == ["restaurant"]
    assert spelling_variants("restrnt", count, known) == []  # two slips away
    assert spelling_variants("bread", count, known) == []  # a word the vault lacks: no slip
    held["restaurant"] = 0  # the vault spells it only wrong: its slips, however common
    assert spelling_variants("restaurant", count, known) == ["restuarant"]
    assert spelling_variants("cafe", count, known) == []  # too short to tell a slip


def test_the_known_stems_are_those_of_the_bundled_vocabulary() -> None:
    stems = KNOWN_STEMS.read_text(encoding="ascii").split()
    assert stems == derive_known_stems()  # regenerate: derive_known_stems(), one per line
    assert {"stage", "thin", "shore"} <= set(stems)
    assert "restuar" not in stems


SHORT_FORMS = """\
# 2023-11-02

## 19:05 — session 8

- **Ria**: my bf got me tickets to the aquarium for my bday!!
- **Sam**: omg cute, when are you going
- **Ria**: next weekend probably, with my sis too
- **Sam**: the last time I went to an aquarium I was ten
"""


def test_a_short_form_in_a_chat_is_found_by_the_full_word(vault_dir: Path) -> None:
    """ "bday", "bf" (real chats): a question in full words finds the line that
    typed them short; `form` in --explain says why."""
    vault = configure(chat_vault(vault_dir, SHORT_FORMS), coalesce_depth=0)
    query = "What did Ria's boyfriend give her for her birthday?"
    hit = vault.search(query, mode="keyword", limit=2, fresh=False)[0]
    assert "for my bday" in hit.text and hit.scores["form"] == 1.0
    off = configure(vault, form_weight=0.0).search(query, mode="keyword", limit=2, fresh=False)
    assert not any("bday" in h.text for h in off)  # no word of the question in it
    sister = configure(vault, form_weight=1.0).search(
        "her sister", mode="keyword", limit=1, fresh=False
    )[0]
    assert "my sis too" in sister.text and sister.scores["form"] == 1.0  # "sis" stems to "si"


def test_short_forms_pair_both_ways_as_the_index_analyses_them() -> None:
    from vault_memory.index import terms_of

    (birthday,), (bday,) = terms_of("birthday"), terms_of("bday")
    assert bday in short_forms(birthday) and birthday in short_forms(bday)
    assert terms_of("pictures")[0] in short_forms(terms_of("pics")[0])
    assert short_forms(terms_of("concert")[0]) == ()
    assert "mom" in short_forms("mother") and "father" in short_forms("dad")  # "my mom"
    tomorrow = terms_of("tomorrow")[0]  # the forms the relative dates read are keywords too
    assert {"2moro", "tmr"} <= set(short_forms(tomorrow)) and "ystrdy" in short_forms("yesterdai")


def test_without_the_word_list_no_word_is_taken_for_a_slip(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from vault_memory.search import spelling

    vault = configure(chat_vault(vault_dir, SLIPS), coalesce_depth=0)
    spelling.known_stems.cache_clear()
    monkeypatch.setattr(spelling, "KNOWN_STEMS", vault_dir / "gone.txt")
    try:
        hits = vault.search("Which restaurant did Ria try?", mode="keyword", limit=3, fresh=False)
        assert not any(h.scores["spelling"] for h in hits)
        assert "typing slips are not matched: gone.txt cannot be read" in caplog.text
    finally:
        spelling.known_stems.cache_clear()


STRETCHED = """\
# 2023-11-04

## 22:40 — session 9

- **Ria**: omg i loooove the new climbing gym!!
- **Sam**: which one
- **Ria**: the one by the river, the walls are sooo goooood
- **Sam**: we should try the pottery place too, I love clay
- **Ria**: yesss
"""


def test_a_stretched_word_in_a_chat_is_found_by_the_word(vault_dir: Path) -> None:
    """ "loooove", "goooood" (real chats): a word stretched for emphasis is found by
    the word, and the other way round; `form` in --explain says why."""
    vault = configure(chat_vault(vault_dir, STRETCHED), coalesce_depth=0)
    query = "What does Ria love?"
    hit = vault.search(query, mode="keyword", limit=1, fresh=False)[0]
    assert "loooove the new climbing gym" in hit.text and hit.scores["form"] == 1.0
    off = configure(vault, form_weight=0.0).search(query, mode="keyword", limit=1, fresh=False)[0]
    assert "loooove" not in off.text  # without the rule: Sam's "I love clay"
    good = configure(vault, form_weight=1.0).search(
        "are the walls good", mode="keyword", limit=1, fresh=False
    )[0]
    assert "sooo goooood" in good.text and good.scores["form"] == 1.0
    typed = vault.search("clay, loooove", mode="keyword", limit=3, fresh=False)
    assert any("I love clay" in h.text and h.scores["form"] for h in typed)  # and back
    assert not any(
        h.scores["form"] for h in vault.search("a god", mode="keyword", limit=3, fresh=False)
    )  # "good", not "god"


def test_stretched_words_read_as_the_words_they_stretch() -> None:
    from vault_memory.index import terms_of

    def term(word: str) -> str:
        (found,) = terms_of(word)
        return found

    assert stretched_as(term("goooood")) == "good"  # a run cut to two, a known word first
    assert stretched_as(term("loveee")) == term("love")  # cut to one
    assert stretched_as(term("happyyyy")) == term("happy")  # the stemmer's final "i"
    assert stretched_as(term("cuteee")) == term("cute")  # "cutee": the stemmer took one "e"
    assert stretch_key(term("funnn")) == stretch_key(term("fun"))  # too short to be known
    assert stretched_as(term("loooove")) == "love"  # "loooov": the stemmer took the "e"
    assert stretched_as(term("boooring")) == term("boring")  # "booor" / "bore"
    assert stretch_key(term("yaaay")) == stretch_key(term("yay"))  # "yaaai" / "yai"
    assert stretched_as(term("coffee")) is None and stretched_as(term("free")) is None
    vocabulary = "\n".join(
        sorted(
            {
                term(w)
                for w in (
                    "apple",
                    "coffee",
                    "free",
                    "goooood",
                    "good",
                    "funnn",
                    "loveee",
                    "loooove",
                    "matt",
                )
            }
        )
    )
    lines = stretched_lines(vocabulary.encode())
    assert set(lines) == {
        term("goooood"),
        term("funnn"),
        term("loveee"),
        term("loooove"),
        "free",
    }  # a final doubled vowel: looked at, and a known word
    found = stretched_terms(lines)
    assert "free" not in {t for terms in (*found[0].values(), *found[1].values()) for t in terms}
    held = set(vocabulary.split("\n"))

    def count(word: str) -> int:
        return int(word in held)

    assert stretched_variants("good", found, count) == [term("goooood")]
    assert stretched_variants("god", found, count) == []
    assert set(stretched_variants("love", found, count)) == {term("loveee"), term("loooove")}
    assert stretched_variants("fun", found, count) == [term("funnn")]
    assert stretched_variants(term("goooood"), found, count) == ["good"]  # a stretched query
    assert stretched_variants("coffe", found, count) == []
    assert stretched_lines(b"") == [] and stretched_lines(b"aaa") == ["aaa"]


LONG_TURN = """\
# 2023-05-08

## 19:02 — chat

- **Sam**: How was your weekend?
- **Ria**: Long story.
- **Ria**: Went fishing with my dad!
- **Ria**: We got up at 5am.
- **Ria**: Drove for four hours.
- **Ria**: Stopped for pancakes twice.
- **Ria**: The car broke down once.
- **Ria**: Ended up at a cabin on Lake Tahoe.
- **Sam**: Sounds amazing.
- **Sam**: My weekend was quiet.
"""

DAD_CALLED = """\
# 2023-05-20

## 18:40 — chat

- **Ria**: My dad called me today.
- **Sam**: How is he?
- **Ria**: He is fine, he bought a new boat.
- **Sam**: Nice.
- **Ria**: He wants to take it to the coast next summer.
- **Sam**: Fun, tell him hi.
"""


def test_a_turn_sent_as_many_messages_is_read_as_one(vault_dir: Path) -> None:
    """A chat sent in short messages (real chats): Ria's turn is seven messages, and
    the one that says where ends it, six lines from the one that names fishing and her dad,
    beyond any window of five units. A window of three turns holds both: the place comes
    before the lines of another day that only name her dad (`turn_window` in the scores).
    That is with a message lifted by all its run-mates' words (`shared_context=False`) and
    by as much as its windows give (`context_cap=0`); by default a run-mate lifts it only by
    the words they share, and context at most twice what the message matches itself
    (tests/test_search_runs.py): on real chats, where each message of a run says its own
    thing, that finds more."""
    (vault_dir / "memory" / "2023-05-20.md").write_text(DAD_CALLED, encoding="utf-8")
    vault = configure(
        chat_vault(vault_dir, LONG_TURN), coalesce_depth=0, shared_context=False, context_cap=0
    )
    question = "Where did Ria go fishing with her dad?"
    hits = vault.search(question, limit=6, fresh=False)
    lines = [(h.path[-13:-3], h.start_line) for h in hits]
    tahoe = lines.index(("2023-05-08", 12))
    assert tahoe < 3 and hits[tahoe].scores["turn_window"] == 1.0
    assert all(day == "2023-05-08" for day, _ in lines[:tahoe])
    before = configure(vault, turn_windows=False).search(question, limit=6, fresh=False)
    lines = [(h.path[-13:-3], h.start_line) for h in before]
    assert ("2023-05-08", 12) not in lines and ("2023-05-20", 5) in lines
    assert not any(h.scores["turn_window"] for h in before)


TYPED_TOGETHER = """\
# 2023-08-14

## 20:15 — chat

- **Joanna**: Yum, I love it when you make coconut milk icecream!
- **Nate**: Haha thanks, the secret is a pinch of salt.
- **Joanna**: My sister slipped on the ice at the rink last winter.
- **Nate**: Ouch, hope she's ok.
- **Joanna**: She is, she put some cream on the bruise.
- **Nate**: We finally did the road trip to the coast last week.
"""


def test_two_words_typed_as_one_are_found_by_either_spelling(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "icecream", "roadtrip", "bookshelf" (real chats): people write two words as
    one, or one as two. A question's "ice cream" finds the vault's "icecream" (the one term
    holds both words), and "roadtrip" finds "road trip" (a unit holding both); `form` in the
    scores. Before, the ice on the rink came first."""
    import vault_memory.search.searcher as searcher

    vault = configure(chat_vault(vault_dir, TYPED_TOGETHER), coalesce_depth=0)
    question = "Which ice cream does Joanna like?"
    first = vault.search(question, limit=3, fresh=False)[0]
    assert "icecream" in first.text and first.scores["form"] == 1.0
    trip = vault.search("Where did Nate go on his roadtrip?", limit=3, fresh=False)[0]
    assert "road trip" in trip.text and trip.scores["form"] == 1.0
    monkeypatch.setattr(searcher, "joined_words", lambda query: [])
    monkeypatch.setattr(searcher, "split_words", lambda query: [])
    before = vault.search(question, limit=3, fresh=False)
    assert "ice at the rink" in before[0].text and not any(h.scores["form"] for h in before)
    assert (
        vault.search("Where did Nate go on his roadtrip?", limit=1, fresh=False)[0].scores["form"]
        == 0.0
    )


def test_words_typed_together_or_apart_as_the_index_analyses_them() -> None:
    """Two words in a row, no stop word, three letters or more (a comma between is no pair);
    a word split only when it is no English word, into two that are ("understand" and
    "carpet" stay whole), one cut ("pet shop", not "pets hop")."""
    assert ("ic", "cream", "icecream") in joined_words("any ice-cream left?")
    assert ("road", "trip", "roadtrip") in joined_words("the road trip")
    assert joined_words("the car, park it") == [] and joined_words("ice is nice") == []
    assert split_words("after the roadtrip") == [("roadtrip", "road", "trip")]
    assert split_words("my icecream") == [("icecream", "ic", "cream")]
    assert split_words("the petshop") == [("petshop", "pet", "shop")]
    assert split_words("I understand the carpet") == [] and split_words("Caroline") == []
