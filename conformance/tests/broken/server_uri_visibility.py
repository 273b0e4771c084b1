"""Breaks server.visibility-agrees per URI: the server asks its rule about lists only.

It applies ``is_visible`` everywhere, but never ``is_uri_visible``: a template its rule refuses at
one URI (user 1 may not read ``node://2``) still answers that URI.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import ElementRef
from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility, SessionInfo

from ._served import registry_of, served


class _ListsOnly:
    """The rule's list decision, without its URI decision."""

    def __init__(self, rule: ElementVisibility) -> None:
        self.rule = rule

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        return await self.rule.is_visible(ref, session)


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer over the reference registry, asking the rule about lists only."""
    return served(registry_of(sources), visibility=_ListsOnly(visibility), page_size=page_size)
