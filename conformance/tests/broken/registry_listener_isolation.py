"""Breaks registry.listener-isolation: a listener that raises aborts the operation.

Listeners are called in a plain loop: the first one to raise propagates out of register(),
unregister() or reload(), and the listeners after it hear nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcp_core.elements import ElementKind
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _Unguarded(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.listeners: list[Callable[[ElementKind], object]] = []
        self.inner.subscribe(self._fan_out)

    def _fan_out(self, kinds: ElementKind) -> None:
        for listener in self.listeners:
            listener(kinds)

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _Unguarded:
    """The reference registry whose change listeners are called unguarded."""
    return _Unguarded(sources)
