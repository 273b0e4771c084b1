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
    ClientCapabilityError,
    ElementNotFoundError,
    McpCoreError,
)

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "RESOURCE_NOT_FOUND",
    "InvalidCursorError",
    "InvalidRequestStateError",
    "WireError",
    "wire_error",
]

INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002
"""The MCP-specific code for a ``resources/read`` (or subscribe) of an unknown URI."""
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
"""A handler asked the client for something its capabilities do not declare."""


class InvalidCursorError(McpCoreError, ValueError):
    """A pagination cursor is malformed, tampered with, or was issued for another list or server."""


class InvalidRequestStateError(McpCoreError, ValueError):
    """A 2026-07-28 retry carries state issued to another caller, or answers of the wrong shape."""


@final
@dataclass(frozen=True, slots=True)
class WireError:
    """A JSON-RPC error: ``code``, ``message`` and optional ``data``."""

    code: int
    message: str
    data: Any = None

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
    if isinstance(exc, InvalidCursorError | InvalidRequestStateError):
        return WireError(INVALID_PARAMS, str(exc))
    if isinstance(exc, ClientCapabilityError):
        return WireError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            str(exc),
            {"requiredCapabilities": dict(exc.required)},
        )
    return WireError(INTERNAL_ERROR, "Internal error")
