"""ValidatedSource with the invoker's checks."""

from __future__ import annotations

from mcp_core.handlers import Invoker
from mcp_core.sources import ElementSource, ValidatedSource

__all__ = ["wrap"]


def wrap(inner: ElementSource) -> ValidatedSource:
    """``ValidatedSource(inner, invoker=Invoker())``: over valid elements, drops nothing."""
    return ValidatedSource(inner, invoker=Invoker())
