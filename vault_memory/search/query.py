"""The query language of `vault search`: Obsidian's search operators, and this tool's own.

    tag:#decision   path:projects/   file:priya   section:(a b)   line:(a b)   "exact phrase"
    -word   a OR b   ( … )   [status:active]   [status]   date:2026-11-01..2026-11-15
    kind:daily   scope:acme/bot

`parse_query(text)` says whether the text uses operators at all and, if it does, splits it into
the free text that the hybrid search ranks (`ParsedQuery.text`) and a filter that selects the
candidates (`ParsedQuery.filter`, a small tree evaluated by search/select.py: its field leaves
are Whoosh queries over the keyword index's fields). Pure: no I/O.

A query without operators is searched exactly as it always was, so the rules that make one are
conservative; an ordinary question with a colon, quotes or a minus sign stays a question:
- `name:value` is an operator only for the names above (lower-case, no space after the colon):
  `status: merged`, `10:30`, `https://…` and `C:\\x` are words.
- `[name:value]` or `[name]` (a property) is one wherever it stands (not `[x]` or `[1]`).
- `"a phrase"` and `-word` make an operator query only when the query does not read as a
  sentence (it does not end with `?`, `.` or `!`); `-` only at the start of a word and before
  a letter, a quote, `(`, `[` or `#`: `re-run`, `-5`, `C++` and `--force` are words.
Once a query has operators, it must be well formed: an unclosed quote, bracket or
parenthesis, an unknown `name:` or a value that is not one (`date:tomorrow`) is a
`QuerySyntaxError` that quotes the query and lists the operators.

Semantics: words and phrases outside operators are ranked, not required (as without
operators); a phrase in an operator query is also required, exactly. `OR` joins the words on
either side (`a b OR c` is a and (b or c)), parentheses group, `-` leaves out. Filters select
units: a note's properties, tags, aliases, path and name hold for every unit of it; inline
tags for the units that carry them (or all of a note's units, as Obsidian tags a note by them).
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import VaultError
from ..files import KINDS, obsidian
from ..index import terms_of

#: The operators, as the error message and the README show them.
OPERATORS: tuple[tuple[str, str], ...] = (
    ("tag:#decision", "a tag (nested tags too: tag:#project finds #project/alpha)"),
    ("path:projects/", "files whose path has a part that starts with the text"),
    ("file:priya", "files whose name has a word that starts with the text"),
    ("section:(a b)", "units in a section (the lines under one heading) holding all the words"),
    ("line:(a b)", "units with a line holding all the words"),
    ('"exact phrase"', "the words in this order, exactly (case aside)"),
    ("-word, -tag:#todo", "leave out what matches"),
    ("a OR b, ( … )", "either one; grouping"),
    ("[status:active], [status]", "notes whose property holds the value, or is set"),
    ("date:2026-11-01..2026-11-15", "dated files (also date:2026-11, date:2026-11-01..)"),
    ("kind:daily", "memory, daily, note, diary or session"),
    ("scope:acme/bot", "the files of one scope (scope:/ for the root)"),
)
SEARCH_KINDS = tuple(dict.fromkeys((*KINDS, "session")))  # transcripts (sessions/) accepted
FIELDS = ("tag", "path", "file", "section", "line", "date", "kind", "scope")
ALIASES = {"tags": "tag"}  # what users also write
_STRUCTURE = ("line", "section")
_SENTENCE_END = re.compile(r"[?.!][\"'’”)\]]*\s*$")
_FIELD = re.compile(r"([a-z][a-z_-]*):(?=\S)")
_PROPERTY = re.compile(r"\[([^\W\d][^\[\]:\n]*?)(?::((?:\[\[[^\]]*\]\]|\"[^\"]*\"|[^\[\]])*))?\]")
_OPEN_PROPERTY = re.compile(r"\[[^\W\d][^\[\]:\n]*:")


class QuerySyntaxError(VaultError):
    """A query with search operators that cannot be read."""

    def __init__(self, query: str, problem: str) -> None:
        self.query = query
        self.problem = problem
        shown = " ".join(query.split())
        if len(shown) > 200:
            shown = shown[:199] + "…"
        operators = ", ".join(example for example, _ in OPERATORS)
        super().__init__(
            f"cannot read the search query {shown!r}: {problem}. The operators are: "
            f'{operators}. Put text that holds a colon, a quote or a bracket in "double '
            'quotes", or leave the operators out for a plain search.'
        )


# -- the filter tree ---------------------------------------------------------------------------


@dataclass(frozen=True)
class All:
    """Every part holds."""

    parts: tuple[Any, ...]


@dataclass(frozen=True)
class AnyOf:
    """At least one part holds."""

    parts: tuple[Any, ...]


@dataclass(frozen=True)
class NotOf:
    part: Any


@dataclass(frozen=True)
class Field:
    """A Whoosh query over the keyword index's fields (tag, prop, pathpart, filename, kind,
    date, scope, text)."""

    query: Any
    label: str  # as written, e.g. "tag:#decision"


@dataclass(frozen=True)
class Free:
    """A word outside operators: ranked, and a filter only where it is an alternative to one
    (`billing OR tag:#x`) or is left out (`-billing`): then the units holding its terms."""

    word: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Exact:
    """A quoted phrase: the units holding it, word for word (case and spacing aside)."""

    phrase: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Within:
    """`line:(…)` or `section:(…)`: the units with one line, or in one section, for which the
    inner expression (of words and phrases) holds."""

    scope: str  # "line" or "section"
    part: Any


@dataclass
class ParsedQuery:
    original: str
    operators: bool = False
    text: str = ""  # the free text to rank (the original when there are no operators)
    filter: Any = None  # the tree above, None when nothing is selected
    diary: bool = False  # it asks for the dream diary (kind:diary, path:dreams/…)
    labels: list[str] = field(default_factory=list)  # the operators, as written
    sessions: bool = False  # it asks for transcripts (kind:session, path:sessions/…)


# -- reading the text -----------------------------------------------------------------------------


@dataclass
class _Token:
    kind: str  # word, phrase, property, field, open, close, or, not
    start: int
    end: int
    text: str = ""  # a word or phrase; a field's or a property's name
    value: str = ""  # a field's value (one word or phrase); a property's value
    group: list[_Token] | None = None  # a field's value given as ( … )
    has_value: bool = False  # a property written with a colon


class _Lexer:
    def __init__(self, query: str) -> None:
        self.query = query
        self.problems: list[str] = []
        self.unknown: list[str] = []
        self.attempted = False  # an operator written so badly that it made no token

    def problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    def tokens(self, start: int, end: int) -> list[_Token]:
        s = self.query
        found: list[_Token] = []
        i = start
        while i < end:
            c = s[i]
            if c.isspace():
                i += 1
                continue
            starts_word = i == start or s[i - 1].isspace() or s[i - 1] in "(-"
            if c in "()":
                found.append(_Token("open" if c == "(" else "close", i, i + 1))
                i += 1
            elif c == '"':
                close = s.find('"', i + 1, end)
                if close < 0:
                    self.problem(f"the quote at character {i + 1} is not closed")
                    close = end
                found.append(_Token("phrase", i, min(close + 1, end), s[i + 1 : close]))
                i = close + 1
            elif (
                c == "-"
                and i + 1 < end
                and (s[i + 1].isalpha() or s[i + 1] in '"([#_')
                and (i == start or s[i - 1].isspace() or s[i - 1] == "(")
            ):
                found.append(_Token("not", i, i + 1))
                i += 1
            elif c == "[" and starts_word and (prop := _PROPERTY.match(s, i, end)):
                name = prop[1].strip()
                value = (prop[2] or "").strip()
                if len(name) > 1 or prop[2] is not None:  # not a checkbox `[x]`
                    found.append(
                        _Token(
                            "property",
                            i,
                            prop.end(),
                            name,
                            value.strip('"') if value.startswith('"') else value,
                            has_value=prop[2] is not None,
                        )
                    )
                    i = prop.end()
                    continue
                i = self._word(found, i, end)
            elif c == "[" and starts_word and "]" not in s[i:end]:
                self.problem(f"the bracket at character {i + 1} is not closed")
                # `[status:active` is a property with its bracket left open, not words
                self.attempted = self.attempted or bool(_OPEN_PROPERTY.match(s, i, end))
                i = self._word(found, i, end)
            elif (
                s.startswith("OR", i)
                and (i == start or s[i - 1].isspace())
                and (i + 2 >= end or s[i + 2].isspace())
            ):
                found.append(_Token("or", i, i + 2))
                i += 2
            elif starts_word and (named := _FIELD.match(s, i, end)):
                name = named[1]
                known = ALIASES.get(name, name)
                if known in FIELDS:
                    i = self._field(found, known, i, named.end(), end)
                    continue
                if s[named.end()] not in "/\\" and len(name) > 1:
                    self.unknown.append(name)  # `status:merged`: a problem only with operators
                i = self._word(found, i, end)
            else:
                i = self._word(found, i, end)
        return found

    def _word(self, found: list[_Token], i: int, end: int) -> int:
        s = self.query
        j = i
        while j < end and not s[j].isspace() and s[j] not in '()"':
            j += 1
        j = max(j, i + 1)
        found.append(_Token("word", i, j, s[i:j]))
        return j

    def _field(self, found: list[_Token], name: str, start: int, i: int, end: int) -> int:
        s = self.query
        token = _Token("field", start, i, name)
        if s[i] == "(":
            close = _closing(s, i, end)
            if close < 0:
                self.problem(f"the parenthesis at character {i + 1} is not closed")
                close = end
            token.group = self.tokens(i + 1, close)
            token.end = min(close + 1, end)
            if not any(t.kind in ("word", "phrase", "field", "property") for t in token.group):
                self.problem(f"{name}:( ) holds nothing")
        elif s[i] == '"':
            close = s.find('"', i + 1, end)
            if close < 0:
                self.problem(f"the quote at character {i + 1} is not closed")
                close = end
            token.value = s[i + 1 : close]
            token.end = min(close + 1, end)
        else:
            j = i
            while j < end and not s[j].isspace() and s[j] != ")":
                j += 1
            token.value = s[i:j]
            token.end = j
        found.append(token)
        return token.end


def _closing(s: str, i: int, end: int) -> int:
    """The position of the parenthesis closing the one at `i` (quotes respected), or -1."""
    depth = 0
    quoted = False
    for j in range(i, end):
        c = s[j]
        if c == '"':
            quoted = not quoted
        elif not quoted and c == "(":
            depth += 1
        elif not quoted and c == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


def reads_as_sentence(query: str) -> bool:
    """Whether the query ends as a sentence or a question does (`?`, `.`, `!`)."""
    return bool(_SENTENCE_END.search(query))


def parse_query(query: str) -> ParsedQuery:
    """Read `query`: a plain question or keywords (returned as they are, `operators` False),
    or a query with search operators (see the module docstring). `QuerySyntaxError` for one
    with operators that cannot be read."""
    lexer = _Lexer(query)
    tokens = lexer.tokens(0, len(query))
    kinds = {t.kind for t in _walk(tokens)}
    operators = (
        bool(kinds & {"field", "property"})
        or lexer.attempted
        or (bool(kinds & {"phrase", "not"}) and not reads_as_sentence(query))
    )
    if not operators:
        return ParsedQuery(query, text=query)
    if lexer.unknown:
        name = lexer.unknown[0]
        lexer.problem(f"{name}: is not an operator (a property is written [{name}:value])")
    depth = 0
    for token in tokens:
        depth += {"open": 1, "close": -1}.get(token.kind, 0)
        if depth < 0:
            lexer.problem(f"the parenthesis at character {token.start + 1} closes nothing")
            depth = 0
    if depth > 0:
        lexer.problem("a parenthesis is not closed")
    builder = _Builder(query)
    tree = builder.build(tokens, lexer)
    if lexer.problems:
        raise QuerySyntaxError(query, "; ".join(lexer.problems[:3]))
    text = " ".join(_free_text(query, tokens))
    return ParsedQuery(query, True, text, tree, builder.diary, builder.labels, builder.sessions)


def _walk(tokens: list[_Token]) -> list[_Token]:
    found = []
    for token in tokens:
        found.append(token)
        if token.group is not None:
            found += _walk(token.group)
    return found


def _free_text(query: str, tokens: list[_Token], negated: bool = False) -> list[str]:
    """The words and phrases the search ranks: outside operators (and inside line:( ) and
    section:( )), not left out by `-`."""
    out: list[str] = []
    skip_next = False
    depth_skip = 0
    for token in tokens:
        if depth_skip:
            depth_skip += {"open": 1, "close": -1}.get(token.kind, 0)
            continue
        if token.kind == "not":
            skip_next = True
            continue
        if skip_next:
            skip_next = False
            if token.kind == "open":
                depth_skip = 1
            continue
        if token.kind in ("word", "phrase"):
            out.append(query[token.start : token.end])
        elif token.kind == "field" and token.text in _STRUCTURE:
            if token.group is not None:
                out += _free_text(query, token.group)
            elif token.value:
                out.append(token.value)
    return out


# -- building the tree: Whoosh's query parser does the structure ---------------------------------


class _Marker:
    """What the parser's own fields return: the reference to a value read by the lexer."""

    def __init__(self, fieldname: str, text: str) -> None:
        self.fieldname = fieldname
        self.text = text


