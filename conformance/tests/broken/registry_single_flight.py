"""Breaks registry.single-flight: the first read loads without sharing the load in flight.

Each reader checks a flag, finds it unset while another reader's load is still running, and
loads again.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, Prompt, Resource, ResourceTemplate, Tool
from mcp_core.registry import ResolvedResource
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _UnguardedLoad(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.ready = False

    async def ensure(self) -> None:
        if not self.ready:
            await self.inner.reload()
            self.ready = True

    async def load(self) -> None:
        await self.ensure()

    async def tools(self) -> Sequence[Tool]:
        await self.ensure()
        return await self.inner.tools()

    async def resources(self) -> Sequence[Resource]:
        await self.ensure()
        return await self.inner.resources()

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        await self.ensure()
        return await self.inner.resource_templates()

    async def prompts(self) -> Sequence[Prompt]:
        await self.ensure()
        return await self.inner.prompts()

    async def get_tool(self, name: str) -> Element | None:
        await self.ensure()
        return await self.inner.get_tool(name)

    async def get_prompt(self, name: str) -> Element | None:
        await self.ensure()
        return await self.inner.get_prompt(name)

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        await self.ensure()
        return await self.inner.get_resource(uri)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _UnguardedLoad:
    """The reference registry loading on first read without sharing the load."""
    return _UnguardedLoad(sources)
