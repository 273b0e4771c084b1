"""StaticSource over the example collection."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.sources import StaticSource

__all__ = ["source"]


def source() -> StaticSource:
    """``StaticSource(example_collection())``."""
    return StaticSource(example_collection())
