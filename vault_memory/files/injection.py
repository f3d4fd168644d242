"""Instruction-like content in a note: text that would steer the agent it is read back to.

Whatever lands in a vault (a pasted web page, an email, a flushed conversation with a hostile
user) returns to an agent's prompt through search and `context()`. This module says, offline and
without I/O, whether a text looks like an instruction aimed at a model rather than a note for a
person, and why.

Each rule is a *cue* with a weight; a text is flagged when its cues add up to `THRESHOLD`.
Strong cues (weight 2) flag on their own: an override of earlier instructions ("ignore all
previous instructions"), a text addressed to whatever model reads it ("note to any AI reading
this"; a user's "reminder for the agent: short answers" is a preference and passes), a new
identity ("you are now DAN"), chat-template tokens (`<|im_start|>`, `[INST]`), tool-call markup
or JSON, invisible characters that hide text (tag characters, bidi overrides, zero-width
characters inside words) and prose hidden in base64. Weak cues (weight 1) flag only together:
a "system:"/"assistant:" prefix, "act as", a request to send credentials somewhere, secrecy
("without telling the user"), talk of "the user", a pipe-to-shell command.

People's own notes are imperative too ("Call the dentist on Friday", "Ignore the flaky test",
"Send the API keys to the contractor via 1Password"): no single verb flags a note, a weak cue
alone never does. Nothing here deletes or rewrites anything: callers mark and warn.
The corpus is tests/injection_corpus.py; bench/injection.py prints precision and recall.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import re
import unicodedata
import zlib
from dataclasses import dataclass
from typing import Any

THRESHOLD = 2
STRONG = 2
WEAK = 1

_AI = (
    r"(?:ai|a\.i\.|llm|llms|language models?|models?|assistants?|agents?|chat ?bots?|bots?|"
    r"chatgpt|gpt(?:-?\w+)?|claude|gemini|copilot)"
)
_RULES = (
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|"
    r"policies|constraints|programming|context|messages)"
)
_EARLIER = r"(?:previous|prior|above|earlier|preceding|original|initial|old|existing|safety|system)"
_SECRET = (
    r"(?:api[ _-]?keys?|credentials?|passwords?|passphrases?|secrets?|tokens?|"
    r"private keys?|ssh keys?|\.env\b|~/\.ssh|~/\.aws|id_rsa|system prompt|hidden prompt)"
)
_W = r"(?:[\w'’,-]+\s+)"  # one word and its space


def _rx(pattern: str) -> str:
    return pattern  # compiled by _cues() on first use (re.I | re.M)


# (reason, weight, pattern) over the folded text (NFKC, invisible characters removed)
_CUES: list[tuple[str, int, str]] = [
    # overriding what the model was told before
    (
        "override",
        STRONG,
        _rx(
            rf"\b(?:ignore|disregard|forget|override|bypass|do not follow|don'?t follow|"
            rf"stop following|set aside|put aside|discard|abandon)\s+"
            rf"{_W}{{0,4}}?(?:all\s+|any\s+|your\s+|the\s+)?{_EARLIER}?\s*"
            rf"{_W}{{0,2}}?{_RULES}\b"
        ),
    ),
    ("override", STRONG, _rx(r"\bforget (?:everything|all)\b.{0,40}\b(?:told|said|above|before)")),
    (
        "override",
        STRONG,
        _rx(
            r"\b(?:ignore|disregard|forget)\s+(?:everything|all|anything)\s+"
            r"(?:(?:of\s+)?the\s+)?(?:above|before|prior|earlier|said|written)"
        ),
    ),
    (
        "override",
        STRONG,
        _rx(
            rf"\b(?:your|the|these|{_EARLIER})\s+(?:\w+\s+)?{_RULES}\s+(?:have|has|are|were)?\s*"
            r"(?:changed|been (?:updated|changed|replaced|revoked)|outdated|obsolete|void|"
            r"cancell?ed|superseded|no longer appl\w*)"
        ),
    ),
    ("override", STRONG, _rx(rf"\b{_RULES}\s+no longer appl")),
    (
        "override",
        STRONG,
        _rx(
            r"\b(?:take|takes) (?:priority|precedence) over (?:everything|all|"
            r"any|your|the)"
        ),
    ),
    (
        "prompt-leak",
        STRONG,
        _rx(
            r"\b(?:reveal|print|show|output|repeat|leak|dump)\s+(?:\w+\s+){0,2}?(?:system|hidden|"
            r"initial|secret)\s+(?:prompt|instructions|configuration)"
        ),
    ),
    # addressed to a model
    (
        "addressed",
        STRONG,
        _rx(
            rf"\b(?:note|message|instructions?|reminder|this)\s+(?:is\s+)?(?:to|for)\s+"
            rf"(?:any|all|every)\s+(?:\w+\s+)?{_AI}\b"
        ),
    ),
    # ... or to "the AI assistant", "our LLM": a person's assistant or agent is no model, so
    # a definite article alone is not enough, the words must say it is one
    (
        "addressed",
        STRONG,
        _rx(
            r"\b(?:note|message|instructions?|reminder)\s+(?:is\s+)?(?:to|for)\s+"
            r"(?:the|my|our|your)\s+(?:ai|a\.i\.|llm|chat ?bot|language model)\b"
            r"(?!\s+(?:team|project|group|squad|vendor|company|startup|product)\b)"
        ),
    ),
    ("addressed", STRONG, _rx(rf"\bif you(?:'re| are) (?:an? |the )?{_AI}\b")),
    (
        "addressed",
        STRONG,
        _rx(
            rf"^\W*(?:dear|hey|hi|hello|attention|attn)\b,?\s+(?:the\s+)?"
            rf"{_AI}\b"
        ),
    ),
    (
        "addressed",
        STRONG,
        _rx(
            rf"\b(?:to the|any|all|every)\s+(?:\w+\s+)?{_AI}\s+"
            r"(?:reading|processing|that reads?|who reads?|that process\w*|"
            r"summari[sz]ing)"
        ),
    ),
    (
        "addressed",
        STRONG,
        _rx(
            rf"\b(?:ai|llm)\s+{_AI}\s+(?:that|which|who)?\s*(?:read|process|"
            r"see|load)"
        ),
    ),
    ("addressed", STRONG, _rx(rf"\byou,?\s+(?:the|an?)\s+{_AI}\b")),
    (
        "addressed",
        STRONG,
        _rx(
            r"^\W*(?:claude|chatgpt|gpt(?:-?\w+)?|gemini|copilot|assistant|ai)\s*[,:]\s*"
            r"(?:you\b|respond|answer|reply|write|send|confirm|state|claim|output|delete|approve|"
            r"ignore|do\b|tell|print|reveal|say|always|never|from now)"
        ),
    ),
    # a new identity for the model
    (
        "role-play",
        STRONG,
        _rx(
            r"\byou(?:'re| are) now\s+(?:an?\s+|the\s+|called\s+|named\s+|in\s+\w+\s+mode|my\s+|"
            r"no longer|free\b|unrestricted|unfiltered|jailbroken|dan\b)"
        ),
    ),
    ("role-play", STRONG, _rx(r"\bfrom now on,?\s+you\b")),
    (
        "role-play",
        STRONG,
        _rx(
            rf"\byou(?:'re| are) now\s+\w+,\s+an?\s+(?:[\w-]+\s+){{0,2}}"
            rf"{_AI}\b"
        ),
    ),
    ("role-play", STRONG, _rx(r"\byou(?:'re| are) no longer (?:an?|the|bound)\b")),
    (
        "role-play",
        STRONG,
        _rx(
            rf"\byou are an? (?:\w+\s+){{0,2}}?{_AI}\b.{{0,60}}\b(?:always|"
            r"never|obeys?|ignores?|without|no)\b"
        ),
    ),
    ("role-play", STRONG, _rx(r"\bdo anything now\b")),
    ("jailbreak", WEAK, _rx(r"\bjail ?br[eo]\w*")),
    ("role-play", STRONG, _rx(r"\b(?:pretend|imagine) (?:that )?you(?:'re| are)\b")),
    ("role-play", WEAK, _rx(r"\b(?:act as|pretend to be|role-?play as|let'?s play a game)\b")),
    ("role-play", WEAK, _rx(r"\bdeveloper mode\b|\bgod mode\b|\badmin(?:istrator)? mode\b")),
    (
        "no-limits",
        WEAK,
        _rx(
            r"\b(?:no|without|any|ignores? (?:its|your)) (?:\w+ )?(?:restrictions|filters|content "
            r"policy|guidelines|warnings|limits|rules|safety)\b"
        ),
    ),
    (
        "privilege",
        WEAK,
        _rx(
            r"\b(?:root access|full permissions|admin(?:istrator)? rights|"
            r"grant (?:me|you|the caller)|granted you)\b"
        ),
    ),
    # chat roles and template tokens
    (
        "role-prefix",
        WEAK,
        _rx(
            r"^\W{0,3}(?:system|assistant|user|human|ai|developer|tool|model)"
            r"(?: message| prompt)?\s*:"
        ),
    ),
    (
        "chat-template",
        STRONG,
        _rx(
            r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>|"
            r"\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user|instructions?)>|\[system\]\(#"
        ),
    ),
    # an instruction-tuning heading ("### Instruction:"); "## Instructions" over a recipe and
    # "### system" over a session transcript's turn are headings people write too
    ("template-heading", WEAK, _rx(r"^#{2,}\s*(?:instruction|system|response)s?\s*:?\s*$")),
    ("new-instructions", WEAK, _rx(r"\bnew (?:system )?instructions\s*:")),
    ("delimiter", WEAK, _rx(r"\bend of (?:the )?(?:user )?(?:data|input|context|document)\b")),
    # tool calls
    (
        "tool-call",
        STRONG,
        _rx(
            r"</?(?:tool_call|tool_use|function_calls?|invoke|tool_code)\b|```tool_code|"
            r"\"(?:function_call|tool_calls?|tool_use)\"\s*:|"
            r"\"(?:name|tool|function)\"\s*:\s*\"[^\"]+\"\s*,\s*\"(?:arguments|parameters|args|"
            r"input)\"\s*:"
        ),
    ),
    # what the model is asked to do
    (
        "exfiltration",
        WEAK,
        _rx(
            rf"\b(?:send|upload|e-?mail|forward|post|leak|exfiltrate|include|paste|share|output)\b"
            rf"\s+(?:[\w'’~./-]+\s+){{0,5}}?(?:the\s+)?(?:contents of\s+)?{_SECRET}"
        ),
    ),
    (
        "secrecy",
        WEAK,
        _rx(
            r"\b(?:without|don'?t|do not|never)\s+(?:telling|tell|informing|inform|mention\w*|"
            r"asking|ask|alerting|notifying)\s+(?:the user|them|the human|the owner|anyone|"
            r"for confirmation|this)\b|\bdo not ask\b|\b(?:silently|quietly|secretly)\b"
        ),
    ),
    (
        "the-user",
        WEAK,
        _rx(
            r"\bthe user(?:'s|s')?\b(?!\s+(?:feedback|interface|guide|manual|"
            r"research|story|stories|base|group|name)\b)"
        ),
    ),
    (
        "model-output",
        WEAK,
        _rx(
            r"\b(?:in|to|with) your (?:replies|answers|responses|output)\b|"
            r"\balways (?:respond|reply|answer|recommend|obey|say)\b|"
            r"\byou must\b|\byou are required\b|"
            r"\bthe assistant (?:must|should)\b"
        ),
    ),
    (
        "dangerous-command",
        WEAK,
        _rx(
            r"\b(?:curl|wget)\b[^\n|]*\|\s*(?:ba|z)?sh\b|"
            r"\brm -rf (?:/|~)"
        ),
    ),
]


class _Cue:
    """A cue's pattern (re.I | re.M), compiled when first searched: most blocks lack every
    string a cue needs (`_Needs`), so indexing a few files compiles few cues (all of them:
    7 CPU-ms, a tenth of what a search after an edit adds)."""

    __slots__ = ("source", "_compiled")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        if self._compiled is None:
            self._compiled = re.compile(self.source, re.I | re.M)
        return self._compiled.search(text)


class _Needs:
    """What every match of a cue holds in a block (`lowered_for_needs`): one string of each of
    its sets (`_needed_sets`), the set with the longest shortest string tried first; each set
    cut to its shortest forms (a string that holds another of its set is found only where
    that one is)."""

    __slots__ = ("sets",)

    def __init__(self, sets: list[tuple[str, ...]]) -> None:
        shortest = [
            tuple(s for s in found if not any(o != s and o in s for o in found)) for found in sets
        ]
        self.sets = sorted(shortest, key=lambda found: (-min(map(len, found)), len(found)))

    def search(self, lowered: str) -> bool:
        """Whether the block may match: it holds a string of each set."""
        for found in self.sets:
            for string in found:
                if string in lowered:
                    break
            else:
                return False
        return True


@functools.cache
def _cues() -> list[tuple[str, int, _Cue, _Needs | None]]:
    """The cues, once, when a text is first judged: a search that reads the index's
    judgements never parses them (9 CPU-ms, a cold search's import). Each comes with its
    `_Needs` (or None)."""
    found = []
    known = _NEEDED if _cues_digest() == _NEEDED_OF else None  # an edited cue: parsed again
    for number, (reason, weight, pattern) in enumerate(_CUES):
        sets = list(known[number]) if known is not None else _needed_sets(pattern)
        found.append((reason, weight, _Cue(pattern), _Needs(sets) if sets else None))
    return found


def _cues_digest() -> int:
    """A digest of the cues' patterns: `_NEEDED` holds while it is `_NEEDED_OF`."""
    return zlib.crc32("\0".join(pattern for _, _, pattern in _CUES).encode())


def needed_table() -> str:
    """The source of `_NEEDED_OF` and `_NEEDED` for the cues as they are (printed by
    tests/test_injection_needed.py when a cue changed)."""
    import json

    lines = [
        f"_NEEDED_OF = {_cues_digest():#010x}",
        "_NEEDED: tuple[tuple[tuple[str, ...], ...], ...] = (",
    ]
    for _, _, pattern in _CUES:
        line = "    ("
        for one in _needed_sets(pattern):
            for number, item in enumerate(one):
                part = (
                    ("(" if number == 0 else "")
                    + json.dumps(item)
                    + ("," if number < len(one) - 1 or len(one) == 1 else "")
                    + (")," if number == len(one) - 1 else "")
                )
                if len(line) + len(part) + 3 > 100:
                    lines.append(line.rstrip())
                    line = "     "
                line += part + " "
        lines.append(line.rstrip() + "),")
    return "\n".join([*lines, ")"])


def _needed_sets(pattern: str) -> list[tuple[str, ...]]:
    """Sets of lower-case strings such that every match of `pattern` (case-insensitive)
    holds one string of each in `lowered_for_needs` of the text; none when none are found.
    Looking for them in a block first (plain substring tests: `_Needs`) skips most cue
    searches: a keyword-only full index spent a fifth of its time judging units
    (bench/perf_bulk.py), almost all of it on cues that do not match. Read off the pattern's
    parse tree: a run of ASCII literals is needed as it stands, an alternation needs one of
    its branches' strings, a group or a repeat of at least once what it holds; a sequence
    needs each of its parts' sets (the pattern's own sequence: all of them; one inside an
    alternation or a group: the one with the longest shortest string). Anything else needs
    nothing, and non-ASCII literals end a run (under re.I, "ſ" matches "s")."""
    import importlib

    try:
        sre = importlib.import_module("re._constants")
        tree = importlib.import_module("re._parser").parse(pattern, re.I | re.M)
    except (ImportError, AttributeError, re.error):  # another Python's internals
        return []

    def every(items: Any) -> list[tuple[str, ...]]:
        sets: list[tuple[str, ...]] = []
        run: list[str] = []
        for op, av in [*items, (None, None)]:
            if op is sre.LITERAL and chr(av).isascii():
                run.append(chr(av).lower())
                continue
            if run:
                sets.append(("".join(run),))
                run = []
            if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT, None):
                continue  # zero-width: it consumes nothing
            found = node(op, av)
            if found:
                sets.append(found)
        return sets

    def sequence(items: Any) -> tuple[str, ...] | None:
        return max(every(items), key=lambda s: (min(map(len, s)), -len(s)), default=None)

    def node(op: Any, av: Any) -> tuple[str, ...] | None:
        if op is sre.BRANCH:
            out: list[str] = []
            for branch in av[1]:
                found = sequence(branch)
                if not found:
                    return None
                out += found
            return tuple(dict.fromkeys(out))
        if op is sre.SUBPATTERN:
            _, add, remove, inner = av
            return None if add or remove else sequence(inner)
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, _, inner = av
            return sequence(inner) if low >= 1 else None
        return None

    return every(tree)


