"""Crash containment: which exceptions from user code may end more than the call that raised them.

mcp-core calls user code at a few boundaries: handlers (tools, reads, prompts, completions),
sources (``provide``), visibility rules, change listeners. At each of them a failure costs only
that call. Python's ``except Exception`` is not enough for that: ``SystemExit`` (``sys.exit()``,
or ``argparse`` rejecting its input) and any other ``BaseException`` subclass would go through it
and take the server down with them.

Three kinds of exception still escape, because they are not failures of the call but signals
to everything around it:

- cancellation (``asyncio.CancelledError``, or the running async library's cancellation class):
  a cancelled request or a server shutting down must unwind;
- ``KeyboardInterrupt``: Ctrl-C stops the process;
- ``GeneratorExit``: a generator being closed.

An exception group escapes when any of its members does.
"""

from __future__ import annotations

import asyncio
from typing import Final

import anyio

__all__ = ["escapes"]

_ESCAPING: Final = (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit)


def escapes(exc: BaseException) -> bool:
    """Whether ``exc`` must propagate rather than be contained as the failure of one call.

    Use it as the one test at every containment boundary::

        try:
            ...
        except BaseException as exc:
            if escapes(exc):
                raise
            ...  # the call failed; the server lives on
    """
    if isinstance(exc, BaseExceptionGroup):
        return any(escapes(member) for member in exc.exceptions)
    if isinstance(exc, _ESCAPING):
        return True
    try:
        cancelled = anyio.get_cancelled_exc_class()
    except Exception:  # noqa: BLE001 -- no event loop in this thread: asyncio's class was checked above
        return False
    return isinstance(exc, cancelled)
