"""The official SDK's ``Context`` for handlers served by mcp-core, built over the ClientGateway.

Functions written for the SDK's ``MCPServer`` take ``ctx: Context`` and call ``ctx.info(...)``,
``ctx.report_progress(...)``, ``ctx.elicit(...)``, ``ctx.read_resource(...)``,
``ctx.session.create_message(...)`` or read ``ctx.request_context.lifespan_context``. mcp-core
injects a real SDK ``Context`` (a subclass of it) whose session is a facade over the request's
:class:`~mcp_core.handlers.ClientGateway`: everything the handler sends back to the client goes
through the gateway, so it honours the session's ``logging/setLevel`` threshold, the request's
progress token and whatever the gateway does in each protocol era (URL-mode elicitation
included). What the gateway does not carry (``ctx.session.send_ping()``...) goes to the SDK's
own session when the request arrived through :class:`~mcp_core.server.McpServer`.

This module registers three injection rules with :func:`mcp_core.handlers.register_injection`:

- a parameter annotated with the SDK's ``Context`` (or a subclass, or ``Context[...]``);
- a parameter annotated ``Annotated[T, Resolve(fn)]``: the SDK's resolver is run before the
  handler, its ``Elicit`` / ``Sample`` / ``ListRoots`` requests answered through the gateway;
- a parameter annotated ``Annotated[T, Lifespan]``: the value the server's lifespan yielded.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final, Protocol, cast, final, runtime_checkable

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, Resolve
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError
from mcp.server.mcpserver.resolve import (
    build_resolver_plans,
    find_resolved_parameters,
    resolve_arguments,
)
from mcp.server.session import ServerSession
from mcp.server.subscriptions import SubscriptionBus
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from pydantic import AnyUrl

from mcp_core.errors import ToolError
from mcp_core.handlers import ClientGateway, register_injection
from mcp_core.handlers._injection import Injection
from mcp_core.server._gateway import ServerGateway
from mcp_core.server._hub import Hub

__all__ = [
    "GatewayContext",
    "GatewaySession",
    "Lifespan",
    "LifespanMarker",
    "sample_through",
    "sdk_context",
]

ResourceReader = Callable[[str], Awaitable[Mapping[str, Any]]]
"""Reads a resource as the current session would (``resources/read``), in wire shape."""


@final
class GatewaySession:
    """The SDK ``ServerSession`` methods handler code uses, answered through a ClientGateway.

    Logging, progress, sampling, form and URL elicitation and roots go through the gateway; anything else
    is delegated to the SDK session of the request (``sdk``) when there is one, and otherwise
    raises an ``AttributeError`` saying what is missing.
    """

    __slots__ = ("_can_send", "_gateway", "_sdk")

    def __init__(
        self, gateway: ClientGateway, sdk: ServerSession | None, *, can_send: bool = True
    ) -> None:
        self._gateway = gateway
        self._sdk = sdk
        self._can_send = can_send

    def __getattr__(self, name: str) -> Any:
        sdk = object.__getattribute__(self, "_sdk")
        if sdk is None or name.startswith("_"):
            raise AttributeError(
                f"ServerSession.{name} is not available here: this handler was called with a "
                f"{type(object.__getattribute__(self, '_gateway')).__name__}, not through an "
                "MCP server connection"
            )
        return getattr(sdk, name)

    # -- what the connection knows -------------------------------------------------------------

    @property
    def client_params(self) -> types.InitializeRequestParams | None:
        """The client's ``initialize`` params (None outside a handshake-era connection)."""
        return self._sdk.client_params if self._sdk is not None else None

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None:
        """The capabilities the client declared, when known."""
        return self._sdk.client_capabilities if self._sdk is not None else None

    @property
    def can_send_request(self) -> bool:
        """Whether requests to the client may be attempted (the gateway decides how)."""
        return self._can_send

    @property
    def protocol_version(self) -> str:
        """The connection's protocol version (the latest handshake one when unknown)."""
        if self._sdk is not None:
            return self._sdk.protocol_version
        version = self._gateway.session.attributes.get("protocol_version")
        return version if isinstance(version, str) else LATEST_HANDSHAKE_VERSION

    def check_client_capability(self, capability: types.ClientCapabilities) -> bool:
        """Whether the client declared ``capability`` (False when unknown)."""
        return self._sdk.check_client_capability(capability) if self._sdk is not None else False

    # -- through the gateway -------------------------------------------------------------------

    async def send_log_message(
        self,
        level: types.LoggingLevel,
        data: Any,
        logger: str | None = None,
        related_request_id: types.RequestId | None = None,  # noqa: ARG002 -- the gateway ties it to the request
    ) -> None:
        """``notifications/message``, if the session's level lets it through."""
        await self._gateway.log(level, data, logger=logger)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Progress on the request's progress token (nothing when the client sent none)."""
        await self._gateway.progress(progress, total, message)

    async def send_notification(
        self,
        notification: types.ServerNotification,
        related_request_id: types.RequestId | None = None,
    ) -> None:
        """A log message goes through the gateway; any other notification to the SDK session."""
        if isinstance(notification, types.LoggingMessageNotification):
            params = notification.params
            await self._gateway.log(params.level, params.data, logger=params.logger)
            return
        await self._delegate("send_notification")(notification, related_request_id)

    async def send_request(
        self,
        request: types.ServerRequest,
        result_type: type[Any],
        request_read_timeout_seconds: float | None = None,
        metadata: Any = None,
        progress_callback: Any = None,
    ) -> Any:
        """Sampling, form elicitation and roots through the gateway; others to the SDK session."""
        if isinstance(request, types.CreateMessageRequest):
            wire = await self._sample(request.params)
            return result_type.model_validate(wire, by_name=False)
        if isinstance(request, types.ElicitRequest) and isinstance(
            request.params, types.ElicitRequestFormParams
        ):
            params = request.params
            answer = await self._gateway.elicit(params.message, params.requested_schema)
            return result_type.model_validate(dict(answer), by_name=False)
        if isinstance(request, types.ElicitRequest) and isinstance(
            request.params, types.ElicitRequestURLParams
        ):
            url = request.params
            answer = await self._gateway.elicit_url(
                url.message, url.url, elicitation_id=url.elicitation_id
            )
            return result_type.model_validate(dict(answer), by_name=False)
        if isinstance(request, types.ListRootsRequest):
            roots = await self._gateway.list_roots()
            return result_type.model_validate({"roots": list(roots)}, by_name=False)
        return await self._delegate("send_request")(
            request, result_type, request_read_timeout_seconds, metadata, progress_callback
        )

    async def create_message(
        self,
        messages: list[types.SamplingMessage],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        include_context: types.IncludeContext | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        model_preferences: types.ModelPreferences | None = None,
        tools: list[types.Tool] | None = None,
        tool_choice: types.ToolChoice | None = None,
        related_request_id: types.RequestId | None = None,  # noqa: ARG002 -- tied to the request by the gateway
    ) -> types.CreateMessageResult:
        """``sampling/createMessage`` through the gateway."""
        params = types.CreateMessageRequestParams(
            messages=messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            include_context=include_context,
            temperature=temperature,
            stop_sequences=stop_sequences,
            metadata=metadata,
            model_preferences=model_preferences,
            tools=tools,
            tool_choice=tool_choice,
        )
        wire = await self._sample(params)
        return types.CreateMessageResult.model_validate(wire, by_name=False)

    async def elicit_form(
        self,
        message: str,
        requested_schema: types.ElicitRequestedSchema,
        related_request_id: types.RequestId | None = None,  # noqa: ARG002 -- tied to the request by the gateway
    ) -> types.ElicitResult:
        """Form-mode ``elicitation/create`` through the gateway."""
        answer = await self._gateway.elicit(message, requested_schema)
        return types.ElicitResult.model_validate(dict(answer), by_name=False)

    async def elicit(
        self,
        message: str,
        requested_schema: types.ElicitRequestedSchema,
        related_request_id: types.RequestId | None = None,
    ) -> types.ElicitResult:
        """Same as :meth:`elicit_form` (the SDK's older name)."""
        return await self.elicit_form(message, requested_schema, related_request_id)

    async def elicit_url(
        self,
        message: str,
        url: str,
        elicitation_id: str,
        related_request_id: types.RequestId | None = None,  # noqa: ARG002 -- tied to the request by the gateway
    ) -> types.ElicitResult:
        """URL-mode ``elicitation/create`` through the gateway (in the client's era)."""
        answer = await self._gateway.elicit_url(message, url, elicitation_id=elicitation_id)
        return types.ElicitResult.model_validate(dict(answer), by_name=False)

    async def list_roots(self) -> types.ListRootsResult:
        """``roots/list`` through the gateway."""
        roots = await self._gateway.list_roots()
        return types.ListRootsResult.model_validate({"roots": list(roots)}, by_name=False)

    async def _sample(self, params: types.CreateMessageRequestParams | None) -> Mapping[str, Any]:
        if params is None:
            raise ValueError("sampling/createMessage needs params")
        return await sample_through(self._gateway, params)

    def _delegate(self, name: str) -> Callable[..., Any]:
        if self._sdk is None:
            return cast("Callable[..., Any]", self.__getattr__(name))  # raises, naming the gap
        return cast("Callable[..., Any]", getattr(self._sdk, name))


