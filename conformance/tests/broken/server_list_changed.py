"""Breaks server.list-changed: it advertises listChanged but never sends it.

Its registry takes subscriptions (so the server advertises listChanged) and never calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcp_core.elements import ElementKind
from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._delegate import Delegating, reference
from ._served import served


class _Deaf(Delegating):
    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        return lambda: None


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer over a registry whose change events never fire."""
    return served(_Deaf(reference(sources)), visibility=visibility, page_size=page_size)