#: `_needed_sets` of each cue, in `_CUES` order: parsing the 37 patterns costs 5 CPU-ms of each
#: process that judges a text (a search after an edit: a twelfth of what the edit adds). Used
#: while `_NEEDED_OF` is the digest of the patterns; an edited cue is parsed again, and
#: tests/test_injection_needed.py fails, printing the table anew (`needed_table`).
_NEEDED_OF = 0xEA39626B
_NEEDED: tuple[tuple[tuple[str, ...], ...], ...] = (
    (
        (
            "ignore",
            "disregard",
            "forget",
            "override",
            "bypass",
            "do not follow",
            "t follow",
            "stop following",
            "set aside",
            "put aside",
            "discard",
            "abandon",
        ),
        (
            "instruction",
            "prompt",
            "rules",
            "directions",
            "directives",
            "guidelines",
            "guidance",
            "policies",
            "constraints",
            "programming",
            "context",
            "messages",
        ),
    ),
    (
        ("forget ",),
        ("everything", "all"),
        ("told", "said", "above", "before"),
    ),
    (
        ("ignore", "disregard", "forget"),
        ("everything", "all", "anything"),
        ("above", "before", "prior", "earlier", "said", "written"),
    ),
    (
        (
            "your",
            "the",
            "these",
            "previous",
            "prior",
            "above",
            "earlier",
            "preceding",
            "original",
            "initial",
            "old",
            "existing",
            "safety",
            "system",
        ),
        (
            "instruction",
            "prompt",
            "rules",
            "directions",
            "directives",
            "guidelines",
            "guidance",
            "policies",
            "constraints",
            "programming",
            "context",
            "messages",
        ),
        (
            "changed",
            "updated",
            "replaced",
            "revoked",
            "outdated",
            "obsolete",
            "void",
            "cancel",
            "superseded",
            "no longer appl",
        ),
    ),
    (
        (
            "instruction",
            "prompt",
            "rules",
            "directions",
            "directives",
            "guidelines",
            "guidance",
            "policies",
            "constraints",
            "programming",
            "context",
            "messages",
        ),
        ("no longer appl",),
    ),
    (
        ("take",),
        (" pr",),
        ("iority", "ecedence"),
        (" over ",),
        ("everything", "all", "any", "your", "the"),
    ),
    (
        ("reveal", "print", "show", "output", "repeat", "leak", "dump"),
        ("system", "hidden", "initial", "secret"),
        ("prompt", "instructions", "configuration"),
    ),
    (
        ("note", "message", "instruction", "reminder", "this"),
        ("to", "for"),
        ("any", "all", "every"),
        (
            "ai",
            "a.i.",
            "llm",
            "llms",
            "language model",
            "model",
            "assistant",
            "agent",
            "chat",
            "bot",
            "chatgpt",
            "gpt",
            "claude",
            "gemini",
            "copilot",
        ),
    ),
    (
        ("note", "message", "instruction", "reminder"),
        ("to", "for"),
        ("the", "my", "our", "your"),
        ("ai", "a.i.", "llm", "chat", "language model"),
    ),
    (
        ("if you",),
        ("'re", " are"),
        (" ",),
        (
            "ai",
            "a.i.",
            "llm",
            "llms",
            "language model",
            "model",
            "assistant",
            "agent",
            "chat",
            "bot",
            "chatgpt",
            "gpt",
            "claude",
            "gemini",
            "copilot",
        ),
    ),
    (
        ("dear", "hey", "hi", "hello", "attention", "attn"),
        (
            "ai",
            "a.i.",
            "llm",
            "llms",
            "language model",
            "model",
            "assistant",
            "agent",
            "chat",
            "bot",
            "chatgpt",
            "gpt",
            "claude",
            "gemini",
            "copilot",
        ),
    ),
    (
        ("to the", "any", "all", "every"),
        (
            "ai",
            "a.i.",
            "llm",
            "llms",
            "language model",
            "model",
            "assistant",
            "agent",
            "chat",
            "bot",
            "chatgpt",
            "gpt",
            "claude",
            "gemini",
            "copilot",
        ),
        ("reading", "processing", "that read", "who read", "that process", "summari"),
    ),
    (
        ("ai", "llm"),
        (
            "ai",
            "a.i.",
            "llm",
            "llms",
            "language model",
            "model",
            "assistant",
            "agent",
            "chat",
            "bot",
            "chatgpt",
            "gpt",
            "claude",
            "gemini",
            "copilot",
        ),
        ("read", "process", "see", "load"),
    ),
    (
        ("you",),
        ("the", "a"),
        (
            "ai",
            "a.i.",
            "llm",
            "llms",
            "language model",
            "model",
            "assistant",
            "agent",
            "chat",
            "bot",
            "chatgpt",
            "gpt",
            "claude",
            "gemini",
            "copilot",
        ),
    ),
    (
        ("claude", "chatgpt", "gpt", "gemini", "copilot", "assistant", "ai"),
        (
            "you",
            "respond",
            "answer",
            "reply",
            "write",
            "send",
            "confirm",
            "state",
            "claim",
            "output",
            "delete",
            "approve",
            "ignore",
            "do",
            "tell",
            "print",
            "reveal",
            "say",
            "always",
            "never",
            "from now",
        ),
    ),
    (
        ("you",),
        ("'re", " are"),
        (" now",),
        (
            "a",
            "the",
            "called",
            "named",
            "mode",
            "my",
            "no longer",
            "free",
            "unrestricted",
            "unfiltered",
            "jailbroken",
            "dan",
        ),
    ),
    (
        ("from now on",),
        ("you",),
    ),
    (
        ("you",),
        ("'re", " are"),
        (" now",),
        (",",),
        ("a",),
        (
            "ai",
            "a.i.",
            "llm",
            "llms",
            "language model",
            "model",
            "assistant",
            "agent",
            "chat",
            "bot",
            "chatgpt",
            "gpt",
            "claude",
            "gemini",
            "copilot",
        ),
    ),
    (
        ("you",),
        ("'re", " are"),
        (" no longer ",),
        ("a", "the", "bound"),
    ),
    (
        ("you are a",),
        (" ",),
        (
            "ai",
            "a.i.",
            "llm",
            "llms",
            "language model",
            "model",
            "assistant",
            "agent",
            "chat",
            "bot",
            "chatgpt",
            "gpt",
            "claude",
            "gemini",
            "copilot",
        ),
        ("always", "never", "obey", "ignore", "without", "no"),
    ),
    (("do anything now",),),
    (
        ("jail",),
        ("br",),
    ),
    (
        ("pretend", "imagine"),
        (" ",),
        ("you",),
        ("'re", " are"),
    ),
    (("act as", "pretend to be", "play as", "s play a game"),),
    (("developer mode", "god mode", "admin"),),
    (
        ("no", "without", "any", "ignore"),
        (" ",),
        (
            "restrictions",
            "filters",
            "content policy",
            "guidelines",
            "warnings",
            "limits",
            "rules",
            "safety",
        ),
    ),
    (("root access", "full permissions", " rights", "grant ", "granted you"),),
    (
        ("system", "assistant", "user", "human", "ai", "developer", "tool", "model"),
        (":",),
    ),
    (
        (
            "im_start",
            "im_end",
            "system",
            "user",
            "assistant",
            "endoftext",
            "eot_id",
            "start_header_id",
            "inst]",
            "sys>>",
            "instruction",
            "[system](#",
        ),
    ),
    (
        ("#",),
        ("instruction", "system", "response"),
    ),
    (
        ("new ",),
        ("instructions",),
        (":",),
    ),
    (
        ("end of ",),
        ("data", "input", "context", "document"),
    ),
    (
        (
            "tool_call",
            "tool_use",
            "function_call",
            "invoke",
            "tool_code",
            "```tool_code",
            "name",
            "tool",
            "function",
        ),
    ),
    (
        (
            "send",
            "upload",
            "mail",
            "forward",
            "post",
            "leak",
            "exfiltrate",
            "include",
            "paste",
            "share",
            "output",
        ),
        (
            "api",
            "credential",
            "password",
            "passphrase",
            "secret",
            "token",
            "private key",
            "ssh key",
            ".env",
            "~/.ssh",
            "~/.aws",
            "id_rsa",
            "system prompt",
            "hidden prompt",
        ),
    ),
    (
        (
            "the user",
            "them",
            "the human",
            "the owner",
            "anyone",
            "for confirmation",
            "this",
            "do not ask",
            "silently",
            "quietly",
            "secretly",
        ),
    ),
    (("the user",),),
    ((" your ", "always ", "you must", "you are required", "the assistant "),),
    (("curl", "wget", "rm -rf "),),
)


