"""IsolatedSource: transparent over a healthy source, and it claims to isolate a failing one."""

from __future__ import annotations

from mcp_conformance import Capabilities
from mcp_core.sources import ElementSource, IsolatedSource

__all__ = ["MCP_CONFORMANCE", "wrap"]


def wrap(inner: ElementSource) -> IsolatedSource:
    """``IsolatedSource(inner)``."""
    return IsolatedSource(inner)


MCP_CONFORMANCE = Capabilities(isolates=True)
