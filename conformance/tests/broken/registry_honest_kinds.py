"""Breaks registry.honest-kinds: it advertises every kind, to be on the safe side."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import ElementKind
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _AdvertisesEverything(Delegating):
    def kinds(self) -> ElementKind:
        return ElementKind.ALL


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _AdvertisesEverything:
    """The reference registry advertising every kind."""
    return _AdvertisesEverything(reference(sources))
