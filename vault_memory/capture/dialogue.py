"""Extraction for conversations between people (friends catching up, a meeting transcript), not
a user and an assistant.

The offline rules of `extract` believe an assistant only when it decides or commits, and a user
when a sentence carries a signal (a preference, a decision, a name, a number). Between people,
both speakers are the memory's subjects, and what they tell about themselves usually comes
without such a signal: "I built that boat over three summers. It's special to me." So here a message
is kept when its speaker says something about themselves (a sentence in the first person, or a
fact by the rules of `extract`) or answers the other's question ("What do your turtles eat?" -
"Leafy greens and crickets."), and then with every statement of the message: the sentences
that follow "I built that boat" say what it meant. Left out: questions (a statement that ends
in one keeps the statement), greetings, thanks, congratulations, encouragement, wishes and
reactions aimed at the listener ("I'm so proud of you", "Keep it up!", "I hope your knee heals
soon"), the conversation's own bookkeeping ("I'll keep you posted", "since we last talked"),
requests, and the listener's name used as an address ("Hey Tomas, …"). A short answer is kept
when it names things ("Luna and Oliver!").
The kept sentences of a message form one entry (several when they exceed the entry size), so
a thought stays together under its speaker's name.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Iterable

from .conversation import Message
from .extract import (
    FlushEntry,
    asks,
    classify,
    is_filler,
    is_listeners_taste,
    is_others_taste,
    is_reaction,
    is_request,
    make_entry,
    message_sentences,
    unique,
)

_WORD = re.compile(r"[\w'’-]+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# words that only say how something felt ("It was so much fun!")
_FEELING_WORDS = _words("""
    it it's its was is are were be been being that's this that these those they they're them
    such so really very totally super truly absolutely just quite pretty too much many a an the
    and or but what how all such as of fun blast great awesome amazing cool nice wonderful
    beautiful lovely fantastic incredible special exciting excited crazy wild good bad tough hard
    rough sweet cute adorable inspiring powerful stunning gorgeous perfect epic insane brilliant
    excellent terrific neat fab fabulous magical unreal surreal intense emotional touching
    awful terrible sad scary fun-filled time experience one thing day moment
