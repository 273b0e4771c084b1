"""LazySource whose factory returns the example collection, with a per-name lookup."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import Element, ElementRef
from mcp_core.sources import LazySource

__all__ = ["source"]


def _one(ref: ElementRef) -> Element | None:
    """The plugin-manager side of per-name resolution: build only what ``ref`` names."""
    return example_collection().get(ref)


def source() -> LazySource:
    """``LazySource(example_collection, lookup=...)``, declaring the kinds the factory registers."""
    return LazySource(example_collection, kinds=example_collection().kinds, lookup=_one)
