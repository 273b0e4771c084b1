"""DiscoverySource over the reference app module (handlers by reference: serializable)."""

from __future__ import annotations

from mcp_core.sources import DiscoverySource

__all__ = ["source"]


def source() -> DiscoverySource:
    """``DiscoverySource("mcp_conformance.reference._app")``."""
    return DiscoverySource("mcp_conformance.reference._app")
