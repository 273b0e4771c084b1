"""A correct source without the optional lookup(ref): what source.lookup-agrees calls N/A."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import ElementCollection, ElementKind


class _ProvideOnly:
    def __init__(self) -> None:
        self.collection = example_collection()

    def kinds(self) -> ElementKind:
        return self.collection.kinds

    async def provide(self) -> ElementCollection:
        return self.collection


def make_source() -> _ProvideOnly:
    """A source that only provides."""
    return _ProvideOnly()
