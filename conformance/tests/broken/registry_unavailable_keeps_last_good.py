"""Breaks registry.unavailable-keeps-last-good: "backend down" is read as "no elements".

The database-backed integration's bug: SourceUnavailableError is caught and the source's
contribution replaced with an empty collection, silently emptying the server.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.errors import SourceUnavailableError
from mcp_core.registry import Registry
from mcp_core.sources import ElementSource

from ._delegate import reference


class _EmptyWhenUnavailable:
    def __init__(self, inner: ElementSource) -> None:
        self.inner = inner

    def kinds(self) -> ElementKind:
        return self.inner.kinds()

    async def provide(self) -> ElementCollection:
        try:
            return await self.inner.provide()
        except SourceUnavailableError:
            return ElementCollection()


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> Registry:
    """The reference registry over sources that go empty when unavailable."""
    return reference([(_EmptyWhenUnavailable(source), priority) for source, priority in sources])
