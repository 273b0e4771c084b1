"""Breaks registry.first-read-complete: a write made before the first load completes is lost.

Registrations that arrive before the catalogue has loaded are buffered "until it is ready", and
the buffer is never applied: the first load starts from the sources alone. A registry written
to after its load looks correct; only writes interleaved with a first load tell.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element
from mcp_core.registry import Registry
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _Buffered(Delegating):
    def __init__(self, inner: Registry) -> None:
        super().__init__(inner)
        self.buffer: list[Element] = []

    async def register(self, element: Element) -> None:
        if not self.inner.loaded:
            self.buffer.append(element)  # the bug: never applied once the load completes
            return
        await self.inner.register(element)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _Buffered:
    """The reference registry, losing writes that arrive before its first load completes."""
    return _Buffered(reference(sources))
