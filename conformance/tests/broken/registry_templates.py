"""Breaks registry.templates: the first matching template in catalogue order wins."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import ElementKind, ElementRef
from mcp_core.registry import ResolvedResource
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _FirstMatch(Delegating):
    async def get_resource(self, uri: str) -> ResolvedResource | None:
        exact = await self.inner.get(ElementRef(ElementKind.RESOURCE, uri)) if uri else None
        if exact is not None:
            return ResolvedResource(element=exact)
        for template in await self.inner.resource_templates():
            variables = template.template.match(uri)
            element = await self.inner.get(template.ref)
            if variables is not None and element is not None:
                return ResolvedResource(element=element, variables=variables)
        return None


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _FirstMatch:
    """The reference registry resolving templates in catalogue order."""
    return _FirstMatch(reference(sources))
