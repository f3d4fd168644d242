"""What a flushed entry says once it is in MEMORY.md: a statement, not a line of transcript.

`vault flush` writes what was said under the speaker's label: `User: We decided to use uv
instead of pip. #decision`, `Ines: I went to a pottery class yesterday (2026-05-10).`
MEMORY.md holds statements (its provenance comment says where each came from), so a dream
promotes such an entry without the label:

- the user's own words as they are: MEMORY.md is the user's memory, its "I" is its owner
  (`We decided to use uv instead of pip. #decision`);
- anyone else's in the third person when the entry opens with "I …" or "My …" and says
  nothing else in the first person (`Ines went to a pottery class yesterday …`, `The
  assistant will open the PR by Friday.`), only for forms that need no other change: "I'm",
  "I was", "I've", "I'll", a modal, a past tense;
- otherwise as a quote, attributed after it: `“I built that boat over three summers! It's special to
  me.” — Tomas`. Not `Tomas: …` or `Tomas said: …`: a label before a colon makes the
  line "about Tomas" for search (README, "Subjects"), which, on top of MEMORY.md's own
  weight, would put every promoted remark of hers above whatever the logs hold about her.

`speaker_label` tells a flush label from a label someone wrote ("Decision: …"). Pure.
"""

from __future__ import annotations

import re

from ..capture import NOTE_LABELS
from ..files import TAG_NAME

OWNER_LABELS = frozenset({"user"})
ASSISTANT_LABELS = frozenset({"assistant"})

_LABEL = re.compile(r"^(?P<label>[^\W\d_][\w .'’-]{0,39}?):[ \t]+(?P<rest>\S.*)$", re.S)
_TRAILING_TAGS = re.compile(rf"(?:\s+#{TAG_NAME})+\s*$")
_ADVERB = (
    r"(?:(?:just|also|really|finally|recently|actually|still|already|even|only|never|"
    r"always|once|totally|definitely|first|then|ultimately|eventually|originally)\s+)*"
)
_IRREGULAR_PAST = re.findall(
    r"\S+",
    (
        "went got made took saw did had found bought met left felt ran began came gave kept lost "
        "wrote won told thought spent sent built brought caught chose drove fell fought flew forgot "  # noqa: E501
        "grew heard held hid hurt knew led lent lit meant paid put quit rode rang rose said sat "
        "sold shot shut sang slept spoke stood stole swam taught threw understood woke wore"
    ),
)
# (opener, what replaces it after the subject): "I'm" -> "Ines is"
_OPENERS = (
    (re.compile(r"^I(?:'|’)m\s+|^I am\s+"), "is "),
    (re.compile(r"^I was\s+"), "was "),
    (re.compile(r"^I(?:'|’)ve\s+|^I have\s+(?=" + _ADVERB + r"\w+(?:ed|en|wn)\b)"), "has "),
    (re.compile(r"^I(?:'|’)ll\s+|^I will\s+"), "will "),
    (
        re.compile(
            r"^I\s+(?=" + _ADVERB + r"(?:can|could|should|must|might|would|may|shall|had|"
            r"did|didn't|can't|won't|couldn't|wouldn't|shouldn't|\w+ed|"
            + "|".join(_IRREGULAR_PAST)
            + r")\b)"
        ),
        "",
    ),
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|we'll|"
    r"we'd|us|our|ours|ourselves)\b",
    re.I,
)


def speaker_label(text: str) -> tuple[str, str] | None:
    """(label, the rest) when a flushed entry opens with its speaker's label: "User", "Assistant"
    or a name (up to four words, not a note label such as "Decision" or "Next steps")."""
    match = _LABEL.match(text.strip())
    if match is None:
        return None
    label = match["label"].strip()
    words = label.split()
    if len(words) > 4 or label.lower() in NOTE_LABELS or words[0].lower() in NOTE_LABELS:
        return None
    if any(ch.isdigit() for ch in label):
        return None  # "Ticket BIL-1423": not a name
    if len(words) > 1 and not all(w[:1].isupper() for w in words):
        return None  # "next steps", "root cause": words, not a name
    return label, match["rest"].strip()


def as_memory(text: str) -> str:
    """A flushed entry as MEMORY.md states it (see the module's docstring); text without a
    speaker label is returned as it is."""
    found = speaker_label(text)
    if found is None:
        return text
    label, rest = found
    tags = _TRAILING_TAGS.search(rest)
    body, suffix = (rest[: tags.start()], tags[0]) if tags else (rest, "")
    body = body.strip()
    if label.lower() in OWNER_LABELS:
        return body + suffix
    subject = "The assistant" if label.lower() in ASSISTANT_LABELS else label
    third = _third_person(body, subject)
    if third is not None:
        return third + suffix
    return f"“{body}” — {subject}{suffix}"


def _third_person(body: str, subject: str) -> str | None:
    """`body` with `subject` instead of its opening "I …" / "My …", or None when that would
    need more than swapping the opening words (a present tense, another "I" later)."""
    for opener, verb in _OPENERS:
        match = opener.match(body)
        if match:
            rest = body[match.end() :]
            if _FIRST_PERSON.search(rest):
                return None
            return f"{subject} {verb}{rest}"
    match = re.match(r"^My\s+", body)
    if match and not _FIRST_PERSON.search(body[match.end() :]):
        return f"{subject}'s {body[match.end() :]}"
    return None
