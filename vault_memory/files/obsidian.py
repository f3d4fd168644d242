"""A note as Obsidian sees it: properties, tags, aliases and names, links and how they resolve,
and the files Obsidian leaves out. Pure: no I/O (the caller reads `.obsidian/app.json` and
lists the files).

- **Properties** are the frontmatter (parsed by python-frontmatter in `notes`, never written):
  every value becomes text (`2026-11-01`, `true`, `3`; a list gives one value per item).
- **Tags** are those of the `tags` property and the inline `#tags`; a nested tag `#a/b/c` is
  also `a` and `a/b` for a search (`tag:#a` finds it, as in Obsidian).
- **Names**: a note is named by its file name and its `aliases` (a list, or one string).
- **Links**: `[[Note]]`, `[[Note|shown]]`, `[[Note#Heading]]`, `![[embed]]` (in the text or in
  a property) and Markdown links `[shown](path/Note.md)` to a file of the vault. They resolve as
  Obsidian resolves them (`LinkTargets`): the path relative to the linking note, the path from
  the vault root, else the file of that name (case-insensitive); when several files share the
  name, the one beside the linking note, else the one with the shortest path.
- **Excluded files**: Obsidian's "Excluded files" (`userIgnoreFilters` in
  `.obsidian/app.json`): folder or path prefixes, or `/regular expressions/`.
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import unquote

from . import boundedjson
from .boundedjson import JsonLimitError
from .notes import Note

NOTE_SUFFIX = ".md"
#: Files whose text is indexed (the others are attachments: link targets only).
TEXT_SUFFIXES = (".md", ".markdown", ".canvas")

# `![[target#heading|shown]]`; a `\|` (a pipe escaped inside a table) ends the target too.
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]|#^]*?)\\?(#[^\[\]|]*?)?(?:\\?\|([^\[\]]*))?\]\]")
# `![shown](target "title")`, the target possibly in <angle brackets> when it holds spaces.
_MDLINK = re.compile(r"(!?)\[([^\[\]]*)\]\(\s*(<[^<>]+>|[^()\s]+)(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_INLINE_CODE = re.compile(r"(`+).+?\1")
#: A property value's words: runs of letters and digits, joined by - . / : @ ' (so a date,
#: a version or an address stays one word), lower-cased.
_VALUE_WORD = re.compile(r"[^\W_]+(?:[-./:@'’][^\W_]+)*")


# -- properties, tags, aliases ------------------------------------------------------------------


def property_values(value: Any) -> list[str]:
    """A frontmatter value as the texts it holds: one per list item, dates in ISO form,
    booleans as `true`/`false`, nothing for an empty value."""
    if value is None:
        return []
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return [value.isoformat()]
    if isinstance(value, list | tuple | set):
        return [text for item in value for text in property_values(item)]
    if isinstance(value, Mapping):
        return [json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)]
    text = str(value).strip()
    return [text] if text else []


def properties(frontmatter: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name, value) pairs of a note's properties, one per value, names as written."""
    pairs: list[tuple[str, str]] = []
    for name, value in frontmatter.items():
        key = str(name).strip()
        if not key:
            continue
        values = property_values(value)
        pairs.extend((key, text) for text in values)
        if not values:
            pairs.append((key, ""))  # the property is there, empty
    return pairs


def property_key(name: str) -> str:
    """A property's name as searched: lower-case, inner spaces as `_` (`Due date` ->
    `due_date`)."""
    return "_".join(unicodedata.normalize("NFC", name).lower().split())


def value_words(text: str) -> list[str]:
    """The words of a property value (or of the value a search asks for)."""
    return _VALUE_WORD.findall(unicodedata.normalize("NFC", text).lower())


