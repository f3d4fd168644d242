"""The graph of what conversations left behind, as Mermaid (renders as is in Obsidian and on
GitHub) or JSON.

- One session (`session_graph`): its thread tree, a node per message, an arrow from each
  message's `parent:` to it.
- The vault (`vault_graph`): each session -> the daily-log entries its flushes wrote -> the
  MEMORY.md items dreams promoted from them (provenance: the `<!-- src: … -->` comments dreams
  write, and the "Added" lines of the dream diaries), plus `[[wikilinks]]` between notes.

Gathering reads files only; `Graph.mermaid` and `Graph.to_dict` are pure. A graph larger
than `limit` nodes is cut (the newest sessions first, then the links) and says so, in a
Mermaid comment and in `notes`. Labels are escaped so any text renders: quotes, brackets,
`-->`, `#`, `<`, backticks and control characters become Mermaid entity codes, and long
lines are cut to `LABEL_CHARS`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import VaultError
from ..files import fsutil, parse_memory, parse_note, plain_text, scope_of, scope_text
from .resume import summary_line
from .transcript import Transcript

LABEL_CHARS = 80
DEFAULT_LIMIT = 200
_SAFE = re.compile(r"[A-Za-z0-9 .,:;!?'/_+=@()*~$%^|-]")
_ADDED = re.compile(r"^- to \*\*(?P<section>.+?)\*\*: (?P<text>.*) ← `(?P<sources>[^`]*)`")
_SOURCE = re.compile(r"^(?P<path>.+?\.md)(?:#L(?P<line>\d+)(?:-L?(?P<end>\d+))?)?$")
STYLES = {
    "session": "fill:#e8f0fe,stroke:#4a72c4",
    "entry": "fill:#fef7e0,stroke:#c49a2a",
    "memory": "fill:#e6f4ea,stroke:#3a8a4f",
    "note": "fill:#f1f3f4,stroke:#80868b",
    "user": "fill:#e8f0fe,stroke:#4a72c4",
    "assistant": "fill:#e6f4ea,stroke:#3a8a4f",
    "system": "fill:#f1f3f4,stroke:#80868b",
    "tool": "fill:#fef7e0,stroke:#c49a2a",
}


@dataclass
class Node:
    id: str
    kind: str  # session | entry | memory | note (vault); user | assistant | system | tool
    label: str
    path: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "path": self.path,
            "line": self.line,
        }


@dataclass
class Edge:
    source: str
    target: str
    kind: str  # flushed | promoted | links | reply

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target, "kind": self.kind}


@dataclass
class Graph:
    kind: str  # "vault" or "session"
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    cut: bool = False
    total_nodes: int = 0  # before the cut
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [e.to_dict() for e in self.edges],
            "cut": self.cut,
            "total_nodes": self.total_nodes,
            "notes": self.notes,
        }

    def mermaid(self) -> str:
        """The graph as a Mermaid flowchart (no fence; see `markdown`)."""
        lines = ["flowchart LR"]
        lines += [f"  %% {_comment(note)}" for note in self.notes]
        for node in self.nodes:
            lines.append(f'  {node.id}["{escape_label(node.label)}"]:::{node.kind}')
        arrows = {"flushed": "-->", "promoted": "==>", "links": "-.->", "reply": "-->"}
        for edge in self.edges:
            lines.append(f"  {edge.source} {arrows.get(edge.kind, '-->')} {edge.target}")
        for kind in sorted({n.kind for n in self.nodes}):
            lines.append(f"  classDef {kind} {STYLES.get(kind, STYLES['note'])}")
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        """The Mermaid flowchart in a ```mermaid block (for a .md file)."""
        body = self.mermaid()
        cut = f"\n> {self.notes[0]}\n" if self.cut and self.notes else ""
        return f"```mermaid\n{body}```\n{cut}"


def escape_label(text: str) -> str:
    """`text` as one line that Mermaid shows as written inside `["…"]`: characters that could
    end the label or start markup become entity codes (`#quot;`, `#35;`, …)."""
    flat = " ".join(str(text).split())
    if len(flat) > LABEL_CHARS:
        flat = flat[: LABEL_CHARS - 1].rstrip() + "…"
    out = []
    for char in flat:
        if _SAFE.match(char):
            out.append(char)
        elif char == '"':
            out.append("#quot;")
        elif ord(char) < 32 or 0x7F <= ord(char) < 0xA0 or 0xD800 <= ord(char) <= 0xDFFF:
            continue
        elif ord(char) < 128:
            out.append(f"#{ord(char)};")
        else:
            out.append(char)  # letters of every script and emoji render as they are
    return "".join(out) or " "


