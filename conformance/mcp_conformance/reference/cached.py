"""CachedSource over an in-memory store (a fresh store per wrapped source)."""

from __future__ import annotations

from mcp_core.sources import CachedSource, ElementSource
from mcp_core.stores import MemoryStore

__all__ = ["wrap"]


def wrap(inner: ElementSource) -> CachedSource:
    """``CachedSource(inner, MemoryStore(), key=...)``: never expires, so it serves the cache."""
    return CachedSource(inner, MemoryStore(), key="mcp-conformance")