""")
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|we'll|we'd|us|our|ours|"
    r"ourselves)\b"
)
_SPEAKER_AS_SUBJECT = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|we|we're|we've|we'll|we'd|my|our)\b")
_SECOND_PERSON = re.compile(r"\b(?:you|your|you're|you've|you'll|you'd|yours|yourself|ya|u|ur)\b")
# the subject left out, as people do in chat: "Been busy with the shelter", "Just started yoga",
# "Finishing the choreography for the festival" (but "Raising money is crucial" has a subject)
_UNSAID_I = re.compile(
    r"^(?:(?:just|finally|still|recently|currently|also|really|totally|only|even|already|"
    r"actually|slowly)\s+)*(?:been|got|gotten|went|had|made|took|saw|did|found|bought|spent|met|"
    r"left|felt|tried|started|finished|visited|moved|joined|learned|learnt|picked|signed|"
    r"decided|planning|thinking|hoping|trying|looking|working|getting|going|heading|starting|"
    r"finishing|loving|enjoying|doing|feeling|keeping|gonna|gotta|wanna|can't wait|love|"
    r"hope|wish|need|want|miss|think)\b"
)
_HAS_SUBJECT = re.compile(
    r"^\S+(?:\s+\S+){0,3}?\s+(?:is|are|was|were|has|have|can|will|makes?|"
    r"helps?|brings?|gives?)\b"
)
# a reaction to what the listener said or showed ("That sounds amazing!", "Wow, so cool"); "It
# was an awesome time" describes the speaker's own day and is kept
_OWN_DESCRIPTION = re.compile(
    r"^(?:it|it's|it is|it was|it has|it's been|they|they're|they are|"
    r"they were|we|we're)\b"
)
# courtesy that opens a sentence: thanks, congratulations, farewells, sympathy
_COURTESY = re.compile(
    r"^(?:(?:and|but|so|oh|well|also|yeah|yes|yep|wow|hey|hi|aw+|omg|ok|okay)[\s,!.]+)*"
    r"(?:thanks|thank you|thx|ty|congrats|congratulations|kudos|cheers|good luck|best of luck|"
    r"well done|way to go|take care|see (?:you|ya)|talk (?:to you )?(?:soon|later)|bye|"
    r"goodbye|(?:you're|you are) welcome|no worries|no problem|my pleasure|sorry to hear|"
    r"sorry (?:about|for) (?:the|that|this|your)|"
    r"so sorry|glad to (?:hear|see|know)|happy to (?:hear|see|help)|good to (?:hear|see|know)|"
    r"nice to (?:hear|see|know)|great to (?:hear|see|know|chat|talk)|love (?:that|this|it)|"
    r"me too|same here|hugs|miss you|love you|long time no (?:see|talk|chat)|"
    r"can't wait to (?:hear|see)|guess what|happy (?:birthday|anniversary|holidays|new year|"
    r"thanksgiving|easter)|merry christmas|good (?:morning|night|evening|afternoon))\b"
)
# the speaker's feelings about the listener: "I'm so proud of you", "I'm here for you",
# "I can see why you're thrilled", "I totally agree"
_TO_LISTENER = re.compile(
    r"\b(?:i'm|i am|i was|i feel|we're|we are)\s+(?:(?:so|really|very|super|truly|totally|"
    r"just|always|also|genuinely)\s+)*(?:happy|glad|proud|sorry|thrilled|excited|thankful|"
    r"grateful|here|rooting|cheering|impressed|inspired|stoked|honou?red|jealous)\s+"
    r"(?:for|of|to hear|to see|to know|about|with|by|that)\s+(?:you|your)\b"
    r"|^i\s+(?:(?:really|totally|completely|so|just)\s+)*(?:can (?:see|imagine|tell)|"
    r"know (?:what|how) you|agree|understand|hear you|bet|appreciate (?:you|your|it|that)|"
    r"admire (?:you|your)|believe in you)\b"
    r"|^i (?:can )?(?:(?:just|only|totally|really)\s+)*(?:imagine|picture)\b"
    r"|\bhere (?:for|to (?:support|help|listen to)) you\b|\bglad (?:i|we) could help\b"
    r"|\bappreciate (?:the|your|all the|all your) (?:support|help|kind words|advice|"
    r"encouragement|feedback|offer)\b|\b(?:i'll|i will) do my best\b"
    r"|^(?:it|that|this|your (?:support|words|help|kindness)) (?:really )?means? "
    r"(?:a lot|so much|the world)\b"
    r"|^i\s+(?:(?:really|totally|just|so|absolutely)\s+)*(?:love|like|admire|adore|appreciate|"
    r"enjoy)\s+(?:how |that |what |the way )?(?:you|your)\b"
    r"|^i(?:'d| would) love to (?:see|hear|read|try|meet|know)\b.*\b(?:you|your|yours)\b"
    # wishes and reassurance for the listener: "I'm sure you'll nail it", "I hope your knee
    # heals soon", "I'm sorry to hear about Max"
    r"|^i(?:'m| am)\s+(?:(?:so|really|very|just|totally|absolutely)\s+)*(?:sure|confident|"
    r"certain|positive|glad|happy|sorry)\b[^.!?]*\b(?:you|your|you're|to hear)\b"
    r"|^i(?:'m| am)\s+(?:(?:so|really|totally|absolutely)\s+)*(?:sure|confident|certain)\s+"
    r"(?:that\s+)?(?:he|she|it|they|things|everything|it'll|they'll|he'll|she'll)\b"
    r"|\b(?:have|having) (?:you|friends like you|a friend like you|people like you)\b"
    r"|\bthere for (?:you|ya)\b"
    r"|^i\s+(?:(?:really|just|truly)\s+)*(?:hope|wish|bet)\s+(?:that\s+)?(?:you|your)\b"
    # the conversation's own bookkeeping: "I'll keep you posted", "I'll let you know"
    r"|\b(?:keep|kept) (?:you|ya|u) (?:posted|updated|in the loop)\b"
    r"|^(?:i'll|i will|will)\s+(?:(?:definitely|sure|make sure to|be sure to)\s+)*let (?:you|ya)"
    r" know\b"
)


def between_people(messages: Iterable[Message]) -> bool:
    """A conversation between people: no assistant speaks, and users of at least two names do."""
    names: set[str] = set()
    for message in messages:
        if message.role == "assistant":
            return False
        if message.role == "user" and message.name:
            names.add(message.name)
    return len(names) >= 2


def extract_dialogue(
    messages: list[Message], max_chars: int, day: dt.date | None = None
) -> list[FlushEntry]:
    """Entries of a conversation between people: per message, what its speaker tells (see the
    module's docstring), under the speaker's name, relative dates pinned to `day`."""
    speakers = {m.name for m in messages if m.role == "user" and m.name}
    entries: list[FlushEntry] = []
    asked_by: str | None = None  # who asked a question in the message before, if anyone
    for message in messages:
        if message.role != "user" or not message.text.strip():
            continue
        listeners = speakers - {message.name}
        kept: list[tuple[str, tuple[str, int] | None]] = []
        # a reply to someone else's question tells, even without a word about the speaker:
        # "What do your turtles eat?" - "They eat vegetables, fruits and insects."
        tells = asked_by is not None and asked_by != message.name
        sentences = list(message_sentences(message.text))
        asked_by = message.name if any(asks(w) for w, _ in sentences) else None
        for said, trimmed in sentences:
            written = _unaddressed(said, listeners)
            trimmed = trimmed if written == said else written
            polite = _without_courtesy(written)
            if polite is not None and polite == written:
                polite = _without_catch_up(written)
            if polite is None:
                continue
            sentence = _told_part(trimmed if polite == written else polite)
            verdict, found = judge(sentence, listeners)
            if verdict is None:
                continue
            kept.append((sentence, found))
            tells = (
                tells or verdict in ("self", "others") or (found is not None and found[0] == "fact")
            )
        if tells:
            entries.extend(_pack(kept, message.speaker, max_chars, day))
    return unique(entries)


def judge(
    sentence: str, listeners: Collection[str] = ()
) -> tuple[str | None, tuple[str, int] | None]:
    """(verdict, category) of a sentence of a message between people. The verdict is "self"
    (the speaker tells about themselves), "others" (the speaker tells the taste of the
    listener, of someone named, or of "we" together), "said" (a statement that stands on its
    own) or None (nothing to keep: a question, courtesy, a reaction or request aimed at the
    listener, filler, a short remark); the category is what `extract.classify` finds, if
    anything."""
    words = _WORD.findall(sentence)
    low = sentence.lower().replace("’", "'")
    if asks(sentence) or is_filler(words) or _COURTESY.match(low):
        return None, None
    if len(words) < 4:
        # a short answer that names things ("Luna and Oliver!"), not a greeting or a name
        # called out ("Hey Tomas!")
        return ("said", None) if _names_things(words, listeners) else (None, None)
    if _TO_LISTENER.search(low) or _CHEER.match(low):
        return None, None
    if is_request(low) and not _OWN_DOING.match(low):
        return None, None  # "Tell me more about them!" (but "Now I'm gonna submit it")
    found = classify(sentence, "user")
    if found and found[1] >= 3:
        # "Don't forget to …", "remember why we do it": said to each other, not to the memory
        found = (found[0], 1)
    listener = _SECOND_PERSON.search(low.removeprefix("you know "))
    if found and found[0] == "preference" and (is_listeners_taste(low) or is_others_taste(low)):
        # "You hate mornings", "Maya can't stand seafood", "We both love the old town": what
        # the speaker knows of the listener's, someone's or their shared taste
        return "others", found
    if listener and found and found[0] == "preference":
        found = None  # "I love how you tell it", "I'd love to see yours": not a taste of theirs
    if listener and not _SPEAKER_AS_SUBJECT.search(low) and found is None:
        return None, None  # "Your words mean a lot to me": about the listener
    if _FIRST_PERSON.search(low) or (_UNSAID_I.match(low) and not _HAS_SUBJECT.match(low)):
        return "self", found
    if _SECOND_PERSON.search(low):
        return None, None
    if is_reaction(low) and not _OWN_DESCRIPTION.match(low):
        return None, None
    if found is None and _only_feeling(words):
        return None, None  # "It was so much fun!", "Such a blast."
    return "said", found


# cheering the listener on: "Keep up the great work!", "Don't give up!", "Have a blast!"
_CHEER = re.compile(
    r"^(?:(?:just|so|and|but|now)\s+)?(?:keep (?:up|going|it up|pushing|at it|those|your|on|"
    r"chasing|grinding|shining|rocking|believing|smiling)|stay (?:strong|positive|motivated|"
    r"focused|safe|tuned|awesome|cool)|hang in|don't (?:give up|quit|stop|lose|let|worry|"
    r"miss|be (?:too )?hard)|never (?:give up|stop|quit)|have (?:a (?:good|great|nice|fun|"
    r"wonderful|blast|safe)|fun)|enjoy (?:it|the|your)|take care|go for it|you(?:'ve)? got "
    r"this|believe in yourself|good luck|let's keep)\b"
)
_OWN_DOING = re.compile(
    r"^(?:(?:now|then|also|and|so|but)\s+)+(?:i|i'm|i've|i'll|i'd|we|we're|"
    r"we've|we'll|my|our)\b"
)
_CONNECTORS = _words("and or & of the a an in at on with from to")


def _names_things(words: list[str], listeners: Collection[str]) -> bool:
    """Every word of a short sentence is a name or joins names ("Luna and Oliver", "In
    Lisbon"), and not only a listener's name or a greeting."""
    named = [w for w in words if w.lower() not in _CONNECTORS]
    # the first word is capitalised anyway: "Idea!" is not a name, "Luna and Oliver!" holds one
    return any(w[:1].isupper() for w in words[1:]) and all(
        w[:1].isupper() and not is_filler([w]) and not _is_listener(w, set(listeners))
        for w in named
    )


def _only_feeling(words: list[str]) -> bool:
    """Every word only says how something felt: an evaluation, an intensifier, a pronoun."""
    return all(w.lower().replace("’", "'") in _FEELING_WORDS for w in words)


def _without_courtesy(sentence: str) -> str | None:
    """The sentence without the courtesy that opens it ("Thanks for asking, we got another cat"
    -> "We got another cat"); None when the courtesy is all it says."""
    match = _COURTESY.match(sentence.lower().replace("’", "'"))
    if match is None:
        return sentence
    boundary = _CLAUSE_END.search(sentence, match.end())
    rest = sentence[boundary.end() :].strip() if boundary else ""
    if len(_WORD.findall(rest)) < 4:
        return None
    return rest[:1].upper() + rest[1:]


_CLAUSE_END = re.compile(r"[,;:!.?—–]\s+|\s+-+\s+|-\s+")

# catching up: the time since the last talk ("since we last spoke", "long time no see", "it's
# been ages") and news announced, not told ("a lot has happened", "I gotta tell you something")
_CATCH_UP = re.compile(
    r"\bsince (?:we|i) (?:last )?(?:talked|chatted|spoke|caught up|saw each other|met)"
    r"(?: last)?\b|\blong time no (?:see|talk|chat|hear)\b|"
    r"\b(?:been|it's been|it has been|seems like) (?:a while|ages|forever|a minute|so long|too "
    r"long|a few days|a couple (?:of )?days|a busy week)\b|"
    r"^(?:so |quite )?(?:a lot|lots|much|so much|some (?:pretty )?(?:cool|big|crazy|exciting) "
    r"(?:stuff|things)|crazy (?:stuff|things?)|something(?: \w+)?|interesting things|things)"
    r"(?:'s| has| have)? (?:been )?(?:happen(?:ed|ing)|going on)\b|"
    r"^(?:there's )?something i (?:want|need|have) to (?:tell|share with|show) (?:you|ya)\b|"
    r"^i (?:gotta|got to|have to|want to|wanted to) tell (?:you|ya) (?:about )?(?:something|"
    r"this thing)\b"
)


_QUESTION_OPENING = re.compile(
    r"^(?:what|what's|how|how's|why|when|where|who|which|is|are|was|were|do|does|did|have|has|"
    r"had|can|could|would|will|should|shall|may|any|wanna|want|got|ever)\b",
    re.I,
)


def _told_part(sentence: str) -> str:
    """A statement that ends in a question, without the question: "I finished another pottery
    project - want to see a pic?" -> "I finished another pottery project." A question through
    and through ("Did you go, or was it cancelled?") is left as it is (and left out)."""
    if not asks(sentence) or _QUESTION_OPENING.match(sentence):
        return sentence
    cuts = list(_CLAUSE_END.finditer(sentence))
    if not cuts:
        return sentence
    head = sentence[: cuts[-1].start()].rstrip(" ,;:—–-")
    if asks(head) or len(_WORD.findall(head)) < 4:
        return sentence
    return head + "."


def _without_catch_up(sentence: str) -> str | None:
    """The sentence without its clauses about catching up ("Since we last spoke, I took up
    pottery" -> "I took up pottery"); None when catching up is all it says."""
    low = sentence.lower().replace("’", "'")
    if not _CATCH_UP.search(low):
        return sentence
    clauses, start = [], 0
    for boundary in _CLAUSE_END.finditer(sentence):
        clauses.append(sentence[start : boundary.end()])
        start = boundary.end()
    clauses.append(sentence[start:])
    kept = [c for c in clauses if not _CATCH_UP.search(c.strip().lower().replace("’", "'"))]
    rest = "".join(kept).strip()
    if len(_WORD.findall(rest)) < 4:
        return None
    return rest[:1].upper() + rest[1:]


# "Tomas, …", "Hey Tomas, …", "Wow Jo! …": a name called out, after an interjection or not
_ADDRESS = re.compile(
    r"^(?:(?:hey|hi|hello|oh|wow|woah|whoa|yeah|yes|yep|aw+|omg|ok|okay|well)[\s,!]+)?"
    r"([A-Z][\w'-]+)\s*[,!]\s+(?=\S)",
    re.I,
)


def _unaddressed(sentence: str, listeners: set[str]) -> str:
    """The sentence without the listener's name used as an address: "Hey Tomas, it's been a
    while" or "That was fun, Jo!" (a first name or its short form, "Jo" for Joana)."""
    start = _ADDRESS.match(sentence)
    if start and _is_listener(start[1], listeners):
        rest = sentence[start.end() :]
        sentence = rest[:1].upper() + rest[1:]
    end = re.search(r",\s*([A-Z][\w'-]+)\s*([!.]*)\s*$", sentence)
    if end and _is_listener(end[1], listeners):
        sentence = sentence[: end.start()] + end[2]
    return sentence


def _is_listener(word: str, listeners: set[str]) -> bool:
    """`word` names a listener: one of their names, or the first three letters or more of one."""
    word = word.strip()
    return len(word) >= 2 and any(
        part == word or (len(word) >= 3 and part.startswith(word))
        for name in listeners
        for part in name.split()
    )


def _pack(
    kept: list[tuple[str, tuple[str, int] | None]],
    speaker: str,
    max_chars: int,
    day: dt.date | None,
) -> list[FlushEntry]:
    """The kept sentences as entries of at most `max_chars`, in order; each entry is tagged with
    the weightiest category found among its sentences (a fact when none)."""
    groups: list[list[tuple[str, tuple[str, int] | None]]] = [[]]
    size = 0
    for sentence, found in kept:
        if groups[-1] and size + 1 + len(sentence) > max_chars:
            groups.append([])
            size = 0
        groups[-1].append((sentence, found))
        size += len(sentence) + 1
    entries = []
    for group in groups:
        labels = [f for _, f in group if f is not None]
        category, importance = max(labels, key=lambda f: f[1]) if labels else ("fact", 1)
        entry = make_entry(
            " ".join(s for s, _ in group), category, importance, speaker, max_chars, day
        )
        if entry is not None:
            entries.append(entry)
    return entries
