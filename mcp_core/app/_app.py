"""App: the front door for simple servers — decorators, sources, visibility, run."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Self, TypeVar, cast, final, overload

from mcp_core import handlers
from mcp_core._collector import settle_declared, settle_heap, settle_imports
from mcp_core.elements import Definition, Element, ElementCollection, ElementKind, ElementRef, Icon
from mcp_core.elements._definitions import WireModel
from mcp_core.handlers import ElementLimits, HandlerTimeout
from mcp_core.handlers._admission import DEFAULT_LIMITS
from mcp_core.handlers._decorators import CallSite, marks_of
from mcp_core.registry import Backoff, Priority, Registry
from mcp_core.registry._recovery import DEFAULT_BACKOFF
from mcp_core.registry._registry import DEFAULT_PROVIDE_TIMEOUT
from mcp_core.server import _prelude as prelude
from mcp_core.server._middleware import Middleware, checked
from mcp_core.server._paging import DEFAULT_PAGE_SIZE
from mcp_core.server._serving import (
    built_noting_signals,
    log_to_stderr,
    run_stdio_server,
    say,
)
from mcp_core.sources import (
    ElementSource,
    FunctionSource,
    SourceDiagnostic,
    diagnostics_of,
    lookup_in,
    running_sources,
)
from mcp_core.sources._function import declared_kind
from mcp_core.sources._marked import first_of_each_ref
from mcp_core.visibility import ALWAYS, ElementVisibility

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from mcp_core.handlers import Container
    from mcp_core.search import Disclosure
    from mcp_core.search._disclosure import ToolDisclosure
    from mcp_core.server import Deployment, McpServer, RequestStateSecurity, SessionHook

__all__ = ["App"]

F = TypeVar("F", bound=Callable[..., Any])
D = TypeVar("D", bound=Callable[..., Any])
M = TypeVar("M", bound=Middleware)


@final
class _Declared:
    """What the app's decorators (or ``add``) declared so far, as one source.

    The source is rebuilt from the declarations whenever one is added, so declaring after the
    registry loaded takes effect at the next ``reload()``. ``kind_of`` gives each declaration's
    kind, so that ``kinds()`` is a running union, answered without building the source. It joins
    the registry (``serve(self)``) with the first declaration: an app lists no source for what
    it never declared.
    """

    __slots__ = ("_build", "_items", "_kind_of", "_kinds", "_label", "_serve", "_source")

    def __init__(
        self,
        label: str,
        build: Callable[[tuple[Any, ...]], ElementSource],
        kind_of: Callable[[Any], ElementKind],
        serve: Callable[[_Declared], None],
    ) -> None:
        self._label = label
        self._serve = serve
        self._build = build
        self._kind_of = kind_of
        self._items: list[Any] = []
        # As the flags' int value: ``|`` on an enum.Flag costs a Python call per declaration.
        self._kinds = 0
        self._source: ElementSource | None = None

    def __repr__(self) -> str:
        return self._label

    def __len__(self) -> int:
        return len(self._items)

    def append(self, item: object) -> None:
        if not self._items:
            self._serve(self)
        self._items.append(item)
        self._kinds |= self._kind_of(item).value
        self._source = None
        settle_declared(len(self._items))  # see mcp_core._collector: thousands may follow

    def _current(self) -> ElementSource:
        if self._source is None:
            self._source = self._build(tuple(self._items))
        return self._source

    def kinds(self) -> ElementKind:
        return ElementKind(self._kinds)

    async def lookup(self, ref: ElementRef) -> Element | None:
        return await lookup_in(self._current(), ref)

    async def provide(self) -> ElementCollection:
        return await self._current().provide()

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        # Reported as this source (the app's declarations), not the one rebuilt from them.
        found = diagnostics_of(self._current())
        return tuple(dataclasses.replace(d, source=self._label) for d in found)


@final
class _DisclosureTools:
    """``search_tools`` and ``call_tool`` of an app's disclosure, as a source."""

    __slots__ = ("_collection", "_disclosure")

    def __init__(self, disclosure: ToolDisclosure) -> None:
        self._disclosure = disclosure
        self._collection = disclosure.collection()

    def __repr__(self) -> str:
        return f"App disclosure ({self._disclosure.config.search_name}, {self._disclosure.config.call_name})"

    def kinds(self) -> ElementKind:
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        return self._collection


