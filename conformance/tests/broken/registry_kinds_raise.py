"""Breaks registry.undeclared-kinds: a source whose ``kinds()`` raises is taken to declare all.

A plausible shortcut ("if we cannot tell, assume everything"): the registry keeps serving every
element of a source whose ``kinds()`` raises, where the contract says such a source declares
nothing, so its elements are skipped like any other of an undeclared kind.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _KindsOrAll:
    def __init__(self, source: ElementSource) -> None:
        self.source = source

    def kinds(self) -> ElementKind:
        try:
            return self.source.kinds()
        except BaseException:  # noqa: BLE001 -- the bug: any failure reads as "everything"
            return ElementKind.ALL

    async def provide(self) -> ElementCollection:
        return await self.source.provide()


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> Delegating:
    """The reference registry, over sources whose failing kinds() declares every kind."""
    return Delegating(reference([(_KindsOrAll(source), priority) for source, priority in sources]))
