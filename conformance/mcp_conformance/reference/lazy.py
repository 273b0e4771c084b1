"""LazySource whose factory returns the example collection."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.sources import LazySource

__all__ = ["source"]


def source() -> LazySource:
    """``LazySource(example_collection)``, declaring the kinds the factory registers."""
    return LazySource(example_collection, kinds=example_collection().kinds)
