"""Breaks server.answers: completions never see the context the client sent.

A completion provider that narrows its suggestions by the arguments already filled in (a city
given the country) is asked with no context at all, so it answers as if nothing were filled in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server.context import CallNext, HandlerResult

from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._served import registry_of, served


async def _drop_context(ctx: Any, call_next: CallNext) -> HandlerResult:
    if ctx.method == "completion/complete" and ctx.params:
        ctx.params = {key: value for key, value in ctx.params.items() if key != "context"}
    return await call_next(ctx)


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer whose completions lose their context on the way in."""
    server = served(registry_of(sources), visibility=visibility, page_size=page_size)
    server.lowlevel.middleware.insert(0, _drop_context)
    return server
