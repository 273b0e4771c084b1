"""Breaks visibility.parts: ``any_of`` that never hears its last part (an off-by-one slice).

It applies the parts it does hear correctly, to lists and URIs alike, so ``visibility.uri-narrows``
(which learns the composition from the rule) passes; only the declared function (``any``) of
every part's decision tells that the last part is lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcp_conformance import Capabilities
from mcp_core.elements import ElementRef
from mcp_core.visibility import ElementVisibility, SessionInfo, visible_at


class _AnyButLast:
    def __init__(self, parts: Sequence[ElementVisibility]) -> None:
        self.parts = tuple(parts)[: max(1, len(parts) - 1)]

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        for part in self.parts:
            if await part.is_visible(ref, session):
                return True
        return False

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        for part in self.parts:
            if await visible_at(part, ref, session, uri=uri, variables=variables):
                return True
        return False


def make_visibility(parts: Sequence[ElementVisibility]) -> _AnyButLast:
    """Over ``parts``, all but the last heard."""
    return _AnyButLast(parts)


MCP_CONFORMANCE = Capabilities(decides=any)
