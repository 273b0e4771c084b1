"""Which element a handler is serving: the per-name dispatch channel.

One handler object, function or container service may stand behind many elements (every
operation of an API, every tool of a plugin). The :class:`~mcp_core.handlers.Invoker` marks the
element it is running for the duration of the handler call, in a context variable, and every
:class:`~mcp_core.handlers.ClientGateway` answers ``gateway.element`` from it. A context variable
(rather than a field set on the gateway) reaches every place the handler's code runs: the
handler's own task, the tasks it starts, and the worker thread a sync handler runs in.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from mcp_core.elements import Element

__all__ = ["serving", "serving_element"]

_SERVING: Final[ContextVar[Element]] = ContextVar("mcp_core.serving")


def serving_element() -> Element:
    """The element whose handler (or completion provider) is running now.

    Raises:
        LookupError: no handler is running in this context (the gateway is used outside a call
            the Invoker made).
    """
    try:
        return _SERVING.get()
    except LookupError:
        raise LookupError(
            "no element is being served here: gateway.element is known only while the Invoker "
            "runs a handler (inside execute/read/get/complete or a function handler)"
        ) from None


@contextmanager
def serving(element: Element) -> Iterator[None]:
    """Mark ``element`` as the one being served while the block runs (the Invoker's side)."""
    token = _SERVING.set(element)
    try:
        yield
    finally:
        _SERVING.reset(token)
