"""Breaks source.returns-collection: provide() returns a list of elements, not a collection."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import Element, ElementKind


class _ListSource:
    def __init__(self) -> None:
        self.collection = example_collection()

    def kinds(self) -> ElementKind:
        return self.collection.kinds

    async def provide(self) -> list[Element]:
        return list(self.collection)


def make_source() -> _ListSource:
    """A source providing a list of elements."""
    return _ListSource()