async def sample_through(
    gateway: ClientGateway, params: types.CreateMessageRequestParams
) -> Mapping[str, Any]:
    """Ask the client's model through ``gateway`` with the SDK's ``sampling/createMessage`` params.

    Returns the result in wire shape.

    Raises:
        NotImplementedError: the params ask for tool use, which the gateway does not carry.
    """
    if params.tools or params.tool_choice is not None:
        raise NotImplementedError(
            "sampling with tools is not relayed through mcp-core's ClientGateway; sample without "
            "tools, or use an MCPServer's own request session"
        )
    wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    return await gateway.sample(
        wire["messages"],
        max_tokens=params.max_tokens,
        system_prompt=params.system_prompt,
        temperature=params.temperature,
        stop_sequences=params.stop_sequences,
        model_preferences=wire.get("modelPreferences"),
        include_context=params.include_context,
        metadata=params.metadata,
    )


class GatewayContext(Context[Any, Any]):
    """The SDK's ``Context``, over a :class:`GatewaySession`; reads resources through mcp-core.

    ``ctx.read_resource(uri)`` reads from the ``MCPServer`` the element came from when there is
    one (an element of :class:`~mcp_core.bridges.MCPServerSource`), else through the mcp-core
    server serving the request, as the requesting session sees it (visibility applies).
    """

    _read: ResourceReader | None

    def __init__(
        self,
        *,
        request_context: ServerRequestContext[Any, Any],
        mcp_server: Any = None,
        read: ResourceReader | None = None,
        subscriptions: SubscriptionBus | None = None,
    ) -> None:
        super().__init__(
            request_context=request_context, mcp_server=mcp_server, subscriptions=subscriptions
        )
        self._read = read

    @property
    def mcp_server(self) -> Any:
        """The ``MCPServer`` the element came from (only for elements adopted from one)."""
        if self._mcp_server is None:
            raise RuntimeError(
                "this Context serves an element of an mcp-core server, which has no MCPServer "
                "instance; use ctx.read_resource(uri) to read resources"
            )
        return self._mcp_server

    async def read_resource(self, uri: str | AnyUrl) -> Iterable[ReadResourceContents]:
        """Read a resource: from the adopted ``MCPServer``, else through the mcp-core server."""
        if self._mcp_server is not None:
            return await super().read_resource(uri)
        if self._read is None:
            raise RuntimeError(
                f"cannot read {uri}: this Context was not created by an mcp-core server request "
                "(only McpServer and App requests can read resources through it)"
            )
        wire = await self._read(str(uri))
        return [_contents(item) for item in wire.get("contents", ())]


