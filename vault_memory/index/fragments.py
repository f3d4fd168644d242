"""Whether a chat message stands alone, or is a fragment of the one its speaker sends next.

In a chat every message is its own unit: it is what is found, cited and paid for. People
send two to seven messages in a row, and each usually says something whole ("we went to the
lake", "caught 3 fish!!"); joining them into one unit makes a hit of the whole run for one
matching word, and costs its length in the reader's budget. Only a message that does not
stand alone is joined to the next one of its speaker (index/units.py):

- a short one, under `FRAGMENT_CHARS` characters, that does not end its sentence ("so i
  went", "the one in Miami"; "I adopted a greyhound." and "caught 3 fish!!" stand alone);
- one with no verb ("the sunset from the rooftop last night", "such a good movie");
- one whose sentence the next message completes: it ends on a comma, a dash or an ellipsis,
  or on a word no sentence ends on ("and", "the", "my", "to": `OPEN_ENDINGS`), and the next
  one goes on in lower case.

The verb test is a word list (the auxiliaries, the common verbs of chats in their forms) and
the English endings "-ed" and "-ing": no tagger, a few microseconds a message.
"""

from __future__ import annotations

import functools
import re

#: A message shorter than this (its text after the speaker's label) does not stand alone.
FRAGMENT_CHARS = 25

#: Words a sentence does not end on: articles, possessives, prepositions, conjunctions.
_OPEN_ENDINGS = """a an the my your his her our their its this that these those and or but so
because of to for with from in on at by about into onto over under than as like if when while
until unless although though whether which who whose where i we you he she they just very
really too"""
OPEN_ENDINGS = frozenset(_OPEN_ENDINGS.split())

_AUXILIARIES = """am is are was were be been being have has had having do does did done
doing can could will would shall should may might must 's 're 've 'm 'll 'd im ive ill id
dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt havent hasnt
hadnt gonna wanna gotta lets let's"""

# Common verbs of chats, base forms; their -s, -ed and -ing forms follow the endings rule.
_VERBS = """accept add agree allow ask bake be become begin believe bet book borrow bring
build buy call care carry catch change check choose clean climb close come cook cost
count cry cut dance decide die do draw dream drink drive drop eat end enjoy expect explain
fall feel fight find finish fit fly follow forget get give go grab grow guess hang happen
hate have head hear help hike hit hold hope hurt invite join keep kill know laugh learn
leave lend let lie like listen live look lose love make mean meet mind miss move need
open order own paint pass pay pick plan play post prefer pull put read recommend relax
remember rent rest return ride ring rise run save say see seem sell send set share shop
show sing sit sleep smell speak spend stand start stay stop study suppose swim take talk
taste teach tell text thank think throw tour travel try turn understand use visit wait
wake walk want watch wear win wish wonder work worry write"""

# Irregular forms the endings rule does not reach.
_IRREGULAR = """ate began bit broke broken bought brought built came caught chose did drank drew
drove fell felt froze frozen hid shook stole
flew forgot found gave got gotten went gone grew heard held hung kept knew known laid led
left lent lost made meant met paid put ran rang rode rose said sang sat saw seen sent set
slept sold spent spoke stood stuck swam taught thought threw told took taken tore understood
woke won wore wrote written"""

_WORD = re.compile(r"[a-z']+")
_OPEN_MARK = re.compile(r"(?:,|-|–|—|\.\.\.|…)\s*$")


@functools.cache
def verb_forms() -> frozenset[str]:
    """Every form the verb test knows (`_AUXILIARIES`, `_VERBS` with their -s forms,
    `_IRREGULAR`); -ed and -ing words count by their ending."""
    forms = set(_AUXILIARIES.split()) | set(_IRREGULAR.split())
    for verb in _VERBS.split():
        forms.add(verb)
        forms.add(verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s"))
        if verb.endswith("y") and verb[-2:-1] not in "aeiou":
            forms.add(verb[:-1] + "ies")
    return frozenset(forms)


def has_verb(said: str) -> bool:
    """Whether a message's text holds a verb (by the word list and the endings -ed, -ing),
    or a contraction that holds one ("it's", "we'll")."""
    known = verb_forms()
    for word in _WORD.findall(said.lower().replace("’", "'")):
        if word in known or (len(word) > 4 and word.endswith(("ed", "ing"))):
            return True
        if "'" in word and word[word.index("'") :] in known:
            return True
    return False


def leaves_open(said: str, following: str) -> bool:
    """Whether a message's sentence goes on in the next one: it ends on a comma, a dash, an
    ellipsis or a word no sentence ends on, and the next message opens in lower case."""
    ending = said.rstrip()
    if not ending or ending[-1] in ".!?":
        return False
    opens_lower = following.lstrip()[:1].islower()
    if _OPEN_MARK.search(ending):
        return opens_lower or not following.strip()
    words = _WORD.findall(ending.lower())
    return bool(words) and words[-1] in OPEN_ENDINGS and opens_lower


def is_fragment(said: str, following: str) -> bool:
    """Whether a message (its text after the speaker's label) does not stand alone and goes
    with the next message of its speaker (`following`): short and unended, verbless, or a
    sentence the next one completes."""
    text = said.strip()
    unended = not text.endswith((".", "!", "?"))  # "I adopted a greyhound." stands alone
    return (
        (len(text) < FRAGMENT_CHARS and unended)
        or not has_verb(text)
        or leaves_open(text, following)
    )