def _comment(text: str) -> str:
    return " ".join(text.split()).replace("%%", "%")


# -- one session: its thread tree ----------------------------------------------------------------


def session_graph(
    transcript: Transcript, since: dt.date | None = None, limit: int = DEFAULT_LIMIT
) -> Graph:
    """The thread tree of one session: the newest `limit` messages (of those written on or
    after `since`)."""
    graph = Graph("session")
    messages = [m for m in transcript.messages if since is None or m.at[:10] >= since.isoformat()]
    graph.total_nodes = len(messages)
    if len(messages) > limit:
        graph.cut = True
        messages = messages[-limit:]
    graph.notes.append(f"session {transcript.session}: {transcript.title or transcript.path}")
    if graph.cut:
        graph.notes.insert(0, _cut_note(limit, graph.total_nodes))
    kept = {m.id for m in messages}
    for message in messages:
        turn = message.turn
        text = (summary_line(turn.to_openai()) or "").removeprefix(f"- {turn.role}: ")
        if not text and turn.tool_calls:
            text = "calls " + ", ".join(c.name for c in turn.tool_calls)
        if not text and turn.role == "tool":
            text = "tool result" + (f" of {turn.name}" if turn.name else "")
        graph.nodes.append(
            Node(
                f"m{message.id}",
                turn.role,
                f"{message.id} {turn.role}: {text}",
                transcript.path,
                message.line + 1,
            )
        )
        if message.parent is not None and message.parent in kept:
            graph.edges.append(Edge(f"m{message.parent}", f"m{message.id}", "reply"))
    return graph


def _cut_note(limit: int, total: int) -> str:
    return (
        f"graph cut at {limit} of {total} nodes: narrow it with --since or --session, "
        "or raise --limit"
    )


# -- the vault: sessions -> entries -> MEMORY.md, and wikilinks ---------------------------------


@dataclass(frozen=True)
class FlushedEntry:
    """A daily-log entry a session's flush wrote."""

    session: str
    path: str
    date: str
    line: int
    text: str


def vault_graph(
    root: Path,
    entries: Sequence[FlushedEntry],
    transcripts: Sequence[Transcript],
    memory_relpaths: Sequence[str],
    diary_dirs: Sequence[str],
    notes: Iterable[str],
    max_bytes: int,
    since: dt.date | None = None,
    limit: int = DEFAULT_LIMIT,
    allow_hardlinks: bool = False,
) -> Graph:
    """Sessions (from their flushed `entries` and their `transcripts`), the entries, the
    MEMORY.md items promoted from them, and the wikilinks between `notes` (vault-relative).
    A file with several hard links is not read unless `allow_hardlinks`."""
    graph = Graph("vault")
    wanted: list[Node] = []
    edges: list[Edge] = []
    day = since.isoformat() if since else ""
    sessions: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in entries:
        if entry.date >= day:
            key = (scope_text(scope_of(entry.path)), entry.session)
            info = sessions.setdefault(key, {"entries": [], "last": "", "title": ""})
            info["entries"].append(entry)
            info["last"] = max(info["last"], entry.date)
    for transcript in transcripts:
        if transcript.updated[:10] >= day:
            key = (transcript.scope, transcript.session)
            info = sessions.setdefault(key, {"entries": [], "last": "", "title": ""})
            info["title"] = transcript.title
            info["last"] = max(info["last"], transcript.updated[:10])
    promoted = _promotions(root, memory_relpaths, diary_dirs, max_bytes, allow_hardlinks)
    memory_nodes: dict[tuple[str, int], Node] = {}
    for number, ((scope, session), info) in enumerate(
        sorted(sessions.items(), key=lambda item: (item[1]["last"], item[0]), reverse=True)
    ):
        sid = f"s{number}"
        title = f" · {info['title']}" if info["title"] else ""
        where = f"{scope}: " if scope else ""
        wanted.append(Node(sid, "session", f"{where}session {session}{title}"))
        for index, entry in enumerate(info["entries"]):
            eid = f"{sid}e{index}"
            wanted.append(Node(eid, "entry", entry.text, entry.path, entry.line))
            edges.append(Edge(sid, eid, "flushed"))
            for memory_path, memory_line, memory_label in promoted.get(
                (entry.path, entry.line), []
            ):
                node = memory_nodes.get((memory_path, memory_line))
                if node is None:
                    node = Node(
                        f"k{len(memory_nodes)}", "memory", memory_label, memory_path, memory_line
                    )
                    memory_nodes[(memory_path, memory_line)] = node
                    wanted.append(node)
                edges.append(Edge(eid, node.id, "promoted"))
    wanted_links = _wikilinks(root, notes, max_bytes, allow_hardlinks)
    note_nodes: dict[str, Node] = {}
    for source, target in wanted_links:
        for relpath in (source, target):
            if relpath not in note_nodes:
                note_nodes[relpath] = Node(
                    f"n{len(note_nodes)}", "note", relpath.removesuffix(".md"), relpath, 1
                )
                wanted.append(note_nodes[relpath])
        edges.append(Edge(note_nodes[source].id, note_nodes[target].id, "links"))
    graph.total_nodes = len(wanted)
    graph.nodes = wanted[:limit]
    kept = {n.id for n in graph.nodes}
    graph.edges = [e for e in edges if e.source in kept and e.target in kept]
    if len(wanted) > limit:
        graph.cut = True
        graph.notes.append(_cut_note(limit, len(wanted)))
    return graph


