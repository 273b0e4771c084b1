"""Breaks registry.resolver-agrees: tool and prompt names are looked up case-insensitively.

A miss tries the name in lower case (a "friendly" fallback): with ``lookup`` listed,
``get_tool("Lookup")`` answers it, though no tool of that name is listed. Only a vocabulary
with case twins (``lookup`` and ``lookuP``) tells it from a correct registry.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _Folding(Delegating):
    async def get_tool(self, name: str) -> Element | None:
        found = await self.inner.get_tool(name)
        if found is None:
            for tool in await self.inner.tools():
                if tool.name.casefold() == name.casefold():
                    return await self.inner.get_tool(tool.name)
        return found

    async def get_prompt(self, name: str) -> Element | None:
        found = await self.inner.get_prompt(name)
        if found is None:
            for prompt in await self.inner.prompts():
                if prompt.name.casefold() == name.casefold():
                    return await self.inner.get_prompt(prompt.name)
        return found


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _Folding:
    """The reference registry with a case-insensitive fallback for names."""
    return _Folding(reference(sources))
