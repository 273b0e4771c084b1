"""Breaks registry.resolved-whole: before the first load, a per-name read ignores declared kinds.

Until the catalogue is loaded, ``get_tool``, ``get_prompt`` and ``get`` answer from a second
reference registry over the same sources, each seen as declaring every kind. The load skips an
element of a kind its source does not declare (or every element of a source whose ``kinds()``
raises); these reads serve it, or let it shadow the element the loaded catalogue holds. With
sources that declare every kind, every answer is the reference's.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.sources import ElementLookup, ElementSource

from ._delegate import Delegating, reference


class _EveryKind:
    """``inner``, declaring every kind."""

    def __init__(self, inner: ElementSource) -> None:
        self.inner = inner

    def kinds(self) -> ElementKind:
        return ElementKind.ALL

    async def provide(self) -> ElementCollection:
        return await self.inner.provide()


class _EveryKindLookup(_EveryKind):
    """``inner`` (an ``ElementLookup``), declaring every kind."""

    async def lookup(self, ref: ElementRef) -> Element | None:
        assert isinstance(self.inner, ElementLookup)
        return await self.inner.lookup(ref)


def _every_kind(source: ElementSource) -> _EveryKind:
    return _EveryKindLookup(source) if isinstance(source, ElementLookup) else _EveryKind(source)


class _KindBlind(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.blind = reference([(_every_kind(source), priority) for source, priority in sources])
        self.runtime: set[ElementRef] = set()

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        self.runtime.add(element.ref)

    async def unregister(self, ref: ElementRef) -> bool:
        self.runtime.discard(ref)
        return await self.inner.unregister(ref)

    async def _resolved(self, ref: ElementRef) -> Element | None:
        if self.inner.loaded or ref in self.runtime:
            return await self.inner.get(ref)
        return await self.blind.get(ref)

    async def get_tool(self, name: str) -> Element | None:
        return await self._resolved(ElementRef(ElementKind.TOOL, name)) if name else None

    async def get_prompt(self, name: str) -> Element | None:
        return await self._resolved(ElementRef(ElementKind.PROMPT, name)) if name else None

    async def get(self, ref: ElementRef) -> Element | None:
        return await self._resolved(ref)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _KindBlind:
    """The reference registry, with per-name reads before the first load blind to declared kinds."""
    return _KindBlind(sources)
