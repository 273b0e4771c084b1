"""Lacks roles: only an ElementCatalog and an ElementResolver (no writer, lifecycle, events, kinds).

Not broken: the laws of the roles it lacks must be N/A (never PASS), the rest PASS.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, Prompt, Resource, ResourceTemplate, Tool
from mcp_core.registry import ResolvedResource
from mcp_core.sources import ElementSource

from ._delegate import reference


class CatalogOnly:
    """Forwards the catalogue and resolver roles of the reference registry, nothing else."""

    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        self._inner = reference(sources)

    async def tools(self) -> Sequence[Tool]:
        """The tools."""
        return await self._inner.tools()

    async def resources(self) -> Sequence[Resource]:
        """The resources."""
        return await self._inner.resources()

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        """The resource templates."""
        return await self._inner.resource_templates()

    async def prompts(self) -> Sequence[Prompt]:
        """The prompts."""
        return await self._inner.prompts()

    async def get_tool(self, name: str) -> Element | None:
        """The tool named ``name``."""
        return await self._inner.get_tool(name)

    async def get_prompt(self, name: str) -> Element | None:
        """The prompt named ``name``."""
        return await self._inner.get_prompt(name)

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        """The resource at ``uri``."""
        return await self._inner.get_resource(uri)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> CatalogOnly:
    """A registry playing only ElementCatalog and ElementResolver."""
    return CatalogOnly(sources)
