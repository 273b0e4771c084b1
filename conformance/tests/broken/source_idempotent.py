"""Breaks source.idempotent: every provide() stamps its elements with a call counter."""

from __future__ import annotations

import dataclasses

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import ElementCollection, ElementKind


class _StampingSource:
    def __init__(self) -> None:
        self.calls = 0

    def kinds(self) -> ElementKind:
        return ElementKind.ALL

    async def provide(self) -> ElementCollection:
        self.calls += 1
        return ElementCollection(
            dataclasses.replace(
                element,
                definition=dataclasses.replace(
                    element.definition, description=f"call {self.calls}"
                ),
            )
            for element in example_collection()
        )


def make_source() -> _StampingSource:
    """A source stamping every provide() with a call counter."""
    return _StampingSource()