# Characters that render as nothing. Zero-width joiners and non-joiners are letters' business
# in emoji sequences and in Persian, Indic and other scripts: they count only between two
# ASCII letters or spaces (where they split a word to hide it) or in a run.
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e"
_INVISIBLE = {ord(c): None for c in _ZERO_WIDTH + "\u00ad"} | {
    cp: None for cp in [*range(0xE0000, 0xE0080), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
}
_JOINERS = "\u200c\u200d"

_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=_-])")
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,$", re.I)


@dataclass(frozen=True)
class Verdict:
    """Why a text was judged: its cues (reason names, strongest first) and their total."""

    reasons: tuple[str, ...]
    score: int

    @property
    def flagged(self) -> bool:
        return self.score >= THRESHOLD


def fold(text: str) -> str:
    """`text` as the cues read it: invisible characters gone, compatibility forms (fullwidth
    letters) replaced by NFKC."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text.translate(_INVISIBLE))


def _hidden_by_invisibles(text: str) -> bool:
    if text.isascii():  # tag characters, bidi controls and zero-width ones are not
        return False
    if _TAG_CHARS.search(text) or _BIDI.search(text):
        return True
    suspicious = 0
    for i, ch in enumerate(text):
        if ch not in _ZERO_WIDTH:
            continue
        before = text[i - 1] if i else " "
        after = text[i + 1] if i + 1 < len(text) else " "
        if ch in _JOINERS and not (before.isascii() and after.isascii()):
            continue  # an emoji sequence or a script that joins its letters
        if ch == "\ufeff" and i == 0:
            continue  # a byte-order mark
        suspicious += 1
    return suspicious >= 2


def _hidden_prose(text: str) -> bool:
    """A long base64 run that decodes to readable words: text hidden from the person, not
    from a model. Images, archives and hashes decode to binary and pass."""
    for match in _BASE64_RUN.finditer(text):
        if _DATA_URI.search(text, 0, match.start()):
            continue
        run = match.group()
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded)
        if printable >= 0.95 * len(decoded) and len(re.findall(r"[A-Za-z]{2,}\s", decoded)) >= 4:
            return True
    return False


#: The characters other than ASCII letters that an ASCII letter matches under re.I (Python's
#: case rules: tests/test_injection_needed.py checks every code point).
_ASCII_CASE = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}


def lowered_for_needs(text: str) -> str:
    """`text` as `_Needs` looks in it: lower-cased, and each character an ASCII letter
    matches case-insensitively made that letter (str.lower makes "İ" two characters, and
    leaves "ı" as it is). A match of a cue in `text` then holds, in this, the strings its
    `_Needs` asks for; other characters lower-cased only ever add strings (a needless search
    of the cue, never a missed one)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_CASE).lower()


