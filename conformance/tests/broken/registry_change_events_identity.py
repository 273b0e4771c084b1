"""Breaks registry.change-events: it compares definitions by identity when a registration goes.

``unregister(ref)`` announces a change whenever the definition served afterwards is not the
same object as the one removed. A runtime registration that repeats a source's definition (an
equal copy, say a plugin registering at run time what its package also declares) changed no
listed definition when it came, and changes none when it goes, but this registry announces one.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementRef
from mcp_core.sources import ElementSource

from ._delegate import OwnListeners, reference


class _IdentityEvents(OwnListeners):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.runtime: dict[ElementRef, Element] = {}
        self.heard = 0
        self.inner.subscribe(self._count)

    def _count(self, _: object) -> None:
        self.heard += 1

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        self.runtime[element.ref] = element

    async def unregister(self, ref: ElementRef) -> bool:
        removed = self.runtime.pop(ref, None)
        heard = self.heard
        found = await self.inner.unregister(ref)
        if removed is not None and self.inner.loaded and self.heard == heard:
            after = await self.inner.get(ref)
            if after is None or after.definition is not removed.definition:
                self.fan_out(ref.kind)
        return found


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _IdentityEvents:
    """The reference registry, announcing an unregistration unless the same object is served."""
    return _IdentityEvents(sources)
