"""The stdio prelude: a session served before the official SDK is imported (ADR 0115).

Importing the SDK costs a start more than everything else a plain app does before its first
answer. When a process serves one app over stdio and nothing has imported the SDK yet, the
prelude reads the lines itself and answers, as the SDK's path would answer them byte for byte:
``initialize`` (a well-formed 2025-11-25 handshake), ``notifications/initialized``,
``notifications/cancelled``, ``ping``, ``tools/list`` and ``tools/call`` of tools whose handler
takes nothing from the request (no gateway, no injected context), calls running beside the next
messages as the server runs them. These go through the same request handlers the server would
use, so answers, cursors and the preload are the server's own.

Anything else is **handed over**: the first message the prelude does not serve (any other
method, unusual or malformed params, another protocol version, a tool that reaches the client).
The SDK server is then built and reads the ``initialize`` and ``notifications/initialized`` the
prelude took in (its answer to the replayed ``initialize`` is not written: the client has it),
then the message that caused the hand-over, then the rest of the input, from the same pipes;
calls still running write their own answers. A session that asks only for these never imports
the SDK. ``MCP_CORE_STDIO_PRELUDE=0`` in the environment turns the prelude off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, Final, Protocol, final

import anyio
import pydantic_core

from mcp_core._collector import settle_heap
from mcp_core._version import VERSION
from mcp_core.elements import Element, ElementKind, Icon
from mcp_core.elements._definitions import WireModel, own_value
from mcp_core.handlers import Invoker, LogLevel, escapes
from mcp_core.registry import BackgroundRecovery, ChangeNotifier, ElementCatalog, ElementResolver
from mcp_core.server._announce import LIST_CHANGED, Announcer
from mcp_core.server._errors import wire_error
from mcp_core.server._lifecycle import Lifecycle
from mcp_core.server._middleware import Middleware
from mcp_core.server._paging import encode_response, wire_json
from mcp_core.server._pipes import StdioPipes, open_pipes, servable
from mcp_core.server._requests import ElementInvoker, RequestHandlers, default_cursor_secret
from mcp_core.sources import KindsPrefetch
from mcp_core.visibility import ElementVisibility, SessionInfo

__all__ = [
    "ENVIRONMENT",
    "PROTOCOL_VERSION",
    "HandOver",
    "Prelude",
    "ServerInfo",
    "StdioStart",
    "canonical",
    "prefetch_kinds",
    "preload",
]

_log = logging.getLogger("mcp_core.server")

ENVIRONMENT: Final = "MCP_CORE_STDIO_PRELUDE"
"""Set to ``0`` to serve stdio with the SDK from the first byte."""

PROTOCOL_VERSION: Final = "2025-11-25"
"""The one version the prelude answers in: the SDK's latest handshake version (a test holds it)."""

_NEWLINE: Final = b"\n"
_ENVELOPE: Final = frozenset({"jsonrpc", "id", "method", "params"})
# What a ``_meta`` may carry for the prelude to serve the message: a W3C trace context (a client
# with tracing sends it on every request; it parents the server's request span, which a server
# without a tracer provider does not record). Anything else (a progress token, a 2026-07-28
# envelope) is handed over.
_TRACE_META: Final = frozenset({"traceparent", "tracestate", "baggage"})
_ABSENT: Final = object()
_CLIENT_INFO: Final = frozenset({"name", "version", "title"})
# Client capabilities the prelude takes as the SDK would: each key's value an object whose
# members are these (free-form objects for ``experimental``).
_CAPABILITIES: Final[Mapping[str, frozenset[str] | None]] = {
    "roots": frozenset({"listChanged"}),
    "sampling": frozenset({"context", "tools"}),
    "elicitation": frozenset({"form", "url"}),
    "experimental": None,
}
# Free-form members of the results the prelude writes: their keys are the handler's, in its order.
_FREE_FORM: Final = frozenset({"_meta", "structuredContent", "experimental"})


def canonical(value: Any) -> Any:
    """``value`` with every object's keys in the order the SDK's result models write them.

    The SDK validates a result against the protocol version's models and writes it again; those
    models list their fields alphabetically, so an object of a result is written with its keys
    sorted, except the free-form members (``_meta``, ``structuredContent``, ``experimental``),
    which keep the handler's order.
    """
    if isinstance(value, dict):
        return {
            key: value[key] if key in _FREE_FORM else canonical(value[key])
            for key in sorted(value)
            if value[key] is not None or key in _FREE_FORM
        }
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value


