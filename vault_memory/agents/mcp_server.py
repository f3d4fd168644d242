"""`vault mcp`: the memory tools over the Model Context Protocol (stdio).

Built on the official `mcp` SDK's low-level `Server`, so the tools are listed with exactly
the JSON schemas of `vault_memory.tools` and run through the same dispatcher: a tool error
comes back as a result with `isError` set and a message the model can act on.

Tools: search_memory, manage_memory, get_memory. Resources:
- vault://MEMORY.md  the curated memory, as it is on disk
- vault://today      today's daily log (empty text when nothing was logged today yet)
- vault://context    the context block (`vault context`, default budget)

`vault mcp --scope org/acme` serves a vault bound to a scope: the tools reach only what it may
see (see tools.py), vault://MEMORY.md and vault://today are the scope's own files and
vault://context its context block (with the shared MEMORY.md files above it). A resource file
with several hard links is refused, and left out of the context block, unless [security]
allow_hardlinks (`Vault.get`, `Vault.context`).

The SDK is imported only here, when the server starts. Tool calls run one at a time in a
worker thread, so a slow call never blocks the protocol loop; stdout belongs to the protocol
(the SDK diverts stray writes to stderr).

The server answers at once: it brings the index up to date in a background thread
(`BackgroundIndex`), and until that is done `search_memory` answers from a keyword search over
what is indexed so far, saying so in its result (`"index": "building"`, a `"note"`), instead
of indexing the vault inside the first call (minutes on a large vault: clients time out).
Errors of that run go to stderr and never stop the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import clock
from ..errors import VaultError
from ..search import DEFAULT_BUDGET
from .background import BackgroundIndex
from .tools import make_tools, run_tool, scope_note

if TYPE_CHECKING:
    from ..vault import Vault

SERVER_NAME = "vault-memory"
RESOURCE_NOT_FOUND = -32002  # MCP's error code for an unknown resource URI
INSTRUCTIONS = (
    "Long-term memory kept as Markdown files. Call search_memory before answering questions "
    "about past work, people, decisions or preferences; save durable facts with manage_memory "
    "(action 'create'); read more lines around a result with get_memory."
)

RESOURCES = {
    "vault://MEMORY.md": ("MEMORY.md", "The curated long-term memory (MEMORY.md)."),
    "vault://today": ("today", "Today's daily log (empty when nothing was logged today)."),
    "vault://context": (
        "context",
        f"MEMORY.md, today's and yesterday's logs within {DEFAULT_BUDGET} tokens.",
    ),
}


def read_resource_text(vault: Vault, uri: str) -> str:
    """The text of a vault:// resource; `VaultError` for an unknown one."""
    if uri == "vault://MEMORY.md":  # a file with several hard links is refused (`Vault.get`)
        return vault.get(vault.layout.memory_relpath).text
    if uri == "vault://today":
        today = clock.today()
        real, relpath = vault.daily_path(today)
        return vault.get(relpath).text if real.is_file() else ""
    if uri == "vault://context":
        return vault.context(DEFAULT_BUDGET)
    raise VaultError(f"unknown resource {uri!r}; this server has: {', '.join(RESOURCES)}.")


def _version() -> str:
    """The installed package's version (what `vault --version` prints)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vault-memory")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def build_server(vault: Vault, indexing: BackgroundIndex | None = None) -> Any:
    """An `mcp.server.lowlevel.Server` serving `vault`; `indexing`: see `tools.make_tools`."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    tools = make_tools(vault, indexing)
    one_at_a_time = anyio.CapacityLimiter(1)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
                for t in tools
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await anyio.to_thread.run_sync(
            run_tool, tools, params.name, params.arguments or {}, limiter=one_at_a_time
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=name, description=text, mime_type="text/markdown")
                for uri, (name, text) in RESOURCES.items()
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text = await anyio.to_thread.run_sync(
                read_resource_text, vault, uri, limiter=one_at_a_time
            )
        except VaultError as exc:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=str(exc), data={"uri": uri}) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    return Server(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS + scope_note(vault),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def serve_stdio(vault: Vault) -> None:
    """Serve MCP on stdin/stdout until the client closes the connection, bringing the index up
    to date in the background meanwhile."""
    try:
        import anyio
        from mcp.server.stdio import stdio_server
    except ImportError as exc:
        raise VaultError(
            f"the MCP server needs the `mcp` package ({exc}); install it with "
            "`pip install 'mcp>=2.3'`."
        ) from None

    vault.config  # noqa: B018 - a broken vault.toml is reported before the index starts
    indexing = BackgroundIndex(vault)
    server = build_server(vault, indexing)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    indexing.start()
    try:
        anyio.run(main)
    finally:
        indexing.stop()
