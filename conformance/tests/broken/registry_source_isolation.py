"""Breaks registry.source-isolation: while any source is failing, every read fails too."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Prompt, Resource, ResourceTemplate, Tool
from mcp_core.errors import SourceError
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _FailingReads(Delegating):
    def check(self) -> None:
        failed = [d for d in self.inner.diagnostics() if d.kind == "failed"]
        if failed:
            raise SourceError(f"cannot list: {failed[0]}")

    async def tools(self) -> Sequence[Tool]:
        tools = await self.inner.tools()
        self.check()
        return tools

    async def resources(self) -> Sequence[Resource]:
        resources = await self.inner.resources()
        self.check()
        return resources

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        templates = await self.inner.resource_templates()
        self.check()
        return templates

    async def prompts(self) -> Sequence[Prompt]:
        prompts = await self.inner.prompts()
        self.check()
        return prompts


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _FailingReads:
    """The reference registry failing every read while a source is failing."""
    return _FailingReads(reference(sources))