def _read(root: Path, relpath: str, max_bytes: int, allow_hardlinks: bool) -> str | None:
    try:
        real, relpath = fsutil.resolve_in_vault(root, relpath)
        return fsutil.read_text(real, relpath, max_bytes, allow_hardlinks).text
    except VaultError:
        return None


def _promotions(
    root: Path,
    memory_relpaths: Sequence[str],
    diary_dirs: Sequence[str],
    max_bytes: int,
    allow_hardlinks: bool,
) -> dict[tuple[str, int], list[tuple[str, int, str]]]:
    """(daily log, line) -> the MEMORY.md items (path, line, label) promoted from it."""
    found: dict[tuple[str, int], list[tuple[str, int, str]]] = {}
    added: dict[str, tuple[str, ...]] = {}  # diary: item text -> its sources
    for folder in diary_dirs:
        base = root / folder
        for path in sorted(base.glob("*.md")) if base.is_dir() else []:
            diary = _read(root, f"{folder}/{path.name}", max_bytes, allow_hardlinks) or ""
            for row in diary.splitlines():
                match = _ADDED.match(row)
                if match:
                    sources = tuple(s.strip() for s in match["sources"].split(","))
                    added[plain_text(match["text"]).rstrip("…")] = sources
    for relpath in memory_relpaths:
        memory = _read(root, relpath, max_bytes, allow_hardlinks)
        if memory is None:
            continue
        for section in parse_memory(memory).sections:
            for entry in section.entries:
                body = entry.body
                sources = entry.sources or next(
                    (s for t, s in added.items() if t and body.startswith(t)), ()
                )
                label = f"{section.title}: {body}" if section.title else body
                for source in sources:
                    match = _SOURCE.match(source.strip())
                    if not match or not match["line"]:
                        continue
                    first = int(match["line"])
                    last = int(match["end"] or first)
                    for number in range(first, last + 1):
                        found.setdefault((match["path"], number), []).append(
                            (relpath, entry.start + 1, label)
                        )
    return found


def _wikilinks(
    root: Path, notes: Iterable[str], max_bytes: int, allow_hardlinks: bool
) -> list[tuple[str, str]]:
    """(note, note it links to) for every `[[wikilink]]` that resolves to a note of `notes`
    (by path or by file name, as Obsidian resolves them)."""
    relpaths = sorted(notes)
    by_name: dict[str, str] = {}
    for relpath in relpaths:
        by_name.setdefault(relpath.rsplit("/", 1)[-1].removesuffix(".md").lower(), relpath)
        by_name.setdefault(relpath.removesuffix(".md").lower(), relpath)
    links: list[tuple[str, str]] = []
    for relpath in relpaths:
        text = _read(root, relpath, max_bytes, allow_hardlinks)
        if text is None or "[[" not in text:
            continue
        for link in parse_note(relpath, text).links:
            target = by_name.get(link.strip().removesuffix(".md").lower())
            if target and target != relpath and (relpath, target) not in links:
                links.append((relpath, target))
    return links


def notes_in(root: Path, sees: Any) -> list[str]:
    """The notes (and MEMORY.md files) of the vault that `sees(relpath)` allows, whose links
    the vault graph draws."""
    import os

    from ..files import note_kind
    from ..index import is_indexable

    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        base = Path(folder).relative_to(root).as_posix()
        for name in sorted(files):
            relpath = name if base == "." else f"{base}/{name}"
            if is_indexable(relpath) and note_kind(relpath) in ("note", "memory") and sees(relpath):
                found.append(relpath)
    return found
