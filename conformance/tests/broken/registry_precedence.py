"""Breaks registry.precedence: it sorts sources the wrong way round, so lower priority wins."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.registry import Registry
from mcp_core.sources import ElementSource

from ._delegate import reference


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> Registry:
    """The reference registry with priorities inverted."""
    return reference([(source, -priority) for source, priority in sources])