def _contents(item: Mapping[str, Any]) -> ReadResourceContents:
    meta = item.get("_meta")
    mime_type = item.get("mimeType")
    if "blob" in item:
        return ReadResourceContents(
            content=base64.b64decode(item["blob"]), mime_type=mime_type, meta=meta
        )
    return ReadResourceContents(content=item.get("text", ""), mime_type=mime_type, meta=meta)


@final
@dataclasses.dataclass(frozen=True, slots=True)
class LifespanMarker:
    """``Annotated[T, Lifespan]`` marks a parameter that receives the server's lifespan state."""

    def __repr__(self) -> str:
        return "Lifespan"


Lifespan: Final = LifespanMarker()
"""Annotate a handler parameter ``Annotated[MyState, Lifespan]`` to receive the lifespan state.

The state is what the server's lifespan yielded for the current run (``App(lifespan=...)`` or
``McpServer(lifespan=...)``; ``{}`` without one): the mcp-core equivalent of the SDK's
``ctx.request_context.lifespan_context``.
"""

_NO_LIFESPAN: Final[dict[str, Any]] = {}


def _hub_of(gateway: ClientGateway) -> tuple[ServerRequestContext[Any, Any] | None, Hub | None]:
    if not isinstance(gateway, ServerGateway):
        return None, None
    request = gateway.request_context
    hub = request.lifespan_context
    return request, hub if isinstance(hub, Hub) else None