@final
class HandOver:
    """What the SDK server needs to go on where the prelude stopped."""

    __slots__ = ("initialize_id", "replay", "running", "session_id")

    def __init__(
        self,
        replay: tuple[str, ...],
        initialize_id: str | int | None,
        session_id: str,
        running: Mapping[str | int, asyncio.Task[None]],
    ) -> None:
        self.replay = replay
        """The lines the server reads first: the handshake taken in, then the unserved message."""
        self.initialize_id = initialize_id
        """The id of the ``initialize`` answered already (None: none was)."""
        self.session_id = session_id
        """The session id requests were answered under (the server's session keeps it)."""
        self.running = running
        """The prelude's calls still running, by request id (each writes its own answer)."""

    def watch(self, line: str) -> None:
        """See a line the server reads: a ``notifications/cancelled`` of a running call cancels it.

        As the server does for its own requests: a cancelled request is never answered.
        """
        if not self.running or "notifications/cancelled" not in line:
            return
        try:
            request_id, method, params = _parsed(line)
        except _NotServed:
            return
        if request_id is None and method == "notifications/cancelled":
            _cancel(self.running, params)


def _cancel(running: Mapping[str | int, asyncio.Task[None]], params: Mapping[str, Any]) -> None:
    """Cancel the running call ``params`` names (a ``notifications/cancelled``'s), if any."""
    cancelled = params.get("requestId")
    if isinstance(cancelled, int | str) and not isinstance(cancelled, bool):
        call = running.get(_correlated(cancelled))
        if call is not None:
            call.cancel(_WITHDRAWN)


_WITHDRAWN: Final = "withdrawn by the client"
"""The cancellation message of a call its client cancelled: it is never answered."""
_CLOSED: Final = {"code": -32000, "message": "Connection closed"}
"""The error of a call the session's end cut short, as the server writes it (``CONNECTION_CLOSED``)."""
_CLOSING_WRITE: Final = 2.0
"""Seconds a call the session's end cut short may take to write its answer, as the server's."""


def _correlated(request_id: str | int) -> str | int:
    """A request id as the SDK correlates it: a string of an integer is that integer."""
    if isinstance(request_id, str):
        try:
            return int(request_id)
        except ValueError:
            return request_id
    return request_id


class _NotServed(Exception):  # noqa: N818 -- a signal, not an error
    """The prelude does not serve this message: hand it over."""


@final
class _Gateway:
    """The gateway of a prelude call: the session only (the tools it runs take no gateway)."""

    __slots__ = ("request_id", "session")

    def __init__(self, session: SessionInfo, request_id: str | int) -> None:
        self.session = session
        self.request_id = request_id

    @property
    def element(self) -> Element:
        raise LookupError("the stdio prelude runs only tools that take no gateway")

    async def log(self, level: LogLevel, data: Any, *, logger: str | None = None) -> None:
        raise _unreachable("log", level, data, logger)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        raise _unreachable("progress", progress, total, message)

    async def sample(self, *args: Any, **kwargs: Any) -> Any:
        raise _unreachable("sample", args, kwargs)

    async def elicit(self, *args: Any, **kwargs: Any) -> Any:
        raise _unreachable("elicit", args, kwargs)

    async def elicit_url(self, *args: Any, **kwargs: Any) -> Any:
        raise _unreachable("elicit_url", args, kwargs)

    async def list_roots(self) -> Any:
        raise _unreachable("list_roots")


def _unreachable(method: str, *_: object) -> RuntimeError:
    return RuntimeError(
        f"gateway.{method}() in the stdio prelude, which runs only tools that take no gateway: "
        "a bug in mcp-core; set MCP_CORE_STDIO_PRELUDE=0 and report it"
    )


