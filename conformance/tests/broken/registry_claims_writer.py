"""Claims the writer role but misspells it (``add``/``remove``): writer laws FAIL, not N/A."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_conformance import Capabilities
from mcp_core.elements import Element, ElementRef
from mcp_core.sources import ElementSource

from ._delegate import reference
from .registry_catalog_only import CatalogOnly

MCP_CONFORMANCE = Capabilities(writer=True)


class _Misspelt(CatalogOnly):
    async def add(self, element: Element) -> None:
        await reference([]).register(element)

    async def remove(self, ref: ElementRef) -> bool:
        return False


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _Misspelt:
    """A catalogue-only registry claiming a writer it spells add/remove."""
    return _Misspelt(sources)