def sdk_context(
    gateway: ClientGateway,
    *,
    mcp_server: Any = None,
    lifespan_context: object = None,
    method: str = "",
    handshake_era: bool = False,
) -> GatewayContext:
    """An SDK ``Context`` for a call made through ``gateway``.

    ``mcp_server`` is the ``MCPServer`` an adopted element belongs to (its own resources are read
    through it); ``lifespan_context`` overrides the lifespan state (default: the serving
    McpServer's, else ``{}``). ``handshake_era`` builds the context the SDK's resolvers get: they
    see a handshake-era connection, so their requests go through the gateway (which answers them
    in either era) rather than as the SDK's own ``InputRequiredResult``.
    """
    request, hub = _hub_of(gateway)
    state = (
        lifespan_context
        if lifespan_context is not None
        else (hub.state if hub is not None else _NO_LIFESPAN)
    )
    sdk = request.session if request is not None else None
    session = cast("ServerSession", GatewaySession(gateway, sdk, can_send=not handshake_era))
    if request is not None:
        context = dataclasses.replace(request, session=session, lifespan_context=state)
    else:
        context = ServerRequestContext(
            session=session,
            lifespan_context=state,
            protocol_version=GatewaySession(gateway, None).protocol_version,
            method=method,
            request_id=gateway.request_id,
        )
    if handshake_era:
        context = dataclasses.replace(context, protocol_version=LATEST_HANDSHAKE_VERSION)
    read: ResourceReader | None = None
    if hub is not None and mcp_server is None:
        server = hub.server

        async def read(uri: str) -> Mapping[str, Any]:
            return await server.handlers.read_resource(uri, gateway)

    return GatewayContext(
        request_context=context,
        mcp_server=mcp_server,
        read=read,
        subscriptions=hub.bus if hub is not None else None,
    )


# -- injection rules ------------------------------------------------------------------------------

_CONTEXT: Final = object()
_RESOLVED: Final = object()
_PLANS: weakref.WeakKeyDictionary[Callable[..., Any], tuple[Any, Any]] = weakref.WeakKeyDictionary()


def _inject_context(injection: Injection) -> GatewayContext:
    context = injection.shared.get(_CONTEXT)
    if not isinstance(context, GatewayContext):
        context = injection.shared[_CONTEXT] = sdk_context(injection.gateway)
    return context


async def _inject_resolved(injection: Injection) -> Any:
    # Every Resolve(...) parameter of the call is resolved together on the first one, so that a
    # resolver two parameters share runs (and asks the client) once, as the SDK does.
    resolved = injection.shared.get(_RESOLVED)
    if not isinstance(resolved, dict):
        resolved = injection.shared[_RESOLVED] = await _resolve_all(injection)
    return resolved[injection.parameter]


async def _resolve_all(injection: Injection) -> dict[str, Any]:
    handler = injection.handler
    try:
        markers, plans = _PLANS[handler]
    except (KeyError, TypeError):
        markers = find_resolved_parameters(handler)
        plans = build_resolver_plans(markers, set(injection.arguments))
        with contextlib.suppress(TypeError):  # not weakly referenceable: planned again next call
            _PLANS[handler] = (markers, plans)
    context = sdk_context(injection.gateway, handshake_era=True)
    try:
        values = await resolve_arguments(markers, plans, dict(injection.arguments), context)
    except SdkToolError as exc:  # a declined or cancelled elicitation: the call's failure
        raise ToolError(str(exc)) from exc
    if not isinstance(values, dict):  # an InputRequiredResult: impossible in the handshake era
        raise TypeError(f"resolvers returned {type(values).__name__}, not values")
    return values


@runtime_checkable
class LifespanGateway(Protocol):
    """Optional: a gateway that carries the lifespan state itself (one not made by a server)."""

    @property
    def lifespan_context(self) -> object:
        """The lifespan state a handler's ``Lifespan`` parameter gets."""
        ...


def _inject_lifespan(injection: Injection) -> object:
    _, hub = _hub_of(injection.gateway)
    if hub is not None:
        return hub.state
    gateway = injection.gateway
    state = gateway.lifespan_context if isinstance(gateway, LifespanGateway) else None
    if state is None:
        raise RuntimeError(
            f"parameter {injection.parameter!r} wants the server's lifespan state, but this call "
            "was not made by an mcp-core server (McpServer or App)"
        )
    return state


register_injection(Context, _inject_context)
register_injection(Resolve, _inject_resolved)
register_injection(LifespanMarker, _inject_lifespan)