@final
class Prelude:
    """Serves a stdio session until it needs the SDK; see the module docstring."""

    __slots__ = (
        "_calls",
        "_handlers",
        "_initialize",
        "_initialize_id",
        "_initialized",
        "_invoker",
        "_pipes",
        "_seen",
        "_session",
        "_session_id",
    )

    def __init__(
        self,
        pipes: StdioPipes,
        handlers: RequestHandlers,
        invoker: Invoker,
        initialize: Callable[[], dict[str, Any]],
        session_id: str,
    ) -> None:
        self._pipes = pipes
        self._handlers = handlers
        self._invoker = invoker
        self._initialize = initialize  # the initialize result, in wire shape (may raise)
        self._session_id = session_id
        self._session: SessionInfo | None = None
        self._initialize_id: str | int | None = None
        self._initialized = False
        self._seen: list[str] = []
        # The calls running, by request id as the SDK correlates ids ("7" is 7).
        self._calls: dict[str | int, asyncio.Task[None]] = {}

    async def serve(self) -> HandOver | None:
        """Serve until a hand-over (returned) or the end of input (None).

        At the end of input the session ends: calls still running end with it, each answered
        with the error the server answers them with then (``Connection closed``).
        """
        while (line := await self._pipes.line()) is not None:
            try:
                await self._serve(line)
            except _NotServed:
                return HandOver(
                    (*self._seen, line),
                    self._initialize_id,
                    self._session_id,
                    self._calls,
                )
        running = tuple(self._calls.values())
        for call in running:
            call.cancel()
        if running:
            await asyncio.wait(running)
        return None

    async def announce(self, kinds: ElementKind) -> None:
        """Announce that the lists of ``kinds`` changed, as the server does to its sessions."""
        if not self._initialized:
            return
        for changed, method in LIST_CHANGED:
            if kinds & changed:
                await self._pipes.write(b'{"jsonrpc":"2.0","method":"' + method.encode() + b'"}\n')

    async def _serve(self, line: str) -> None:
        """Answer ``line``, or raise :class:`_NotServed` (nothing of it done) to hand it over."""
        if self._pipes.ended:
            # The last line, cut short by the end of input: the server meets the end as it
            # would have (it may answer nothing then).
            raise _NotServed
        request_id, method, params = _parsed(line)
        if request_id is None:
            self._notified(line, method, params)
            return
        if self._session is None:
            if method != "initialize":
                raise _NotServed
            await self._answer(request_id, self._initialize_result(params))
            self._seen.append(line)
            self._initialize_id = request_id
            return
        if _correlated(request_id) in self._calls:
            raise _NotServed  # the id of a call still running: the server says what that is
        if method == "ping" and not params:
            await self._answer(request_id, {})
        elif method == "tools/list" and params.keys() <= {"cursor"}:
            await self._list(request_id, params.get("cursor"))
        elif method == "tools/call":
            await self._call(request_id, params)
        else:
            raise _NotServed

    def _notified(self, line: str, method: str, params: dict[str, Any]) -> None:
        if self._session is not None and method == "notifications/initialized" and not params:
            self._seen.append(line)
            self._initialized = True
        elif self._session is not None and method == "notifications/cancelled":
            # A cancelled call is never answered; any other cancellation changes nothing.
            _cancel(self._calls, params)
        else:
            raise _NotServed

    def _initialize_result(self, params: dict[str, Any]) -> dict[str, Any]:
        client = params.get("clientInfo")
        if (
            not params.keys() <= {"protocolVersion", "capabilities", "clientInfo"}
            or params.get("protocolVersion") != PROTOCOL_VERSION
            or not _capabilities_taken(params.get("capabilities"))
            or type(client) is not dict
            or not client.keys() <= _CLIENT_INFO
            or not {"name", "version"} <= client.keys()
            or any(type(value) is not str for value in client.values())
        ):
            raise _NotServed
        try:
            result = self._initialize()
        except Exception:  # noqa: BLE001 -- the server's own path answers (and logs) it
            raise _NotServed from None
        self._session = SessionInfo(
            session_id=self._session_id,
            attributes={
                "protocol_version": PROTOCOL_VERSION,
                "client_name": client["name"],
                "client_version": client["version"],
            },
        )
        return result

    async def _list(self, request_id: str | int, cursor: object) -> None:
        if cursor is not None and type(cursor) is not str:
            raise _NotServed
        assert self._session is not None  # noqa: S101 -- served after initialize only
        try:
            result = await self._handlers.list_tools(cursor, self._session, era=PROTOCOL_VERSION)
        except Exception:  # noqa: BLE001 -- a list has no effects: the server answers it again
            raise _NotServed from None
        await self._answer(request_id, result)

    async def _call(self, request_id: str | int, params: dict[str, Any]) -> None:
        """A call, run as the server runs a request: beside the next messages.

        Until the tool is admitted (found, visible, taking no gateway) nothing runs that the
        server could not do again, and the next line waits: a call refused before that is handed
        over. Once it runs, it writes its own answer; a ``notifications/cancelled`` of it
        cancels it (never answered, as the server does), before or after a hand-over.
        """
        name, arguments = params.get("name"), params.get("arguments")
        if (
            not params.keys() <= {"name", "arguments"}
            or type(name) is not str
            or (arguments is not None and type(arguments) is not dict)
        ):
            raise _NotServed
        admitted = asyncio.Event()

        def admit(element: Element) -> None:
            if self._invoker.takes_gateway(element):
                raise _NotServed
            admitted.set()

        call = asyncio.ensure_future(self._run_call(request_id, name, arguments, admit, admitted))
        admission = asyncio.ensure_future(admitted.wait())
        try:
            await asyncio.wait({call, admission}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            admission.cancel()
        if call.done():
            call.result()  # raises _NotServed when the call was refused before it ran
            return
        key = _correlated(request_id)
        self._calls[key] = call
        call.add_done_callback(lambda _: self._calls.pop(key, None))

    async def _run_call(
        self,
        request_id: str | int,
        name: str,
        arguments: dict[str, Any] | None,
        admit: Callable[[Element], None],
        admitted: asyncio.Event,
    ) -> None:
        assert self._session is not None  # noqa: S101 -- served after initialize only
        gateway = _Gateway(self._session, request_id)
        try:
            result = await self._handlers.call_tool(
                name, arguments, gateway, admit=admit, era=PROTOCOL_VERSION
            )
        except _NotServed:
            raise
        except asyncio.CancelledError as exc:
            if admitted.is_set() and exc.args != (_WITHDRAWN,):
                # The session ended (end of input) with the call running: the client is told,
                # as the server tells it of its own requests then.
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    async with asyncio.timeout(_CLOSING_WRITE):
                        await self._error(request_id, _CLOSED)
            raise
        except BaseException as exc:
            if escapes(exc):
                raise
            if not admitted.is_set():  # nothing ran: the server answers it as it would have
                raise _NotServed from None
            await self._refuse(request_id, exc)
            return
        await self._answer(request_id, canonical(result))

    async def _answer(self, request_id: str | int, result: dict[str, Any]) -> None:
        await self._pipes.write(encode_response(request_id, result) + _NEWLINE)

    async def _refuse(self, request_id: str | int, exc: BaseException) -> None:
        """The error the server answers a failure of a call that ran with, logged as it logs it."""
        error = wire_error(exc)
        if error.expected:
            _log.info("tools/call refused: %s", exc)
        else:
            _log.error("tools/call failed; the client is told only %r", error.message, exc_info=exc)
        body: dict[str, Any] = {"code": error.code, "message": error.message}
        if error.data is not None:
            body["data"] = error.data
        await self._error(request_id, body)

    async def _error(self, request_id: str | int, body: Mapping[str, Any]) -> None:
        line = b'{"jsonrpc":"2.0","id":' + wire_json(request_id) + b',"error":' + wire_json(body)
        await self._pipes.write(line + b"}\n")


def _parsed(line: str) -> tuple[str | int | None, str, dict[str, Any]]:
    """A plain JSON-RPC request's (or notification's, id None) id, method and params.

    A trace context in ``_meta`` is taken and left out of the params returned (see
    ``_TRACE_META``); any other ``_meta`` is not served.

    Raises:
        _NotServed: anything else (the server parses it and answers as it does).
    """
    try:
        message = pydantic_core.from_json(line)
    except ValueError:
        raise _NotServed from None
    if type(message) is not dict or not message.keys() <= _ENVELOPE:
        raise _NotServed
    method, params = message.get("method"), message.get("params", {})
    if message.get("jsonrpc") != "2.0" or type(method) is not str or type(params) is not dict:
        raise _NotServed
    meta = params.get("_meta", _ABSENT)
    if meta is not _ABSENT:
        if (
            type(meta) is not dict
            or not meta.keys() <= _TRACE_META
            or any(type(value) is not str for value in meta.values())
        ):
            raise _NotServed
        params = {key: value for key, value in params.items() if key != "_meta"}
    if "id" not in message:
        return None, method, params
    request_id = message["id"]
    if type(request_id) is not int and type(request_id) is not str:
        raise _NotServed
    return request_id, method, params


def _capabilities_taken(capabilities: object) -> bool:
    """Whether the client's capabilities are ones the prelude takes (see ``_CAPABILITIES``)."""
    if type(capabilities) is not dict:
        return False
    for key, value in capabilities.items():
        if key not in _CAPABILITIES or type(value) is not dict:
            return False
        members = _CAPABILITIES[key]
        if members is None:
            if any(type(item) is not dict for item in value.values()):
                return False
        elif not value.keys() <= members or any(
            type(item) is not (bool if key == "roots" else dict) for item in value.values()
        ):
            return False
    return True


# -- serving a process's stdio, the prelude first ---------------------------------------------


@final
class ServerInfo:
    """What ``initialize`` tells the client about the server, in wire shape."""

    __slots__ = ("_info", "instructions")

    def __init__(
        self,
        name: str,
        *,
        version: str | None = None,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None = None,
    ) -> None:
        info: dict[str, Any] = {
            "name": name,
            "version": VERSION if version is None else version,
            "title": title,
            "description": description,
            "websiteUrl": website_url,
        }
        if icons is not None:
            info["icons"] = [
                own_value(Icon, icon, parameter=f"icons[{index}]").to_wire()
                for index, icon in enumerate(icons)
            ]
        self._info = canonical(info)
        self.instructions = instructions

    def initialize_result(self, kinds: ElementKind, *, notifies: bool) -> dict[str, Any]:
        """The 2025-11-25 ``initialize`` result for a registry of ``kinds``, as the server's."""
        capabilities: dict[str, Any] = {"logging": {}}
        if kinds & (ElementKind.PROMPT | ElementKind.RESOURCE_TEMPLATE):
            capabilities["completions"] = {}
        if kinds & ElementKind.PROMPT:
            capabilities["prompts"] = {"listChanged": notifies}
        if kinds & (ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE):
            capabilities["resources"] = {"listChanged": notifies, "subscribe": True}
        if kinds & ElementKind.TOOL:
            capabilities["tools"] = {"listChanged": notifies}
        result: dict[str, Any] = canonical(
            {
                "capabilities": capabilities,
                "instructions": self.instructions,
                "protocolVersion": PROTOCOL_VERSION,
                "serverInfo": self._info,
            }
        )
        return result


class _Registry(Protocol):
    """What a stdio start needs of the registry (the reference ``Registry`` is one)."""

    @property
    def loaded(self) -> bool: ...

    def kinds(self) -> ElementKind: ...

    async def load(self) -> None: ...


class Continuing(Protocol):
    """The server the prelude hands over to."""

    async def run_stdio(self) -> None:
        """Serve stdio from the first byte (when the prelude cannot serve the pipes)."""
        ...

    async def continue_stdio(self, pipes: StdioPipes, handover: HandOver) -> None:
        """Serve the rest of the session the prelude began."""
        ...


class _Handled(ElementCatalog, ElementResolver, Protocol):
    """A registry the request handlers answer from: a catalogue and a resolver."""


def request_handlers(
    registry: _Handled,
    *,
    name: str,
    invoker: ElementInvoker,
    visibility: ElementVisibility,
    page_size: int | None,
    cursor_secret: bytes | None,
    middleware: Sequence[Middleware],
    trace_arguments: bool,
) -> RequestHandlers:
    """The request handlers a server named ``name`` answers with (the prelude and ``McpServer``).

    Without a ``cursor_secret``, cursors are keyed by one derived from ``name``.
    """
    return RequestHandlers(
        registry,
        registry,
        invoker=invoker,
        visibility=visibility,
        page_size=page_size,
        cursor_secret=cursor_secret if cursor_secret is not None else default_cursor_secret(name),
        middleware=middleware,
        trace_arguments=trace_arguments,
    )


async def prefetch_kinds(registry: object) -> None:
    """Let the registry read ahead what its ``kinds()`` needs (run before serving starts).

    Capabilities come from ``registry.kinds()``, synchronously, at ``initialize``; a registry
    with ``prefetch_kinds()`` (the reference one) lets, e.g., a warm ``CachedSource`` answer
    from its cache entry there instead of scanning the packages it caches.
    """
    if isinstance(registry, KindsPrefetch):
        try:
            await registry.prefetch_kinds()
        except Exception:  # noqa: BLE001 -- capabilities then come the slow way, never not at all
            _log.warning("registry.prefetch_kinds() raised; kinds() answers unaided", exc_info=True)


async def preload(registry: _Registry, handlers: RequestHandlers, *, settle: bool) -> None:
    """The first load, then every list laid out and encoded (ADR 0054); failures are logged.

    ``settle``: serving as the process, the catalogue then lives as long as it, out of the
    garbage collector's sight (see ``mcp_core._collector``).
    """
    try:
        await registry.load()
        # The first walk then finds its pages laid out and encoded (ADR 0054).
        await handlers.prepare_lists()
    except BaseException as exc:
        if escapes(exc):
            raise
        _log.exception("loading the registry (or preparing its lists) failed")
    else:
        if settle:
            settle_heap()  # the catalogue now lives as long as the process


async def _finished(call: asyncio.Task[None]) -> None:
    """Wait for the prelude's call (cancelled with the run, or by its client)."""
    with contextlib.suppress(asyncio.CancelledError):
        await call


@final
class _Name:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


@final
class StdioStart:
    """Serves an app over this process's stdio, its first answers from the prelude.

    What ``run_stdio_server`` serves in place of the SDK-bound server (the same
    ``lowlevel.name``, ``lifecycle`` and ``run_stdio``). With ``preload``, the registry's first
    load starts at once, as the server's own run starts it. ``server`` builds the server the prelude hands over to,
    given the run's lifespan state (importing the SDK); ``lifespan`` is the app's, entered once
    for the whole run, as the server would enter it.
    """

    __slots__ = (
        "_handlers",
        "_info",
        "_invoker",
        "_lifespan",
        "_preload",
        "_registry",
        "_server",
        "lifecycle",
        "lowlevel",
    )

    def __init__(
        self,
        registry: _Registry,
        handlers: RequestHandlers,
        invoker: Invoker,
        info: ServerInfo,
        *,
        name: str,
        lifespan: Callable[[], AbstractAsyncContextManager[object]],
        server: Callable[[object], Continuing],
        preload: bool,
    ) -> None:
        self._registry = registry
        self._handlers = handlers
        self._invoker = invoker
        self._info = info
        self._lifespan = lifespan
        self._server = server
        self._preload = preload
        self.lowlevel: Final = _Name(name)
        self.lifecycle: Final = Lifecycle()

    async def run_stdio(self) -> None:
        """Serve one client over stdin and stdout until it leaves; see the module docstring."""
        if not servable():
            await self._server(None).run_stdio()
            return
        registry = self._registry
        await prefetch_kinds(registry)
        recovering: AbstractAsyncContextManager[object] = (
            registry.background() if isinstance(registry, BackgroundRecovery) else nullcontext()
        )
        async with (
            open_pipes() as pipes,
            self._lifespan() as state,
            anyio.create_task_group() as tasks,
            recovering,
        ):
            prelude = Prelude(
                pipes, self._handlers, self._invoker, self._initialize_result, uuid.uuid4().hex
            )
            if self._preload and not registry.loaded:
                # As the server's own run does: from the start, in stretches (ADR 0112).
                tasks.start_soon(lambda: preload(registry, self._handlers, settle=True))
            announcer = Announcer(tasks, prelude.announce)
            unsubscribe = (
                registry.subscribe(announcer.changed)
                if isinstance(registry, ChangeNotifier)
                else None
            )
            try:
                handover = await prelude.serve()
            finally:
                if unsubscribe is not None:
                    unsubscribe()
            if handover is not None:
                for call in tuple(handover.running.values()):
                    tasks.start_soon(_finished, call)
                await self._server(state).continue_stdio(pipes, handover)
            tasks.cancel_scope.cancel()

    def _initialize_result(self) -> dict[str, Any]:
        registry = self._registry
        result: dict[str, Any] = self._info.initialize_result(
            registry.kinds(), notifies=isinstance(registry, ChangeNotifier)
        )
        return result
