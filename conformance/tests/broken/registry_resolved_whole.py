"""Breaks registry.resolved-whole: before the first load, a per-name read stops at the first source.

Until the catalogue is loaded, ``get_prompt`` and ``get`` ask the sources that answer
``lookup(ref)``, best first, and return the first element found as it is. The loaded catalogue
gives a winner that completes fewer arguments than it could the completion providers of the
elements it shadows; this shortcut does not, so a completion asked before the first load finds
no provider where one asked after it finds one. The definition is the right one: every law that
compares definitions passes.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementKind, ElementRef
from mcp_core.sources import ElementLookup, ElementSource

from ._delegate import Delegating, reference


class _FirstFound(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        # Best first: higher priority, then the source added first.
        ranked = sorted(enumerate(sources), key=lambda item: (-item[1][1], item[0]))
        self.ranked = [source for _, (source, _) in ranked]
        self.runtime: set[ElementRef] = set()

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        self.runtime.add(element.ref)

    async def unregister(self, ref: ElementRef) -> bool:
        self.runtime.discard(ref)
        return await self.inner.unregister(ref)

    async def _first_found(self, ref: ElementRef) -> Element | None:
        if self.inner.loaded or ref in self.runtime:
            return await self.inner.get(ref)
        for source in self.ranked:
            if not isinstance(source, ElementLookup):
                break  # a source without lookup: ask the registry, which provides it
            found = await source.lookup(ref)
            if found is not None:
                return found
        return await self.inner.get(ref)

    async def get_prompt(self, name: str) -> Element | None:
        return await self._first_found(ElementRef(ElementKind.PROMPT, name)) if name else None

    async def get(self, ref: ElementRef) -> Element | None:
        return await self._first_found(ref)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _FirstFound:
    """The reference registry, with per-name reads before the first load that merge nothing."""
    return _FirstFound(sources)
