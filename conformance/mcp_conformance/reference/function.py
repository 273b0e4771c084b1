"""FunctionSource over the reference app's functions (live handlers: not serializable)."""

from __future__ import annotations

from mcp_conformance import Capabilities
from mcp_conformance.reference import _app
from mcp_core.sources import FunctionSource

__all__ = ["MCP_CONFORMANCE", "source"]


def source() -> FunctionSource:
    """``FunctionSource(add, notes, item, review, complete_style)``."""
    return FunctionSource(_app.add, _app.notes, _app.item, _app.review, _app.complete_style)


MCP_CONFORMANCE = Capabilities(
    serializable=False,
    reason="FunctionSource's handlers are the functions themselves (use DiscoverySource to serialize)",
)
