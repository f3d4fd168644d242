"""Memory tools for agents: `search_memory`, `manage_memory`, `get_memory`.

Plain callables bound to a `Vault`, each with a JSON schema in the OpenAI function-calling
format, and a dispatcher for the tool calls a model makes:

    tools = make_tools(vault)
    reply = client.chat.completions.create(model=..., messages=messages,
                                           tools=[t.schema for t in tools])
    for call in reply.choices[0].message.tool_calls or []:
        result = call_tool(tools, call.function.name, call.function.arguments)

Every call returns a JSON string. Mistakes (a bad argument, an unknown tool, a path outside
the vault, an entry that moved) come back as `{"error": "..."}` with a message that says
what to do, never as an exception, so the model can correct itself.

While a `BackgroundIndex` given to `make_tools` is still building the index (`vault mcp`
starts one), `search_memory` does not wait for it: it answers from a keyword search over what
is indexed so far (or with no results when nothing is yet) and says so in its result
(`"index": "building"` and a `"note"`). Once the index is built, results are normal.

Confinement: paths are resolved inside the vault (`..`, absolute paths, `~`, NUL bytes and
symlinks leading out are refused); `get_memory` reads only Markdown files and nothing under a
dot folder (`.vault/`, `.git/`, `.obsidian/`); `manage_memory` writes only MEMORY.md and
daily logs and cannot delete `#pin` entries. A file with several hard links (another scope's
or one outside the vault?) is neither read nor written, as everywhere in the library, unless
[security] allow_hardlinks. Inputs have size limits (see the constants).

Tools made for a `Vault` bound to a scope (`vault.scope("org", "acme")`) reach only what the
scope may see: `get_memory` refuses a sibling's or a descendant's file whatever the path
(`..`, symlinks, a folder passed through), `search_memory` finds only the scope's units and
those of the scopes above it, `manage_memory` writes only the scope's own MEMORY.md and daily
logs (`MEMORY.md` as a create target means the scope's own). No tool takes a scope argument.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import PathOutsideVaultError, VaultError

if TYPE_CHECKING:
    from ..search import Hit
    from ..vault import Vault
    from .background import BackgroundIndex

log = logging.getLogger("vault_memory")

MAX_QUERY_CHARS = 1_000
MAX_CONTENT_CHARS = 8_000
MAX_ID_CHARS = 300
MAX_PATH_CHARS = 500
MAX_LIMIT = 20
DEFAULT_LIMIT = 5
MAX_GET_LINES = 200
MAX_GET_CHARS = 40_000
MAX_ARGUMENTS_CHARS = 20_000
MAX_HIT_CHARS = 4_000  # one search hit's text; the rest is read with get_memory
MAX_RESULT_CHARS = 40_000  # every tool result, as get_memory's text
MAX_TOOL_RESULT_CHARS = 2 * MAX_RESULT_CHARS  # the JSON of any result (texts plus metadata)
MARKDOWN_SUFFIXES = (".md", ".markdown")


class ToolArgumentError(VaultError):
    """The arguments of a tool call do not match its schema."""


@dataclass(frozen=True)
class ToolResult:
    text: str  # JSON
    is_error: bool


@dataclass(frozen=True)
class Tool:
    """One memory tool: `schema` for the model, `tool(**arguments)` -> JSON string."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments
    func: Callable[..., dict[str, Any]]

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling description of the tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def __call__(self, **arguments: Any) -> str:
        return self.run(arguments).text

    def run(self, arguments: Mapping[str, Any]) -> ToolResult:
        try:
            values = check_arguments(self.parameters, arguments)
            text = _json(self.func(**values))
            if len(text) > MAX_TOOL_RESULT_CHARS:  # the last guard: the tools cut before this
                return _error(
                    self.name,
                    f"the result is {len(text):,} characters, over the "
                    f"{MAX_TOOL_RESULT_CHARS:,} a tool returns; ask for "
                    "less (a smaller limit, or get_memory with a line "
                    "range).",
                )
            return ToolResult(text, False)
        except VaultError as exc:
            return _error(self.name, str(exc))
        except OSError as exc:  # the disk: read-only, full, gone
            where = f" ({exc.filename})" if exc.filename else ""
            return _error(
                self.name,
                f"the memory vault cannot be used right now: "
                f"{exc.strerror or exc}{where}. Try again later.",
            )
        except Exception:  # a bug: logged with its traceback, never raised into the agent
            log.exception("the tool %s failed", self.name)
            return _error(
                self.name,
                "the tool failed unexpectedly (the error is in the log); "
                "try again, or go on without it.",
            )


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def _error(tool: str | None, message: str) -> ToolResult:
    return ToolResult(_json({"error": message, "tool": tool}), True)


