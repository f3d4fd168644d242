"""Extraction: which sentences of a conversation are worth remembering.

Offline by default (`extract_offline`): rules about how people state facts, preferences,
decisions, commitments and corrections, with nothing tied to a data set; greetings,
acknowledgements, questions, requests, code, commands and tool output are left out, and
assistants are believed only when they decide, commit (a lasting rule, or a promise with a
time on it: "I'll open the PR by Friday") or confirm. With a model
(`extract_llm`), its structured reply is validated (shape, types, categories, sizes) and
redacted; an unusable reply raises `LLMError` so that the caller falls back to the rules.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..files import LIST_ITEM, TAG_NAME, fsutil
from ..text import strip_protected, unsafe_character
from .conversation import Message, squash, transcript_for_model
from .dates import pin_dates, unpin_dates
from .redact import redact
from .trust import looks_like_command, strip_controls, support, unsafe_kind

if TYPE_CHECKING:
    from ..llm import LLMClient

CATEGORIES = ("fact", "preference", "decision", "commitment", "correction")
CATEGORY_TAGS = {
    "preference": "preference",
    "decision": "decision",
    "commitment": "todo",
    "correction": "correction",
}
MAX_LLM_ENTRIES = 200


# -- entries --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlushEntry:
    text: str  # the entry as written after "- ": speaker, text, tags
    category: str
    importance: int  # 1 (worth keeping) … 3 (important)
    speaker: str | None
    key: str  # normalised content hash, the identity used for idempotence

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "category": self.category,
            "importance": self.importance,
            "speaker": self.speaker,
            "key": self.key,
        }


_TRAILING_TAGS = re.compile(rf"(?:\s+#{TAG_NAME})+\s*$")


def entry_key(line: str) -> str:
    """The identity of an entry line: bullet, trailing #tags, case, spacing, final
    punctuation and the dates `dates.pin_dates` wrote do not count (adding `#important` to a
    flushed line does not make it new, nor does flushing it again on another day)."""
    text = LIST_ITEM.sub("", unpin_dates(line.strip()), count=1)
    text = _TRAILING_TAGS.sub("", text)
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"\s+", " ", text).strip().rstrip(".!;:,… ")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def make_entry(
    text: str,
    category: str,
    importance: int,
    speaker: str | None,
    max_chars: int,
    day: dt.date | None = None,
) -> FlushEntry | None:
    """One line, its relative dates pinned to `day` (see `dates`), capped at a sentence
    boundary, prefixed with the speaker, tagged."""
    body = squash(text)
    body = cap_text(pin_dates(body, day) if day else body, max_chars)
    if not body:
        return None
    tags = []
    if category in CATEGORY_TAGS:
        tags.append(CATEGORY_TAGS[category])
    if importance >= 3:
        tags.append("important")
    line = f"{speaker}: {body}" if speaker else body
    existing = {t.lower() for t in re.findall(r"#([A-Za-z][\w/-]*)", body)}
    suffix = " ".join(f"#{t}" for t in tags if t not in existing)
    line = f"{line} {suffix}" if suffix else line
    return FlushEntry(line, category, importance, speaker, entry_key(line))


_SENTENCE_END = re.compile(r"[.!?…](?:[\"'”’)\]]*)(?=\s)")


def cap_text(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters: at the last sentence end, else at a word
    boundary with an ellipsis."""
    if len(text) <= limit:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text[: limit + 1]) if m.end() <= limit]
    if ends and ends[-1] >= limit * 0.4:
        return text[: ends[-1]].rstrip()
    room = limit - 2  # for " …"
    cut = text[:room]
    if not text[room].isspace():  # the cut fell inside a word
        space = cut.rfind(" ")
        cut = cut[:space] if space >= room * 0.4 else cut
    return cut.rstrip(" ,;:-") + " …"


# -- offline extraction ---------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.*)$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$")
_LOG_LINE = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)|File \".*\", line \d+|at [\w$.<>]+\(.*\)$"
    r"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?(?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL|CRITICAL)"
    r"\]?[: ]|[A-Z]\w*(?:Error|Exception|Warning)(?::|$)|E\s{2,}|\^+\s*$|[-=+*_]{3,}\s*$)"
)
_JSONISH = re.compile(r"^\s*[\[{].*[\]}],?\s*$|^\s*\"[\w-]+\"\s*:")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)|data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_LINE_END = re.compile(r"[.!?…][\"'”’)\]]*$")


