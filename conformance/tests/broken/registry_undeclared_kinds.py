"""Breaks registry.undeclared-kinds: it keeps elements of kinds their source does not declare.

It merges what sources provide without looking at their kinds(), while kinds() itself still
answers honestly from the declarations.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _DeclaresAll:
    """Its source's elements, declared as every kind: what the merge then believes."""

    def __init__(self, source: ElementSource) -> None:
        self.source = source

    def kinds(self) -> ElementKind:
        return ElementKind.ALL

    async def provide(self) -> ElementCollection:
        return await self.source.provide()


class _KeepsUndeclared(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference([(_DeclaresAll(s), p) for s, p in sources]))
        self.sources = sources
        self.runtime: dict[ElementRef, ElementKind] = {}

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        self.runtime[element.ref] = element.kind

    async def unregister(self, ref: ElementRef) -> bool:
        self.runtime.pop(ref, None)
        return await self.inner.unregister(ref)

    def kinds(self) -> ElementKind:
        kinds = ElementKind.NONE
        for declared in (*(s.kinds() for s, _ in self.sources), *self.runtime.values()):
            kinds |= declared
        return kinds


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _KeepsUndeclared:
    """The reference registry keeping every element its sources provide, declared or not."""
    return _KeepsUndeclared(sources)