def property_terms(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The search terms of properties: `name` (it is set) and `name:word` for each word of
    each value, e.g. status: In progress -> status, status:in, status:progress."""
    terms: dict[str, None] = {}
    for name, value in pairs:
        key = property_key(name)
        if not key:
            continue
        terms.setdefault(key, None)
        for word in value_words(value):
            terms.setdefault(f"{key}:{word}", None)
    return list(terms)


def aliases(frontmatter: Mapping[str, Any]) -> list[str]:
    """The note's `aliases` (or `alias`): a list, or a single string (one alias)."""
    value = frontmatter.get("aliases", frontmatter.get("alias"))
    found: dict[str, None] = {}
    for text in property_values(value):
        found.setdefault(text, None)
    return list(found)


def frontmatter_tags(frontmatter: Mapping[str, Any]) -> list[str]:
    """The tags of the `tags` (or `tag`) property: a list, or a string of tags separated by
    commas or spaces; a leading `#` is dropped."""
    value = frontmatter.get("tags", frontmatter.get("tag"))
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else property_values(value)
    found: dict[str, None] = {}
    for item in items:
        tag = item.strip().lstrip("#").lower()
        if tag:
            found.setdefault(tag, None)
    return list(found)


def tag_terms(tags: Iterable[str]) -> list[str]:
    """Each tag and the tags it nests in: `project/alpha` -> `project`, `project/alpha`."""
    terms: dict[str, None] = {}
    for tag in tags:
        parts = [p for p in tag.strip().lstrip("#").lower().split("/") if p]
        for end in range(1, len(parts) + 1):
            terms.setdefault("/".join(parts[:end]), None)
    return list(terms)


def note_stem(relpath: str) -> str:
    """The file name without its extension: what Obsidian shows as the note's title."""
    name = relpath.rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    return stem if dot and stem and f".{suffix.lower()}" in TEXT_SUFFIXES else name


def note_names(relpath: str, frontmatter: Mapping[str, Any]) -> list[str]:
    """The names a note answers to: its file name (without .md) and its aliases."""
    found: dict[str, None] = {note_stem(relpath): None}
    for alias in aliases(frontmatter):
        found.setdefault(alias, None)
    return list(found)


# -- links ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """One link of a note: where it is, what it names, how it is written."""

    line: int  # 1-based line of the linking note (or canvas file)
    target: str  # the linked path or name as written (decoded), without #heading or |alias
    subpath: str = ""  # `#Heading` or `#^block`, as written
    display: str = ""  # the text shown instead of the target (`[[a|shown]]`, `[shown](a.md)`)
    embed: bool = False  # `![[…]]` or `![…](…)`
    kind: str = "wikilink"  # wikilink, markdown, property (in the frontmatter), canvas
    text: str = ""  # the line it is on, stripped (at most 300 characters)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


MAX_LINE_TEXT = 300


def _line_text(line: str) -> str:
    text = line.strip()
    return text if len(text) <= MAX_LINE_TEXT else text[: MAX_LINE_TEXT - 1] + "…"


def links_in_line(line: str, number: int, kind: str = "wikilink") -> Iterator[Link]:
    """The wikilinks and Markdown links of one line (outside inline code)."""
    clean = _INLINE_CODE.sub(lambda m: " " * len(m[0]), line) if "`" in line else line
    shown = _line_text(line)
    for match in _WIKILINK.finditer(clean):
        target = match[2].strip()
        if not target:
            continue  # [[#Heading]]: a heading of the note itself
        yield Link(
            number,
            target,
            (match[3] or "").strip(),
            (match[4] or "").strip(),
            bool(match[1]),
            kind,
            shown,
        )
    if "](" not in clean:
        return
    for match in _MDLINK.finditer(clean):
        raw = match[3].strip("<>").strip()
        if not raw or raw.startswith("#") or _SCHEME.match(raw) or raw.startswith("//"):
            continue  # a heading of this note, or a URL
        path, _, subpath = raw.partition("#")
        target = unquote(path).strip()
        if target:
            yield Link(
                number,
                target,
                f"#{subpath}" if subpath else "",
                match[2].strip(),
                bool(match[1]),
                "markdown",
                shown,
            )


def note_links(note: Note) -> list[Link]:
    """Every link of a Markdown note, in order: those of its properties (frontmatter lines),
    then those of its text (fenced code left out)."""
    found: list[Link] = []
    for number in range(2, note.frontmatter_end):
        found.extend(links_in_line(note.lines[number - 1], number, "property"))
    for number in range(note.frontmatter_end + 1, len(note.lines) + 1):
        if number in note.code_lines:
            continue
        line = note.lines[number - 1]
        if "[" in line:
            found.extend(links_in_line(line, number))
    return found


def link_key(target: str) -> str:
    """The key that links and files meet on: the last part of the path, lower-case, without
    `.md` (`people/Priya Raman.md` and `[[priya raman]]` -> `priya raman`)."""
    name = unicodedata.normalize("NFC", target.replace("\\", "/")).rsplit("/", 1)[-1].strip()
    name = name.lower()
    return name[: -len(NOTE_SUFFIX)] if name.endswith(NOTE_SUFFIX) else name


def file_key(relpath: str) -> str:
    """`link_key` of a file of the vault."""
    return link_key(relpath)


def _norm(path: str) -> str:
    return unicodedata.normalize("NFC", path).lower()


class LinkTargets:
    """The files a link may lead to (notes, canvases, attachments), and Obsidian's way of
    finding the one a link names."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = sorted(set(paths))
        self._exact: dict[str, str] = {}
        self._by_key: dict[str, list[str]] = {}
        for path in self.paths:
            self._exact.setdefault(_norm(path), path)
            self._by_key.setdefault(file_key(path), []).append(path)

    def __contains__(self, path: str) -> bool:
        return _norm(path) in self._exact

    def resolve(self, link: Link | str, source: str) -> str | None:
        """The vault path `link` (a `Link`, or a target as written) in the note at `source`
        leads to, or None when no file answers to it."""
        target = link.target if isinstance(link, Link) else link
        target = target.replace("\\", "/").strip()
        if target.startswith("./"):
            target = target[2:]
        absolute = target.startswith("/")
        target = target.lstrip("/")
        if not target:
            return None
        forms = (
            [target] if _norm(target).endswith(NOTE_SUFFIX) else [f"{target}{NOTE_SUFFIX}", target]
        )
        folder = posixpath.dirname(source)
        for form in forms:
            if not absolute and folder:
                beside = posixpath.normpath(posixpath.join(folder, form))
                found = self._exact.get(_norm(beside))
                if found is not None:
                    return found
            normal = posixpath.normpath(form)
            if normal.startswith("../"):
                continue
            found = self._exact.get(_norm(normal))
            if found is not None:
                return found
            if absolute:
                continue
            ending = "/" + _norm(normal)
            candidates = [
                p
                for p in self._by_key.get(file_key(normal), ())
                if ("/" + _norm(p)).endswith(ending)
            ]
            if candidates:
                return min(
                    candidates,
                    key=lambda p: (posixpath.dirname(p) != folder, p.count("/"), len(p), p),
                )
        return None


# -- what Obsidian leaves out ----------------------------------------------------------------------


def ignore_filters(app_json: str) -> list[str]:
    """The "Excluded files" of Obsidian's settings (`userIgnoreFilters` in
    `.obsidian/app.json`); none when the text is not such a file."""
    try:
        settings = boundedjson.loads(app_json)
    except (ValueError, JsonLimitError):
        return []
    found = settings.get("userIgnoreFilters") if isinstance(settings, dict) else None
    if not isinstance(found, list):
        return []
    return [item for item in found if isinstance(item, str) and item.strip()]


def compile_filters(filters: Sequence[str]) -> tuple[tuple[str, ...], re.Pattern[str] | None]:
    """(path prefixes, one regular expression) for `is_excluded`: a filter written
    `/…/` is a regular expression searched in the path, any other one a prefix of the path (a
    folder `archive/`, or `archive` which also matches `archive-2024.md`, as Obsidian does)."""
    prefixes: list[str] = []
    patterns: list[str] = []
    for item in filters:
        text = item.strip()
        if len(text) > 2 and text.startswith("/") and text.endswith("/"):
            try:
                re.compile(text[1:-1])
            except re.error:
                continue
            patterns.append(f"(?:{text[1:-1]})")
        else:
            prefixes.append(text.lstrip("/"))
    return tuple(p for p in prefixes if p), re.compile("|".join(patterns)) if patterns else None


def is_excluded(relpath: str, compiled: tuple[tuple[str, ...], re.Pattern[str] | None]) -> bool:
    """Whether Obsidian's "Excluded files" leave out the vault path `relpath`."""
    prefixes, pattern = compiled
    return relpath.startswith(prefixes) or (pattern is not None and bool(pattern.search(relpath)))
