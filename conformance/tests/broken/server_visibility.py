"""Breaks server.visibility-agrees: it hides elements from lists only.

The catalogue handed to the server is filtered by the visibility rule, but calls, reads, gets and
completions resolve against the whole registry: a hidden tool is still callable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from mcp_core.elements import Definition, Prompt, Resource, ResourceTemplate, Tool
from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility, SessionInfo

from ._delegate import Delegating, reference
from ._served import served

D = TypeVar("D", bound=Definition)


class _ListsOnly(Delegating):
    visibility: ElementVisibility

    async def _visible(self, definitions: Sequence[D]) -> list[D]:
        anyone = SessionInfo()
        return [d for d in definitions if await self.visibility.is_visible(d.ref, anyone)]

    async def tools(self) -> Sequence[Tool]:
        return await self._visible(await self.inner.tools())

    async def resources(self) -> Sequence[Resource]:
        return await self._visible(await self.inner.resources())

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        return await self._visible(await self.inner.resource_templates())

    async def prompts(self) -> Sequence[Prompt]:
        return await self._visible(await self.inner.prompts())


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer filtering its lists, and nothing else, by the visibility rule."""
    registry = _ListsOnly(reference(sources))
    registry.visibility = visibility
    return served(registry, visibility=_Always(), page_size=page_size)


class _Always:
    async def is_visible(self, ref: object, session: SessionInfo) -> bool:
        return True
