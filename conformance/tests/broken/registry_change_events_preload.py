"""Breaks registry.change-events: writes emit before the first load.

Its writes announce their kind whether or not a catalogue was ever loaded (what the reference
registry did before the rule was written down).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcp_core.elements import Element, ElementKind, ElementRef
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _EarlyEvents(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.listeners: list[Callable[[ElementKind], object]] = []
        self.inner.subscribe(self._fan_out)

    def _fan_out(self, kinds: ElementKind) -> None:
        for listener in tuple(self.listeners):
            listener(kinds)

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        if not self.inner.loaded:
            self._fan_out(element.kind)

    async def unregister(self, ref: ElementRef) -> bool:
        removed = await self.inner.unregister(ref)
        if removed and not self.inner.loaded:
            self._fan_out(ref.kind)
        return removed


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _EarlyEvents:
    """The reference registry announcing writes made before the first load."""
    return _EarlyEvents(reference(sources))
