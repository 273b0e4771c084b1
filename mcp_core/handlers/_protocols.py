"""Handler protocols, the client gateway and the container seam.

One protocol per element kind, each a single async method. Plain functions, bound methods and
callable objects are accepted too (see :mod:`mcp_core.handlers`); these protocols are what a
framework implements when a handler must be an object (a plugin that filters its own arguments
and executes with a gateway).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from mcp_core.visibility import SessionInfo

if TYPE_CHECKING:
    from mcp_core.elements import Element

__all__ = [
    "ArgumentFilter",
    "ClientGateway",
    "CompletionProvider",
    "Container",
    "LogLevel",
    "PromptHandler",
    "ResourceHandler",
    "ResourceTemplateHandler",
    "ToolHandler",
]

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class ClientGateway(Protocol):
    """A handler's channel back to the client that made the current request.

    Every method is tied to the current request (notifications carry its ``related_request_id``;
    progress uses its progress token), so clients can route them.

    ``sample``, ``elicit``, ``elicit_url`` and ``list_roots`` ask the client and return its
    answer, in both protocol eras: as a standalone server-to-client request on 2025-11-25 and
    earlier, through an ``InputRequiredResult`` (multi-round-trip request) on 2026-07-28. On the
    latter the handler runs again from the start on each round and earlier answers are replayed
    to it, so the code before a question must be safe to run more than once (see
    ``docs/serving.md``, "Asking the client").
    """

    @property
    def element(self) -> Element:
        """The element being served: its ``ref``, ``definition`` and ``tags``.

        One handler object or service behind many tools, prompts or resources tells them apart
        by ``gateway.element.ref`` (per-name dispatch). Raises ``LookupError`` outside a handler
        call made by the Invoker.
        """
        ...

    @property
    def session(self) -> SessionInfo:
        """Who is asking."""
        ...

    @property
    def request_id(self) -> str | int | None:
        """The JSON-RPC id of the current request (None outside a request)."""
        ...

    async def log(self, level: LogLevel, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if ``level`` passes the session's ``logging/setLevel``."""
        ...

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress on the request's progress token (no-op when the client sent none)."""
        ...

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        include_context: Literal["none", "thisServer", "allServers"] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Mapping[str, Any]:
        """Ask the client's model (``sampling/createMessage``); returns the result's wire shape.

        ``messages`` are in wire shape: ``{"role": "user", "content": {"type": "text", ...}}``.
        """
        ...

    async def elicit(self, message: str, requested_schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """Ask the user for input in a form (``elicitation/create``, form mode).

        Returns ``{"action": "accept" | "decline" | "cancel", "content"?: {...}}``.
        """
        ...

    async def elicit_url(
        self, message: str, url: str, *, elicitation_id: str | None = None
    ) -> Mapping[str, Any]:
        """Send the user to ``url`` for an out-of-band interaction (``elicitation/create``, URL mode).

        Returns ``{"action": ...}``: ``accept`` means the user agreed to open the URL, not that the
        interaction there finished. ``elicitation_id`` identifies it on 2025-11-25 (a fresh one is
        made when omitted); 2026-07-28 has no such id.
        """
        ...

    async def list_roots(self) -> Sequence[Mapping[str, Any]]:
        """The client's roots (``roots/list``), in wire shape: ``[{"uri", "name"?}]``."""
        ...


@runtime_checkable
class ToolHandler(Protocol):
    """Executes a tool call. Returns anything :func:`~mcp_core.handlers.normalize_tool_result` takes."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Run the tool with validated ``arguments``."""
        ...


@runtime_checkable
class ResourceHandler(Protocol):
    """Reads a fixed resource."""

    async def read(self, uri: str, gateway: ClientGateway) -> object:
        """The resource's content (str, bytes, content values or a list of them)."""
        ...


@runtime_checkable
class ResourceTemplateHandler(Protocol):
    """Reads a resource addressed by a template; ``variables`` are percent-decoded."""

    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> object:
        """The resource's content."""
        ...


@runtime_checkable
class PromptHandler(Protocol):
    """Renders a prompt."""

    async def get(self, arguments: Mapping[str, str], gateway: ClientGateway) -> object:
        """The prompt's messages (message values, role/content dicts, or plain strings)."""
        ...


@runtime_checkable
class ArgumentFilter(Protocol):
    """Optional: rewrites arguments before validation and execution (e.g. strips private keys)."""

    def filter_arguments(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """The arguments the handler should see."""
        ...


@runtime_checkable
class CompletionProvider(Protocol):
    """Suggests values for one prompt argument or template variable."""

    async def complete(
        self, value: str, context: Mapping[str, str], gateway: ClientGateway
    ) -> Sequence[str]:
        """Candidate values for the partial ``value``; ``context`` holds already-resolved arguments."""
        ...


class Container(Protocol):
    """A framework's service container, consulted before any import when resolving a HandlerRef."""

    def has(self, id: str) -> bool:  # noqa: A002 -- the container vocabulary used by frameworks
        """Whether the container can produce ``id``."""
        ...

    def get(self, id: str) -> object:  # noqa: A002 -- same
        """The service registered as ``id``."""
        ...
