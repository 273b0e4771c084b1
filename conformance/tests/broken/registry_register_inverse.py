"""Breaks registry.register-inverse: unregister() reveals the shadowed element at the end.

The catalogue is right as a set (so registry.model holds), but register-then-unregister does
not give the previous catalogue back: the element that was shadowed moves to the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from mcp_core.elements import (
    Definition,
    Element,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference

D = TypeVar("D", bound=Definition)


class _MovingUnregister(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.moved: list[ElementRef] = []

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        if element.ref in self.moved:
            self.moved.remove(element.ref)

    async def unregister(self, ref: ElementRef) -> bool:
        removed = await self.inner.unregister(ref)
        if removed and ref not in self.moved:
            self.moved.append(ref)
        return removed

    def order(self, definitions: Sequence[D]) -> list[D]:
        rank = {ref: index for index, ref in enumerate(self.moved)}
        return sorted(definitions, key=lambda d: (d.ref in rank, rank.get(d.ref, 0)))

    async def tools(self) -> Sequence[Tool]:
        return self.order(await self.inner.tools())

    async def resources(self) -> Sequence[Resource]:
        return self.order(await self.inner.resources())

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        return self.order(await self.inner.resource_templates())

    async def prompts(self) -> Sequence[Prompt]:
        return self.order(await self.inner.prompts())


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _MovingUnregister:
    """The reference registry moving revealed elements to the end."""
    return _MovingUnregister(sources)
