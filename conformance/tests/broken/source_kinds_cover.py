"""Breaks source.kinds-cover: kinds() says tools, provide() returns prompts and resources too."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import ElementCollection, ElementKind


class _NarrowKinds:
    def kinds(self) -> ElementKind:
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        return example_collection()


def make_source() -> _NarrowKinds:
    """A source declaring tools while providing every kind."""
    return _NarrowKinds()
