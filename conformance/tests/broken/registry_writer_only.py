"""Not broken: a registry filled only through its writer, declaring composes_sources=False."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_conformance import Capabilities
from mcp_core.handlers import Invoker
from mcp_core.registry import Registry
from mcp_core.sources import ElementSource

MCP_CONFORMANCE = Capabilities(
    composes_sources=False,
    reason="filled only through register(); its elements are compiled in at build time",
)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> Registry:
    """A validating Registry the kit fills through register() only."""
    if sources:
        raise AssertionError("composes_sources=False: the kit must pass no sources")
    return Registry(validator=Invoker().validate_handler)
