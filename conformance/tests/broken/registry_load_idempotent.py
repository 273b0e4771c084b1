"""Breaks registry.load-idempotent: every load() pings each source "to check it is alive"."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _PingingLoad(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.sources = [source for source, _ in sources]

    async def load(self) -> None:
        await self.inner.load()
        for source in self.sources:
            with contextlib.suppress(Exception):
                await source.provide()


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _PingingLoad:
    """The reference registry whose load() provides every source again."""
    return _PingingLoad(sources)