@functools.cache
def _parser() -> Any:
    """Whoosh's query parser for the canonical form `_Builder.render` writes: values are
    `field:N` references (N a number) to what the lexer read, so only the structure is left
    to Whoosh: grouping, OR, `-` (NOT) and fields applied to groups."""
    from whoosh import fields, query
    from whoosh.qparser import QueryParser, plugins

    class Reference(fields.FieldType):
        indexed = False
        stored = False

        def __init__(self) -> None:
            self.format = None
            self.analyzer = None

        def self_parsing(self) -> bool:
            return True

        def parse_query(self, fieldname: str, qstring: str, boost: float = 1.0) -> Any:
            marker = query.Term(fieldname, qstring)
            marker.marker = _Marker(fieldname, qstring)
            return marker

    names = (*FIELDS, "text", "phrase", "prop")
    schema = fields.Schema(**{name: Reference() for name in names})
    parser = QueryParser(
        "text",
        schema,
        plugins=[
            plugins.FieldsPlugin(expr=rf"(?P<text>{'|'.join(names)}):", remove_unknown=False),
            plugins.GroupPlugin(),
            plugins.OperatorsPlugin(
                And=None,
                Or=r"(?<=\s)OR(?=\s)",
                AndNot=None,
                AndMaybe=None,
                Not=r"(^|(?<=[\s(]))-(?=\S)",
                Require=None,
            ),
        ],
    )
    return parser


