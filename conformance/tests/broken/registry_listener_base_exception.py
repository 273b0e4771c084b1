"""Breaks registry.listener-isolation for BaseException: listeners are guarded by ``except Exception``.

An ordinary exception from a listener is logged and the loop goes on; ``SystemExit`` or another
``BaseException`` subclass (a listener calling ``sys.exit()``, an ``argparse`` error) goes
through the guard, so the listeners after it hear nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from mcp_core.elements import ElementKind
from mcp_core.sources import ElementSource

from ._delegate import OwnListeners, reference


class _GuardsExceptions(OwnListeners):
    def fan_out(self, kinds: ElementKind) -> None:
        for listener in tuple(self.listeners):
            with contextlib.suppress(Exception):  # the bug: BaseException goes through
                listener(kinds)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _GuardsExceptions:
    """The reference registry whose listeners are guarded against Exception only."""
    return _GuardsExceptions(reference(sources))
