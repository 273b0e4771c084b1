"""FilteredSource keeping untagged and ``public`` elements: a relation, not transparency."""

from __future__ import annotations

from mcp_conformance import Capabilities
from mcp_core.elements import Element, ElementCollection
from mcp_core.sources import ElementSource, FilteredSource

__all__ = ["MCP_CONFORMANCE", "wrap"]


def keep(element: Element) -> bool:
    """Elements without tags, or tagged ``public``."""
    return not element.tags or "public" in element.tags


def wrap(inner: ElementSource) -> FilteredSource:
    """``FilteredSource(inner, keep)``."""
    return FilteredSource(inner, keep)


def kept(collection: ElementCollection) -> ElementCollection:
    """What the wrapper must provide: the inner collection's kept elements, in order."""
    return ElementCollection(element for element in collection if keep(element))


MCP_CONFORMANCE = Capabilities(
    transparent=False,
    relation=kept,
    reason="a filter drops elements by design; it is checked against its predicate instead",
)