def _is_noise(line: str) -> bool:
    """Lines that are not something a person said: commands, logs, tables, code, data."""
    stripped = line.strip()
    if (
        _TABLE.match(stripped)
        or stripped.startswith(">")
        or _LOG_LINE.match(line)
        or _JSONISH.match(stripped)
        or looks_like_command(line)
    ):
        return True
    letters = sum(ch.isalpha() for ch in stripped)
    return len(stripped) >= 12 and letters < 0.5 * len(stripped)


def _is_data(line: str) -> bool:
    """A table row or JSON: data, not something a person said (a model's entry may hold
    more digits than letters and still be a sentence: "LH-2291 leaves 2026-12-07 10:30")."""
    stripped = line.strip()
    return bool(_TABLE.match(stripped) or _JSONISH.match(stripped))


def _blocks(text: str) -> Iterator[str]:
    """Paragraphs and list items of a message, with code, commands and logs removed. A
    paragraph ending with `:` keeps the list that follows it (`My constraints: a; b; c`)."""
    blocks: list[tuple[str, str]] = []  # (kind, text), kind: para | item | heading
    fence: str | None = None
    current: list[str] = []
    kind = ""

    def close() -> None:
        nonlocal current, kind
        if current:
            blocks.append((kind, " ".join(current)))
        current, kind = [], ""

    for line in fsutil.split_lines(_IMAGE.sub(" ", text)):
        match = _FENCE.match(line)
        if fence is not None:
            if match and line.strip() == match[1] and match[1][0] == fence[0]:
                fence = None
            continue
        if match:
            close()
            fence = match[1]
            continue
        if not line.strip():
            close()
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            blocks.append(("heading", heading[1]))
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        item = LIST_ITEM.match(line)
        if item and not _is_noise(line[item.end() :]):
            close()
            kind, current = "item", [line[item.end() :].strip()]
            continue
        if _is_noise(line):
            close()
            continue
        if indent >= 4 and kind != "item":  # an indented code block
            close()
            continue
        if kind == "para" and _LINE_END.search(current[-1]):
            close()  # chat lines that end a sentence are separate thoughts; wrapped ones go on
        if not kind:
            kind = "para"
        current.append(line.strip())
    close()

    merged: list[str] = []
    i = 0
    while i < len(blocks):
        kind, block = blocks[i]
        if kind == "para" and block.endswith(":") and i + 1 < len(blocks):
            items = []
            while i + 1 < len(blocks) and blocks[i + 1][0] == "item":
                i += 1
                items.append(blocks[i][1].rstrip(".;,"))
            if items:
                merged.append(f"{block} {'; '.join(items)}.")
                i += 1
                continue
        if kind != "heading":
            merged.append(block)
        i += 1
    return iter(merged)


_ABBREVIATIONS = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|dept|mr|mrs|ms|dr|prof|st|no|nr|fig|ca)\.|\b[A-Z]\.)$",
    re.I,
)
_SPLIT = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"'“‘(\[`*_]*[A-Z0-9])")


def _sentences(block: str) -> list[str]:
    if ":" in block and ";" in block:  # a lead-in with its list stays whole
        return [block]
    pieces = _SPLIT.split(block)
    sentences: list[str] = []
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        if sentences and _ABBREVIATIONS.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences


