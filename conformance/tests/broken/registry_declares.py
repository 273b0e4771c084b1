"""Declares what it does not claim: no handler validation (element-isolation is N/A), with why."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_conformance import Capabilities
from mcp_core.elements import Element
from mcp_core.registry import Registry
from mcp_core.sources import ElementSource

MCP_CONFORMANCE = Capabilities(
    validates_elements=False,
    reason="handlers are checked by the framework's container when it builds the registry",
)


def _accept(element: Element) -> None:
    """Every element passes: validation happens upstream."""


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> Registry:
    """The reference registry without handler validation, as declared."""
    return Registry(sources, validator=_accept)
