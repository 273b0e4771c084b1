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

Of the failures that are contained, some are raised on purpose (:func:`on_purpose`): their
message is meant for the client. Every other one is a crash, logged with its traceback from the
user's first frame on (:func:`from_user_frame`) and answered with a generic message.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Iterator
from types import TracebackType
from typing import Final

import anyio

from mcp_core.errors import HandlerError, ResourceNotFoundError

__all__ = ["Failure", "escapes", "from_user_frame", "on_purpose"]

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


class Failure(enum.Enum):
    """What a handler meant by an exception it raised on purpose (see :func:`on_purpose`)."""

    NOT_FOUND = "not found"
    """What the request names does not exist (a resource's ``-32002``)."""
    MESSAGE = "message"
    """A failure whose message is meant for the client."""


# The SDK's and fastmcp's errors, known by module and class name: neither is imported here (the
# handlers layer does not import the SDK; fastmcp is optional). The first class of an exception's
# MRO found here decides; None marks the SDK's own wrappers around a crash.
_FOREIGN: Final[dict[tuple[str, str], Failure | None]] = {
    ("mcp.server.mcpserver.exceptions", "UnexpectedResourceError"): None,
    ("mcp.server.mcpserver.exceptions", "UnexpectedToolError"): None,
    ("mcp.server.mcpserver.exceptions", "ResourceNotFoundError"): Failure.NOT_FOUND,
    ("mcp.server.mcpserver.exceptions", "ResourceError"): Failure.MESSAGE,
    ("mcp.server.mcpserver.exceptions", "ToolError"): Failure.MESSAGE,
    ("fastmcp.exceptions", "NotFoundError"): Failure.NOT_FOUND,
    ("fastmcp.exceptions", "ResourceError"): Failure.MESSAGE,
    ("fastmcp.exceptions", "PromptError"): Failure.MESSAGE,
    ("fastmcp.exceptions", "ToolError"): Failure.MESSAGE,
}


def on_purpose(exc: BaseException) -> Failure | None:
    """What a handler meant by raising ``exc``, or None when ``exc`` is a crash.

    mcp-core's :class:`~mcp_core.errors.HandlerError` family, and the official SDK's and
    fastmcp's ``ToolError``, ``ResourceError``, ``PromptError`` and not-found errors (recognised by
    module and class name, so neither library is imported) are raised on purpose; anything else
    is not.
    """
    if isinstance(exc, ResourceNotFoundError):
        return Failure.NOT_FOUND
    if isinstance(exc, HandlerError):
        return Failure.MESSAGE
    for cls in type(exc).__mro__:
        key = (cls.__module__, cls.__qualname__)
        if key in _FOREIGN:
            return _FOREIGN[key]
    return None


# Whose frames stand between the server and a handler: the invoker, the event loop, worker
# threads, the SDK and the pydantic call validation it wraps an adopted server's functions in.
_PLUMBING: Final = (
    "mcp_core",
    "anyio",
    "asyncio",
    "concurrent",
    "contextlib",
    "functools",
    "sniffio",
    "threading",
    "mcp",
    "pydantic",
)
_SDK: Final = "mcp"
_WRAPPERS_DEEP: Final = 8
"""How many of the SDK's wrappers around one crash are looked through (it nests two at most)."""


def _module(traceback: TracebackType) -> str:
    module = traceback.tb_frame.f_globals.get("__name__", "")
    return module if isinstance(module, str) else ""


def _plumbing(traceback: TracebackType) -> bool:
    module = _module(traceback)
    return any(module == package or module.startswith(f"{package}.") for package in _PLUMBING)


def _frames(traceback: TracebackType | None) -> Iterator[TracebackType]:
    while traceback is not None:
        yield traceback
        traceback = traceback.tb_next


def _sdk_wrapper(exc: BaseException) -> bool:
    """Whether the SDK raised ``exc`` around the crash that is its ``__cause__``.

    An adopted server's crash reaches mcp-core wrapped (``UnexpectedResourceError``, the
    ``ValueError`` around a prompt's crash): raised ``from`` the crash, in the SDK's own code, with
    no frame of the user's in its traceback.
    """
    frames = list(_frames(exc.__traceback__))
    return (
        exc.__cause__ is not None
        and bool(frames)
        and all(_plumbing(frame) for frame in frames)
        and (_module(frames[-1]) == _SDK or _module(frames[-1]).startswith(f"{_SDK}."))
    )


def from_user_frame(
    exc: BaseException,
) -> tuple[type[BaseException], BaseException, TracebackType | None]:
    """``exc`` as ``exc_info`` for logging, its traceback starting at the user's first frame.

    The frames that lead from the server to a handler (mcp-core's, anyio's and asyncio's, a
    worker thread's, the SDK's and pydantic's around an adopted function) say nothing about the
    crash; they are left out, so the log shows the handler's line first. The SDK's wrappers
    around an adopted handler's crash are looked through: what is logged is the crash they were
    raised from. A traceback with no frame of the user's (a failure inside mcp-core) is kept
    whole. No exception is changed.
    """
    crash = exc
    for _ in range(_WRAPPERS_DEEP):
        if crash.__cause__ is None or not _sdk_wrapper(crash):
            break
        crash = crash.__cause__
    first = next((frame for frame in _frames(crash.__traceback__) if not _plumbing(frame)), None)
    return type(crash), crash, first if first is not None else crash.__traceback__
