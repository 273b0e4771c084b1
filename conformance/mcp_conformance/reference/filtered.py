"""FilteredSource keeping untagged and ``public`` elements: a relation, not transparency.

``wrap`` filters by the predicate alone; ``wrap_kinds`` also declares the kinds it keeps (tools
and resources), which it then advertises and enforces.
"""

from __future__ import annotations

from mcp_conformance import Capabilities, declare
from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.sources import ElementSource, FilteredSource

__all__ = ["MCP_CONFORMANCE", "wrap", "wrap_kinds"]

KINDS = ElementKind.TOOL | ElementKind.RESOURCE
"""What ``wrap_kinds`` declares: tools and resources (templates and prompts are dropped)."""


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


def kept_of_kinds(collection: ElementCollection) -> ElementCollection:
    """What ``wrap_kinds`` must provide: the kept elements of the declared kinds, in order."""
    return ElementCollection(
        element for element in collection if keep(element) and element.kind & KINDS
    )


@declare(
    Capabilities(
        transparent=False,
        relation=kept_of_kinds,
        reason="a filter drops elements by design; it is checked against its predicate and kinds",
    )
)
def wrap_kinds(inner: ElementSource) -> FilteredSource:
    """``FilteredSource(inner, keep, kinds=TOOL | RESOURCE)``."""
    return FilteredSource(inner, keep, kinds=KINDS)
