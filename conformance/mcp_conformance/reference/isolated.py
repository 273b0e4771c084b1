"""IsolatedSource."""

from __future__ import annotations

from mcp_core.sources import ElementSource, IsolatedSource

__all__ = ["wrap"]


def wrap(inner: ElementSource) -> IsolatedSource:
    """``IsolatedSource(inner)``."""
    return IsolatedSource(inner)
