"""Breaks registry.reload-atomic: reload() empties the catalogue, then refills it.

While the sources provide again, every read answers from the emptied catalogue.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, Prompt, Resource, ResourceTemplate, Tool
from mcp_core.registry import ResolvedResource
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _EmptiesOnReload(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.refilling = False

    async def reload(self) -> None:
        self.refilling = True
        try:
            await self.inner.reload()
        finally:
            self.refilling = False

    async def tools(self) -> Sequence[Tool]:
        return () if self.refilling else await self.inner.tools()

    async def resources(self) -> Sequence[Resource]:
        return () if self.refilling else await self.inner.resources()

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        return () if self.refilling else await self.inner.resource_templates()

    async def prompts(self) -> Sequence[Prompt]:
        return () if self.refilling else await self.inner.prompts()

    async def get_tool(self, name: str) -> Element | None:
        return None if self.refilling else await self.inner.get_tool(name)

    async def get_prompt(self, name: str) -> Element | None:
        return None if self.refilling else await self.inner.get_prompt(name)

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        return None if self.refilling else await self.inner.get_resource(uri)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _EmptiesOnReload:
    """The reference registry with an empty catalogue while reload() runs."""
    return _EmptiesOnReload(sources)