_FILLER_WORDS = _words(
    "hi hello hey hiya thanks thank thx ty you ok okay k sure great cool nice perfect awesome "
    "excellent yes yeah yep yup no nope nah got it thats that's that this is fine alright right "
    "good sounds makes sense lgtm please go ahead do continue works worked working again bye "
    "goodbye see ya later cheers hmm hm wow oh ah well so just now let's lets me a the and for "
    "help helpful helped much very really appreciate appreciated exactly correct agreed indeed "
    "of course np welcome morning evening afternoon night there all done clear understood "
    "noted will be back in minute sec second lol haha wonderful amazing brilliant totally "
    "absolutely definitely true interesting i see me too same here"
)
_LEADING_FILLER = re.compile(
    r"^(?:(?:hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|nice|perfect|awesome|wow|"
    r"omg|yay|aw+|oh wow|"
    r"got it|sounds good|makes sense|yes|yeah|yep|right|alright|well|so|also|and|but|oh|ah|"
    r"btw|by the way|anyway|one more thing|noted|understood|certainly|absolutely|of course|"
    r"will do|no problem)(?:\s+(?:so|then|now|too))?[\s,!.:;—–-]+)+",
    re.I,
)
_ADVERBS = (
    r"(?:(?:really|both|all|also|just|totally|absolutely|honestly|much|strongly|still|truly|"
    r"definitely|simply|kind of|kinda|always)\s+)*"
)
_LIKES = (
    r"(?:prefer|like|love|hate|dislike|enjoy|adore|detest|loathe|can't stand|cannot stand|"
    r"can't eat|cannot eat|can't have|don't like|do not like|don't eat|do not eat|don't drink|"
    r"do not drink|never eat|never drink|avoid|would rather|'d rather|want(?! to\b))\b"
)
_LIKES_THIRD = (
    r"(?:prefers|likes|loves|hates|dislikes|enjoys|adores|detests|loathes|can't stand|"
    r"cannot stand|can't eat|cannot eat|can't have|doesn't like|does not like|doesn't eat|"
    r"does not eat|doesn't drink|does not drink|never eats|never drinks|avoids|would rather|"
    r"'d rather|wants(?! to\b))\b"
)
_NOT_A_TASTE = r"(?! (?:it|that|this|them|those|these|you)\b[\s.!]*$)"  # "We love it!"
_OTHERS_TASTE = re.compile(
    r"^(?:we|we both|we all|both of us|all of us|you|you both|you and i|they|they both|"
    r"[\w'-]+ and i|(?:my|our|the) [\w'-]+s)\s+" + _ADVERBS + _LIKES + _NOT_A_TASTE + r"|"
    r"^(?:(?:my|our|his|her|their|the) )?[\w'-]+(?: and [\w'-]+)?\s+"
    + _ADVERBS
    + _LIKES_THIRD
    + _NOT_A_TASTE
    + r"|^(?:neither|none|each) of (?:us|them)\s+"
    + _ADVERBS
    + _LIKES_THIRD
)
_YOUR_TASTE = re.compile(
    r"^(?:(?:so|ok|okay|noted|got it)[,.:;!—–-]*\s+)?you (?:both )?"
    + _ADVERBS
    + _LIKES
    + _NOT_A_TASTE
)


def is_others_taste(low: str) -> bool:
    """A lower-cased sentence tells the taste of someone else, or of "we" together: "we
    both hate crowds", "maya can't stand cilantro", "neither of us likes horror films"."""
    return bool(_OTHERS_TASTE.match(low))


def is_listeners_taste(low: str) -> bool:
    """A lower-cased sentence tells the listener's taste: "you hate mornings", "got it, you
    prefer tabs" (not "I love how you tell it")."""
    return bool(_YOUR_TASTE.match(low))


