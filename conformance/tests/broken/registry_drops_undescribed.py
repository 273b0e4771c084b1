"""Breaks registry.model: it skips elements without a description ("undocumented tools").

Every element counts whatever its fields; a description is optional in MCP.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


def _dropped(element: Element) -> bool:
    return element.definition.description is None


class _Dropping:
    def __init__(self, source: ElementSource) -> None:
        self.source = source

    def kinds(self) -> ElementKind:
        return self.source.kinds()

    async def provide(self) -> ElementCollection:
        return ElementCollection(e for e in await self.source.provide() if not _dropped(e))


class _DroppingRegistry(Delegating):
    async def register(self, element: Element) -> None:
        if not _dropped(element):
            await self.inner.register(element)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _DroppingRegistry:
    """The reference registry dropping every element without a description."""
    return _DroppingRegistry(reference([(_Dropping(s), p) for s, p in sources]))
