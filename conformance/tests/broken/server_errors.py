"""Breaks server.errors: a cursor it cannot read starts the list over instead of failing.

A client walking pages with a stale or corrupt cursor is silently sent back to the first page
(and may loop forever) rather than told -32602.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError

from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._served import LIST_ITEMS, registry_of, served


async def _start_over(ctx: Any, call_next: CallNext) -> HandlerResult:
    try:
        return await call_next(ctx)
    except MCPError:
        if ctx.method not in LIST_ITEMS or not (ctx.params or {}).get("cursor"):
            raise
        ctx.params = {key: value for key, value in ctx.params.items() if key != "cursor"}
        return await call_next(ctx)


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer answering a bad cursor with the first page."""
    server = served(registry_of(sources), visibility=visibility, page_size=page_size)
    server.lowlevel.middleware.insert(0, _start_over)
    return server