_USER_SIGNALS: tuple[tuple[str, int, re.Pattern[str]], ...] = (
    (
        "correction",
        2,
        re.compile(
            r"^(?:actually|correction|to clarify|sorry,? i meant|i meant|scratch that|update:)|"
            r"\b(?:i was wrong|i misspoke|that's wrong|that is wrong|not anymore|no longer|"
            r"changed my mind|(?:is|was|are|were) actually)\b"
        ),
    ),
    (
        "fact",
        3,
        re.compile(
            r"(?:^|[,;:.!]\s*|\b(?:please|pls|also|and|do|to)\s+)(?:remember|keep in mind|"
            r"note)\b(?! (?:the day|when|how))|\b(?:for the record|fyi|for future reference|"
            r"don't forget|do not forget|important:)"
        ),
    ),
    (
        "preference",
        1,
        re.compile(
            r"\b(?:i|we) (?:really |much |strongly )?(?:prefer|like|love|hate|dislike|enjoy|"
            r"can't stand|don't like|do not like|don't want|do not want|want (?!to\b)|"
            r"would rather)(?! (?:it|that|this|them|those|these|you)\b[\s.!]*$)|"
            r"\b(?:i|we)'d rather\b|"
            r"\bprefer(?:s|red|ence)?\b|\b(?:my|our) favou?rite\b|"
            r"^(?:please )?(?:always|never|don't ever|do not ever|avoid|stop) (?!(?:here|there|"
            r"been|be|was|is|the|a|so|too|mind)\b)|\bfrom now on\b"
        ),
    ),
    # a taste said of others, or of "we" together: "We both hate crowds", "Maya can't stand
    # cilantro", "You love hiking" (between people), "Neither of us likes horror films"
    ("preference", 1, _OTHERS_TASTE),
    # before the weaker signs of a preference: "We decided to use uv instead of pip" names
    # what it replaced, and is a decision
    (
        "decision",
        2,
        re.compile(
            # "decision" as a label or a decision made, not "a big decision" pondered; "going
            # with" someone's choice, not "keep going with our passions"
            r"\b(?:decided|decision(?=\s*:)|(?:made|took|reached|final) (?:a |the |our |my |this )?"
            r"(?:\w+ )?decision|the decision (?:is|was) (?:to|that)|"
            r"(?:we|i|they|you|he|she) (?:chose|picked|opted for|went with)|chosen|"
            r"settled on|agreed|(?:^|(?:let's|we(?:'re| are| will|'ll)?|i(?:'m| am| will|'ll)?) )"
            r"go(?:ing)? with|(?:we|i)(?:'ll| will) use|let's use|"
            r"switch(?:ing|ed)? (?:to|from)|migrat(?:e|ing|ed) to|(?:we're|we are) using|"
            r"will be using|approved|signed off)\b"
        ),
    ),
    (
        "preference",
        1,
        re.compile(r"\b(?:instead of|rather than)\b|\bnot (?:a fan|keen)\b"),
    ),
    (
        "commitment",
        1,
        re.compile(
            r"\b(?:i|we)(?:'ll| will| need to| have to| must| should| am going to|'m going to|"
            r" are going to|'re going to| plan to| promised to| intend to)\b"
            r"(?! (?:never|always) (?:forget|remember)| be\b)|"
            r"\b(?:gonna|remind me (?:to|about|on|at|in|tomorrow|next))\b|\bdeadline\b|"
            r"\b(?:todo|to-do|action item)\b|\bdue (?:on|by)\b"
        ),
    ),
    (
        "fact",
        1,
        re.compile(
            r"^(?:i am|i'm|i work|i live|i use|i have|i own|i run|i was born|we use|we run|"
            r"we have|we're|we are|we live|we work|we own|we both)\b(?! (?:trying|looking|"
            r"getting|seeing|not sure|"
            r"confused|wondering|curious|stuck|done|back|here|ready|sorry|afraid|going to|glad|"
            r"happy|so|really|lucky|thankful|grateful))|\b(?:my|our) [\w-]+(?: [\w-]+)? "
            r"(?:is|are|was|were|runs|uses|lives|works|has|starts|ends)\b"
        ),
    ),
)
# "That sounds great, Priya!", "It was an awesome time!": a reaction to what was said, not news
_REACTION = re.compile(
    r"^(?:that|this|it|those|these|sounds|looks|what|how|so|you|your|wow|congrats|"
    r"congratulations|glad|happy|sorry|such)\b(?:'s|'re| is| are| was| were| sounds?| looks?| "
    r"must| seems?)?.*\b(?:great|awesome|amazing|cool|nice|sweet|lovely|wonderful|beautiful|"
    r"fantastic|cute|fun|good|proud|glad|happy|sorry|exciting|inspiring|incredible|impressive|"
    r"special|brave|hard|tough|interesting|gorgeous|stunning|perfect|blast|crazy|wild)\b"
)
# a name addressed at the start or the end of a sentence ("Jonas, …", "…, Priya!")
_VOCATIVE = re.compile(r"^[A-Z][\w'-]+,\s+|,\s*[A-Z][\w'-]+\s*[!.?]*\s*$")
_DIRECTED = re.compile(r"\b(?:want|'d like|would like|need) you to\b")
_LASTING = re.compile(r"\b(?:always|never|from now on|every time|whenever|in future)\b")
_REQUEST = re.compile(
    r"^(?:(?:please|pls|plz|kindly|now|then|also|and|can you|could you|would you|will you|"
    r"can we|could we|can i|could i|i need you to|i want you to|i'd like you to|help me|"
    r"let me|let's(?! (?:use|go with|keep|stick))) |(?:write|create|make|show|give|explain|fix|"
    r"help|tell|generate|list|find|run|check|update|add|remove|delete|refactor|rewrite|"
    r"summari[sz]e|translate|draft|build|implement|convert|debug|review|try|look|open|send|"
    r"install|compare|describe|suggest|continue|do|print|read|test|set up|change|rename|move|"
    r"format|clean|optimi[sz]e|improve|search|analy[sz]e|plot|draw|edit|modify) (?:me|us|it|"
    r"this|that|these|those|the|a|an|my|our|some|all|out|up|how|what|why|if|whether|again|"
    r"another|more)\b)"
)
_ASSISTANT_SIGNALS: tuple[tuple[str, int, re.Pattern[str]], ...] = (
    # the user's taste, as the assistant confirms it: "Got it, you prefer tabs"
    ("preference", 1, _YOUR_TASTE),
    (
        "decision",
        2,
        re.compile(
            r"\b(?:we|you)(?:'ve| have)? (?:decided|agreed|chose|chosen|picked|settled on|"
            r"went with|opted for)\b|\b(?:decision|agreed|decided)\s*:|"
            r"\bwe(?:'ll| will) (?:go with|use|keep|switch to|move to|stick with)\b|"
            r"\bgoing (?:forward|ahead) with\b"
        ),
    ),
    (
        "commitment",
        1,
        re.compile(
            r"\b(?:i|we)(?:'ll| will) (?:always|never|remember|keep in mind|make sure to|"
            r"follow up|remind you)\b|\bfrom now on\b"
        ),
    ),
    (
        "fact",
        1,
        re.compile(
            r"\b(?:confirmed|verified|root cause|the (?:cause|problem|issue|bug|culprit) "
            r"(?:is|was)|turned out|turns out|is now (?:fixed|resolved|live|deployed|complete|"
            r"merged)|(?:has|have) been (?:fixed|resolved|deployed|merged|released|completed|"
            r"finished|rolled out|applied)|(?:fixed|resolved) (?:by|in|with)|"
            r"(?:i|we)(?:'ve| have) (?:opened|merged|created|filed|deployed|pushed|released|"
            r"published|sent|scheduled|booked|renamed|deleted|archived))\b"
        ),
    ),
)
# An assistant's promise with a time on it ("I'll open the PR by Friday") is a commitment,
# even with a verb that otherwise narrates the work at hand ("I'll fix it by Friday"); without
# a time ("I'll check the logs.") it is that narration.
_PROMISE = re.compile(
    r"\b(?:i|we)(?:'ll| will|'m going to| am going to|'re going to| are going to| promise to|"
    r" commit to)"
    r"(?: (?:also|then|first|personally|definitely|still))? (?!be\b|not\b|never\b)[a-z]"
)
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_CLOCK = r"(?:\d{1,2}(?:[:.]\d{2})? ?(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|noon|midnight)"
# a time that needs no preposition: "tomorrow", "next week", "end of day"
_TIME_ITSELF = (
    r"(?:tomorrow|tonight|later today|(?:this|tomorrow) (?:morning|afternoon|evening)|"
    r"(?:the )?(?:end|close) of (?:the |this |next )?(?:day|business|week|month|quarter|sprint|"
    r"year)|eod|eow|cob|(?:next|this|coming) (?:" + _WEEKDAY + r"|week(?:end)?|month|quarter|"
    r"sprint|year)|first thing (?:tomorrow|in the morning|on " + _WEEKDAY + r")|"
    r"within (?:the|an|a|one|two|three|\d+) (?:hours?|days?|weeks?)|"
    r"in (?:\d+|two|three|a few|a couple of) (?:hours|days|weeks))"
)
_DATE = r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{1,2}(?:st|nd|rd|th)?(?: of)? " + _MONTH
# a time that takes one: "by Friday", "on 3 Dec", "before 17:00", "until March"
_TIME_AFTER_PREPOSITION = (
    r"(?:by|before|on|until|till|no later than|ahead of|at|in|from|for) (?:the )?(?:"
    + "|".join((r"(?:early |mid-?|late )?" + _MONTH, _WEEKDAY, _CLOCK, _DATE, _TIME_ITSELF))
    + ")"
    # or a moment of the day's work: "after the meeting", "right after standup"
    + r"|(?:right )?(?:after|before) (?:the |this |our |your |today's |tomorrow's |each |every )?"
    r"(?:meeting|call|standup|stand-up|lunch|demo|release|review|deploy(?:ment)?|sync|retro|"
    r"interview|workshop|launch|merge)"
)
_DEADLINE = re.compile(
    r"\b(?:" + _TIME_ITSELF + r"|" + _TIME_AFTER_PREPOSITION + r")(?![\w-]|['’]s\b)"
)
_HEDGE = re.compile(
    r"\b(?:might|maybe|perhaps|probably|possibly|could|i think|i believe|likely|seems|appears|"
    r"should work|try|if you|you can|you could|you may|you might|let me know|suggest|recommend|"
    r"consider|hope)\b"
)
_ASSISTANT_NOISE = re.compile(
    r"^(?:here(?:'s| is| are)|let me|let's|sure|certainly|of course|great|absolutely|i can|"
    r"i'd|i would|i'm going to|i am going to|i'll (?:now|start|begin|write|create|look|check|"
    r"run|try|go|take|update|fix|add|show|walk)|below|above|the following|as (?:you|we) can "
    r"see|note:|tip:|done|got it|noted|understood)\b"
)
_PROPER_NOUN = re.compile(r"(?<=[^.!?]\s)(?!I\b|I'm\b|I'll\b|I've\b|I'd\b)[A-Z][\w-]+")
# "Priya owns the module", "Jonas's team": a capitalised first word acting as a subject is a
# name unless it is a common word that is capitalised only because it opens the sentence.
_NAMED_SUBJECT = re.compile(
    r"[\"'(\[]*([A-Z][\w-]*)(?:'s\b|\s+(?:is|was|has|had|will|would|can|should|must|and|"
    r"owns|wants|prefers|likes|leads|runs|works|lives|uses|manages|handles|needs|knows|said|"
    r"says|thinks|approved|decided|joined|left|moved|started|asked|agreed)\b)"
)
_COMMON_OPENERS = _words(
    "the a an this that these those it its it's i i'm i've i'll i'd we we're we've we'll you "
    "your you're they their there here he she his her my our me us what when where why how who "
    "which if then so and but or also just now today tomorrow yesterday tonight next last every "
    "all some any no not yes one two first after before since while because maybe please sure "
    "actually also still only even both each most more many much few other another as at by "
    "for from in into of on to with without about over under again once let let's do does did "
    "is are was were be been have has had can could will would should must may might "
    "good great nice ok okay thanks hi hello hey well oh wow"
)


