"""Breaks wrapper.transparent: an off-by-one drops the inner source's last element."""

from __future__ import annotations

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.sources import ElementSource


class _DropsLast:
    def __init__(self, inner: ElementSource) -> None:
        self.inner = inner

    def kinds(self) -> ElementKind:
        return self.inner.kinds()

    async def provide(self) -> ElementCollection:
        elements = list(await self.inner.provide())
        return ElementCollection(elements[:-1])


def wrap(inner: ElementSource) -> _DropsLast:
    """``inner`` wrapped so that its last element is dropped."""
    return _DropsLast(inner)