def _block_cues(block: str) -> dict[str, int]:
    found: dict[str, int] = {}
    if _hidden_by_invisibles(block):
        found["invisible-unicode"] = STRONG
    if _hidden_prose(block):
        found["hidden-base64"] = STRONG
    folded = fold(block)
    lowered = lowered_for_needs(folded)
    for reason, weight, pattern, needs in _cues():
        if found.get(reason, 0) >= weight:
            continue
        if needs is not None and not needs.search(lowered):
            continue  # a string every match holds is missing: no match (`_Needs`)
        if pattern.search(folded):
            found[reason] = weight
    return found


_BLOCK_START = re.compile(r"\s{0,3}(?:[-*+]|\d+[.)])\s|#{1,6}\s")  # a list item or a heading


def _blocks(text: str) -> list[str]:
    """`text` cut into paragraphs, list items and sections: the spans weak cues add up in."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip() or _BLOCK_START.match(line):
            blocks.append([])
        if line.strip():
            blocks[-1].append(line)
    return ["\n".join(block) for block in blocks if block]


_ROLE_TURN = r"^\W{0,3}(system|assistant|user|human)\s*:"
TURN_GAP = 3  # two role lines this close (in lines) make a conversation turn


def _made_up_turn(text: str) -> bool:
    """Lines that open with two different chat roles a few lines apart: a conversation
    written into the note for the model to continue."""
    roles = [
        (i, m.group(1).lower())
        for i, line in enumerate(fold(text).splitlines())
        if (m := re.match(_ROLE_TURN, line, re.I | re.M))
    ]
    return any(b[0] - a[0] <= TURN_GAP and a[1] != b[1] for a, b in itertools.pairwise(roles))


def judge_instruction(text: str) -> Verdict:
    """The cues of `text` and their total; `.flagged` says whether it reads as an instruction
    to a model.

    Weak cues add up within a paragraph, list item or section only: a daily log that says
    "the user" in one entry and "act as" in another is not one instruction."""
    flagged: dict[str, int] = {}
    best: dict[str, int] = {}
    for block in _blocks(text):
        found = _block_cues(block)
        if sum(found.values()) >= THRESHOLD:
            for reason, weight in found.items():
                flagged[reason] = max(weight, flagged.get(reason, 0))
        elif sum(found.values()) > sum(best.values()):
            best = found
    if _made_up_turn(text):
        flagged["role-prefix"] = STRONG
    found = flagged or best
    reasons = tuple(sorted(found, key=lambda r: (-found[r], r)))
    return Verdict(reasons, sum(found.values()))


def is_instruction(text: str) -> bool:
    return judge_instruction(text).flagged


def flagged_lines(text: str) -> list[int]:
    """The 0-based numbers of the lines of `text` to show quoted with a warning: the lines
    flagged on their own, or every non-blank line when only the whole text is."""
    lines = text.splitlines()
    own = [i for i, line in enumerate(lines) if judge_instruction(line).flagged]
    if own or not judge_instruction(text).flagged:
        return own
    return [i for i, line in enumerate(lines) if line.strip()]


_DEFANG = str.maketrans(
    {
        " ": "\u2423",
        "<": "\u2039",
        ">": "\u203a",
        "[": "\u27e6",
        "]": "\u27e7",
        "`": "'",
        "{": "(",
        "}": ")",
        "|": "\u00a6",
        '"': "\u201d",
    }
)
DEFANG_WIDTH = 80


def defang(text: str, width: int = DEFANG_WIDTH) -> str:
    """`text` on one line as a record may quote it without passing its instruction on: its
    invisible characters gone, base64 runs named not shown, spaces shown as `␣`, brackets,
    quotes and tag marks replaced by look-alikes (no chat template, tag or tool call
    survives), cut to `width` characters. A person reads it; the rules (and a model skimming
    a diary) do not see a sentence in it. Whatever still reads as an instruction is cut to
    its first three words."""
    flat = " ".join(fold(text).split())
    flat = _BASE64_RUN.sub(lambda m: f"[base64, {len(m.group())} characters]", flat)
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    quoted = flat.translate(_DEFANG)
    if is_instruction(quoted):
        quoted = "\u2423".join(flat.split()[:3]).translate(_DEFANG) + "…"
    return quoted
