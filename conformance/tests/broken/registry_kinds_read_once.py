"""Breaks registry.honest-kinds: it reads each source's kinds() once and keeps the answer.

Honest at the first call, and wrong from the moment a source's ``kinds()`` answers differently
(a plugin enabled, a scan that found more).
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementKind, ElementRef
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _ReadsKindsOnce(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.sources = sources
        self.declared: ElementKind | None = None
        self.runtime: dict[ElementRef, ElementKind] = {}

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        self.runtime[element.ref] = element.kind

    async def unregister(self, ref: ElementRef) -> bool:
        self.runtime.pop(ref, None)
        return await self.inner.unregister(ref)

    def kinds(self) -> ElementKind:
        if self.declared is None:
            self.declared = ElementKind.NONE
            for source, _ in self.sources:
                self.declared |= source.kinds()
        kinds = self.declared
        for kind in self.runtime.values():
            kinds |= kind
        return kinds


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _ReadsKindsOnce:
    """The reference registry, with kinds() read from each source once."""
    return _ReadsKindsOnce(sources)