# -- arguments ----------------------------------------------------------------------------------


def check_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments checked against the (small) schema subset the tools use: object with known
    properties, required ones, string/integer types, enums, lengths and bounds. Values of the
    wrong type are refused, never converted (a model corrects itself from the message);
    `null` means "not given"."""
    properties: dict[str, Any] = schema["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise ToolArgumentError(
            f"unknown argument(s) {', '.join(unknown)}; this tool takes {', '.join(properties)}."
        )
    values: dict[str, Any] = {}
    for name, spec in properties.items():
        value = arguments.get(name)
        if value is None:
            if name in schema.get("required", ()):
                raise ToolArgumentError(f"argument {name!r} is required ({spec['description']})")
            continue
        values[name] = _check_value(name, spec, value)
    return values


def _check_value(name: str, spec: Mapping[str, Any], value: Any) -> Any:
    kind = spec["type"]
    if kind == "integer":
        # A JSON Schema integer: 5, or 5.0 (draft 6 on: a number with no fractional part);
        # not "5" (a string), not 2.5, not true (a bool is an int in Python).
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ToolArgumentError(
                f"argument {name!r} must be a whole number written as a JSON integer "
                f"(e.g. 5, no quotes, no fraction), not {_describe(value)}."
            )
        low, high = spec.get("minimum"), spec.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            raise ToolArgumentError(
                f"argument {name!r} is {value}; it must be {_bounds(low, high)}."
            )
        return value
    if not isinstance(value, str):
        raise ToolArgumentError(f"argument {name!r} must be a string, not {_describe(value)}.")
    if "enum" in spec and value not in spec["enum"]:
        raise ToolArgumentError(
            f"argument {name!r} is {value!r}; use one of: {', '.join(spec['enum'])}."
        )
    if len(value) > spec.get("maxLength", len(value)):
        raise ToolArgumentError(
            f"argument {name!r} is {len(value):,} characters, over the limit of "
            f"{spec['maxLength']:,}. Shorten it."
        )
    return value


def _describe(value: Any) -> str:
    """A wrong value as the model sent it, in JSON terms: the string '5', 5.0, true, a list."""
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:40] + "…"
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "an object"
    return "a list" if isinstance(value, list) else type(value).__name__


def _bounds(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"between {low} and {high}"
    return f"at least {low}" if low is not None else f"at most {high}"


# -- the tools ----------------------------------------------------------------------------------

SEARCH_DESCRIPTION = (
    "Search the long-term memory (MEMORY.md, daily logs, notes) for what answers a question. "
    "Returns the best matching lines, each with its citation (path, start_line, end_line) "
    "and an id for manage_memory. Use it before answering about past decisions, people, "
    "preferences or projects."
)
MANAGE_DESCRIPTION = (
    "Write to long-term memory. action 'create' appends content to today's log (id omitted), "
    "to MEMORY.md's Inbox (id 'MEMORY.md') or a MEMORY.md section (id 'MEMORY.md#Section'); "
    "save durable facts, decisions and preferences as short, self-contained sentences. "
    "'update' replaces and 'delete' removes one entry named by id: the 'id' from "
    "search_memory or a previous manage_memory result (path#L12 or a content hash). "
    "Only MEMORY.md and daily logs can be written; entries tagged #pin cannot be deleted."
)
GET_DESCRIPTION = (
    "Read a Markdown file of the memory vault, or lines start_line..end_line of it "
    f"(1-based, inclusive; at most {MAX_GET_LINES} lines per call). Use it to see the "
    "context around a search result or to read MEMORY.md. Paths are relative to the vault, "
    "e.g. 'MEMORY.md' or 'memory/2026-11-22.md'."
)


class _Bound:
    """The tool functions, bound to one vault."""

    def __init__(self, vault: Vault, indexing: BackgroundIndex | None = None) -> None:
        self.vault = vault
        self.indexing = indexing
        self._reopen = False  # a background run may replace the files our handles read

    def search_memory(self, query: str, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
        if not query.strip():
            raise ToolArgumentError("the query is empty; give a question or some keywords.")
        indexing = self.indexing
        if indexing is not None:
            state = indexing.state
            if state == "failed" or (state == "ready" and not indexing.index_exists):
                indexing.start()  # again: the failure was logged, or .vault/ was deleted
            if indexing.state in ("building", "failed"):
                return self._search_meanwhile(query, limit, indexing)
        if self._reopen:  # after a background run: it may have rebuilt (replaced) the index
            self._reopen = False
            self.vault.close()
        hits = self.vault.search(query, limit=limit)
        found = {"query": query, "results": self._readable(_results(hits))}
        if getattr(hits, "warnings", None):  # keywords only: the embedding provider failed
            found["warning"] = " ".join(hits.warnings)
        return found

    def _search_meanwhile(
        self, query: str, limit: int, indexing: BackgroundIndex
    ) -> dict[str, Any]:
        """A search that never waits for the background index: keywords only (no model to
        load meanwhile), over what is indexed so far, nothing indexed again in the query."""
        from ..search import QuerySyntaxError

        self._reopen = True
        failed = ""
        if indexing.error:
            error = " ".join(indexing.error.split()).rstrip(".")
            failed = f" The last attempt failed: {error}."
        hits: list[Hit] | None = None
        if indexing.searchable:
            try:
                hits = self.vault.search(query, limit=limit, mode="keyword", fresh=False)
            except QuerySyntaxError:
                raise  # the caller's query, not the index being built
            except Exception as exc:  # the index is being written, even rebuilt, meanwhile
                log.info("searching the index while it is built failed (%s)", exc)
                self.vault.close()
        if hits is None:
            note = (
                f"The memory index is being built in the background ({indexing.describe()}); "
                f"nothing can be searched yet. Search again in a moment.{failed}"
            )
        else:
            what = "brought up to date" if indexing.had_index else "built"
            note = (
                f"The memory index is being {what} in the background ({indexing.describe()}): "
                "these results come from a keyword search over what is indexed so far and may "
                f"be incomplete. Search again in a moment for complete results.{failed}"
            )
        results = self._readable(_results(hits or []))
        return {"query": query, "results": results, "index": "building", "note": note}

    def _readable(self, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Hits as an agent gets them: each text cut to MAX_HIT_CHARS and all of them to
        MAX_RESULT_CHARS, with where to read the rest. (None comes from a file with several
        hard links: the index leaves those out, so no hit needs a stat here.)"""
        kept: list[dict[str, Any]] = []
        total = 0
        for item in results:
            text = item["text"]
            if len(text) > MAX_HIT_CHARS or total + len(text) > MAX_RESULT_CHARS:
                room = max(0, min(MAX_HIT_CHARS, MAX_RESULT_CHARS - total))
                item["text"] = text[:room]
                item["note"] = (
                    f"text cut at {room:,} of {len(text):,} characters; read the rest with "
                    f"get_memory({item['path']!r}, {item['start_line']}, {item['end_line']})."
                )
            total += len(item["text"])
            kept.append(item)
            if total >= MAX_RESULT_CHARS:
                break
        return kept

    def manage_memory(
        self, action: str, content: str = "", id: str | None = None
    ) -> dict[str, Any]:
        if action != "delete" and not content.strip():
            raise ToolArgumentError(f"{action} needs 'content': the text of the entry.")
        # Vault.manage confines the id to MEMORY.md and daily logs; never force: a model
        # cannot delete pinned memory.
        return self.vault.manage(content, action, id).to_dict()

    def get_memory(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> dict[str, Any]:
        self._check_path(path)  # and `Vault.get` refuses a file with several hard links
        if end_line is not None and start_line is None:
            start_line = 1
        first = start_line or 1
        last = end_line if end_line is not None else first + MAX_GET_LINES - 1
        if last < first:
            raise ToolArgumentError(
                f"end_line {last} is before start_line {first}; give end_line >= start_line."
            )
        clipped = last - first + 1 > MAX_GET_LINES
        last = min(last, first + MAX_GET_LINES - 1)
        result = self.vault.get(path, first, last)
        data = result.to_dict()
        if len(data["text"]) > MAX_GET_CHARS:
            data["text"] = data["text"][:MAX_GET_CHARS]
            data["note"] = f"text cut at {MAX_GET_CHARS:,} characters; ask for fewer lines."
            clipped = True
        if result.end_line < result.total_lines and (clipped or end_line is None):
            data["next_start_line"] = result.end_line + 1
        return data

    def _check_path(self, given: str) -> None:
        """Refuse, beyond `resolve_in_vault`'s confinement, dot folders and dotfiles (.vault/
        internals, .git/, .obsidian/) and anything but Markdown."""
        _, relpath = self.vault.layout.resolve(given)
        if relpath == ".":
            raise VaultError("that is the vault folder itself; give a file, e.g. MEMORY.md.")
        hidden = [p for p in given.replace("\\", "/").split("/") if p not in ("", ".", "..")]
        if any(p.startswith(".") for p in [*relpath.split("/"), *hidden]):
            raise PathOutsideVaultError(
                given, "hidden files and folders (.vault/, .git/) are off limits"
            )
        if not relpath.lower().endswith(MARKDOWN_SUFFIXES):
            raise VaultError(
                f"{relpath} is not a Markdown file; get_memory reads only the .md files of "
                "the vault, e.g. MEMORY.md or memory/2026-11-22.md."
            )


def _results(hits: list[Hit]) -> list[dict[str, Any]]:
    results = []
    for hit in hits:
        item = hit.to_dict()
        item.pop("scores", None)
        item["id"] = f"{hit.path}#L{hit.start_line}"
        results.append(item)
    return results


def scope_note(vault: Vault) -> str:
    """What an agent bound to a scope is told about where its memory is ("" when unbound)."""
    layout = vault.layout
    if not layout.bound or not layout.scope:
        return ""
    shared = ", ".join(layout.shared_memory())
    return (
        f" This memory is scope {vault.scope_name}: its own files are under {layout.prefix} "
        f"({layout.memory_relpath} and {layout.daily_dir}/), the only ones written; it also "
        f"reads the shared memory above it ({shared}). Paths are relative to the vault."
    )


def make_tools(vault: Vault, indexing: BackgroundIndex | None = None) -> list[Tool]:
    """The three memory tools bound to `vault` (and to its scope, if it is bound to one).
    With `indexing` (started by the caller), `search_memory` answers without waiting while
    it builds the index (see above)."""
    bound = _Bound(vault, indexing)
    note = scope_note(vault)
    return [
        Tool(
            "search_memory",
            SEARCH_DESCRIPTION + note,
            {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": (
                            "A question or keywords, e.g. 'which database for billing'. "
                            "Obsidian's search operators narrow it down: tag:#decision, "
                            'path:projects/, file:name, [status:active], "exact phrase", '
                            "-word, a OR b, date:2026-11-01..2026-11-15, kind:daily|memory|note."
                        ),
                        "maxLength": MAX_QUERY_CHARS,
                    },
                    "limit": {
                        "type": "integer",
                        "description": f"How many results (default {DEFAULT_LIMIT}).",
                        "minimum": 1,
                        "maximum": MAX_LIMIT,
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            bound.search_memory,
        ),
        Tool(
            "manage_memory",
            MANAGE_DESCRIPTION + note,
            {
                "type": "object",
                "properties": {
                    "action": {
                        "type": "string",
                        "enum": ["create", "update", "delete"],
                        "description": "create, update or delete.",
                    },
                    "content": {
                        "type": "string",
                        "description": "The entry's text (create, update); ignored for delete.",
                        "maxLength": MAX_CONTENT_CHARS,
                    },
                    "id": {
                        "type": "string",
                        "description": (
                            "update/delete: the entry, as 'path#L12' or its hash. create: "
                            "omit for today's log, or 'MEMORY.md' / 'MEMORY.md#Section'."
                        ),
                        "maxLength": MAX_ID_CHARS,
                    },
                },
                "required": ["action"],
                "additionalProperties": False,
            },
            bound.manage_memory,
        ),
        Tool(
            "get_memory",
            GET_DESCRIPTION + note,
            {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "A Markdown file, relative to the vault.",
                        "maxLength": MAX_PATH_CHARS,
                    },
                    "start_line": {
                        "type": "integer",
                        "description": "First line (1-based; default 1).",
                        "minimum": 1,
                    },
                    "end_line": {
                        "type": "integer",
                        "description": (
                            f"Last line (inclusive; default start_line + {MAX_GET_LINES - 1})."
                        ),
                        "minimum": 1,
                    },
                },
                "required": ["path"],
                "additionalProperties": False,
            },
            bound.get_memory,
        ),
    ]


def run_tool(
    tools: Sequence[Tool], name: str, arguments: str | Mapping[str, Any] | None
) -> ToolResult:
    """Run the tool called `name` with arguments given as a JSON object string (as models send
    them) or a mapping; a `ToolResult` flags errors (for the MCP server)."""
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        names = ", ".join(t.name for t in tools)
        return _error(name, f"there is no tool {name!r}; the memory tools are: {names}.")
    if arguments is None or arguments == "":
        parsed: Any = {}
    elif isinstance(arguments, str):
        if len(arguments) > MAX_ARGUMENTS_CHARS:
            return _error(name, f"the arguments are over {MAX_ARGUMENTS_CHARS:,} characters.")
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return _error(name, f"the arguments are not valid JSON ({exc.msg} at {exc.pos}).")
    else:
        parsed = arguments
    if not isinstance(parsed, Mapping):
        return _error(name, 'the arguments must be a JSON object, e.g. {"query": "..."}.')
    return tool.run(parsed)


def call_tool(tools: Sequence[Tool], name: str, arguments: str | Mapping[str, Any] | None) -> str:
    """Run a tool call and return its JSON result; errors come back as {"error": ...}."""
    return run_tool(tools, name, arguments).text
