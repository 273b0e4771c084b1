"""Breaks server.pagination: every page but the last loses its last element (an off-by-one).

The page is cut one element short while its cursor still points after the element it dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server.context import CallNext, HandlerResult

from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._served import LIST_ITEMS, registry_of, served


async def _off_by_one(ctx: Any, call_next: CallNext) -> HandlerResult:
    result = await call_next(ctx)
    items = LIST_ITEMS.get(ctx.method)
    if items is not None and isinstance(result, dict) and result.get("nextCursor"):
        result = {**result, items: result[items][:-1]}
    return result


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer whose non-final list pages drop their last element."""
    server = served(registry_of(sources), visibility=visibility, page_size=page_size)
    server.lowlevel.middleware.insert(0, _off_by_one)
    return server
