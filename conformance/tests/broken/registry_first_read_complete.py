"""Breaks registry.first-read-complete: it marks itself loaded before the load finishes.

The first reader sets the flag and starts loading; a reader arriving meanwhile sees the flag and
answers from the catalogue as it is so far: empty. Each source is still provided once, so
registry.single-flight holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, Prompt, Resource, ResourceTemplate, Tool
from mcp_core.registry import ResolvedResource
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _LoadedTooEarly(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.started = False
        self.ready = False

    async def ensure(self) -> bool:
        """Whether the catalogue may be read now (the bug: True while another load runs)."""
        if not self.started:
            self.started = True
            await self.inner.load()
            self.ready = True
        return self.ready or self.started

    async def load(self) -> None:
        await self.ensure()

    @property
    def loaded(self) -> bool:
        return self.started

    async def tools(self) -> Sequence[Tool]:
        return await self.inner.tools() if await self.ensure() and self.ready else ()

    async def resources(self) -> Sequence[Resource]:
        return await self.inner.resources() if await self.ensure() and self.ready else ()

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        return await self.inner.resource_templates() if await self.ensure() and self.ready else ()

    async def prompts(self) -> Sequence[Prompt]:
        return await self.inner.prompts() if await self.ensure() and self.ready else ()

    async def get_tool(self, name: str) -> Element | None:
        return await self.inner.get_tool(name) if await self.ensure() and self.ready else None

    async def get_prompt(self, name: str) -> Element | None:
        return await self.inner.get_prompt(name) if await self.ensure() and self.ready else None

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        return await self.inner.get_resource(uri) if await self.ensure() and self.ready else None


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _LoadedTooEarly:
    """The reference registry, answering readers that arrive during the first load with nothing."""
    return _LoadedTooEarly(sources)
