"""Breaks visibility.uri-narrows: a combinator written before per-URI rules existed.

``all_of`` with ``is_visible`` alone: the server never asks it about URIs, so a per-URI rule
inside it (``per_uri(own_nodes)``) is listed-time only and every URI of its templates is readable.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_conformance import Capabilities
from mcp_core.elements import ElementRef
from mcp_core.visibility import ElementVisibility, SessionInfo


class _AllOf:
    def __init__(self, parts: Sequence[ElementVisibility]) -> None:
        self.parts = tuple(parts)

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        for part in self.parts:
            if not await part.is_visible(ref, session):
                return False
        return True


def make_visibility(parts: Sequence[ElementVisibility]) -> _AllOf:
    """all_of without a URI decision."""
    return _AllOf(parts)


MCP_CONFORMANCE = Capabilities(decides=all)
