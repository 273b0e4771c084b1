"""Breaks registry.unsubscribe: the function subscribe() returns does nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcp_core.elements import ElementKind
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _Sticky(Delegating):
    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        self.inner.subscribe(listener)
        return lambda: None


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _Sticky:
    """The reference registry whose listeners can never leave."""
    return _Sticky(reference(sources))