@final
@dataclass(frozen=True, slots=True)
class _AddedAt:
    """``app.add() at file:line``, worked out only when a message needs it."""

    where: CallSite

    def __str__(self) -> str:
        return f"app.add() at {self.where}"


@final
class _Added:
    """The elements given to :meth:`App.add`: a later element with an already added ref is skipped."""

    __slots__ = ("_collection", "_diagnostics")

    def __init__(self, label: str, added: Iterable[tuple[Element, CallSite]]) -> None:
        kept, self._diagnostics = first_of_each_ref(
            ((element.ref, _AddedAt(where), element) for element, where in added), source=label
        )
        self._collection = ElementCollection(kept)

    def kinds(self) -> ElementKind:
        return self._collection.kinds

    async def provide(self) -> ElementCollection:
        return self._collection

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        return self._diagnostics


@final
class _Declaring(Generic[D]):
    """An :class:`App` decorator that is a marking decorator of :mod:`mcp_core.handlers`.

    ``app.tool`` has exactly the type of ``handlers.tool`` (its overloads and keyword options,
    declared there once); what it marks is also declared on the app. A marking decorator either
    takes the function and returns it marked (bare ``@tool``) or returns the decorator that will.
    """

    def __init__(self, mark: D, doc: str) -> None:
        self._mark = mark
        self.__doc__ = inspect.cleandoc(doc)

    def __repr__(self) -> str:
        return f"<App.{self._mark.__name__}: declares what handlers.{self._mark.__name__} marks>"

    @overload
    def __get__(self, app: None, owner: type[App]) -> Self: ...
    @overload
    def __get__(self, app: App, owner: type[App]) -> D: ...
    def __get__(self, app: App | None, owner: type[App]) -> Self | D:
        if app is None:
            return self
        # Built once per app: a large application reads ``app.tool`` once per declaration.
        bound = app._decorators.get(self)  # noqa: SLF001 -- this descriptor is part of App
        if bound is None:
            bound = app._decorators[self] = self._bind(app, owner)  # noqa: SLF001 -- same
        return cast("D", bound)

    def _bind(self, app: App, owner: type[App]) -> Callable[..., Any]:
        mark: Callable[..., Any] = self._mark
        append = app._functions.append  # noqa: SLF001 -- this descriptor is part of App

        def declare(fn: F) -> F:
            append(fn)
            return fn

        def declaring_with(marked: Callable[[F], F]) -> Callable[[F], F]:
            return lambda fn: declare(marked(fn))

        @functools.wraps(mark)
        def declaring(*args: Any, **options: Any) -> Any:
            marked = mark(*args, **options)
            # Given the function, it came back marked (itself, or a stand-in for a bound method);
            # otherwise this is the decorator that will mark it.
            if args and marks_of(marked):
                return declare(marked)
            return declaring_with(marked)

        declaring.__doc__ = self.__doc__
        declaring.__qualname__ = f"{owner.__qualname__}.{declaring.__name__}"
        return declaring


