"""Breaks registry.model: every runtime registration is listed twice.

The catalogue is built as "runtime registrations, then the merged catalogue", forgetting that
the merged catalogue already holds them. Which definition wins is still right.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementRef, Prompt, Resource, ResourceTemplate, Tool
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _TwiceListed(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.runtime: dict[ElementRef, Element] = {}

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        self.runtime[element.ref] = element

    async def unregister(self, ref: ElementRef) -> bool:
        self.runtime.pop(ref, None)
        return await self.inner.unregister(ref)

    async def tools(self) -> Sequence[Tool]:
        return [
            *(e.definition for e in self.runtime.values() if isinstance(e.definition, Tool)),
            *await self.inner.tools(),
        ]

    async def resources(self) -> Sequence[Resource]:
        own = [e.definition for e in self.runtime.values() if isinstance(e.definition, Resource)]
        return [*own, *await self.inner.resources()]

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        own = [
            e.definition
            for e in self.runtime.values()
            if isinstance(e.definition, ResourceTemplate)
        ]
        return [*own, *await self.inner.resource_templates()]

    async def prompts(self) -> Sequence[Prompt]:
        return [
            *(e.definition for e in self.runtime.values() if isinstance(e.definition, Prompt)),
            *await self.inner.prompts(),
        ]


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _TwiceListed:
    """The reference registry listing runtime registrations twice."""
    return _TwiceListed(sources)
