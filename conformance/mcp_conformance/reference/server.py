"""McpServer over the reference Registry: the server target ``scripts/kit`` certifies."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.handlers import Invoker
from mcp_core.registry import Registry
from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

__all__ = ["make_server"]


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """``McpServer(Registry(sources), visibility=..., page_size=...)``; ``.registry`` reloads."""
    registry = Registry(sources, validator=Invoker().validate_handler)
    return McpServer(registry, name="mcp-conformance", visibility=visibility, page_size=page_size)
