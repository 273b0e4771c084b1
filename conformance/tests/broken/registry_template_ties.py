"""Breaks registry.templates across sources: equally specific templates tie-break by text."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import most_specific_first
from mcp_core.registry import ResolvedResource
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _ByText(Delegating):
    """Resolves templates the way registries did before precedence decided ties: by their text."""

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        exact = await self.inner.get_resource(uri)
        if exact is None or (not exact.variables and exact.element.ref.key == uri):
            return exact
        templates = {t.template: t for t in await self.inner.resource_templates()}
        for template in most_specific_first(templates):
            variables = template.match(uri)
            if variables is not None:
                element = await self.inner.get(templates[template].ref)
                assert element is not None  # listed, so present
                return ResolvedResource(element=element, variables=variables)
        return None


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _ByText:
    """The reference Registry, but template ties broken by text instead of precedence."""
    return _ByText(reference(sources))
