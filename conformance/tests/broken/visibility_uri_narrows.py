"""Breaks visibility.uri-narrows: ``any_of`` asks its parts' ``is_uri_visible`` alone.

Its list decision is right; for a URI it asks each part that has ``is_uri_visible`` only that, so
a part that hides a template from lists but "admits" the URI (its URI rule knows nothing of its
list rule) lets the URI through, and a part without a URI decision counts as admitting it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcp_conformance import Capabilities
from mcp_core.elements import ElementRef
from mcp_core.visibility import ElementVisibility, SessionInfo


class _RawAnyOf:
    def __init__(self, parts: Sequence[ElementVisibility]) -> None:
        self.parts = tuple(parts)

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        for part in self.parts:
            if await part.is_visible(ref, session):
                return True
        return False

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        for part in self.parts:
            decide = getattr(part, "is_uri_visible", None)
            # The bug: the part's list decision is not asked first (visible_at would).
            if decide is None or await decide(ref, uri, variables, session):
                return True
        return False


def make_visibility(parts: Sequence[ElementVisibility]) -> _RawAnyOf:
    """An any_of that skips its parts' list decisions for URIs."""
    return _RawAnyOf(parts)


MCP_CONFORMANCE = Capabilities(decides=any)
