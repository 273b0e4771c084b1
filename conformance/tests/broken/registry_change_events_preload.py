"""Breaks registry.change-events: writes emit before the first load.

Its writes announce their kind whether or not a catalogue was ever loaded (what the reference
registry did before the rule was written down).
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementKind, ElementRef
from mcp_core.handlers import escapes
from mcp_core.sources import ElementSource

from ._delegate import OwnListeners, reference


class _EarlyEvents(OwnListeners):
    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        if not self.inner.loaded:
            self.guarded(element.kind)

    async def unregister(self, ref: ElementRef) -> bool:
        removed = await self.inner.unregister(ref)
        if removed and not self.inner.loaded:
            self.guarded(ref.kind)
        return removed

    def guarded(self, kinds: ElementKind) -> None:
        """Announce, isolating raising listeners (this variant breaks only the events' rule)."""
        for listener in tuple(self.listeners):
            try:
                listener(kinds)
            except BaseException as exc:  # isolation, as the contract asks
                if escapes(exc):
                    raise

    def fan_out(self, kinds: ElementKind) -> None:
        self.guarded(kinds)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _EarlyEvents:
    """The reference registry announcing writes made before the first load."""
    return _EarlyEvents(reference(sources))
