"""Breaks source.lookup-agrees: lookup is keyed by name alone, so it answers the wrong kind."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef


class _ByNameOnly:
    def __init__(self) -> None:
        self.collection = example_collection()
        # The bug: an index by key that forgets kinds are separate namespaces.
        self.by_key = {element.ref.key: element for element in self.collection}

    def kinds(self) -> ElementKind:
        return self.collection.kinds

    async def provide(self) -> ElementCollection:
        return self.collection

    async def lookup(self, ref: ElementRef) -> Element | None:
        return self.by_key.get(ref.key)


def make_source() -> _ByNameOnly:
    """A source whose lookup ignores the ref's kind."""
    return _ByNameOnly()