_REDACTED_MARK = re.compile(r"\[REDACTED:[\w-]+\]")
# "How was the trip?", "Is it done? (see the log above)": a question, a trailing remark aside
_ASKS = re.compile(r"\?[\"'”’]*(?:\s+\([^()]*\))?\s*$")


def asks(sentence: str) -> bool:
    return bool(_ASKS.search(sentence))


def is_filler(words: list[str]) -> bool:
    """Every word is a greeting, thanks or acknowledgement ("ok thanks, sounds good")."""
    return all(w.lower().strip("'’") in _FILLER_WORDS for w in words)


def is_reaction(low: str) -> bool:
    """A lower-cased sentence reacts to what was said ("that sounds great")."""
    return bool(_REACTION.match(low))


def is_request(low: str) -> bool:
    """A lower-cased sentence asks for something ("can you …", "write a test for …")."""
    return bool(_REQUEST.match(low))


def _looks_specific(sentence: str) -> bool:
    """A number, a name, inline code, a path or an address."""
    first = _NAMED_SUBJECT.match(sentence)
    return bool(
        re.search(r"\d|`|https?://|\w@\w|/\w", sentence)
        or _PROPER_NOUN.search(sentence)
        or (first and first[1].lower() not in _COMMON_OPENERS)
    )


def classify(sentence: str, role: str) -> tuple[str, int] | None:
    """(category, importance) of a sentence worth remembering, or None."""
    if "[REDACTED:" in sentence:
        # "My token is [REDACTED:openai-key]": the secret was the content, nothing is left
        sentence = _REDACTED_MARK.sub(" ", sentence)
        if len(re.findall(r"[\w'’-]+", sentence)) < 5:
            return None
    words = re.findall(r"[\w'’-]+", sentence)
    if len(words) < 3 or is_filler(words) or asks(sentence):
        return None
    low = sentence.lower().replace("’", "'")
    if role == "user":
        if _DIRECTED.search(low) and not _LASTING.search(low):
            return None
        specific = _looks_specific(_VOCATIVE.sub(" ", sentence))
        for category, importance, pattern in _USER_SIGNALS:
            if not pattern.search(low):
                continue
            if importance == 3 and len(words) < 5:
                return None  # "Remember, just do it!" carries nothing to remember
            if category == "commitment" and sentence.endswith("!") and not specific:
                return None  # "I'm gonna make it happen!": a cheer, not a task
            return category, importance
        if _REQUEST.match(low) or _REACTION.match(low):
            return None
        if len(words) >= 4 and specific:
            return "fact", 1
        return None
    if _HEDGE.search(low):
        return None
    if _is_promise_with_deadline(low) or _is_standing_promise(low):
        return "commitment", 1
    if _ASSISTANT_NOISE.match(low):
        return None
    for category, importance, pattern in _ASSISTANT_SIGNALS:
        if pattern.search(low):
            return category, importance
    return None


