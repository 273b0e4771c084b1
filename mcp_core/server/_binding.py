"""McpServer: the request handlers bound to the official SDK's low-level server and transports.

The binding is thin on purpose. Each SDK handler builds the session and gateway for the request,
calls the sans-IO :class:`~mcp_core.server._requests.RequestHandlers`, and translates failures
with :func:`~mcp_core.server._errors.wire_error`. Everything about connections lives here:
per-session state, change notifications, and the transports (stdio, streamable HTTP).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar, final

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.streamable_http import EventStore
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types import SERVER_INFO_META_KEY
from mcp_types.methods import CACHEABLE_METHODS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_core.elements import ElementKind
from mcp_core.handlers import Invoker
from mcp_core.registry import DeferredRegistry, ElementCatalog, ElementResolver
from mcp_core.server._errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, wire_error
from mcp_core.server._events import InMemoryEventStore
from mcp_core.server._gateway import (
    Ctx,
    ServerGateway,
    SessionHook,
    SessionState,
    connection_of,
    session_info_of,
)
from mcp_core.server._paging import DEFAULT_PAGE_SIZE
from mcp_core.server._requests import ElementInvoker, RequestHandlers, default_cursor_secret
from mcp_core.visibility import ALWAYS, ElementVisibility, SessionInfo

if TYPE_CHECKING:
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette

__all__ = ["McpServer", "ServableRegistry"]

_log = logging.getLogger("mcp_core.server")

_STATE_KEY: Final = "mcp_core.session"
_T = TypeVar("_T")

# What a change of each kind is called on the handshake-era wire and on a 2026 listen stream.
_CHANGES: Final[tuple[tuple[ElementKind, str, ServerEvent], ...]] = (
    (ElementKind.TOOL, "notifications/tools/list_changed", ToolsListChanged()),
    (
        ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE,
        "notifications/resources/list_changed",
        ResourcesListChanged(),
    ),
    (ElementKind.PROMPT, "notifications/prompts/list_changed", PromptsListChanged()),
)


class ServableRegistry(ElementCatalog, ElementResolver, DeferredRegistry, Protocol):
    """What a server serves: the catalogue and resolver roles, the load lifecycle, and ``kinds()``.

    A registry that also has ``subscribe(listener)`` (as the reference Registry does) gets its
    changes announced to clients as ``notifications/*/list_changed``.
    """

    def kinds(self) -> ElementKind:
        """The kinds the registry may hold, answered without loading."""
        ...


def _enveloped(
    method: str, handler: Callable[[Ctx, Any], Awaitable[HandlerResult]]
) -> Callable[[Ctx, Any], Awaitable[HandlerResult]]:
    """``handler`` with the 2026-07-28 result envelope added to its wire dict.

    The SDK fills ``resultType`` and the cache hints only for result *models*; the request handlers
    return wire dicts, so the envelope is added here: complete, and not cacheable across sessions
    (lists and reads depend on the session's visibility). 2026-07-28 also retired the
    resource-not-found code -32002 (SEP-2164): there, a missing resource is -32602.
    """
    cacheable = method in CACHEABLE_METHODS

    async def enveloped(ctx: Ctx, params: Any) -> HandlerResult:
        try:
            result = await handler(ctx, params)
        except MCPError as exc:
            if exc.code == RESOURCE_NOT_FOUND and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                raise MCPError(INVALID_PARAMS, exc.message, exc.data) from None
            raise
        if isinstance(result, dict) and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            result.setdefault("resultType", "complete")
            if cacheable:
                result.setdefault("ttlMs", 0)
                result.setdefault("cacheScope", "private")
        return result

    return enveloped


_LISTS: Final[
    Mapping[str, Callable[[RequestHandlers, str | None, SessionInfo], Awaitable[dict[str, Any]]]]
] = {
    "tools/list": RequestHandlers.list_tools,
    "resources/list": RequestHandlers.list_resources,
    "resources/templates/list": RequestHandlers.list_resource_templates,
    "prompts/list": RequestHandlers.list_prompts,
}


@final
class _Hub:
    """The connections served under one SDK lifespan, and the tasks that notify them.

    One lifespan covers a whole streamable HTTP app, one stdio run, or one in-memory client.
    """

    __slots__ = ("_pending", "_tasks", "bus", "listen", "sessions")

    def __init__(self, tasks: anyio.abc.TaskGroup) -> None:
        self._tasks = tasks
        self._pending = ElementKind.NONE
        self.sessions: dict[Connection, SessionState] = {}
        # 2026-07-28 clients get change notifications on subscriptions/listen streams instead.
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)

    def track(self, state: SessionState) -> None:
        connection = state.connection
        self.sessions[connection] = state
        connection.exit_stack.callback(self.sessions.pop, connection, None)

    def list_changed(self, kinds: ElementKind) -> None:
        # Called synchronously from registry listeners; a burst of writes coalesces into one
        # notification per kind, sent from this hub's task group.
        if not self._pending:
            self._tasks.start_soon(self._flush)
        self._pending |= kinds

    async def _flush(self) -> None:
        await anyio.lowlevel.checkpoint()
        kinds, self._pending = self._pending, ElementKind.NONE
        for changed, method, event in _CHANGES:
            if kinds & changed:
                for state in tuple(self.sessions.values()):
                    if state.connection.initialized.is_set():
                        await state.connection.notify(method, None)
                await self.bus.publish(event)

    async def resource_updated(self, uri: str) -> None:
        for state in tuple(self.sessions.values()):
            if uri in state.subscriptions:
                await state.connection.send_resource_updated(uri)
        await self.bus.publish(ResourceUpdated(uri=uri))


@final
class _LowLevelServer(Server[_Hub]):
    """The SDK's low-level server with capabilities derived from what the registry can hold."""

    def __init__(
        self,
        name: str,
        *,
        capabilities: Callable[[types.ServerCapabilities], types.ServerCapabilities],
        **kwargs: Any,
    ) -> None:
        super().__init__(name, **kwargs)
        self._trim = capabilities

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """The SDK's capabilities for the registered handlers, trimmed to the registry's kinds."""
        capabilities = super().get_capabilities(
            notification_options,
            experimental_capabilities,
            extensions,
            protocol_version=protocol_version,
        )
        return self._trim(capabilities)


@final
class McpServer:
    """Serves a registry over MCP with the official SDK: stdio, streamable HTTP, in memory.

    - ``registry``: any :class:`ServableRegistry` (the reference ``Registry`` is one); it is
      loaded lazily on the first request that needs it, never to answer ``initialize``.
    - ``visibility``: decides per session what exists; applied to lists and to every
      call/read/get/complete, so a hidden element answers exactly like a missing one.
    - ``invoker``: runs elements (default: ``mcp_core.handlers.Invoker()``).
    - ``page_size``: elements per list page (None: never paginate); ``cursor_secret`` keys the
      cursors' integrity check (default: derived from ``name``; share a real secret between workers
      to make cursors unforgeable).
    - ``session_hook``: refines the transport's :class:`~mcp_core.visibility.SessionInfo`.

    ``lowlevel`` is the SDK server itself, for ``mcp.Client(server.lowlevel)`` in tests or any
    transport the SDK offers.
    """

    __slots__ = ("_hook", "_hubs", "_notifies", "_registry", "handlers", "lowlevel")

    def __init__(
        self,
        registry: ServableRegistry,
        *,
        name: str = "mcp-core",
        version: str = "",
        title: str | None = None,
        instructions: str | None = None,
        visibility: ElementVisibility = ALWAYS,
        invoker: ElementInvoker | None = None,
        page_size: int | None = DEFAULT_PAGE_SIZE,
        cursor_secret: bytes | None = None,
        session_hook: SessionHook | None = None,
    ) -> None:
        self._registry = registry
        self._hook = session_hook
        self._hubs: set[_Hub] = set()
        self.handlers: Final = RequestHandlers(
            registry,
            registry,
            invoker=invoker if invoker is not None else Invoker(),
            visibility=visibility,
            page_size=page_size,
            cursor_secret=cursor_secret
            if cursor_secret is not None
            else default_cursor_secret(name),
        )
        subscribe = getattr(registry, "subscribe", None)
        self._notifies: Final = callable(subscribe)
        if callable(subscribe):
            subscribe(self._on_registry_change)
        self.lowlevel: Final = _LowLevelServer(
            name,
            version=version,
            title=title,
            instructions=instructions,
            lifespan=self._lifespan,
            capabilities=self._capabilities,
        )
        self._bind(self.lowlevel)

    def __repr__(self) -> str:
        return f"McpServer({self.lowlevel.name!r}, {self._registry!r})"

    @property
    def registry(self) -> ServableRegistry:
        """The registry served."""
        return self._registry

    @property
    def visibility(self) -> ElementVisibility:
        """The visibility rule applied per session."""
        return self.handlers.visibility

    @visibility.setter
    def visibility(self, rule: ElementVisibility) -> None:
        self.handlers.visibility = rule

    def capabilities(self) -> dict[str, Any]:
        """The capabilities ``initialize`` answers with now, in wire shape (loads nothing)."""
        capabilities = self.lowlevel.create_initialization_options().capabilities
        return capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)

    # -- notifications --------------------------------------------------------------------------

    def notify_list_changed(self, kinds: ElementKind) -> None:
        """Announce that the lists of ``kinds`` changed to every connected client.

        The registry's own changes are announced automatically; call this when something the
        server cannot see changed what a list shows (e.g. a visibility rule's inputs).
        """
        for hub in tuple(self._hubs):
            hub.list_changed(kinds)

    async def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to every session subscribed to ``uri``."""
        for hub in tuple(self._hubs):
            await hub.resource_updated(uri)

    def _on_registry_change(self, kinds: ElementKind) -> None:
        self.notify_list_changed(kinds)

    @asynccontextmanager
    async def _lifespan(self, _server: Server[_Hub]) -> AsyncIterator[_Hub]:
        async with anyio.create_task_group() as tasks:
            hub = _Hub(tasks)
            self._hubs.add(hub)
            try:
                yield hub
            finally:
                self._hubs.discard(hub)
                hub.listen.close()
                tasks.cancel_scope.cancel()

    def _capabilities(self, capabilities: types.ServerCapabilities) -> types.ServerCapabilities:
        kinds = self._registry.kinds()
        changed = self._notifies
        update: dict[str, Any] = {}
        update["tools"] = (
            types.ToolsCapability(list_changed=changed) if kinds & ElementKind.TOOL else None
        )
        update["prompts"] = (
            types.PromptsCapability(list_changed=changed) if kinds & ElementKind.PROMPT else None
        )
        if kinds & (ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE):
            update["resources"] = types.ResourcesCapability(subscribe=True, list_changed=changed)
        else:
            update["resources"] = None
        if not kinds & (ElementKind.PROMPT | ElementKind.RESOURCE_TEMPLATE):
            update["completions"] = None
        return capabilities.model_copy(update=update)

    # -- the SDK handlers -----------------------------------------------------------------------

    def _bind(self, server: Server[_Hub]) -> None:
        routes: tuple[
            tuple[str, type[Any], Callable[[Ctx, Any], Awaitable[HandlerResult]]], ...
        ] = (
            ("tools/list", types.PaginatedRequestParams, self._list_tools),
            ("tools/call", types.CallToolRequestParams, self._call_tool),
            ("resources/list", types.PaginatedRequestParams, self._list_resources),
            ("resources/templates/list", types.PaginatedRequestParams, self._list_templates),
            ("resources/read", types.ReadResourceRequestParams, self._read_resource),
            ("resources/subscribe", types.SubscribeRequestParams, self._subscribe),
            ("resources/unsubscribe", types.UnsubscribeRequestParams, self._unsubscribe),
            ("prompts/list", types.PaginatedRequestParams, self._list_prompts),
            ("prompts/get", types.GetPromptRequestParams, self._get_prompt),
            ("completion/complete", types.CompleteRequestParams, self._complete),
            # Registered directly: the constructor argument warns that logging is deprecated at
            # 2026-07-28, yet every handshake-era client still uses it.
            ("logging/setLevel", types.SetLevelRequestParams, self._set_level),
            ("subscriptions/listen", types.SubscriptionsListenRequestParams, self._listen),
        )
        for method, params_type, handler in routes:
            server.add_request_handler(method, params_type, _enveloped(method, handler))
        server.middleware.append(self._track_sessions)

    async def _list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams) -> HandlerResult:
        return await self._answer(self.handlers.list_tools(params.cursor, self._session(ctx)[0]))

    async def _list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        return await self._answer(
            self.handlers.list_resources(params.cursor, self._session(ctx)[0])
        )

    async def _list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        session = self._session(ctx)[0]
        return await self._answer(self.handlers.list_resource_templates(params.cursor, session))

    async def _list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams) -> HandlerResult:
        return await self._answer(self.handlers.list_prompts(params.cursor, self._session(ctx)[0]))

    async def _call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> HandlerResult:
        return await self._answer(
            self.handlers.call_tool(params.name, params.arguments, self._gateway(ctx))
        )

    async def _read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> HandlerResult:
        return await self._answer(self.handlers.read_resource(params.uri, self._gateway(ctx)))

    async def _get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams) -> HandlerResult:
        return await self._answer(
            self.handlers.get_prompt(params.name, params.arguments, self._gateway(ctx))
        )

    async def _complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> HandlerResult:
        wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        context = (wire.get("context") or {}).get("arguments")
        return await self._answer(
            self.handlers.complete(wire["ref"], wire["argument"], context, self._gateway(ctx))
        )

    async def _subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> HandlerResult:
        info, state = self._session(ctx)
        await self._answer(self.handlers.resolve_resource(params.uri, info))
        if state is not None:
            state.subscriptions.add(params.uri)
        return {}

    async def _unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> HandlerResult:
        state = self._session(ctx)[1]
        if state is not None:
            state.subscriptions.discard(params.uri)
        return {}

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> HandlerResult:
        state = self._session(ctx)[1]
        if state is not None:
            state.log_level = params.level
        return {}

    async def _listen(
        self, ctx: Ctx, params: types.SubscriptionsListenRequestParams
    ) -> HandlerResult:
        hub: _Hub = ctx.lifespan_context
        return await hub.listen(ctx, params)

    async def _track_sessions(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        # Seen on every message, `initialize` included, so a client is notified of changes even
        # before its first list request.
        self._state(ctx)
        if ctx.method in _LISTS and ctx.request_id is not None:
            fast = await self._list_directly(ctx)
            if fast is not None:
                return fast
        return await call_next(ctx)

    async def _list_directly(self, ctx: Ctx) -> dict[str, Any] | None:
        """A list result built without the SDK's result model, or None to take the usual path.

        The SDK validates every result against its pydantic model and dumps it again, which for
        a 10k-tool list costs five times the JSON encoding itself. A page made of definitions'
        own wire dicts is valid by construction (a test holds it equal to the SDK's rendering),
        so lists skip that round trip. Anything unusual (an uninitialised session, params the
        SDK would refuse) goes the usual way and gets the SDK's answer.
        """
        connection = connection_of(ctx)
        params = ctx.params or {}
        cursor = params.get("cursor")
        if (
            connection is None
            or not connection.initialize_accepted
            or not isinstance(cursor, str | None)
            or set(params) - {"cursor", "_meta"}
        ):
            return None
        list_page = _LISTS[ctx.method]
        result = await self._answer(list_page(self.handlers, cursor, self._session(ctx)[0]))
        version = ctx.protocol_version
        if version in MODERN_PROTOCOL_VERSIONS:
            result.update(resultType="complete", ttlMs=0, cacheScope="private")
            result["_meta"] = {SERVER_INFO_META_KEY: self.lowlevel.server_info_stamp}
        return result

    def _state(self, ctx: Ctx) -> SessionState | None:
        connection = connection_of(ctx)
        if connection is None or connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None  # a 2026 request is its own session: nothing persists between requests
        state = connection.state.get(_STATE_KEY)
        if not isinstance(state, SessionState):
            state = connection.state[_STATE_KEY] = SessionState(connection=connection)
            hub = ctx.lifespan_context
            if isinstance(hub, _Hub):
                hub.track(state)
        return state

    def _session(self, ctx: Ctx) -> tuple[SessionInfo, SessionState | None]:
        state = self._state(ctx)
        if state is None:
            return session_info_of(ctx, None, self._hook), None
        if state.info is None:
            state.info = session_info_of(ctx, state, self._hook)
        return state.info, state

    def _gateway(self, ctx: Ctx) -> ServerGateway:
        info, state = self._session(ctx)
        return ServerGateway(ctx, info, log_level=state.log_level if state is not None else None)

    @staticmethod
    async def _answer(work: Awaitable[_T]) -> _T:
        try:
            return await work
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001 -- the one place any failure becomes a wire error
            error = wire_error(exc)
            if error.expected:
                _log.info("request refused: %s", exc)
            else:
                _log.exception("request failed; the client is told only 'Internal error'")
            raise MCPError(error.code, error.message, error.data) from None

    # -- transports -----------------------------------------------------------------------------

    def streamable_http_app(
        self,
        *,
        path: str = "/mcp",
        host: str = "127.0.0.1",
        json_response: bool = False,
        stateless: bool = False,
        event_store: EventStore | Literal["memory"] | None = "memory",
        retry_interval: int | None = 1000,
        transport_security: TransportSecuritySettings | None = None,
        token_verifier: TokenVerifier | None = None,
        auth: AuthSettings | None = None,
    ) -> Starlette:
        """An ASGI (Starlette) app serving streamable HTTP at ``path``, to run or mount.

        Serving on a loopback ``host`` turns on DNS-rebinding protection (the ``Host`` and
        ``Origin`` headers must name loopback) unless ``transport_security`` says otherwise.
        Sessions are stateful unless ``stateless``; ``event_store`` (a bounded in-memory one by
        default) lets clients resume SSE streams, reconnecting after ``retry_interval`` ms.
        With ``token_verifier`` and ``auth``, requests need a bearer token, and the token's
        principal, client id and scopes reach visibility rules through the SessionInfo.
        """
        store = InMemoryEventStore() if event_store == "memory" else event_store
        return self.lowlevel.streamable_http_app(
            streamable_http_path=path,
            json_response=json_response,
            stateless_http=stateless,
            event_store=None if stateless else store,
            retry_interval=retry_interval,
            transport_security=transport_security,
            host=host,
            auth=auth,
            token_verifier=token_verifier,
        )

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout until it disconnects."""
        from mcp.server.stdio import stdio_server  # noqa: PLC0415 -- only stdio needs it

        async with stdio_server() as (read_stream, write_stream):
            await self.lowlevel.run(
                read_stream, write_stream, self.lowlevel.create_initialization_options()
            )

    async def run_http(
        self, *, host: str = "127.0.0.1", port: int = 8000, path: str = "/mcp", **options: Any
    ) -> None:
        """Serve streamable HTTP with uvicorn until cancelled; ``options`` go to :meth:`streamable_http_app`."""
        import uvicorn  # noqa: PLC0415 -- only HTTP needs it

        app = self.streamable_http_app(path=path, host=host, **options)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve()
