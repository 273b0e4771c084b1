"""A notes service written for the official SDK's MCPServer: the gateway runs it over stdio.

Plain SDK code (``python examples/gateway/notes.py`` serves it on stdin/stdout); nothing here
knows mcp-core.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError


@dataclass
class Store:
    """The notes, opened for the server's run (a database in a real service)."""

    notes: dict[str, str] = field(default_factory=dict)


@asynccontextmanager
async def open_store(_server: MCPServer[Store]) -> AsyncIterator[Store]:
    """Open the store for the server's run."""
    yield Store({"todo": "buy milk; call Ann", "ideas": "a gateway for every MCP server"})


mcp: MCPServer[Store] = MCPServer("notes", version="1.0.0", lifespan=open_store)


@mcp.tool()
async def search(query: str, ctx: Context[Store, Any]) -> list[str]:
    """Names of the notes containing a text."""
    await ctx.info(f"searching notes for {query!r}")
    store = ctx.request_context.lifespan_context
    found = [name for name, text in store.notes.items() if query.lower() in text.lower()]
    await ctx.report_progress(1, 1, f"{len(found)} found")
    return found


@mcp.tool()
async def add(name: str, text: str, ctx: Context[Store, Any]) -> str:
    """Add or replace a note."""
    ctx.request_context.lifespan_context.notes[name] = text
    return f"saved {name}"


@mcp.tool()
async def delete(name: str, ctx: Context[Store, Any]) -> str:
    """Delete a note."""
    if ctx.request_context.lifespan_context.notes.pop(name, None) is None:
        raise ToolError(f"no note named {name!r}")
    return f"deleted {name}"


@mcp.resource("notes://index", mime_type="text/plain")
def index() -> str:
    """The names of every note (a static list in this example)."""
    return "todo\nideas"


@mcp.resource("notes://note/{name}", mime_type="text/plain")
def note(name: str, ctx: Context[Store, Any]) -> str:
    """One note's text."""
    return ctx.request_context.lifespan_context.notes.get(name, "")


@mcp.prompt()
def summarize(name: str) -> str:
    """Ask for a summary of a note."""
    return f"Summarize the note {name!r} in one sentence."


if __name__ == "__main__":
    mcp.run()