class _Builder:
    def __init__(self, query: str) -> None:
        self.query = query
        self.values: list[tuple[_Token | None, str]] = []  # (token, value) by reference number
        self.diary = False
        self.sessions = False
        self.labels: list[str] = []

    def _ref(self, token: _Token | None, value: str) -> str:
        self.values.append((token, value))
        return str(len(self.values) - 1)

    def render(self, tokens: list[_Token], inside: str | None = None) -> str:
        parts: list[str] = []
        for token in tokens:
            if token.kind == "open":
                parts.append("(")
            elif token.kind == "close":
                parts.append(")")
            elif token.kind == "or":
                parts.append("OR")
            elif token.kind == "not":
                parts.append("-")
            elif token.kind == "word":
                parts.append(f"{inside or 'text'}:{self._ref(token, token.text)}")
            elif token.kind == "phrase":
                parts.append(f"{inside or 'phrase'}:{self._ref(token, token.text)}")
            elif token.kind == "property":
                parts.append(f"prop:{self._ref(token, token.value)}")
            elif token.kind == "field":
                if token.group is not None and token.text not in _STRUCTURE:
                    parts.append(f"{token.text}:({self.render(token.group, token.text)})")
                else:
                    parts.append(f"{token.text}:{self._ref(token, token.value)}")
        # `-` binds to what follows it: no space between them.
        return " ".join(parts).replace("- ", "-").replace("( ", "(").replace(" )", ")")

    def build(self, tokens: list[_Token], lexer: _Lexer) -> Any:
        self.lexer = lexer
        if lexer.problems:
            return None
        text = self.render(tokens)
        tree = _parser().parse(text, normalize=False)
        return self._convert(tree)

    def _convert(self, node: Any) -> Any:
        from whoosh import query

        marker = getattr(node, "marker", None)
        if marker is not None:
            return self._leaf(marker.fieldname, int(marker.text))
        if isinstance(node, query.Not):
            inner = self._convert(node.query)
            return None if inner is None else NotOf(inner)
        if isinstance(node, query.And | query.Or):
            parts = tuple(p for p in (self._convert(q) for q in node.subqueries) if p is not None)
            if not parts:
                return None
            if len(parts) == 1:
                return parts[0]
            return All(parts) if isinstance(node, query.And) else AnyOf(parts)
        return None  # an empty group

    def _leaf(self, fieldname: str, number: int) -> Any:
        token, value = self.values[number]
        assert token is not None
        written = self.query[token.start : token.end]
        if fieldname == "text":
            return Free(value, tuple(terms_of(value)))
        if fieldname == "phrase":
            if not value.strip():
                self.lexer.problem('"" holds no words')
            return Exact(value, tuple(terms_of(value)))
        self.labels.append(written)
        if fieldname in _STRUCTURE:
            return self._within(fieldname, token)
        if fieldname == "prop":
            return self._property(token, written)
        return self._field(fieldname, value, written)

    def _within(self, scope: str, token: _Token) -> Any:
        inner = token.group if token.group is not None else []
        if token.group is None:
            if not token.value:
                self.lexer.problem(f"{scope}: needs words")
                return None
            return Within(scope, Free(token.value, tuple(terms_of(token.value))))
        if any(t.kind in ("field", "property") for t in _walk(inner)):
            self.lexer.problem(f"{scope}:( ) takes words and phrases only")
            return None
        sub = _Builder(self.query)
        tree = sub.build(inner, self.lexer)
        return None if tree is None else Within(scope, tree)

    def _property(self, token: _Token, written: str) -> Any:
        from whoosh.query import And, Term

        key = obsidian.property_key(token.text)
        words = obsidian.value_words(token.value) if token.has_value else []
        if token.has_value and token.value.strip() and not words:
            self.lexer.problem(f"{written} holds no word to look for")
        if not words:
            return Field(Term("prop", key), written)
        terms = [Term("prop", f"{key}:{word}") for word in words]
        return Field(terms[0] if len(terms) == 1 else And(terms), written)

    def _field(self, name: str, value: str, written: str) -> Any:
        from whoosh.query import Prefix, Term, TermRange

        value = value.strip()
        if not value:
            self.lexer.problem(f"{name}: needs a value")
            return None
        if name == "tag":
            tag = value.lstrip("#").lower()
            if not tag:
                self.lexer.problem(f"{written} names no tag")
                return None
            return Field(Term("tag", tag.strip("/")), written)
        if name == "path":
            path = value.lower().removeprefix("./").lstrip("/")
            if path.startswith("dreams") or "/dreams" in path:
                self.diary = True
            if path.startswith("sessions") or "/sessions" in path:
                self.sessions = True
            return Field(Prefix("pathpart", path), written) if path else None
        if name == "file":
            return Field(Prefix("filename", value.lower()), written)
        if name == "kind":
            kind = value.lower()
            if kind not in SEARCH_KINDS:
                self.lexer.problem(f"{written}: the kinds are {', '.join(SEARCH_KINDS)}")
                return None
            self.diary = self.diary or kind == "diary"
            self.sessions = self.sessions or kind == "session"
            return Field(Term("kind", kind), written)
        if name == "scope":
            scope = value.strip("/")
            return Field(Term("scope", scope or "/"), written)
        if name == "date":
            bounds = date_bounds(value)
            if bounds is None:
                self.lexer.problem(
                    f"{written} is not a date or a range (YYYY-MM-DD, YYYY-MM or YYYY, a range "
                    "A..B, open ranges A.. and ..B)"
                )
                return None
            first, last = bounds
            if first == last and first is not None:
                return Field(Term("date", first), written)
            return Field(TermRange("date", first, last), written)
        raise AssertionError(name)


def date_bounds(value: str) -> tuple[str | None, str | None] | None:
    """`2026-11-01..2026-11-15` -> the first and last day, as ISO dates (None: open); a month
    or a year stands for its days. None when it is not a date or a range."""
    first_text, dots, last_text = value.partition("..")
    if not dots:
        last_text = first_text
    if not first_text and not last_text:
        return None
    first = _day(first_text, start=True) if first_text else None
    last = _day(last_text, start=False) if last_text else None
    if (first_text and first is None) or (last_text and last is None):
        return None
    if first is not None and last is not None and first > last:
        return None
    return first, last


def _day(text: str, start: bool) -> str | None:
    match = re.fullmatch(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?", text.strip())
    if not match:
        return None
    year = int(match[1])
    month = int(match[2]) if match[2] else (1 if start else 12)
    try:
        last = calendar.monthrange(year, month)[1] if 1 <= month <= 12 else 0
        day = int(match[3]) if match[3] else (1 if start else last)
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None
