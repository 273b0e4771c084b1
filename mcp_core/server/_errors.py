"""How a request handler's failure looks on the wire (MCP 2025-11-25), decided in one table.

The request handlers raise the project's own errors (``ElementNotFoundError``,
``ArgumentValidationError``, :class:`InvalidCursorError`), and handlers the ones they raise on
purpose (``ResourceNotFoundError``, ``ResourceError``, ``PromptError``: the invoker turns the
SDK's and fastmcp's into these); :func:`wire_error` turns any exception into the JSON-RPC error a
client sees. Anything not listed becomes a bare ``Internal error``: the
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
    HandlerError,
    HandlerTimeoutError,
    InvalidCursorError,
    InvalidRequestStateError,
    PromptError,
    RequestRefusedError,
    ResourceError,
    ResourceNotFoundError,
    SourceUnavailableError,
    clip_input,
)
from mcp_core.handlers._encodable import repaired, unencodable

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "RESOURCE_NOT_FOUND",
    "ErrorReply",
    "InvalidCursorError",
    "InvalidRequestStateError",
    "invalid_arguments_result",
    "wire_error",
]

INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002
"""The MCP-specific code for a ``resources/read`` (or subscribe) of an unknown URI."""
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
"""A handler asked the client for something its capabilities do not declare."""


@final
@dataclass(frozen=True, slots=True)
class ErrorReply:
    """A JSON-RPC error reply as the server sends it: ``code``, ``message`` and optional ``data``.

    A value, not an exception: :func:`wire_error` maps an exception raised while serving a
    request to the reply its client sees.
    """

    code: int
    message: str
    data: Any = None
    retryable: bool = False
    on_purpose: bool = False
    """Raised on purpose by a handler (a ``ResourceError``...): its message is for the client."""

    def __post_init__(self) -> None:
        # Messages may quote what the client sent; JSON parsers accept escaped lone surrogates
        # that UTF-8 cannot carry back, and an unencodable error would break the connection.
        if unencodable([self.message, self.data]) is not None:
            object.__setattr__(self, "message", repaired(self.message))
            object.__setattr__(self, "data", repaired(self.data))

    @property
    def expected(self) -> bool:
        """Whether this error is foreseen (the client's doing, or a backend known to be down).

        Expected errors are worth no traceback in the server log.
        """
        return self.code != INTERNAL_ERROR or self.retryable or self.on_purpose


_NOT_FOUND_NOUN: Final = {
    ElementKind.TOOL: "tool",
    ElementKind.PROMPT: "prompt",
    ElementKind.RESOURCE_TEMPLATE: "resource template",
}


def wire_error(exc: BaseException) -> ErrorReply:  # noqa: C901, PLR0911 -- one return per error kind
    """The error a client sees for ``exc`` raised while serving its request.

    A hidden element raises the same ``ElementNotFoundError`` as a missing one, so both answer
    identically: the difference must not be observable from the outside.
    """
    if isinstance(exc, ElementNotFoundError):
        # The key is what the client asked for: echo no more of it than clip_input allows.
        kind, key = exc.ref.kind, clip_input(exc.ref.key)
        if kind is ElementKind.RESOURCE:
            return ErrorReply(RESOURCE_NOT_FOUND, "Resource not found", {"uri": key})
        return ErrorReply(INVALID_PARAMS, f"Unknown {_NOT_FOUND_NOUN[kind]}: {key}")
    if isinstance(exc, ResourceNotFoundError):
        # A handler says the URI it was asked for names nothing: the same code as a URI no
        # element answers to, with the handler's message when it gave one.
        data = {"uri": clip_input(exc.uri or "")}
        return ErrorReply(RESOURCE_NOT_FOUND, str(exc) or "Resource not found", data)
    if isinstance(exc, HandlerError):
        return _on_purpose(exc)
    if isinstance(exc, ArgumentValidationError):
        # The message describes the client's own arguments against the published schema.
        errors = [{"path": path, "message": message} for path, message in exc.errors]
        return ErrorReply(INVALID_PARAMS, str(exc), {"errors": errors} if errors else None)
    if isinstance(exc, InvalidCursorError | InvalidRequestStateError):
        return ErrorReply(INVALID_PARAMS, str(exc))
    if isinstance(exc, SourceUnavailableError):
        # A backend that is down (a remote server, say): the message names it and says to retry;
        # it was written for clients (no addresses, no tracebacks).
        return ErrorReply(INTERNAL_ERROR, str(exc), {"retryable": True}, retryable=True)
    if isinstance(exc, ClientCapabilityError):
        return ErrorReply(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            str(exc),
            {"requiredCapabilities": dict(exc.required)},
        )
    if isinstance(exc, HandlerTimeoutError):
        return ErrorReply(INTERNAL_ERROR, f"Internal error: the handler {exc.reason}")
    if isinstance(exc, RequestRefusedError):
        return ErrorReply(exc.code, str(exc), exc.data, on_purpose=True)
    return ErrorReply(INTERNAL_ERROR, "Internal error")


def _on_purpose(exc: HandlerError) -> ErrorReply:
    """A handler's failure raised on purpose: ``-32603`` with its message (a read's: and URI)."""
    message = str(exc)
    data: dict[str, str] | None = None
    if isinstance(exc, ResourceError) and exc.uri is not None:
        data = {"uri": clip_input(exc.uri)}
        message = message or f"Error reading resource {clip_input(exc.uri)}"
    elif isinstance(exc, PromptError) and exc.name is not None:
        message = message or f"Error rendering prompt {exc.name}"
    return ErrorReply(INTERNAL_ERROR, message or type(exc).__name__, data, on_purpose=True)


def clip_json(value: Any, *, depth: int = 8) -> Any:
    """``value`` (error data in wire shape) with every string clipped by :func:`clip_input`.

    For errors the SDK builds from what the client sent (an unknown method's name comes back as
    the data of ``Method not found``), on their way out; structures deeper than ``depth`` are
    replaced by a clipped rendering of themselves.
    """
    if isinstance(value, str):
        return clip_input(value)
    if depth <= 0 and isinstance(value, dict | list):
        return clip_input(repr(value))
    if isinstance(value, dict):
        return {clip_input(str(k)): clip_json(v, depth=depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [clip_json(item, depth=depth - 1) for item in value]
    return value


def invalid_arguments_result(exc: ArgumentValidationError) -> dict[str, Any]:
    """The ``tools/call`` result for arguments that fail the tool's input schema (SEP-1303).

    Since MCP 2025-11-25 this is a tool execution error (``isError: true``) carrying the
    validation message, so that a model can correct its call, rather than JSON-RPC ``-32602``
    (which stays the answer for an unknown tool). The message is the error's own: it is built in
    one place, :func:`mcp_core.handlers._functions.argument_error`.
    """
    error = ErrorReply(INVALID_PARAMS, str(exc))  # made sendable like any error text
    return {"content": [{"type": "text", "text": error.message}], "isError": True}
