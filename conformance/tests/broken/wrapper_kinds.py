"""Breaks wrapper.kinds: it advertises every kind, whatever its inner source can provide."""

from __future__ import annotations

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.sources import ElementSource


class _AdvertisesEverything:
    def __init__(self, inner: ElementSource) -> None:
        self.inner = inner

    def kinds(self) -> ElementKind:
        return ElementKind.ALL

    async def provide(self) -> ElementCollection:
        return await self.inner.provide()


def wrap(inner: ElementSource) -> _AdvertisesEverything:
    """``inner`` wrapped so that it advertises every kind."""
    return _AdvertisesEverything(inner)
