"""Breaks server.errors: a not-found error does not say what was not found.

The codes are right, but every unknown tool, prompt or resource answers the same bare message
without the name or URI the client asked for, so a client with several requests in flight cannot
tell which one named nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError

from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._served import registry_of, served

_NAMING = ("tools/call", "prompts/get", "resources/read")


async def _unnamed(ctx: Any, call_next: CallNext) -> HandlerResult:
    try:
        return await call_next(ctx)
    except MCPError as exc:
        if ctx.method not in _NAMING:
            raise
        raise MCPError(exc.code, "Not found") from None


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer whose not-found errors name nothing."""
    server = served(registry_of(sources), visibility=visibility, page_size=page_size)
    server.lowlevel.middleware.insert(0, _unnamed)
    return server
