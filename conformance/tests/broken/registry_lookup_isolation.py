"""Breaks registry.source-isolation: before the first load, a raising ``lookup(ref)`` fails the read.

Until the catalogue is loaded, ``get_tool``, ``get_prompt`` and ``get`` first ask every source
that answers ``lookup(ref)`` for the ref, without the isolation the registry keeps around
``provide()``, then answer what the reference registry answers. A source whose lookup raises
fails the read; with healthy sources every answer is the reference's, so every other law passes.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementKind, ElementRef
from mcp_core.sources import ElementLookup, ElementSource

from ._delegate import Delegating, reference


class _UnguardedLookups(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.lookups = [source for source, _ in sources if isinstance(source, ElementLookup)]

    async def _asked(self, ref: ElementRef) -> Element | None:
        if not self.inner.loaded:
            for source in self.lookups:
                await source.lookup(ref)  # not isolated: what it raises, the read raises
        return await self.inner.get(ref)

    async def get_tool(self, name: str) -> Element | None:
        return await self._asked(ElementRef(ElementKind.TOOL, name)) if name else None

    async def get_prompt(self, name: str) -> Element | None:
        return await self._asked(ElementRef(ElementKind.PROMPT, name)) if name else None

    async def get(self, ref: ElementRef) -> Element | None:
        return await self._asked(ref)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _UnguardedLookups:
    """The reference registry, with per-name reads before the first load that ask lookups unguarded."""
    return _UnguardedLookups(sources)
