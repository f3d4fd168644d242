"""`vault mcp`: the memory tools over MCP."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..vault import Vault

from .app import cli, pass_vault, scope_option


@cli.command()
@scope_option
@pass_vault
def mcp(vault: Vault) -> None:
    """Serve the memory tools over MCP on stdin/stdout (for Claude, Cursor and others).

    Tools: search_memory, manage_memory, get_memory. Resources: vault://MEMORY.md,
    vault://today, vault://context. Runs until the client disconnects. Answers at once: the
    index is brought up to date in the background, and a search meanwhile says so.

    \b
    Example:
      vault --vault ~/agent-memory mcp
      claude mcp add memory -- vault --vault ~/agent-memory mcp
    """
    from ..agents import serve_stdio

    serve_stdio(vault)