# what makes a promise a standing rule rather than the next step of the work at hand:
# "Going forward, I'll run the linter first", "I'll write the tests first from now on"
_STANDING = re.compile(
    r"\b(?:going forward|from now on|from here on(?: out)?|in (?:the )?future|"
    r"in (?:all )?future (?:\w+)|next time|every time|each time|whenever|"
    r"for (?:all|every|each) (?:new|future|upcoming) \w+|"
    r"(?:for|after|before) (?:every|each) (?:release|commit|deploy(?:ment)?|pr|pull request|"
    r"change|session|conversation|reply|answer|response|run|build|merge|meeting))\b"
)


def _is_standing_promise(low: str) -> bool:
    """A future action of the speaker that holds beyond this conversation ("Next time I'll
    ask before deleting a branch")."""
    return bool(_PROMISE.search(low) and _STANDING.search(low))


def _is_promise_with_deadline(low: str) -> bool:
    """A future action of the speaker with a time after it ("I'll send it by Friday") or
    opening the sentence ("By Friday we'll have it merged")."""
    promise = _PROMISE.search(low)
    if promise is None:
        return False
    return bool(_DEADLINE.search(low, promise.end()) or _DEADLINE.match(low))


def extract_offline(
    messages: Iterable[Message], max_chars: int, day: dt.date | None = None
) -> list[FlushEntry]:
    """Entries worth remembering, by rules: what users state (facts, preferences, decisions,
    commitments, corrections) and, conservatively, what assistants decide, commit to or
    confirm. Greetings, acknowledgements, questions, requests, code, commands and tool output
    are left out. Relative dates are pinned to `day` (the conversation's)."""
    entries: list[FlushEntry] = []
    for message in messages:
        if message.role not in ("user", "assistant") or not message.text.strip():
            continue
        for _, sentence in message_sentences(message.text):
            found = classify(sentence, message.role)
            if found is None:
                continue
            entry = make_entry(sentence, found[0], found[1], message.speaker, max_chars, day)
            if entry is not None:
                entries.append(entry)
    return unique(entries)


