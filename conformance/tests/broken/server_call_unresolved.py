"""Breaks server.errors: the tools it lists cannot be called.

Its resolver answers from a map of tools taken once, before the registry's first load, so every
listed tool is "unknown" (-32602) when called. Lists, and calls of the tools it does not list,
answer as they should, and a server without hidden elements fails the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element
from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._delegate import Delegating, reference
from ._served import served


class _StaleTools(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.snapshot: dict[str, Element] = {}  # taken before the first load: empty

    async def get_tool(self, name: str) -> Element | None:
        return self.snapshot.get(name)


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer over a registry whose tool resolver is a stale, empty snapshot."""
    return served(_StaleTools(sources), visibility=visibility, page_size=page_size)
