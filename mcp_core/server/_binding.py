"""McpServer: the request handlers bound to the official SDK's low-level server and transports.

Each SDK handler builds the session and gateway for the request, calls the sans-IO
:class:`~mcp_core.server._requests.RequestHandlers`, and translates failures with
:func:`~mcp_core.server._errors.wire_error`. This module does more than bind: it is the façade
(``McpServer``), the connections (per-session state, change notifications) and the HTTP
assembly of the transports (stdio, streamable HTTP), and a deployment's worker is wired in here;
splitting it by job is left for a later step (ADR 0092).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import signal
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import (
    AbstractAsyncContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
)
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar, final, runtime_checkable

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http import EventStore
from mcp.server.streamable_http_manager import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
)
from mcp.server.subscriptions import (
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
from starlette.routing import Route

from mcp_core._collector import settle_heap
from mcp_core._version import VERSION
from mcp_core.elements import ElementKind, Icon
from mcp_core.elements._definitions import WireModel, own_value
from mcp_core.errors import ElementNotFoundError
from mcp_core.handlers import Invoker, escapes
from mcp_core.handlers._containment import from_user_frame
from mcp_core.registry import (
    BackgroundRecovery,
    ChangeNotifier,
    DeferredRegistry,
    ElementCatalog,
    ElementResolver,
    HealthReport,
    RegistryHealth,
    SourceChangeNotifier,
)
from mcp_core.server._edge import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CLIENT_BODY_BYTES,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    HttpEdge,
    SessionSlots,
)
from mcp_core.server._errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, clip_json, wire_error
from mcp_core.server._events import InMemoryEventStore, SessionEventStore, bind_sessions
from mcp_core.server._gateway import (
    Ctx,
    ServerGateway,
    SessionHook,
    SessionState,
    connection_of,
    session_info_of,
)
from mcp_core.server._health import (
    DEFAULT_HEALTH_PATH,
    DEFAULT_LIVE_PATH,
    DEFAULT_READY_PATH,
    health_route,
    transport_security_for,
)
from mcp_core.server._lifecycle import DEFAULT_DRAIN_TIME, Lifecycle, check_drain_time
from mcp_core.server._listen import LISTENING_SESSION, VisibleBus
from mcp_core.server._metrics import ServerMetrics
from mcp_core.server._middleware import Middleware
from mcp_core.server._paging import DEFAULT_PAGE_SIZE
from mcp_core.server._param_headers import no_schema_yet, param_header_check
from mcp_core.server._requests import ElementInvoker, RequestHandlers, default_cursor_secret
from mcp_core.server._rounds import DEFAULT_MAX_INPUT_ROUNDS, InputRounds, RoundLedger, owner_of
from mcp_core.server._serving import listen, run_server, serve_asgi, url_of
from mcp_core.server._stdio import stdio_streams
from mcp_core.server._tracing import trace_context_from_headers
from mcp_core.sources import KindsPrefetch
from mcp_core.visibility import ALWAYS, ElementVisibility, SessionInfo

if TYPE_CHECKING:
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.types import ASGIApp

    from mcp_core.server._deployment import Deployment

__all__ = ["McpServer", "ServableRegistry"]

_log = logging.getLogger("mcp_core.server")

_STATE_KEY: Final = "mcp_core.session"
# JSON-RPC codes of refusals of a client's request, whose text may quote it.
_REFUSALS: Final = frozenset({types.INVALID_REQUEST, types.METHOD_NOT_FOUND, types.INVALID_PARAMS})
_T = TypeVar("_T")

_CHANGE_GAP: Final = 1.0
"""Seconds at least between two list-changed announcements to the clients of one server run."""

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


@runtime_checkable
class ServableRegistry(ElementCatalog, ElementResolver, DeferredRegistry, Protocol):
    """What a server serves: the catalogue and resolver roles, the load lifecycle, and ``kinds()``.

    A registry that is also a :class:`~mcp_core.registry.ChangeNotifier` (as the reference
    Registry is) gets its changes announced to clients as ``notifications/*/list_changed``; one
    with :class:`~mcp_core.registry.HealthReport` has it served at the HTTP health endpoint; one
    with :class:`~mcp_core.registry.BackgroundRecovery` has it open while serving.
    """

    def kinds(self) -> ElementKind:
        """The kinds the registry may hold, answered without loading."""
        ...


def _wire(exc: BaseException) -> MCPError:
    """The one place any failure (SystemExit too, never cancellation) becomes a wire error."""
    error = wire_error(exc)
    if error.expected:
        _log.info("request refused: %s", exc)
    else:
        _log.error(
            "request failed; the client is told only %r",
            error.message,
            exc_info=from_user_frame(exc),
        )
    return MCPError(error.code, error.message, error.data)


@contextmanager
def _as_wire_errors() -> Iterator[None]:
    """Inside: a protocol error passes as it is, any other failure becomes one (:func:`_wire`)."""
    try:
        yield
    except MCPError:
        raise
    except BaseException as exc:
        if escapes(exc):
            raise
        raise _wire(exc) from None


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
        if (
            isinstance(result, dict)
            and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            and result.get("resultType") != "input_required"  # an interim result has no hints
        ):
            result.setdefault("resultType", "complete")
            if cacheable:
                result.setdefault("ttlMs", 0)
                result.setdefault("cacheScope", "private")
        return result

    return enveloped


_LISTS: Final[
    Mapping[
        str,
        Callable[..., Awaitable[dict[str, Any]]],
    ]
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

    __slots__ = (
        "_pending",
        "_quiet_until",
        "_readable",
        "_tasks",
        "bus",
        "by_session",
        "listen",
        "server",
        "sessions",
        "state",
    )

    def __init__(
        self,
        tasks: anyio.abc.TaskGroup,
        server: McpServer,
        state: object,
        readable: Callable[[str, SessionInfo], Awaitable[bool]],
    ) -> None:
        self._tasks = tasks
        # The server this run serves, and what its lifespan yielded (reachable by handlers).
        self.server = server
        self.state = state
        self._readable = readable
        self._pending = ElementKind.NONE
        self._quiet_until = -math.inf  # (anyio clock) no announcement before then
        self.sessions: dict[Connection, SessionState] = {}
        # Handshake-era HTTP sessions' connections by session id (for the hot path).
        self.by_session: dict[str, Connection] = {}
        # 2026-07-28 clients get change notifications on subscriptions/listen streams instead.
        self.bus = VisibleBus(readable)
        self.listen = ListenHandler(self.bus)

    def start(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``work`` in this lifespan's task group."""
        self._tasks.start_soon(work)

    def track(self, state: SessionState) -> None:
        connection = state.connection
        self.sessions[connection] = state
        connection.exit_stack.callback(self.sessions.pop, connection, None)
        session_id = connection.session_id
        if session_id is not None:
            self.by_session[session_id] = connection
            connection.exit_stack.callback(self.by_session.pop, session_id, None)

    def list_changed(self, kinds: ElementKind) -> None:
        # Called synchronously from registry listeners; a burst of writes coalesces into one
        # notification per kind, sent from this hub's task group; and announcements are at
        # least _CHANGE_GAP apart, the last change of a burst always announced (a backend's
        # storm of changes reaches each client as about one notification per kind per second).
        if not self._pending:
            self._tasks.start_soon(self._flush)
        self._pending |= kinds

    async def _flush(self) -> None:
        await anyio.lowlevel.checkpoint()
        wait = self._quiet_until - anyio.current_time()
        if wait > 0:
            await anyio.sleep(wait)  # changes meanwhile join this announcement
        kinds, self._pending = self._pending, ElementKind.NONE
        self._quiet_until = anyio.current_time() + _CHANGE_GAP
        for changed, method, event in _CHANGES:
            if kinds & changed:
                for state in tuple(self.sessions.values()):
                    if state.connection.initialized.is_set():
                        await state.connection.notify(method, None)
                await self.bus.publish(event)

    async def resource_updated(self, uri: str) -> None:
        for state in tuple(self.sessions.values()):
            # Re-checked now: what a session may read can change after it subscribed.
            if (
                uri in state.subscriptions
                and state.info is not None
                and await self._readable(uri, state.info)
            ):
                await state.connection.send_resource_updated(uri)
        await self.bus.publish(ResourceUpdated(uri=uri))


def _server_icons(
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None,
) -> list[types.Icon] | None:
    """``serverInfo.icons`` as the SDK takes them, from mcp-core's, the SDK's or wire icons.

    Raises:
        TypeError: an icon is none of these (the message names which).
    """
    if icons is None:
        return None
    if isinstance(icons, str | bytes | Mapping):
        raise TypeError(f"icons must be a list of Icon values, got {type(icons).__name__}")
    return [
        types.Icon.model_validate(own_value(Icon, icon, parameter=f"icons[{index}]").to_wire())
        for index, icon in enumerate(icons)
    ]


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
    - ``version``: the ``serverInfo.version`` clients see; mcp-core's own version by default.
      ``title``, ``description``, ``website_url`` and ``icons`` (mcp-core's ``Icon``, the SDK's
      ``mcp.types.Icon`` or wire mappings) complete ``serverInfo``.
    - ``lifespan``: an async context manager factory entered once per server run (one stdio run,
      one streamable HTTP app, one in-memory client), before the first request and exited after
      the last, as the SDK's ``Server(lifespan=...)`` is; what it yields is the run's lifespan
      state, which handlers reach (see :data:`~mcp_core.server.Lifespan`).
    - ``request_state_security``: how the ``requestState`` of 2026-07-28 multi-round-trip
      requests (a handler asking the client) is sealed: by default with a key made for this
      process (fine for stdio and one HTTP worker); give every worker of one deployment the same
      ``RequestStateSecurity(keys=[secret])``. Each state is good for one retry (a replayed
      round is refused; with a ``deployment``, on every worker), and one request may ask the
      client ``max_input_rounds`` rounds at most (None: no limit).
    - ``preload``: whether :meth:`run_stdio` and :meth:`run_http` (so ``mcp-core run`` and
      ``app.run``) load the registry at startup, logging its problems at once. Turn it off for a
      registry meant to answer per name (lazy plugins, a large generated catalogue): then only
      what a request needs is built, and the full load waits for the first list.
    - ``deployment``: serve as one worker of several (see :class:`~mcp_core.server.Deployment`):
      the cursor and ``requestState`` keys come from its shared secret (so do not give
      ``cursor_secret`` or ``request_state_security`` too), the registry (a reference
      ``Registry``) follows the other workers' changes, session ids name this worker, and the
      health endpoint reports the shared backends.
    - ``middleware``: wraps every element request (the lists, call, read, get, complete,
      subscribe), the first outermost, the same over every transport and era (see
      :class:`~mcp_core.server.Middleware`; :meth:`add_middleware` adds more).
    - ``trace_arguments``: put argument values and results in the OpenTelemetry handler spans
      (left out by default; see ``docs/operating.md``).

    ``lowlevel`` is the SDK server itself, for ``mcp.Client(server.lowlevel)`` in tests or any
    transport the SDK offers.
    """

    __slots__ = (
        "_deployment",
        "_event_stores",
        "_hook",
        "_hubs",
        "_invoker",
        "_ledger",
        "_lifecycle",
        "_lifespan_factory",
        "_loading",
        "_max_rounds",
        "_metrics",
        "_notifies",
        "_preload",
        "_preload_when_run",
        "_registry",
        "_session_managers",
        "_settle",
        "handlers",
        "lowlevel",
    )

    def __init__(
        self,
        registry: ServableRegistry,
        *,
        name: str = "mcp-core",
        version: str | None = None,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None = None,
        visibility: ElementVisibility = ALWAYS,
        invoker: ElementInvoker | None = None,
        page_size: int | None = DEFAULT_PAGE_SIZE,
        cursor_secret: bytes | None = None,
        session_hook: SessionHook | None = None,
        lifespan: Callable[[], AbstractAsyncContextManager[object]] | None = None,
        request_state_security: RequestStateSecurity | None = None,
        preload: bool = True,
        deployment: Deployment | None = None,
        max_input_rounds: int | None = DEFAULT_MAX_INPUT_ROUNDS,
        middleware: Sequence[Middleware] = (),
        trace_arguments: bool = False,
    ) -> None:
        if max_input_rounds is not None and (
            isinstance(max_input_rounds, bool) or max_input_rounds < 1
        ):
            raise ValueError(
                f"max_input_rounds must be a positive number of rounds or None, got "
                f"{max_input_rounds!r}"
            )
        if deployment is not None:
            cursor_secret, request_state_security = _deployed(
                deployment, registry, cursor_secret, request_state_security
            )
        self._deployment = deployment
        self._metrics: ServerMetrics | None = None
        self._event_stores: list[SessionEventStore] = []
        self._registry = registry
        self._hook = session_hook
        self._lifespan_factory = lifespan
        self._hubs: set[_Hub] = set()
        self._invoker: ElementInvoker = invoker if invoker is not None else Invoker()
        # Whether run_stdio()/run_http() load the registry at startup unless told otherwise.
        self._preload_when_run = preload
        self._preload = False
        self._loading = False
        self._settle = False  # serving as the process (run()): freeze the heap after the preload
        # Live, ready, draining (ADR 0095): the serving loop starts the drain, health reads it.
        self._lifecycle = Lifecycle()
        self._lifecycle.on_drain(self._end_open_streams)
        if deployment is not None:
            self._lifecycle.on_drain(deployment.drain)
        self._session_managers: list[StreamableHTTPSessionManager] = []
        self.handlers: Final = RequestHandlers(
            registry,
            registry,
            invoker=self._invoker,
            visibility=visibility,
            page_size=page_size,
            cursor_secret=cursor_secret
            if cursor_secret is not None
            else default_cursor_secret(name),
            middleware=middleware,
            trace_arguments=trace_arguments,
        )
        self._notifies: Final = isinstance(registry, ChangeNotifier)
        if isinstance(registry, ChangeNotifier):
            registry.subscribe(self._on_registry_change)
        self.lowlevel: Final = _LowLevelServer(
            name,
            version=VERSION if version is None else version,
            title=title,
            description=description,
            instructions=instructions,
            website_url=website_url,
            icons=_server_icons(icons),
            lifespan=self._lifespan,
            capabilities=self._capabilities,
            # Mcp-Param-* headers are checked after per-name resolution (_param_headers), not by
            # the SDK walking tools/list (a full load) on every call.
            get_tool_input_schema=no_schema_yet,
        )
        self._bind(self.lowlevel)
        # Ahead of the SDK's request span: over HTTP, a traceparent header parents it when the
        # request's _meta carries none.
        self.lowlevel.middleware.insert(0, trace_context_from_headers)
        # Seals the requestState of InputRequiredResults and verifies it on the retry, before any
        # handler sees it (see mcp_core.server._rounds).
        security = request_state_security or RequestStateSecurity.ephemeral()
        self.lowlevel.middleware.append(RequestStateBoundary(security, default_audience=name))
        # Each state is good for one retry, on every worker (ADR 0073).
        self._max_rounds = max_input_rounds
        self._ledger = RoundLedger(
            deployment.store if deployment is not None else None, ttl=security.ttl
        )

    def __repr__(self) -> str:
        return f"McpServer({self.lowlevel.name!r}, {self._registry!r})"

    @property
    def registry(self) -> ServableRegistry:
        """The registry served."""
        return self._registry

    @property
    def lifecycle(self) -> Lifecycle:
        """Whether this server is draining (stopping), and what its drain finished or cut."""
        return self._lifecycle

    @property
    def deployment(self) -> Deployment | None:
        """The deployment this server is a worker of (None: it serves alone)."""
        return self._deployment

    @property
    def invoker(self) -> ElementInvoker:
        """What runs the elements (its container resolves their handler references)."""
        return self._invoker

    @property
    def middleware(self) -> tuple[Middleware, ...]:
        """What wraps each element request, the first outermost (see :class:`Middleware`)."""
        return self.handlers.middleware

    def add_middleware(self, *middleware: Middleware) -> None:
        """Wrap every element request in ``middleware`` too, inside what is already there.

        Each is an async callable ``(request, call_next)``; see
        :mod:`mcp_core.server._middleware` and ``docs/operating.md``.
        """
        self.handlers.middleware = (*self.handlers.middleware, *middleware)

    def metrics(self) -> ServerMetrics:
        """This server's Prometheus metrics (``prometheus-client``, the ``[metrics]`` extra).

        The first call starts counting: the metrics middleware goes outermost, around whatever
        middleware the server has. Serve them with ``streamable_http_app(metrics_path=...)`` or
        ``metrics().serve_on(port)`` (``mcp-core run --metrics-port``).
        """
        if self._metrics is None:
            catalog_sizes = getattr(self._registry, "catalog_sizes", None)
            self._metrics = ServerMetrics(
                health=self.health,
                catalog=catalog_sizes if callable(catalog_sizes) else lambda: None,
                sessions=self.open_sessions,
                event_bytes=self._retained_event_bytes,
            )
            self.handlers.middleware = (self._metrics, *self.handlers.middleware)
        return self._metrics

    def open_sessions(self) -> int:
        """How many sessions are open now (handshake era; a 2026-07-28 request opens none)."""
        return sum(len(hub.sessions) for hub in tuple(self._hubs))

    def _retained_event_bytes(self) -> int | None:
        sizes = [getattr(store, "retained_bytes", None) for store in self._event_stores]
        counted = [size for size in sizes if isinstance(size, int)]
        return sum(counted) if counted else None

    @property
    def visibility(self) -> ElementVisibility:
        """The visibility rule applied per session."""
        return self.handlers.visibility

    @visibility.setter
    def visibility(self, rule: ElementVisibility) -> None:
        self.handlers.visibility = rule

    def health(self) -> RegistryHealth:
        """The registry's health now (see :meth:`mcp_core.registry.Registry.health`).

        A registry without ``health()`` is described by whether it has loaded, with no sources.
        Unless the server is loading its registry ahead of requests (``preload``), the report
        is ``on_demand``: ready, and ``unloaded`` until a request builds the catalogue. Nothing
        here loads.
        """
        registry = self._registry
        report = registry.health() if isinstance(registry, HealthReport) else None
        if not isinstance(report, RegistryHealth):
            report = RegistryHealth(loaded=self._registry.loaded, sources=(), at=time.time())
        if not (self._preload or self._loading):
            report = dataclasses.replace(report, on_demand=True)
        if self._lifecycle.draining:
            report = dataclasses.replace(report, draining=True)
        deployment = self._deployment
        if deployment is None:
            return report
        return dataclasses.replace(report, backends=deployment.health(), worker=deployment.worker)

    def _end_open_streams(self) -> None:
        """Draining: end the streams that never end on their own, where their clients resume.

        Each 2026-07-28 ``subscriptions/listen`` stream closes gracefully (its result is its
        last frame); each handshake-era session's standalone ``GET`` stream closes as in SSE
        polling, so its client reconnects with ``Last-Event-ID`` (through the balancer, to a
        worker that is not stopping). Requests in flight are left to finish.
        """
        for hub in tuple(self._hubs):
            hub.listen.close()
        for manager in self._session_managers:
            for transport in tuple(manager._server_instances.values()):  # noqa: SLF001 -- the table bind_sessions owns
                close = getattr(transport, "close_standalone_sse_stream", None)
                if callable(close):
                    close()

    def _warm(self) -> None:
        """Start the first load in the background, unless it is done or under way."""
        if self._loading or self._registry.loaded:
            return
        for hub in tuple(self._hubs):
            self._loading = True
            hub.start(self._load_in_background)
            return

    async def _load_in_background(self) -> None:
        try:
            await self._registry.load()
            # The first walk then finds its pages laid out and encoded (ADR 0054).
            await self.handlers.prepare_lists()
        except BaseException as exc:
            if escapes(exc):
                raise
            _log.exception("loading the registry (or preparing its lists) failed")
        else:
            if self._settle:
                settle_heap()  # the catalogue now lives as long as the process
        finally:
            self._loading = False

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

    async def prefetch_kinds(self) -> None:
        """Let the registry read ahead what its ``kinds()`` needs (run before serving starts).

        Capabilities come from ``registry.kinds()``, synchronously, at ``initialize``; a registry
        with ``prefetch_kinds()`` (the reference one) lets, e.g., a warm ``CachedSource`` answer
        from its cache entry there instead of scanning the packages it caches.
        """
        if isinstance(self._registry, KindsPrefetch):
            try:
                await self._registry.prefetch_kinds()
            except Exception:  # noqa: BLE001 -- capabilities then come the slow way, never not at all
                _log.warning(
                    "registry.prefetch_kinds() raised; kinds() answers unaided", exc_info=True
                )

    def _on_registry_change(self, kinds: ElementKind) -> None:
        self.notify_list_changed(kinds)

    @asynccontextmanager
    async def _lifespan(self, _server: Server[_Hub]) -> AsyncIterator[_Hub]:
        await self.prefetch_kinds()
        factory = self._lifespan_factory
        # While serving, the registry retries failing sources in the background (when it can).
        registry = self._registry
        recovering: AbstractAsyncContextManager[object] = (
            registry.background() if isinstance(registry, BackgroundRecovery) else nullcontext()
        )
        # A worker of a deployment follows the others' changes from before its first load.
        deployment = self._deployment
        deployed = deployment.serving(self._registry) if deployment is not None else nullcontext()
        async with (
            deployed,
            factory() if factory is not None else nullcontext({}) as state,
            anyio.create_task_group() as tasks,
            recovering,
        ):
            hub = _Hub(tasks, self, state, self._readable)
            self._hubs.add(hub)
            if self._preload:
                self._warm()
            try:
                yield hub
            finally:
                self._hubs.discard(hub)
                hub.listen.close()
                tasks.cancel_scope.cancel()

    async def _readable(self, uri: str, session: SessionInfo) -> bool:
        """Whether ``session`` can read ``uri`` now: who may hear that it changed."""
        try:
            await self.handlers.resolve_resource(uri, session)
        except ElementNotFoundError:
            return False
        except Exception:  # noqa: BLE001 -- a failing rule hides the update rather than break fan-out
            _log.exception("deciding whether a session may hear about %s failed", uri[:200])
            return False
        return True

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
        return await self._answer(
            self.handlers.list_tools(params.cursor, self._session(ctx)[0], era=ctx.protocol_version)
        )

    async def _list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        return await self._answer(
            self.handlers.list_resources(
                params.cursor, self._session(ctx)[0], era=ctx.protocol_version
            )
        )

    async def _list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        session = self._session(ctx)[0]
        return await self._answer(
            self.handlers.list_resource_templates(params.cursor, session, era=ctx.protocol_version)
        )

    async def _list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams) -> HandlerResult:
        return await self._answer(
            self.handlers.list_prompts(
                params.cursor, self._session(ctx)[0], era=ctx.protocol_version
            )
        )

    async def _call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> HandlerResult:
        headers = getattr(ctx.request, "headers", None)
        admit = param_header_check(ctx.protocol_version, headers, params.arguments)
        return await self._asking(
            ctx,
            params,
            lambda g: self.handlers.call_tool(
                params.name, params.arguments, g, admit=admit, era=ctx.protocol_version
            ),
        )

    async def _read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> HandlerResult:
        return await self._asking(
            ctx,
            params,
            lambda g: self.handlers.read_resource(params.uri, g, era=ctx.protocol_version),
        )

    async def _get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams) -> HandlerResult:
        return await self._asking(
            ctx,
            params,
            lambda g: self.handlers.get_prompt(
                params.name, params.arguments, g, era=ctx.protocol_version
            ),
        )

    async def _asking(
        self,
        ctx: Ctx,
        params: types.InputResponseRequestParams,
        work: Callable[[ServerGateway], Awaitable[dict[str, Any]]],
    ) -> HandlerResult:
        """``work`` for a request whose handler may ask the client, in the negotiated era's way.

        On 2026-07-28 the request runs in rounds (see :mod:`mcp_core.server._rounds`): it is run
        again from the start with the client's answers until it asks nothing new.
        """
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await self._answer(work(self._gateway(ctx)))
        info, state = self._session(ctx)

        async def rounds() -> dict[str, Any]:
            asking = await InputRounds.resume(
                owner=owner_of(info),
                request_state=params.request_state,
                input_responses=params.input_responses,
                ledger=self._ledger,
                max_rounds=self._max_rounds,
            )
            gateway = ServerGateway(
                ctx, info, log_level=state.log_level if state else None, rounds=asking
            )
            return await asking.run(lambda: work(gateway), self._ledger)

        return await self._answer(rounds())

    async def _complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> HandlerResult:
        wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        context = (wire.get("context") or {}).get("arguments")
        return await self._answer(
            self.handlers.complete(
                wire["ref"],
                wire["argument"],
                context,
                self._gateway(ctx),
                era=ctx.protocol_version,
            )
        )

    async def _subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> HandlerResult:
        info, state = self._session(ctx)
        result = await self._answer(
            self.handlers.subscribe(params.uri, info, era=ctx.protocol_version)
        )
        if state is not None:
            state.subscriptions.add(params.uri)
        return result

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
        token = LISTENING_SESSION.set(self._session(ctx)[0])
        try:
            return await hub.listen(ctx, params)
        finally:
            LISTENING_SESSION.reset(token)

    async def _track_sessions(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        # Seen on every message, `initialize` included, so a client is notified of changes even
        # before its first list request.
        self._state(ctx)
        if ctx.method in _LISTS and ctx.request_id is not None:
            fast = await self._list_directly(ctx)
            if fast is not None:
                return fast
        try:
            return await call_next(ctx)
        except MCPError as exc:
            # The SDK's own refusals may quote the request (an unknown method's name): clip them.
            error = exc.error
            if type(exc) is not MCPError or error.code not in _REFUSALS:
                raise
            clipped = MCPError(error.code, clip_json(error.message), clip_json(error.data))
            if clipped.error == error:
                raise
            raise clipped from None

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
        result = await self._answer(
            list_page(self.handlers, cursor, self._session(ctx)[0], era=ctx.protocol_version)
        )
        version = ctx.protocol_version
        if version in MODERN_PROTOCOL_VERSIONS:
            result.update(resultType="complete", ttlMs=0, cacheScope="private")
            result["_meta"] = {SERVER_INFO_META_KEY: self.lowlevel.server_info_stamp}
        return result

    def _connection(self, session_id: str) -> Connection | None:
        """The connection of the open handshake-era session ``session_id``, if this server has it."""
        for hub in self._hubs:
            connection = hub.by_session.get(session_id)
            if connection is not None:
                return connection
        return None

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
        # The session hook is user code, run before a request's work: contained the same way.
        with _as_wire_errors():
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
        with _as_wire_errors():
            return await work

    # -- transports -----------------------------------------------------------------------------

    def streamable_http_app(
        self,
        *,
        path: str = "/mcp",
        host: str = "127.0.0.1",
        json_response: bool | None = None,
        stateless: bool = False,
        event_store: SessionEventStore | Literal["memory"] | None = "memory",
        retry_interval: int | None = 1000,
        max_request_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
        session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
        max_sessions: int | None = DEFAULT_MAX_SESSIONS,
        transport_security: TransportSecuritySettings | None = None,
        token_verifier: TokenVerifier | None = None,
        auth: AuthSettings | None = None,
        health_path: str | None = DEFAULT_HEALTH_PATH,
        ready_path: str | None = DEFAULT_READY_PATH,
        live_path: str | None = DEFAULT_LIVE_PATH,
        preload: bool = False,
        max_sessions_per_client: int | None = DEFAULT_MAX_SESSIONS_PER_CLIENT,
        body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
        max_client_body_bytes: int | None = DEFAULT_MAX_CLIENT_BODY_BYTES,
        trusted_proxies: Sequence[str] = (),
        health_auth: bool = False,
        metrics_path: str | None = None,
        status_path: str | None = None,
        operator_auth: bool | None = None,
    ) -> Starlette:
        """An ASGI (Starlette) app serving streamable HTTP at ``path``, to run or mount.

        Serving on a loopback ``host`` turns on DNS-rebinding protection (the ``Host`` and
        ``Origin`` headers must name loopback) unless ``transport_security`` says otherwise.
        Sessions are stateful unless ``stateless``; ``event_store`` (a bounded in-memory one by
        default; see :class:`~mcp_core.server.SessionEventStore`) lets each session resume its
        own SSE streams, reconnecting after ``retry_interval`` ms. Memory bounds: a request body
        over ``max_request_body_size`` bytes is refused with 413; a session with no request in
        flight for ``session_idle_timeout`` seconds is closed (None: never); at most
        ``max_sessions`` sessions are open at once.

        What one client may hold (ADR 0070; a client is its bearer token's principal, else its
        address, taken from ``X-Forwarded-For`` only when the peer is one of ``trusted_proxies``):
        at most ``max_sessions_per_client`` sessions; a new session beyond that limit, or beyond
        ``max_sessions``, first reclaims the least recently used idle session (of that client,
        or of anyone), and only when all are busy is refused (429 or 503, with Retry-After). A
        request body must arrive within ``body_timeout`` seconds (408 beyond), and the bodies
        one client has in flight may hold ``max_client_body_bytes`` (429 beyond). None: no limit.
        With ``token_verifier`` and ``auth``, requests need a bearer token, and the token's
        principal, client id and scopes reach visibility rules through the SessionInfo.

        ``json_response`` says how a request POST is answered. None (the default): with one JSON
        body, unless the server sends something on the request's behalf before its answer (a
        log line, progress, a question to the client) or it runs silently for
        :data:`~mcp_core.server._responses.STREAM_AFTER` seconds; then with an SSE stream
        (ADR 0053; stateless handshake-era requests keep the SDK's SSE). True: always JSON, and
        a handler cannot ask the client anything during a call (the SDK's JSON mode). False:
        always SSE.

        ``health_path`` serves the registry's health as JSON for load balancers and probes,
        ``ready_path`` whether this server should get requests (not while it drains), and
        ``live_path`` whether it serves at all (``None``: no such endpoint; see
        :mod:`mcp_core.server._health` for the policy); ``health_auth`` puts the three behind
        the same bearer authentication as the MCP endpoint.
        ``preload`` starts loading the registry as soon as the app starts, instead of on the
        first request (or the first health probe).

        ``metrics_path`` serves the Prometheus metrics (:meth:`metrics`) there; ``status_path``
        an HTML status page (sources, diagnostics, the catalogue the caller may see; see
        ``docs/operating.md``). Both are off by default; ``operator_auth`` puts them behind the
        endpoint's bearer authentication (by default: the status page is whenever the endpoint
        is, the metrics are not, so a scraper needs no token).
        """
        # Modules only HTTP needs, imported when an endpoint is built: never on a stdio start.
        from mcp_core.server._hotpath import with_hot_path  # noqa: PLC0415
        from mcp_core.server._operator import operator_routes  # noqa: PLC0415
        from mcp_core.server._sessions import WorkerSessions  # noqa: PLC0415

        store = _session_event_store(event_store)
        if store is not None:
            self._event_stores.append(store)
        transport_security = transport_security_for(host, transport_security)
        if health_auth and token_verifier is None:
            raise ValueError(
                "health_auth=True puts the health endpoint behind bearer authentication; give "
                "token_verifier= (and auth=) too"
            )
        slots = (
            None
            if stateless
            else SessionSlots(per_client=max_sessions_per_client, total=max_sessions)
        )
        probes: tuple[tuple[Literal["health", "ready", "live"], str | None], ...] = (
            ("health", health_path),
            ("ready", ready_path),
            ("live", live_path),
        )
        routes = [
            health_route(path, self.health, transport_security, auth=health_auth, probe=probe)
            for probe, path in probes
            if path is not None
        ]
        routes += operator_routes(
            self,
            metrics_path=metrics_path,
            status_path=status_path,
            security=transport_security,
            authenticated=token_verifier is not None,
            auth=operator_auth,
            hook=self._hook,
        )
        self._preload = self._preload or preload
        app = self.lowlevel.streamable_http_app(
            streamable_http_path=path,
            # None: the manager's SSE mode, which the session table below makes deferred.
            json_response=bool(json_response),
            stateless_http=stateless,
            # Never the manager's own: it would share one store between sessions (see _events).
            event_store=None,
            retry_interval=retry_interval,
            max_request_body_size=max_request_body_size,
            session_idle_timeout=session_idle_timeout,
            max_sessions=max_sessions,
            transport_security=transport_security,
            host=host,
            auth=auth,
            token_verifier=token_verifier,
            custom_starlette_routes=routes or None,
        )
        deferred = json_response is None
        manager = self.lowlevel.session_manager
        self._session_managers.append(manager)
        if slots is not None:
            bind_sessions(manager, store, deferred=deferred, slots=slots)
            slots.reclaim = lambda session_id: _end_session(manager, session_id)
        _guard_endpoint(
            app,
            path,
            lambda endpoint: HttpEdge(
                # Ordinary 2026-07-28 requests are answered here, the rest by the SDK (ADR 0102).
                with_hot_path(
                    endpoint, manager, max_body=max_request_body_size, sessions=self._connection
                ),
                slots=slots,
                body_timeout=body_timeout,
                max_client_body_bytes=max_client_body_bytes,
                max_request_body_size=max_request_body_size,
                trusted_proxies=trusted_proxies,
                requires_auth=token_verifier is not None,
            ),
        )
        deployment = self._deployment
        if deployment is not None and not stateless:
            # Sessions name their worker; another worker's session is refused loudly (ADR 0048).
            app.add_middleware(
                WorkerSessions, worker=deployment.worker, owner_alive=deployment.owner_alive
            )
        return app

    async def run_stdio(self, *, preload: bool | None = None) -> None:
        """Serve one client over this process's stdin and stdout until it disconnects.

        ``preload`` starts loading the registry at once (problems are logged at startup and
        the first request finds the catalogue ready) instead of on the first request; None:
        as the server was built (``McpServer(preload=...)``, True by default).
        """
        await self.prefetch_kinds()  # the initialization options below advertise the kinds
        self._preload = self._preload or (self._preload_when_run if preload is None else preload)
        async with stdio_streams() as (read_stream, write_stream):
            await self.lowlevel.run(
                read_stream, write_stream, self.lowlevel.create_initialization_options()
            )

    async def run_http(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        ready: Callable[[str], None] | None = None,
        **options: Any,
    ) -> None:
        """Serve streamable HTTP with uvicorn until cancelled; ``options`` go to :meth:`streamable_http_app`.

        The socket is bound first (a :class:`~mcp_core.errors.ListenError` says why it cannot
        be); a connection must deliver each request's headers within ``header_timeout`` seconds
        (an option; 10 by default, None: no limit) or is answered 408 and closed. ``ready`` then
        gets the URL served (with the real port when ``port`` is 0) once requests are accepted.
        Cancelling, SIGINT or SIGTERM drains (ADR 0095): not ready at once, no new
        connections, open-ended streams ended where their clients resume, requests in flight
        given ``drain_time`` seconds (an option; 10 by default) to finish; then it returns. On a
        signal, the server stays not ready but serving for ``drain_delay`` seconds (an option; 0
        by default) first, so a load balancer stops sending before the socket closes. The registry starts loading
        at startup unless the server was built with ``preload=False`` (or ``preload=False`` is
        given here): then it loads on the first request that needs it.
        """
        options.setdefault("preload", self._preload_when_run)
        header_timeout = options.pop("header_timeout", DEFAULT_HEADER_TIMEOUT)
        drain_time = check_drain_time(options.pop("drain_time", DEFAULT_DRAIN_TIME))
        drain_delay = check_drain_time(options.pop("drain_delay", 0.0), "drain_delay")
        if self._deployment is not None:
            await self._deployment.admit()  # a worker that does not fit never listens
        sock = listen(host, port)
        app = self.streamable_http_app(path=path, host=host, **options)
        url = url_of(sock, path)
        await serve_asgi(
            app,
            sock,
            ready=None if ready is None else lambda: ready(url),
            header_timeout=header_timeout,
            drain_time=drain_time,
            drain_delay=drain_delay,
            lifecycle=self._lifecycle,
        )

    def run(
        self,
        transport: Literal["stdio", "http"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        **options: Any,
    ) -> signal.Signals | None:
        """Serve in this process until the client leaves (stdio) or SIGINT or SIGTERM arrives.

        Over HTTP, says ``mcp-core: serving NAME at URL`` on stderr once the socket is bound,
        and raises :class:`~mcp_core.errors.ListenError` when it cannot be. A signal ends the
        serving cleanly (one ``stopped`` line on stderr) and is returned; None when the client
        left. ``options`` go to :meth:`streamable_http_app` (HTTP only).

        Serving as the process, it moves what start-up made (modules, declarations, then the
        preloaded catalogue) out of the garbage collector's sight (see ``mcp_core._collector``).
        """
        settle_heap()
        self._settle = True
        return run_server(self, transport, host=host, port=port, path=path, options=options)


def _deployed(
    deployment: Deployment,
    registry: object,
    cursor_secret: bytes | None,
    request_state_security: RequestStateSecurity | None,
) -> tuple[bytes, RequestStateSecurity]:
    """The keys a worker of ``deployment`` uses; TypeError for settings that would contradict it."""
    from mcp_core.server._deployment import Deployment  # noqa: PLC0415 -- only a deployed worker

    if not isinstance(deployment, Deployment):
        raise TypeError(f"deployment must be a Deployment, got {type(deployment).__name__}")
    if cursor_secret is not None or request_state_security is not None:
        raise TypeError(
            "give McpServer either deployment= or cursor_secret=/request_state_security=: a "
            "deployment derives both from its shared secret, so every worker agrees"
        )
    if not isinstance(registry, SourceChangeNotifier):
        raise TypeError(
            f"a deployment keeps the reference Registry in step with the other workers; "
            f"{type(registry).__name__} is not one"
        )
    return deployment.cursor_secret, deployment.request_state_security


def _guard_endpoint(app: Starlette, path: str, guard: Callable[[ASGIApp], ASGIApp]) -> None:
    """Wrap the MCP endpoint's ASGI app at ``path`` (inside authentication) in ``guard``."""
    for route in app.routes:
        if isinstance(route, Route) and route.path == path:
            route.app = guard(route.app)
            return
    raise RuntimeError(f"the SDK's app has no route at {path!r}; cannot guard the endpoint")


async def _end_session(manager: StreamableHTTPSessionManager, session_id: str) -> None:
    """End one session as the SDK does when it ends (its id answers 404 from now on)."""
    transport = manager._server_instances.get(session_id)  # noqa: SLF001 -- the table bind_sessions owns
    if transport is not None:
        await manager._discard_session(session_id, transport)  # noqa: SLF001 -- the SDK's own ending


def _session_event_store(
    event_store: SessionEventStore | Literal["memory"] | None,
) -> SessionEventStore | None:
    if event_store == "memory":
        return InMemoryEventStore()
    if event_store is None:
        return None
    if isinstance(event_store, EventStore) or not isinstance(event_store, SessionEventStore):
        raise TypeError(
            f"event_store must be a SessionEventStore (e.g. InMemoryEventStore()), got "
            f"{type(event_store).__name__}: an SDK EventStore keys streams by request id alone, "
            "which every session shares, so one session could replay another's results"
        )
    return event_store