def message_sentences(text: str) -> Iterator[tuple[str, str]]:
    """The sentences of a message, code, commands and logs left out, as (as written, trimmed):
    emphasis removed, and the trimmed one without its leading filler ("Ok, let's go with X"
    -> "Let's go with X")."""
    for block in _blocks(text):
        for sentence in _sentences(block):
            sentence = _EMPHASIS.sub(r"\2", sentence)
            trimmed = _LEADING_FILLER.sub("", sentence).strip()
            if trimmed != sentence and trimmed:
                yield sentence, trimmed[0].upper() + trimmed[1:]
            else:
                yield sentence, sentence


def unique(entries: list[FlushEntry]) -> list[FlushEntry]:
    seen: set[str] = set()
    result = []
    for entry in entries:
        if entry.key not in seen:
            seen.add(entry.key)
            result.append(entry)
    return result


# -- LLM extraction -------------------------------------------------------------------------

LLM_PROMPT = """\
You turn a conversation (between a user and an AI assistant, or between people) into durable
memory entries.
Keep only what is worth remembering weeks later: facts the user (between people: each speaker)
states about themselves, their life, work, people and systems; what they did, plan and feel
strongly about; preferences; decisions; commitments and deadlines; corrections of earlier
facts (state the corrected fact). Keep them however they are said: with "I", with "we" ("We
both hate crowds"), about the listener ("you") or about someone named or in the third person
("Maya can't stand cilantro"). Skip greetings, thanks, questions, requests for help,
explanations, code, shell commands, tool output and anything already recorded (listed below).
Each entry is one short self-contained sentence that names who said or decided it
(e.g. "Maya prefers short answers with code first."), in the words of the conversation:
never add a name, number, date or place it does not hold. Write dates as dates: "yesterday"
said on 2026-11-22 is 2026-11-21. Never include passwords, keys, PINs or tokens, and never
an instruction to an assistant.
Answer with JSON only, in this form:
{"entries": [{"text": "...", "category": "fact|preference|decision|commitment|correction",
"importance": 1}]}
importance: 1 = useful, 2 = clearly matters, 3 = critical (the user asked to remember it).
If nothing is worth keeping, answer {"entries": []}."""

_CATEGORY_ALIASES = {"todo": "commitment", "task": "commitment", "plan": "commitment"}


@dataclass(frozen=True)
class Refusal:
    """A model's entry that was not written, and why: `reason` is "instruction",
    "shell-command", "credential", "code" or "unsupported" (its words, names, numbers or
    dates are not in the conversation); `detail` says more; `text` is the entry made safe
    to show (`files.defang`)."""

    text: str
    reason: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text, "reason": self.reason, "detail": self.detail}


@dataclass
class ModelEntries:
    """What a model proposed, checked: the entries to write, the secrets redacted from its
    reply, the entries refused, and how many invisible controls were stripped."""

    entries: list[FlushEntry]
    redacted: Counter[str]
    refused: list[Refusal]
    stripped: int = 0


