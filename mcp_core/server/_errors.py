"""How a request handler's failure looks on the wire (MCP 2025-11-25), decided in one table.

The request handlers raise the project's own errors (``ElementNotFoundError``,
``ArgumentValidationError``, :class:`InvalidCursorError`); :func:`wire_error` turns any exception
into the JSON-RPC error a client sees. Anything not listed becomes a bare ``Internal error``: the
exception's text may hold paths, SQL or secrets, so it is logged on the server and never sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, final

from mcp_core.elements import ElementKind
from mcp_core.errors import (
    ArgumentValidationError,
    ElementNotFoundError,
    HandlerTimeoutError,
    McpCoreError,
)
from mcp_core.handlers import repaired, unencodable

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "RESOURCE_NOT_FOUND",
    "InvalidCursorError",
    "WireError",
    "invalid_arguments_result",
    "wire_error",
]

INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002
"""The MCP-specific code for a ``resources/read`` (or subscribe) of an unknown URI."""


class InvalidCursorError(McpCoreError, ValueError):
    """A pagination cursor is malformed, tampered with, or was issued for another list or server."""


@final
@dataclass(frozen=True, slots=True)
class WireError:
    """A JSON-RPC error: ``code``, ``message`` and optional ``data``."""

    code: int
    message: str
    data: Any = None

    def __post_init__(self) -> None:
        # Messages may quote what the client sent; JSON parsers accept escaped lone surrogates
        # that UTF-8 cannot carry back, and an unencodable error would break the connection.
        if unencodable([self.message, self.data]) is not None:
            object.__setattr__(self, "message", repaired(self.message))
            object.__setattr__(self, "data", repaired(self.data))

    @property
    def expected(self) -> bool:
        """Whether this error is the client's doing (worth no traceback in the server log)."""
        return self.code != INTERNAL_ERROR


_NOT_FOUND_NOUN: Final = {
    ElementKind.TOOL: "tool",
    ElementKind.PROMPT: "prompt",
    ElementKind.RESOURCE_TEMPLATE: "resource template",
}


def wire_error(exc: BaseException) -> WireError:
    """The error a client sees for ``exc`` raised while serving its request.

    A hidden element raises the same ``ElementNotFoundError`` as a missing one, so both answer
    identically: the difference must not be observable from the outside.
    """
    if isinstance(exc, ElementNotFoundError):
        kind, key = exc.ref.kind, exc.ref.key
        if kind is ElementKind.RESOURCE:
            return WireError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": key})
        return WireError(INVALID_PARAMS, f"Unknown {_NOT_FOUND_NOUN[kind]}: {key}")
    if isinstance(exc, ArgumentValidationError):
        # The message describes the client's own arguments against the published schema.
        errors = [{"path": path, "message": message} for path, message in exc.errors]
        return WireError(INVALID_PARAMS, str(exc), {"errors": errors} if errors else None)
    if isinstance(exc, InvalidCursorError):
        return WireError(INVALID_PARAMS, str(exc))
    if isinstance(exc, HandlerTimeoutError):
        return WireError(INTERNAL_ERROR, f"Internal error: the handler {exc.reason}")
    return WireError(INTERNAL_ERROR, "Internal error")


def invalid_arguments_result(exc: ArgumentValidationError) -> dict[str, Any]:
    """The ``tools/call`` result for arguments that fail the tool's input schema (SEP-1303).

    Since MCP 2025-11-25 this is a tool execution error (``isError: true``) carrying the
    validation message, so that a model can correct its call, rather than JSON-RPC ``-32602``
    (which stays the answer for an unknown tool). The message is the error's own: it is built in
    one place, :func:`mcp_core.handlers._functions.argument_error`.
    """
    error = WireError(INVALID_PARAMS, str(exc))  # made sendable like any error text
    return {"content": [{"type": "text", "text": error.message}], "isError": True}
