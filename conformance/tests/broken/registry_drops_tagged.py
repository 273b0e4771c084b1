"""Breaks registry.model: it drops elements tagged ``internal``, hiding them on its own.

Hiding elements is the server's visibility rule, per session; a catalogue that drops elements by
a property of theirs loses them for everyone.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


def _dropped(element: Element) -> bool:
    return "internal" in element.tags


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
    """The reference registry dropping every element tagged ``internal``."""
    return _DroppingRegistry(reference([(_Dropping(s), p) for s, p in sources]))
