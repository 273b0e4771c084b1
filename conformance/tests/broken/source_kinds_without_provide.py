"""Breaks source.kinds-without-provide: kinds() runs provide() to see what it would return."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import ElementCollection, ElementKind


class _ProvidingKinds:
    def kinds(self) -> ElementKind:
        # provide() never suspends, so one step of the coroutine runs it to completion.
        coroutine = self.provide()
        try:
            coroutine.send(None)
        except StopIteration as done:
            collection: ElementCollection = done.value
            return collection.kinds
        coroutine.close()
        return ElementKind.ALL

    async def provide(self) -> ElementCollection:
        return example_collection()


def make_source() -> _ProvidingKinds:
    """A source whose kinds() runs provide()."""
    return _ProvidingKinds()
