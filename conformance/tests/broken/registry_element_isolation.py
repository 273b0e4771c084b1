"""Breaks registry.element-isolation: it validates nothing, so a wrong-kind handler is listed."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.elements import Element
from mcp_core.registry import Registry
from mcp_core.sources import ElementSource


def _accept(element: Element) -> None:
    """Every element passes."""


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> Registry:
    """The reference registry accepting every element."""
    return Registry(sources, validator=_accept)
