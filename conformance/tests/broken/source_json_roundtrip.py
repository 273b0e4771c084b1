"""Breaks source.json-roundtrip: its handler references carry more than the format keeps."""

from __future__ import annotations

import dataclasses

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import ElementCollection, ElementKind, HandlerRef


@dataclasses.dataclass(frozen=True, slots=True)
class _VersionedRef(HandlerRef):  # type: ignore[misc]  # HandlerRef is final: subclassing it is the bug
    version: int = 2


class _VersionedSource:
    def kinds(self) -> ElementKind:
        return ElementKind.ALL

    async def provide(self) -> ElementCollection:
        return ElementCollection(
            dataclasses.replace(element, handler=_VersionedRef(str(element.handler)))
            for element in example_collection()
        )


def make_source() -> _VersionedSource:
    """A source handing out versioned handler references."""
    return _VersionedSource()
