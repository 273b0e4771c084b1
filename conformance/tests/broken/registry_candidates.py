"""Breaks registry.candidates: the runners-up come in listing order, not the resolver's.

``resource_candidates(uri)`` yields the exact resource, then every matching template as the
catalogue lists them; ``get_resource`` still picks the most specific one. A server looking past a
hidden winner then serves a less specific template than a server without the winner would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mcp_core.elements import ElementKind, ElementRef
from mcp_core.registry import ResolvedResource
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _ListingOrder(Delegating):
    async def resource_candidates(self, uri: str) -> Iterable[ResolvedResource]:
        found = []
        exact = await self.inner.get(ElementRef(ElementKind.RESOURCE, uri))
        if exact is not None:
            found.append(ResolvedResource(element=exact))
        for definition in await self.inner.resource_templates():
            variables = definition.template.match(uri)
            element = await self.inner.get(definition.ref)
            if variables is not None and element is not None:
                found.append(ResolvedResource(element=element, variables=variables))
        return found


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _ListingOrder:
    """The reference registry, with candidates in listing order."""
    return _ListingOrder(reference(sources))
