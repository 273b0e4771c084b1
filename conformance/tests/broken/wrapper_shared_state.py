"""Breaks source.idempotent: wrappers share one "last collection" across instances.

Each provide() stores the inner collection on the class, awaits, then returns what the class
holds: a call interleaved with another instance's returns that instance's collection. Called one
at a time it is transparent.
"""

from __future__ import annotations

from typing import ClassVar

import anyio.lowlevel

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.sources import ElementSource


class _SharedLast:
    last: ClassVar[ElementCollection] = ElementCollection()

    def __init__(self, inner: ElementSource) -> None:
        self.inner = inner

    def kinds(self) -> ElementKind:
        return self.inner.kinds()

    async def provide(self) -> ElementCollection:
        _SharedLast.last = await self.inner.provide()
        await anyio.lowlevel.checkpoint()
        return _SharedLast.last


def wrap(inner: ElementSource) -> _SharedLast:
    """A wrapper keeping the last provided collection on its class."""
    return _SharedLast(inner)
