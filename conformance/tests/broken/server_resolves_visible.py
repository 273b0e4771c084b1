"""Not broken: a server whose resolution skips hidden elements, so hidden answers like missing.

The registry it serves applies the visibility rule while resolving (the kit's rule hides the
same elements from every session): a hidden resource or template never shadows a visible
template matching the same URI. Proves server.visibility-agrees can be met, and by what.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element, ElementKind, ElementRef, UriTemplate, most_specific_first
from mcp_core.registry import ResolvedResource
from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility, SessionInfo

from ._delegate import Delegating, reference
from ._served import served


class _ResolvesVisible(Delegating):
    rule: ElementVisibility

    async def _shown(self, element: Element | None) -> Element | None:
        if element is None or not await self.rule.is_visible(element.ref, SessionInfo()):
            return None
        return element

    async def get(self, ref: ElementRef) -> Element | None:
        return await self._shown(await self.inner.get(ref))

    async def get_tool(self, name: str) -> Element | None:
        return await self._shown(await self.inner.get_tool(name))

    async def get_prompt(self, name: str) -> Element | None:
        return await self._shown(await self.inner.get_prompt(name))

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        exact = await self.get(ElementRef(ElementKind.RESOURCE, uri)) if uri else None
        if exact is not None:
            return ResolvedResource(element=exact)
        templates = {t.template: t for t in await self.inner.resource_templates()}
        for template in most_specific_first(templates):
            variables = UriTemplate.parse(template.text).match(uri)
            element = await self.get(templates[template].ref) if variables is not None else None
            if element is not None and variables is not None:
                return ResolvedResource(element=element, variables=variables)
        return None


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer over a registry that resolves only what the rule shows."""
    registry = _ResolvesVisible(reference(sources))
    registry.rule = visibility
    return served(registry, visibility=visibility, page_size=page_size)
