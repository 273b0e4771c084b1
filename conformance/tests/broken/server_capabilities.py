"""Breaks server.capabilities: it advertises every capability, whatever the registry may hold.

Its registry answers kinds() with every kind "to be safe", so initialize offers prompts and
resources a tools-only registry will never have.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import ElementKind
from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._delegate import Delegating, reference
from ._served import served


class _Everything(Delegating):
    def kinds(self) -> ElementKind:
        return ElementKind.ALL


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer over a registry advertising every kind."""
    return served(_Everything(reference(sources)), visibility=visibility, page_size=page_size)