@final
class App:
    """An MCP server application: declare elements, pick what each session sees, run.

    ::

        app = App("notes")

        @app.tool
        def add(a: int, b: int) -> int:
            '''Add two numbers.'''
            return a + b

        app.run()                       # stdio; app.run("http", port=8000) for streamable HTTP

    Decorated functions form one source at ``Priority.MANUAL`` (``App('name').functions``);
    elements given to :meth:`add` another at the same priority (``App('name').add()``); each is
    served from its first declaration on, so an app lists no source for what it never declared;
    :meth:`discover` adds a ``DiscoverySource`` at ``Priority.DISCOVERY`` (so what is declared
    here beats what is discovered), and
    :meth:`add_source` any source at any priority. :attr:`registry` is the reference
    :class:`~mcp_core.registry.Registry` over all of them; it rejects handlers of the wrong kind.
    Declarations made after the app started serving take effect at the next
    ``await app.registry.reload()``; for runtime registration use ``await app.registry.register(element)``.

    A broken declaration (an invalid name, a malformed template, a duplicate...) is skipped with
    a diagnostic, never taking the others down. ``limits``, ``provide_timeout`` and ``retry``
    configure the registry (admission bounds, seconds a source may take, background retry; see
    :class:`~mcp_core.registry.Registry`); ``handler_timeout`` the invoker (seconds a handler
    may run, or a function of the element; no limit by default). ``preload=False`` serves without
    loading everything at startup, for catalogues meant to be answered per name (see
    :class:`~mcp_core.server.McpServer`).

    ``deployment`` makes the app one worker of several behind a load balancer (see
    :class:`~mcp_core.server.Deployment` and ``docs/deployment.md``): changes reach every
    worker, the keys every worker must share come from the deployment's secret.

    ``title``, ``description``, ``website_url`` and ``icons`` (mcp-core's ``Icon`` values, the
    SDK's ``mcp.types.Icon`` or wire mappings) are the ``serverInfo`` clients see, with ``name``
    and ``version``.

    ``disclosure`` (a :class:`~mcp_core.search.Disclosure`) makes the app disclose its tools
    progressively: each session lists the pinned tools, ``search_tools`` and ``call_tool``, and
    the tools it finds join its own list (see :attr:`disclosure` and ``docs/large-catalogues.md``).

    ``lifespan`` has the SDK's ``MCPServer(lifespan=...)`` semantics: a function taking the app and
    returning an async context manager, entered once per server run before the first request and
    exited after the last; what it yields is the run's lifespan state. SDK-style handlers read it
    as ``ctx.request_context.lifespan_context``, mcp-core handlers through a parameter annotated
    ``Annotated[State, Lifespan]`` (:data:`mcp_core.server.Lifespan`).
    """

    __slots__ = (
        "_added",
        "_decorators",
        "_disclosure",
        "_functions",
        "_lifespan",
        "_server",
        "_server_options",
        "_visibility",
        "invoker",
        "name",
        "registry",
    )

    def __init__(
        self,
        name: str = "mcp-core",
        *,
        version: str | None = None,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None = None,
        container: Container | None = None,
        page_size: int | None = DEFAULT_PAGE_SIZE,
        cursor_secret: bytes | None = None,
        session_hook: SessionHook | None = None,
        lifespan: Callable[[App], AbstractAsyncContextManager[Any]] | None = None,
        request_state_security: RequestStateSecurity | None = None,
        limits: ElementLimits | None = DEFAULT_LIMITS,
        provide_timeout: float | None = DEFAULT_PROVIDE_TIMEOUT,
        retry: Backoff | None = DEFAULT_BACKOFF,
        handler_timeout: HandlerTimeout = None,
        preload: bool = True,
        deployment: Deployment | None = None,
        middleware: Sequence[Middleware] = (),
        trace_arguments: bool = False,
        disclosure: Disclosure | None = None,
    ) -> None:
        if lifespan is not None and not callable(lifespan):
            raise TypeError(
                f"App lifespan must be a function taking the app and returning an async context "
                f"manager (e.g. an @asynccontextmanager function), got {lifespan!r}"
            )
        settle_imports()  # see mcp_core._collector: declaring N functions comes next
        self.name = name
        self._lifespan = lifespan
        self.invoker = handlers.Invoker(container=container, timeout=handler_timeout)
        self.registry = Registry(
            validator=self.invoker.validate_handler,
            limits=limits,
            provide_timeout=provide_timeout,
            retry=retry,
        )
        # Each joins the registry with its first declaration (see _Declared).
        served = functools.partial(self.registry.add_source, priority=Priority.MANUAL)
        self._functions = _Declared(
            f"App({name!r}).functions", lambda fns: FunctionSource(*fns), declared_kind, served
        )
        label = f"App({name!r}).add()"
        self._added = _Declared(
            label, lambda added: _Added(label, added), lambda added: added[0].kind, served
        )
        self._decorators: dict[_Declaring[Any], Callable[..., Any]] = {}
        self._visibility: ElementVisibility = ALWAYS
        self._disclosure: ToolDisclosure | None = None
        if disclosure is not None:
            # Imported by an app that discloses its tools: search is not on everyone's start.
            from mcp_core.search import Disclosure  # noqa: PLC0415
            from mcp_core.search._disclosure import ToolDisclosure  # noqa: PLC0415
            from mcp_core.server._session_link import SessionLink  # noqa: PLC0415

            if not isinstance(disclosure, Disclosure):
                raise TypeError(
                    f"App disclosure must be a mcp_core.search.Disclosure, got {disclosure!r}"
                )
            self._disclosure = ToolDisclosure(
                disclosure, self.registry, self.invoker, channel=SessionLink()
            )
            # Above every declaration: the two tools' names are the disclosure's own.
            self.registry.add_source(_DisclosureTools(self._disclosure), Priority.MANUAL + 1)
        self._server: McpServer | None = None
        self._server_options: dict[str, Any] = {
            "name": name,
            "version": version,
            "title": title,
            "description": description,
            "instructions": instructions,
            "website_url": website_url,
            "icons": icons,
            "page_size": page_size,
            "cursor_secret": cursor_secret,
            "session_hook": session_hook,
            "request_state_security": request_state_security,
            "preload": preload,
            "deployment": deployment,
            "middleware": checked(middleware),
            "trace_arguments": trace_arguments,
        }

    def __repr__(self) -> str:
        return f"App({self.name!r}, {self.registry!r})"

    # -- declaring elements -----------------------------------------------------------------------

    tool = _Declaring(
        handlers.tool,
        """Declare a tool: bare ``@app.tool`` or ``@app.tool(name=..., ...)``.

        Name, description and input schema come from the function (see
        :func:`~mcp_core.handlers.tool_from_function`); a parameter typed ``ClientGateway`` is
        injected and not published.
        """,
    )
    prompt = _Declaring(
        handlers.prompt,
        """Declare a prompt: bare ``@app.prompt`` or ``@app.prompt(name=..., ...)``.""",
    )
    resource = _Declaring(
        handlers.resource,
        """Declare the fixed resource at ``uri``, read by calling the function.""",
    )
    resource_template = _Declaring(
        handlers.resource_template,
        """Declare a resource template; its variables bind to the function's parameters by name.""",
    )
    completion = _Declaring(
        handlers.completion,
        """Declare the completion provider of ``argument`` of ``target``.

        ``target`` is a prompt or template function declared on this app, or its key (the
        prompt's name or the template's ``uri_template``).
        """,
    )

    def add(
        self,
        definition: Definition,
        handler: object,
        *,
        completions: Mapping[str, object] | None = None,
        tags: Iterable[str] = (),
    ) -> Element:
        """Declare an element from a definition and its handler (a function, handler object or ref).

        A handler of the wrong kind is refused here; a second element with an already added ref
        is skipped when the app is served (the first is kept), with a diagnostic naming both.
        """
        element = Element(
            definition=definition, handler=handler, completions=completions, tags=frozenset(tags)
        )
        self.invoker.validate_handler(element)
        # The caller's line, for a duplicate's diagnostic; resolved only if one is reported.
        caller = sys._getframe(1)  # noqa: SLF001 -- where app.add() was called
        self._added.append((element, CallSite(caller.f_code, caller.f_lasti)))
        return element

    def add_source(self, source: ElementSource, priority: int = Priority.DEFAULT) -> None:
        """Serve ``source``'s elements too, ranked by ``priority`` (see :class:`~mcp_core.registry.Priority`)."""
        self.registry.add_source(source, priority)

    def discover(
        self,
        *packages: str,
        paths: Sequence[str | os.PathLike[str]] = (),
        root: str | os.PathLike[str] | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
    ) -> None:
        """Serve the decorated functions found in ``packages`` and under ``paths`` (at ``Priority.DISCOVERY``).

        ``paths`` are folders or ``.py`` files, their modules named relative to ``root`` (the
        current directory by default); ``include``/``exclude`` are patterns on module names, and
        on file paths for ``paths`` (see :class:`~mcp_core.sources.DiscoverySource`).
        """
        from mcp_core.sources import DiscoverySource  # noqa: PLC0415 -- lands with the sources layer

        options: dict[str, Any] = {}
        if paths:
            options["paths"] = paths
            options["root"] = root
        if include is not None:
            options["include"] = include
        if exclude is not None:
            options["exclude"] = exclude
        self.registry.add_source(DiscoverySource(packages, **options), Priority.DISCOVERY)

    # -- serving ----------------------------------------------------------------------------------

    @property
    def visibility(self) -> ElementVisibility:
        """What each session may see (see :mod:`mcp_core.visibility`); everything by default."""
        return self._visibility

    @visibility.setter
    def visibility(self, rule: ElementVisibility) -> None:
        self._visibility = rule
        if self._server is not None:
            self._server.visibility = self._served_visibility()

    def _served_visibility(self) -> ElementVisibility:
        """The rule the server applies: :attr:`visibility`, narrowed by disclosure if any."""
        if self._disclosure is None:
            return self._visibility
        return self._disclosure.rule(self._visibility)

    @property
    def disclosure(self) -> ToolDisclosure | None:
        """The app's progressive disclosure (its search index, what sessions found), or None."""
        return self._disclosure

    def middleware(self, middleware: M) -> M:
        """Decorator: wrap every element request in ``middleware`` (an async ``(request, call_next)``).

        Middleware added later runs inside what was added before; see
        :class:`~mcp_core.server.Middleware` and ``docs/operating.md``::

            @app.middleware
            async def no_deletes(request: Request, call_next: CallNext) -> dict[str, Any]:
                if request.method == "tools/call" and request.target == "delete":
                    raise RequestRefusedError("delete is switched off on this server")
                return await call_next(request)
        """
        self.add_middleware(middleware)
        return middleware

    def add_middleware(self, *middleware: Middleware) -> None:
        """Wrap every element request in each of ``middleware`` too, inside what is already there."""
        if self._server is not None:
            self._server.add_middleware(*middleware)
        else:
            self._server_options["middleware"] = checked(
                (*self._server_options["middleware"], *middleware)
            )

    @property
    def deployment(self) -> Deployment | None:
        """The deployment this app serves as a worker of (None: it serves alone)."""
        deployment = self._server_options["deployment"]
        if deployment is None:
            return None
        from mcp_core.server import Deployment  # noqa: PLC0415 -- imported by deployed apps only

        return deployment if isinstance(deployment, Deployment) else None

    def deploy(self, deployment: Deployment) -> None:
        """Serve as a worker of ``deployment`` (as ``App(deployment=...)``); before serving.

        Raises RuntimeError once the server is built (it holds the keys a deployment sets).
        """
        if self._server is not None:
            raise RuntimeError(
                "deploy() must come before the app's server is built (app.server, run, asgi); "
                "or give App(deployment=...)"
            )
        self._server_options["deployment"] = deployment

    @property
    def server(self) -> McpServer:
        """The server serving this app (built on first use)."""
        if self._server is None:
            from mcp_core.server._binding import McpServer  # noqa: PLC0415 -- imports the SDK (ADR 0115)

            self._server = McpServer(
                self.registry,
                invoker=self.invoker,
                visibility=self._served_visibility(),
                lifespan=self._run,
                **self._server_options,
            )
        return self._server

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[Any]:
        """One server run: the sources that keep connections are started, then the lifespan."""
        sources = [source for source, _ in self.registry.sources]
        async with running_sources(sources, self.registry.reload):
            if self._lifespan is None:
                yield {}
                return
            async with self._lifespan(self) as state:
                yield state

    def streamable_http_app(self, **options: Any) -> Starlette:
        """An ASGI app serving streamable HTTP at ``/mcp`` (see :meth:`McpServer.streamable_http_app`)."""
        return self.server.streamable_http_app(**options)

    def asgi(self, **options: Any) -> Starlette:
        """Same as :meth:`streamable_http_app`: the app to mount in an ASGI server or framework."""
        return self.streamable_http_app(**options)

    def run(
        self,
        transport: Literal["stdio", "http"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        **options: Any,
    ) -> None:
        """Serve until interrupted: over stdin/stdout, or streamable HTTP on ``host:port`` at ``path``.

        Over HTTP, says ``mcp-core: serving NAME at URL`` on stderr once listening (a taken port
        raises :class:`~mcp_core.errors.ListenError`). Ctrl-C or SIGTERM stops it cleanly with one
        line on stderr, and ``run`` returns. ``options`` go to
        :meth:`McpServer.streamable_http_app` (HTTP only); see :meth:`McpServer.run`.
        """
        if transport == "stdio" and self._prelude_serves():
            self._serve_stdio()
            return
        server = built_noting_signals(lambda: self.server)  # imports the SDK (ADR 0115)
        if isinstance(server, signal.Signals):
            log_to_stderr()
            say(f"stopped serving {self.name} ({server.name})")
            return
        server.run(transport, host=host, port=port, path=path, **options)

    def _serve_stdio(self) -> signal.Signals | None:
        """Serve over stdio, the first answers before the SDK is imported (ADR 0115).

        Check :meth:`_prelude_serves` first. Returns the signal that stopped it, or None.
        """
        settle_heap()  # see McpServer.run: serving as the process
        return run_stdio_server(self._stdio_start())

    def _prelude_serves(self) -> bool:
        """Whether a stdio run starts with the prelude (ADR 0115): nothing it leaves out is used.

        Not when the SDK is imported already (nothing to save), the server was built (it may
        have been configured), the environment turns it off, or the app uses what only the
        server's path does: a deployment, a session hook, middleware, disclosure, a
        ``requestState`` key, or an OpenTelemetry tracer (the SDK's request spans).
        """
        options = self._server_options
        return (
            self._server is None
            and "mcp" not in sys.modules
            and os.environ.get(prelude.ENVIRONMENT, "").strip() != "0"
            and options["deployment"] is None
            and options["session_hook"] is None
            and options["request_state_security"] is None
            and not options["middleware"]
            and self._disclosure is None
            and not _tracing_configured()
        )

    def _stdio_start(self) -> prelude.StdioStart:
        options = self._server_options
        name: str = options["name"]
        handlers = prelude.request_handlers(
            self.registry,
            name=name,
            invoker=self.invoker,
            visibility=self._served_visibility(),
            page_size=options["page_size"],
            cursor_secret=options["cursor_secret"],
            middleware=options["middleware"],
            trace_arguments=options["trace_arguments"],
        )

        def server(state: object) -> prelude.Continuing:
            from mcp_core.server._binding import McpServer  # noqa: PLC0415 -- imports the SDK

            self._server = McpServer(
                self.registry,
                invoker=self.invoker,
                visibility=self._served_visibility(),
                lifespan=self._run if state is None else lambda: nullcontext(state),
                _handlers=handlers,
                **options,
            )
            return self._server

        info = prelude.ServerInfo(
            name,
            version=options["version"],
            title=options["title"],
            description=options["description"],
            instructions=options["instructions"],
            website_url=options["website_url"],
            icons=options["icons"],
        )
        return prelude.StdioStart(
            self.registry,
            handlers,
            self.invoker,
            info,
            name=name,
            lifespan=self._run,
            server=server,
            preload=options["preload"],
        )


def _tracing_configured() -> bool:
    """Whether an OpenTelemetry tracer provider was set (the SDK's request spans then count)."""
    from opentelemetry import trace  # noqa: PLC0415 -- imported by the request handlers anyway

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