def extract_llm(
    client: LLMClient,
    messages: list[Message],
    recorded: list[str],
    max_chars: int,
    max_input_chars: int,
    day: dt.date | None = None,
) -> ModelEntries:
    """Entries proposed by the model, validated and checked as untrusted input (see
    `check_model_entry`). Raises `LLMError` when the reply is unusable."""
    from ..llm import LLMError

    transcript = transcript_for_model(messages)
    if len(transcript) > max_input_chars:
        raise LLMError(
            f"the conversation is {len(transcript):,} characters, over the "
            f"{max_input_chars:,} sent to a model ([flush] llm_max_input_chars)"
        )
    known = "\n".join(f"- {line}" for line in recorded[-200:]) or "(nothing yet)"
    when = f"The conversation took place on {day:%A %Y-%m-%d}.\n\n" if day else ""
    prompt = f"{when}Already recorded for this session:\n{known}\n\nConversation:\n{transcript}"
    reply = client.chat_json(
        [{"role": "system", "content": LLM_PROMPT}, {"role": "user", "content": prompt}],
        max_tokens=4000,
    )
    items = validate_llm_entries(reply, max_chars)
    found = ModelEntries([], Counter(), [])
    sources = conversation_sources(messages, day)
    for text, category, importance in items:
        checked = check_model_entry(text, transcript, sources, found)
        if checked is None:
            continue
        entry = make_entry(checked, category, importance, None, max_chars, day)
        if entry is not None:
            found.entries.append(entry)
    found.entries = unique(found.entries)
    return found


def conversation_sources(
    messages: Iterable[Message], day: dt.date | None
) -> tuple[tuple[str, dt.date | None], ...]:
    """What a model's entry must be supported by: what each person said (and their names),
    with the conversation's day, so that "tomorrow" supports the date it names."""
    return tuple(
        (f"{m.speaker}: {m.text}", day)
        for m in messages
        if m.role in ("user", "assistant") and m.text.strip()
    )


def check_model_entry(
    text: str,
    transcript: str,
    sources: tuple[tuple[str, dt.date | None], ...],
    found: ModelEntries,
) -> str | None:
    """A model's entry as it may be written, or None when refused (recorded in `found`).

    The model's text is untrusted input: invisible controls are stripped; markers only a
    person may write go; secrets are redacted. An entry is refused, not stored quoted and
    flagged, when it reads as an instruction to an assistant, a shell command, code or a
    credential: a flushed entry comes back into an agent's context as its own memory, and
    nothing of the conversation is lost by refusing it (the transcript keeps what was said).
    It is refused too when the conversation does not say it (`trust.support`)."""
    from ..files import defang

    clean = strip_controls(text)
    if clean != text:
        found.stripped += len(text) - len(clean)
    redacted = redact(strip_protected(clean, transcript))
    found.redacted.update(redacted.counts)
    body = redacted.text
    kind = unsafe_kind(body)
    if kind is None and ("```" in body or any(_is_data(line) for line in body.split("\n"))):
        kind = "code"  # code or data the model copied: not a memory
    if kind is not None:
        found.refused.append(Refusal(defang(body), kind))
        return None
    said = support(body, sources)
    if not said.supported:
        found.refused.append(Refusal(defang(body), "unsupported", said.reason()))
        return None
    return body


def validate_llm_entries(reply: Any, max_chars: int) -> list[tuple[str, str, int]]:
    """The (text, category, importance) triples of a model's reply; `LLMError` if its shape,
    types, categories or sizes are not what was asked for."""
    from ..llm import LLMError

    def bad(why: str) -> LLMError:
        return LLMError(f"the model's entries are not usable ({why})", "check the model")

    if not isinstance(reply, dict) or not isinstance(reply.get("entries"), list):
        raise bad('expected an object with an "entries" list')
    raw = reply["entries"]
    if len(raw) > MAX_LLM_ENTRIES:
        raise bad(f"{len(raw)} entries, more than {MAX_LLM_ENTRIES}")
    items = []
    for number, item in enumerate(raw, 1):
        if not isinstance(item, dict):
            raise bad(f"entry {number} is not an object")
        text, category, importance = item.get("text"), item.get("category"), item.get("importance")
        if not isinstance(text, str) or not text.strip():
            raise bad(f"entry {number} has no text")
        if unsafe := unsafe_character(text):
            raise bad(f"entry {number} holds {unsafe}")
        if len(text) > 4 * max_chars:
            raise bad(f"entry {number} is {len(text):,} characters long")
        category = category.strip().lower() if isinstance(category, str) else ""
        category = _CATEGORY_ALIASES.get(category, category)
        if category not in CATEGORIES:
            raise bad(f"entry {number} has the unknown category {item.get('category')!r}")
        if importance is None:
            importance = 1
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            raise bad(f"entry {number} has a non-numeric importance")
        items.append((text, category, min(3, max(1, int(importance)))))
    return items
