"""The one error tree of mcp-core.

Every error raised on purpose by this package derives from :class:`McpCoreError`, and mixes in
the builtin it refines so that code written against the builtins keeps working::

    McpCoreError
    ├── InvalidElementError (ValueError)          a definition or element is malformed
    │   ├── InvalidUriTemplateError               a resource template cannot be parsed or matched
    │   ├── DuplicateElementError                 two elements share one ElementRef
    │   └── HandlerKindError                      a handler of the wrong kind for its definition
    ├── CollectionFormatError (ValueError)        a serialized collection is corrupt or from the future
    ├── NotSerializableError (TypeError)          a collection holds live handlers, not references
    ├── SourceError                               a source could not provide
    │   └── SourceUnavailableError                its backend is temporarily unreachable
    ├── CacheStoreError                           a cache store could not be read or written
    ├── HandlerResolutionError (LookupError)      a HandlerRef names nothing that can be resolved
    ├── ArgumentValidationError (ValueError)      call arguments do not match the input schema
    ├── HandlerError                              a handler's failure whose message is meant for the client
    │   ├── ToolError                             from a tool: an ``isError`` result with the message
    │   ├── ResourceError                         from a read: JSON-RPC -32603 with the message
    │   │   └── ResourceNotFoundError (LookupError)   no such resource: -32002 with the URI
    │   └── PromptError                           from a prompt: JSON-RPC -32603 with the message
    ├── HandlerTimeoutError (TimeoutError)        a handler ran past its time limit
    ├── ClientCapabilityError                     the client did not declare what a handler asks of it
    ├── ElementNotFoundError (LookupError)        no (visible) element answers to a ref
    ├── InvalidCursorError (ValueError)           a pagination cursor is malformed or not this list's
    ├── InvalidRequestStateError (ValueError)     a retry carries state issued to another caller
    ├── ListenError (OSError)                     a server cannot listen on its host and port
    ├── DeploymentError                           a worker's settings do not fit its deployment
    └── TargetError                               mcp-core run/inspect/dump cannot serve what it was named

Errors carry their culprit as attributes (``.ref``, ``.source``, ``.template``...) so that callers
can act on them without parsing messages; messages say what is wrong and what to do about it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_core._refs import ElementRef

__all__ = [
    "ArgumentValidationError",
    "CacheStoreError",
    "ClientCapabilityError",
    "CollectionFormatError",
    "DeploymentError",
    "DuplicateElementError",
    "ElementNotFoundError",
    "HandlerError",
    "HandlerKindError",
    "HandlerResolutionError",
    "HandlerTimeoutError",
    "InvalidCursorError",
    "InvalidElementError",
    "InvalidRequestStateError",
    "InvalidUriTemplateError",
    "ListenError",
    "McpCoreError",
    "NotSerializableError",
    "PromptError",
    "RequestRefusedError",
    "ResourceError",
    "ResourceNotFoundError",
    "SourceError",
    "SourceUnavailableError",
    "TargetError",
    "ToolError",
    "clip_input",
]

INPUT_ECHO_LIMIT: Final = 256
"""How many characters of one piece of client input an error may repeat (see :func:`clip_input`)."""

_MESSAGE_ECHO_LIMIT: Final = 8 * INPUT_ECHO_LIMIT


def clip_input(text: str, limit: int = INPUT_ECHO_LIMIT) -> str:
    """``text``, or its head and tail around a marker when it is longer than ``limit`` characters.

    Every error that repeats what a client sent (an argument value, an unknown name or URI, a
    validator's message quoting either) passes it through here, so a client cannot make the
    server hold, log or send back more than a bounded echo of its own input. Head and tail are
    kept because validators quote the value first and say what is wrong with it last.
    """
    if len(text) <= limit:
        return text
    keep = max(limit // 2, 1)
    return f"{text[:keep]}…[{len(text) - 2 * keep} characters elided]…{text[-keep:]}"


class McpCoreError(Exception):
    """Root of every error mcp-core raises on purpose."""


class InvalidElementError(McpCoreError, ValueError):
    """A definition or element is malformed; ``.ref`` names it when known, ``.field`` the field."""

    def __init__(
        self, message: str, *, ref: ElementRef | None = None, field: str | None = None
    ) -> None:
        super().__init__(message)
        self.ref = ref
        self.field = field


class InvalidUriTemplateError(InvalidElementError):
    """A resource template is not a matchable RFC 6570 template; ``.template`` is the text."""

    def __init__(self, message: str, *, template: str, ref: ElementRef | None = None) -> None:
        super().__init__(message, ref=ref, field="uri_template")
        self.template = template


class DuplicateElementError(InvalidElementError):
    """Two elements of one collection share ``.ref``."""

    def __init__(self, message: str, *, ref: ElementRef) -> None:
        super().__init__(message, ref=ref)


class HandlerKindError(InvalidElementError):
    """A handler cannot serve its definition's kind (e.g. a prompt handler on a tool)."""


class CollectionFormatError(McpCoreError, ValueError):
    """Serialized collection JSON is corrupt, of an unknown format, or of a future version.

    About one element record: ``.index`` is its position in the document and ``.ref`` the
    element it declares, when that much could be read.
    """

    def __init__(
        self, message: str, *, index: int | None = None, ref: ElementRef | None = None
    ) -> None:
        super().__init__(message)
        self.index = index
        self.ref = ref


class NotSerializableError(McpCoreError, TypeError):
    """A collection holds live handlers (callables), so it has no lossless JSON form.

    ``.refs`` lists the elements whose handler is not a :class:`~mcp_core.elements.HandlerRef`.
    """

    def __init__(self, message: str, *, refs: Sequence[ElementRef]) -> None:
        super().__init__(message)
        self.refs = tuple(refs)


class SourceError(McpCoreError):
    """A source failed to provide; ``.source`` is the source when known."""

    def __init__(self, message: str, *, source: object | None = None) -> None:
        super().__init__(message)
        self.source = source


class SourceUnavailableError(SourceError):
    """The source's backend is temporarily unreachable: distinct from "I have nothing".

    A registry keeps serving the source's last good collection and reports it *unavailable*
    rather than *failed*.
    """


class CacheStoreError(McpCoreError):
    """A cache store could not be read or written; ``.key`` is the key involved, if any."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class HandlerResolutionError(McpCoreError, LookupError):
    """A handler reference cannot be resolved; ``.handler_ref`` and ``.ref`` name the culprits."""

    def __init__(self, message: str, *, handler_ref: object, ref: ElementRef | None = None) -> None:
        super().__init__(message)
        self.handler_ref = handler_ref
        self.ref = ref


class ArgumentValidationError(McpCoreError, ValueError):
    """Arguments do not satisfy an input schema; ``.errors`` holds ``(json_pointer, message)``.

    Both quote the client's arguments, so both are clipped (:func:`clip_input`): each pointer and
    message of ``errors`` to a bounded echo, the whole message to a few of them.
    """

    def __init__(
        self,
        message: str,
        *,
        ref: ElementRef | None = None,
        errors: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(clip_input(message, _MESSAGE_ECHO_LIMIT))
        self.ref = ref
        self.errors = tuple((clip_input(pointer), clip_input(text)) for pointer, text in errors)


class HandlerError(McpCoreError):
    """A handler's failure raised on purpose: its message is meant for the client.

    Raise the subclass of the handler's kind (:class:`ToolError`, :class:`ResourceError`,
    :class:`ResourceNotFoundError`, :class:`PromptError`); any of them is understood from any
    handler, answered in the shape of the request being served (a tool's is an ``isError``
    result, a read's or a prompt's a JSON-RPC error). The SDK's and fastmcp's own
    ``ToolError``, ``ResourceError``, ``PromptError`` and not-found errors are understood the same
    way. Any other exception from a handler is a crash: the client gets a generic message and
    the server logs the traceback.
    """


class ToolError(HandlerError):
    """Raised by a tool to report a failure to the model: the message becomes the ``isError`` text.

    Any other exception from a tool becomes a generic error result; its text is only logged.
    """


class ResourceError(HandlerError):
    """Raised by a resource or template handler: the client gets JSON-RPC -32603 with the message.

    ``.uri`` is the URI being read; the server fills it in when the handler leaves it out, and
    sends it as the error's ``data`` (``{"uri": ...}``).
    """

    def __init__(self, message: str = "", *, uri: str | None = None) -> None:
        super().__init__(message)
        self.uri = uri


class ResourceNotFoundError(ResourceError, LookupError):
    """Raised by a resource or template handler: what ``.uri`` names does not exist.

    The client gets the protocol's "resource not found" answer: JSON-RPC -32002 with the URI in
    ``data`` (-32602 on protocol 2026-07-28, which retired -32002), and the message (``"Resource
    not found"`` when it is empty). Typically a template whose variables name no record.
    """


class PromptError(HandlerError):
    """Raised by a prompt handler: the client gets JSON-RPC -32603 with the message.

    ``.name`` is the prompt's name; the server fills it in when the handler leaves it out.
    """

    def __init__(self, message: str = "", *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class ClientCapabilityError(McpCoreError):
    """A handler asked the client for something it did not declare it can do.

    Raised by the gateway's ``sample``, ``elicit``, ``elicit_url`` and ``list_roots`` when the
    client's capabilities lack ``.capability`` (``"sampling"``, ``"elicitation.form"``,
    ``"elicitation.url"`` or ``"roots"``); ``.required`` is the capabilities object in wire shape
    that the client would have to declare. The request fails with the protocol's "missing
    required client capability" error rather than a tool error, so the client can tell.
    """

    def __init__(self, message: str, *, capability: str, required: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.capability = capability
        self.required = required


class HandlerTimeoutError(McpCoreError, TimeoutError):
    """A handler (or completion provider) of ``.ref`` did not finish within ``.timeout`` seconds.

    Raise the limit (``Invoker(timeout=...)``) or make the handler faster; a sync handler keeps
    running in its worker thread after this, and its result is discarded.
    """

    def __init__(self, message: str, *, ref: ElementRef, timeout: float) -> None:
        super().__init__(message)
        self.ref = ref
        self.timeout = timeout

    @property
    def reason(self) -> str:
        """What happened, without naming the element: ``did not finish within 5 s``."""
        return f"it did not finish within {self.timeout:g} s"


class ElementNotFoundError(McpCoreError, LookupError):
    """No element (or no element visible to this session) answers to ``.ref``.

    The ref is what a client asked for, so the message is clipped (:func:`clip_input`).
    """

    def __init__(self, message: str, *, ref: ElementRef) -> None:
        super().__init__(clip_input(message, _MESSAGE_ECHO_LIMIT))
        self.ref = ref


class RequestRefusedError(McpCoreError):
    """Raised by a server middleware to answer a request with a JSON-RPC error of its choosing.

    The client sees ``code`` (-32600, invalid request, unless given), the message and ``data``;
    they are written for the client. Raising it is the way a middleware refuses a request (an
    unauthorised tool, a quota spent); the server logs it as expected, without a traceback.
    """

    def __init__(self, message: str, *, code: int = -32600, data: Any = None) -> None:
        if isinstance(code, bool) or not isinstance(code, int):
            raise TypeError(f"code must be a JSON-RPC error code (an int), got {code!r}")
        super().__init__(message)
        self.code = code
        self.data = data


class ListenError(McpCoreError, OSError):
    """A server cannot listen on ``.host``:``.port`` (taken, privileged, not an address here).

    ``.errno`` is the bind's error number when there was one (``errno.EADDRINUSE``...).
    """

    def __init__(
        self, message: str, *, host: str, port: int, error_number: int | None = None
    ) -> None:
        super().__init__(message)
        self.host = host
        self.port = port
        self.errno = error_number


class DeploymentError(McpCoreError):
    """A worker's settings do not fit the deployment it joins; the message says which and how.

    A missing or short shared secret, a worker id another live worker holds, a secret other than
    the one the deployment's other workers use. ``.worker`` is the worker's id (None when the
    settings do not name one); ``.setting`` the setting at fault (``"secret"``, ``"worker"``...).
    """

    def __init__(
        self, message: str, *, worker: str | None = None, setting: str | None = None
    ) -> None:
        super().__init__(message)
        self.worker = worker
        self.setting = setting


class InvalidCursorError(McpCoreError, ValueError):
    """A pagination cursor is malformed, tampered with, or was issued for another list or server."""


class InvalidRequestStateError(McpCoreError, ValueError):
    """A 2026-07-28 retry carries state issued to another caller, or answers of the wrong shape."""


class TargetError(McpCoreError):
    """The command line's target cannot be loaded or is not something mcp-core can serve.

    The message says why. ``details`` is what to show above that one line: for a target that
    fails to import, the traceback of the user's own code (mcp-core's and importlib's frames
    left out).
    """

    def __init__(self, message: str, *, details: str = "") -> None:
        super().__init__(message)
        self.details = details
