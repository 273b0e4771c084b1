"""Breaks registry.listener-isolation: a listener that raises aborts the operation.

Listeners are called in a plain loop: the first one to raise propagates out of register(),
unregister() or reload(), and the listeners after it hear nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.sources import ElementSource

from ._delegate import OwnListeners, reference


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> OwnListeners:
    """The reference registry whose change listeners are called unguarded."""
    return OwnListeners(reference(sources))
