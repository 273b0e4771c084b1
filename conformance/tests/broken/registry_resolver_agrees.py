"""Breaks registry.resolver-agrees: tool and prompt lookups are cached and never invalidated."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _StaleResolver(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        super().__init__(reference(sources))
        self.cache: dict[tuple[str, str], Element | None] = {}

    async def get_tool(self, name: str) -> Element | None:
        if ("tool", name) not in self.cache:
            self.cache["tool", name] = await self.inner.get_tool(name)
        return self.cache["tool", name]

    async def get_prompt(self, name: str) -> Element | None:
        if ("prompt", name) not in self.cache:
            self.cache["prompt", name] = await self.inner.get_prompt(name)
        return self.cache["prompt", name]


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _StaleResolver:
    """The reference registry behind a never-invalidated lookup cache."""
    return _StaleResolver(sources)
