"""McpServer: the façade that serves a registry with the official SDK, over stdio, HTTP or in memory.

What it assembles lives by job in its own modules: the SDK request handlers
(:mod:`~mcp_core.server._request_binding`), the connections of one run and their change
notifications (:mod:`~mcp_core.server._hub`), the SDK's low-level server
(:mod:`~mcp_core.server._lowlevel`) and the pieces of the streamable HTTP app
(:mod:`~mcp_core.server._http_app`). This module holds what a user holds: the server, its
registry, health, metrics, lifecycle and transports.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, final, runtime_checkable

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http_manager import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
)

from mcp_core._collector import settle_heap
from mcp_core._version import VERSION
from mcp_core.elements import ElementKind, Icon
from mcp_core.elements._definitions import WireModel
from mcp_core.errors import ElementNotFoundError
from mcp_core.handlers import Invoker
from mcp_core.registry import (
    BackgroundRecovery,
    ChangeNotifier,
    DeferredRegistry,
    ElementCatalog,
    ElementResolver,
    HealthReport,
    RegistryHealth,
)
from mcp_core.registry._protocols import CatalogSizes
from mcp_core.server import _context  # noqa: F401 -- the SDK's injection rules, with the SDK
from mcp_core.server._edge import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CLIENT_BODY_BYTES,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    HttpEdge,
    SessionSlots,
)
from mcp_core.server._gateway import SessionHook
from mcp_core.server._health import (
    DEFAULT_HEALTH_PATH,
    DEFAULT_LIVE_PATH,
    DEFAULT_READY_PATH,
    health_route,
    transport_security_for,
)
from mcp_core.server._hub import Hub
from mcp_core.server._lifecycle import DEFAULT_DRAIN_TIME, Lifecycle, check_drain_time
from mcp_core.server._lowlevel import LowLevelServer, server_icons
from mcp_core.server._middleware import Middleware
from mcp_core.server._paging import DEFAULT_PAGE_SIZE
from mcp_core.server._param_headers import no_schema_yet
from mcp_core.server._pipes import StdioPipes
from mcp_core.server._prelude import HandOver, prefetch_kinds, preload, request_handlers
from mcp_core.server._request_binding import RequestBinding
from mcp_core.server._requests import ElementInvoker, RequestHandlers
from mcp_core.server._rounds import DEFAULT_MAX_INPUT_ROUNDS, RoundLedger
from mcp_core.server._serving import run_server
from mcp_core.server._stdio import stdio_streams
from mcp_core.server._tracing import trace_context_from_headers, with_request_span_when_tracing
from mcp_core.server._uvicorn import listen, serve_asgi, url_of
from mcp_core.visibility import ALWAYS, ElementVisibility, SessionInfo

if TYPE_CHECKING:
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.types import ASGIApp

    # Imported where used (ADR 0112): a stdio start serves alone, with no HTTP sessions to keep.
    from mcp_core.server._deployed import Deployed, SessionKeeper
    from mcp_core.server._events import SessionEventStore
    from mcp_core.server._metrics import ServerMetrics


__all__ = ["McpServer", "ServableRegistry"]

_log = logging.getLogger("mcp_core.server")


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
        "_binding",
        "_deployment",
        "_event_stores",
        "_hook",
        "_hubs",
        "_invoker",
        "_lifecycle",
        "_lifespan_factory",
        "_loading",
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
        deployment: Deployed | None = None,
        max_input_rounds: int | None = DEFAULT_MAX_INPUT_ROUNDS,
        middleware: Sequence[Middleware] = (),
        trace_arguments: bool = False,
        _handlers: RequestHandlers | None = None,
    ) -> None:
        # _handlers: the stdio prelude's, which this server goes on with (ADR 0115).
        if max_input_rounds is not None and (
            isinstance(max_input_rounds, bool) or max_input_rounds < 1
        ):
            raise ValueError(
                f"max_input_rounds must be a positive number of rounds or None, got "
                f"{max_input_rounds!r}"
            )
        if deployment is not None:
            cursor_secret, request_state_security = _worker_keys(
                deployment, registry, cursor_secret, request_state_security
            )
        self._deployment = deployment
        self._metrics: ServerMetrics | None = None
        self._event_stores: list[SessionEventStore] = []
        self._registry = registry
        self._hook = session_hook
        self._lifespan_factory = lifespan
        self._hubs: set[Hub] = set()
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
        self.handlers: Final = _handlers or request_handlers(
            registry,
            name=name,
            invoker=self._invoker,
            visibility=visibility,
            page_size=page_size,
            cursor_secret=cursor_secret,
            middleware=middleware,
            trace_arguments=trace_arguments,
        )
        self._notifies: Final = isinstance(registry, ChangeNotifier)
        if isinstance(registry, ChangeNotifier):
            registry.subscribe(self._on_registry_change)
        self.lowlevel: Final = LowLevelServer(
            name,
            version=VERSION if version is None else version,
            title=title,
            description=description,
            instructions=instructions,
            website_url=website_url,
            icons=server_icons(icons),
            lifespan=self._lifespan,
            capabilities=self._capabilities,
            # Mcp-Param-* headers are checked after per-name resolution (_param_headers), not by
            # the SDK walking tools/list (a full load) on every call.
            get_tool_input_schema=no_schema_yet,
        )
        security = request_state_security or RequestStateSecurity.ephemeral()
        # The SDK handlers; each state is good for one retry, on every worker (ADR 0073).
        self._binding: Final = RequestBinding(
            self.lowlevel,
            self.handlers,
            hook=session_hook,
            ledger=RoundLedger(
                deployment.store if deployment is not None else None, ttl=security.ttl
            ),
            max_rounds=max_input_rounds,
        )
        # Ahead of the SDK's request span: over HTTP, a traceparent header parents it when the
        # request's _meta carries none.
        self.lowlevel.middleware.insert(0, trace_context_from_headers)
        self.lowlevel.middleware = with_request_span_when_tracing(self.lowlevel.middleware)
        # Seals the requestState of InputRequiredResults and verifies it on the retry, before any
        # handler sees it (see mcp_core.server._rounds).
        self.lowlevel.middleware.append(RequestStateBoundary(security, default_audience=name))

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
    def deployment(self) -> Deployed | None:
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
            from mcp_core.server._metrics import ServerMetrics  # noqa: PLC0415 -- see the imports

            registry = self._registry
            self._metrics = ServerMetrics(
                health=self.health,
                catalog=registry.catalog_sizes
                if isinstance(registry, CatalogSizes)
                else lambda: None,
                sessions=self.open_sessions,
                event_bytes=self._retained_event_bytes,
            )
            self.handlers.middleware = (self._metrics, *self.handlers.middleware)
        return self._metrics

    def open_sessions(self) -> int:
        """How many sessions are open now (handshake era; a 2026-07-28 request opens none)."""
        return sum(len(hub.sessions) for hub in tuple(self._hubs))

    def _retained_event_bytes(self) -> int | None:
        from mcp_core.server._events import RetainedBytes  # noqa: PLC0415 -- see the imports

        counted = [s.retained_bytes for s in self._event_stores if isinstance(s, RetainedBytes)]
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
                transport.close_standalone_sse_stream()

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
            await preload(self._registry, self.handlers, settle=self._settle)
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
        await prefetch_kinds(self._registry)

    def _on_registry_change(self, kinds: ElementKind) -> None:
        self.notify_list_changed(kinds)

    @asynccontextmanager
    async def _lifespan(self, _server: Server[Hub]) -> AsyncIterator[Hub]:
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
            hub = Hub(tasks, self, state, self._readable)
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

    def _connection(self, session_id: str) -> Connection | None:
        """The connection of the open handshake-era session ``session_id``, if this server has it."""
        for hub in self._hubs:
            connection = hub.by_session.get(session_id)
            if connection is not None:
                return connection
        return None

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
        from mcp_core.server._deployed import SharedSessions  # noqa: PLC0415
        from mcp_core.server._events import bind_sessions  # noqa: PLC0415
        from mcp_core.server._hotpath import with_hot_path  # noqa: PLC0415
        from mcp_core.server._http_app import (  # noqa: PLC0415
            end_session,
            guard_endpoint,
            session_event_store,
        )
        from mcp_core.server._operator import operator_routes  # noqa: PLC0415

        deployment = self._deployment
        shares = isinstance(deployment, SharedSessions) and not stateless
        if shares and event_store == "memory":
            assert isinstance(deployment, SharedSessions)  # noqa: S101 -- for the type checker
            # Events in the deployment's Redis: a resume lands on any worker (ADR 0109).
            event_store = deployment.session_events() or "memory"
        store = session_event_store(event_store)
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
        keeper: SessionKeeper | None = None
        if isinstance(deployment, SharedSessions) and not stateless:
            # Any worker resumes a handshake-era session from its record (ADR 0109).
            keeper = self._binding.keeper = deployment.share_sessions(
                app,
                manager,
                events=store,
                idle_timeout=session_idle_timeout,
                on_resumed=lambda connection: self._binding.state_of(
                    connection,
                    manager._lifespan_state,  # noqa: SLF001 -- the hub its sessions run in
                ),
            )
        elif deployment is not None and not stateless:
            # Sessions name their worker; another worker's session is refused loudly (ADR 0048).
            deployment.route_sessions(app)
        if slots is not None:
            bind_sessions(
                manager,
                store,
                deferred=deferred,
                slots=slots,
                public=None if keeper is None else keeper.public,
                keep_ended=keeper is not None and keeper.events_shared,
            )
            slots.reclaim = partial(end_session, manager, keeper)

        def endpoint_of(endpoint: ASGIApp) -> ASGIApp:
            # Ordinary 2026-07-28 requests are answered here, the rest by the SDK (ADR 0102).
            served = with_hot_path(
                endpoint, manager, max_body=max_request_body_size, sessions=self._connection
            )
            if keeper is not None:
                # Another worker's session (or a restarted worker's) is resumed here (ADR 0109).
                served = keeper.resuming(served)
            return HttpEdge(
                served,
                slots=slots,
                body_timeout=body_timeout,
                max_client_body_bytes=max_client_body_bytes,
                max_request_body_size=max_request_body_size,
                trusted_proxies=trusted_proxies,
                requires_auth=token_verifier is not None,
            )

        guard_endpoint(app, path, endpoint_of)
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

    async def continue_stdio(self, pipes: StdioPipes, handover: HandOver) -> None:
        """Serve the rest of the stdio session the prelude began (ADR 0115).

        The server reads the handshake the prelude took in (its answer to the ``initialize`` is
        not written again), then the message the prelude handed over, then the rest of the
        input; the session keeps the id the prelude answered under.
        """
        self._binding.resumed_session_id = handover.session_id
        async with stdio_streams(
            pipes,
            replay=handover.replay,
            unanswered=handover.initialize_id,
            watch=handover.watch,
        ) as (read_stream, write_stream):
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
        from mcp_core.server._deployed import WorkerListing  # noqa: PLC0415 -- see the imports

        if isinstance(self._deployment, WorkerListing):
            self._deployment.advertise(url)  # the others' listing shows where it serves
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


def _worker_keys(
    deployment: Deployed,
    registry: object,
    cursor_secret: bytes | None,
    request_state_security: RequestStateSecurity | None,
) -> tuple[bytes, RequestStateSecurity]:
    """The keys a worker of ``deployment`` uses; TypeError for settings that would contradict it."""
    from mcp_core.server._deployed import Deployed  # noqa: PLC0415 -- see the imports

    if not isinstance(deployment, Deployed):
        raise TypeError(f"deployment must be a Deployment, got {type(deployment).__name__}")
    if cursor_secret is not None or request_state_security is not None:
        raise TypeError(
            "give McpServer either deployment= or cursor_secret=/request_state_security=: a "
            "deployment derives both from its shared secret, so every worker agrees"
        )
    return deployment.keys(registry)
