"""Breaks registry.lazy: register() loads every source first, "to know what it replaces"."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _EagerWrites(Delegating):
    async def register(self, element: Element) -> None:
        await self.inner.load()
        await self.inner.register(element)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _EagerWrites:
    """The reference registry loading on its first write."""
    return _EagerWrites(reference(sources))
