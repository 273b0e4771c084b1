"""Breaks registry.model: it drops elements by a property of theirs.

Two variants a real implementation might have: hiding elements tagged ``internal`` on its own
(hiding is the server's per-session visibility rule, not the catalogue's), and skipping
"undocumented" elements without a description (optional in MCP). Every element counts whatever
its fields. (Where the dropped element had a rival at its ref, the rival is listed instead of the
winner: registry.precedence fails too, rightly.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _Dropping:
    def __init__(self, source: ElementSource, dropped: Callable[[Element], bool]) -> None:
        self.source = source
        self.dropped = dropped

    def kinds(self) -> ElementKind:
        return self.source.kinds()

    async def provide(self) -> ElementCollection:
        return ElementCollection(e for e in await self.source.provide() if not self.dropped(e))


class _DroppingRegistry(Delegating):
    dropped: Callable[[Element], bool]

    async def register(self, element: Element) -> None:
        if not self.dropped(element):
            await self.inner.register(element)


def _dropping(
    sources: Sequence[tuple[ElementSource, int]], dropped: Callable[[Element], bool]
) -> _DroppingRegistry:
    registry = _DroppingRegistry(reference([(_Dropping(s, dropped), p) for s, p in sources]))
    registry.dropped = dropped
    return registry


def drops_tagged(sources: Sequence[tuple[ElementSource, int]]) -> _DroppingRegistry:
    """The reference registry dropping every element tagged ``internal``."""
    return _dropping(sources, lambda element: "internal" in element.tags)


def drops_undescribed(sources: Sequence[tuple[ElementSource, int]]) -> _DroppingRegistry:
    """The reference registry dropping every element without a description."""
    return _dropping(sources, lambda element: element.definition.description is None)
