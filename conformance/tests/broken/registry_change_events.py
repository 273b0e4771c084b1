"""Breaks registry.change-events: every change is announced for every kind."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcp_core.elements import ElementKind
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _CoarseEvents(Delegating):
    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        return self.inner.subscribe(lambda _: listener(ElementKind.ALL))


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _CoarseEvents:
    """The reference registry announcing every change for every kind."""
    return _CoarseEvents(reference(sources))
