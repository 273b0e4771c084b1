"""The HTTP hot path: an ordinary request POST answered without the SDK's transport machinery.

In the 2026-07-28 era every request stands alone: one POST, one JSON-RPC request, one answer,
no session. The SDK's entry for it (``handle_modern_request``, reached through the session
manager) builds a Starlette request and response, validates the envelope with pydantic models,
and in its default SSE mode runs each handler as a sibling task in a task group beside a
disconnect watcher and a memory stream, to decide whether the answer is one JSON body or a
stream. A request of an open handshake-era session is written into the session's memory stream,
read by the session's loop, dispatched in a task of its own, and answered through the session's
write stream and a per-request stream. Under concurrent load that machinery, not the request's
own work, was most of a request's cost.

:class:`HotPath` sits in front of the SDK's endpoint (inside its bearer authentication and the
HTTP edge, :mod:`~mcp_core.server._edge`, so both still apply) and answers two kinds of POST
itself, running the handler in the ASGI task:

- **A 2026-07-28 request**: the checks of the SDK's entry in its order (DNS-rebinding and content
  type, ``Accept``, the JSON-RPC envelope, duplicated routing headers, the inbound
  classification ladder, the ``Mcp-Param-*`` check), then the same kernel,
  :func:`mcp.server.runner.serve_one`. A notification the handler sends commits the answer to
  an SSE stream then and there, as the SDK's does; a handler silent for the SDK's ping interval
  (15 s) gets the stream and its pings; a client that disconnects while its handler runs
  cancels it (watched from :data:`WATCH_AFTER` seconds on: a shorter handler finishes before
  anyone could tell the difference).
- **A request of an open handshake-era session** answered JSON-unless-needed
  (:class:`~mcp_core.server._responses.DeferredResponses`): the session manager's and the
  transport's checks, then the session's own kernel (``ServerRunner`` over its connection) with
  the session dispatcher's kind of dispatch context (see :class:`_SessionCall`); the answer
  becomes the transport's SSE stream as soon as the handler sends anything.

Both end in the kernel the SDK's path ends in, so the server's middleware chain and the request
handlers run exactly as there, and the answer is written as the SDK writes it (status, headers,
bytes). Everything else goes to the SDK's code unchanged, with the body it was sent:
``initialize``, notifications, ``subscriptions/listen``, GET, DELETE, stateless handshake-era
requests, the fixed JSON or SSE modes, and every request the SDK would refuse (a malformed body,
a wrong header, an oversized body, a version it does not serve), so every refusal keeps its
exact shape. ``tests/server/test_hotpath.py`` holds the two paths equal on generated ordinary
and hostile requests (ADR 0102).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
from contextlib import contextmanager
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Final, final

import anyio
import pydantic_core
from mcp.server._streamable_http_modern import (
    _SSE_HEADERS,
    _SSE_PING_INTERVAL,
    _mcp_param_rejection,
    _SingleExchangeDispatchContext,
    _sse_event,
    _write,
)
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    RequireAuthMiddleware,
    authorization_context,
)
from mcp.server.connection import Connection
from mcp.server.runner import ServerRunner, modern_error_data, serve_one
from mcp.server.streamable_http import (
    REQUEST_CANCELLED,
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    check_accept_headers,
)
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.inbound import (
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp.shared.jsonrpc_dispatcher import (
    JSONRPCDispatcher,
    _InFlight,
    _JSONRPCDispatchContext,
    handler_exception_to_error_data,
    progress_token_from_params,
)
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request

from mcp_core.server import _responses
from mcp_core.server._paging import EncodedItems, dumps
from mcp_core.server._responses import DeferredResponses
from mcp_core.server._stdio import encode_response

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping

    from mcp.server.lowlevel.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.shared.dispatcher import CallOptions
    from mcp_types import RequestId
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["WATCH_AFTER", "HotPath", "with_hot_path"]

_log = logging.getLogger("mcp_core.server")
# A handler's failure is logged where the session's dispatcher logs it.
_sdk_log = logging.getLogger("mcp.shared.jsonrpc_dispatcher")

WATCH_AFTER: Final = 0.05
"""Seconds a handler runs before its client's disconnection is watched for (and cancels it)."""

_VERSION_HEADER: Final = b"mcp-protocol-version"
_SESSION_HEADER: Final = b"mcp-session-id"
_MODERN: Final = "2026-07-28 era"
_CONTENT_LENGTH: Final = b"content-length"
_JSON_HEADERS: Final = (b"content-type", b"application/json")
_PING: Final = b": ping\r\n\r\n"


def with_hot_path(
    endpoint: ASGIApp,
    manager: StreamableHTTPSessionManager,
    *,
    max_body: int,
    sessions: Callable[[str], Connection | None] | None = None,
) -> ASGIApp:
    """The SDK's MCP ``endpoint`` with the hot path in front of it, inside its authentication.

    With bearer authentication the SDK's endpoint is its ``RequireAuthMiddleware`` around the
    transport: the hot path goes inside it, so a request it answers has been authenticated.
    ``sessions`` finds the connection of an open handshake-era session by its id (None: only
    2026-07-28 requests take the hot path).
    """
    if isinstance(endpoint, RequireAuthMiddleware):
        endpoint.app = HotPath(endpoint.app, manager, max_body=max_body, sessions=sessions)
        return endpoint
    return HotPath(endpoint, manager, max_body=max_body, sessions=sessions)


@final
class HotPath:
    """ASGI app in front of the SDK's streamable HTTP endpoint (see the module docstring).

    ``sdk`` is the endpoint it stands in front of, ``manager`` the SDK session manager behind
    it (whose lifespan state, response mode and security settings it serves with), and
    ``max_body`` the body size the SDK refuses beyond (it then answers, with its 413).
    """

    __slots__ = ("_manager", "_max_body", "_security", "_sessions", "sdk")

    def __init__(
        self,
        sdk: ASGIApp,
        manager: StreamableHTTPSessionManager,
        *,
        max_body: int,
        sessions: Callable[[str], Connection | None] | None = None,
    ) -> None:
        self.sdk = sdk
        self._manager = manager
        self._max_body = max_body
        self._sessions = sessions
        self._security = TransportSecurityMiddleware(manager.security_settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or self._manager._task_group is None  # noqa: SLF001 -- not running: the SDK says so
        ):
            await self.sdk(scope, receive, send)
            return
        route = self._route(scope["headers"])
        if route is None:
            await self.sdk(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                await self.sdk(scope, _replaying(messages, receive), send)
                return
            body += message.get("body", b"")
            if len(body) > self._max_body:
                await self.sdk(scope, _replaying(messages, receive), send)
                return
            if not message.get("more_body", False):
                break
        if route is _MODERN:
            answered = await self._answer(scope, body, receive, send)
        else:
            answered = await self._answer_in_session(route, scope, body, receive, send)
        if not answered:
            await self.sdk(scope, _replaying(messages, receive), send)

    def _route(self, headers: list[tuple[bytes, bytes]]) -> str | None:
        """:data:`_MODERN`, the session id of a handshake-era request, or None (the SDK's)."""
        version: bytes | None = None
        declared: bytes | None = None
        session: bytes | None = None
        for name, value in headers:
            if name == _VERSION_HEADER:
                version = value if version is None else version
            elif name == _CONTENT_LENGTH:
                declared = value if declared is None else declared
            elif name == _SESSION_HEADER:
                session = value if session is None else session
        if declared is not None and _over(declared, self._max_body):
            return None
        named = None if version is None else version.decode("latin-1")
        if named in MODERN_PROTOCOL_VERSIONS:
            return _MODERN
        if (
            session is None
            or (named is not None and named not in HANDSHAKE_PROTOCOL_VERSIONS)
            or self._sessions is None
            or self._manager.stateless
        ):
            return None
        return session.decode("latin-1")

    def _secure(self, request: Request) -> bool:
        """Whether the SDK's DNS-rebinding and content-type checks pass (it logs the failures)."""
        headers = request.headers
        content_type = headers.get("content-type")
        if content_type is None or not content_type.lower().startswith("application/json"):
            return False
        settings = self._security.settings
        if not settings.enable_dns_rebinding_protection:
            return True
        host = headers.get("host")
        origin = headers.get("origin")
        return (
            bool(host)
            and _allowed(host, settings.allowed_hosts)
            and (not origin or _allowed(origin, settings.allowed_origins))
        )

    async def _answer(  # noqa: PLR0911 -- one return per refusal left to the SDK
        self, scope: Scope, body: bytes, receive: Receive, send: Send
    ) -> bool:
        """Answer the request in ``body``, or False (having sent nothing) to leave it to the SDK."""
        manager = self._manager
        request = Request(scope, receive)
        request._body = body  # noqa: SLF001 -- read once; handlers may read it again
        if not self._secure(request):
            return False
        json_response = manager.json_response
        has_json, has_sse = check_accept_headers(request)
        if not has_json or not (json_response or has_sse):
            return False
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            return False
        if not isinstance(decoded, dict) or "id" not in decoded:
            return False
        try:
            req = JSONRPCRequest.model_validate(decoded)
        except ValidationError:
            return False
        if req.method == "subscriptions/listen":
            return False
        headers = request.headers
        if find_duplicated_routing_header(headers.items()) is not None:
            return False
        verdict = classify_inbound_request(decoded, headers=dict(headers))
        if isinstance(verdict, InboundLadderRejection):
            return False
        app: Server[Any] = manager.app
        state = manager._lifespan_state  # noqa: SLF001 -- what the SDK's own entry serves with
        if await _mcp_param_rejection(app, request, req, verdict, state) is not None:
            return False
        connection = Connection.from_envelope(
            verdict.protocol_version, verdict.client_info, verdict.client_capabilities
        )
        exchange = _Exchange(
            transport=TransportContext(
                kind="streamable-http", can_send_request=False, headers=headers
            ),
            request_id=req.id,
            message_metadata=ServerMessageMetadata(request_context=request),
            progress_token=progress_token_from_params(req.params),
        )
        await exchange.serve(
            serve_one(
                app, exchange, req.method, req.params, connection=connection, lifespan_state=state
            ),
            streams=not json_response,
            scope=scope,
            receive=receive,
            send=send,
        )
        return True

    async def _answer_in_session(  # noqa: PLR0911 -- one return per refusal left to the SDK
        self, session_id: str, scope: Scope, body: bytes, receive: Receive, send: Send
    ) -> bool:
        """Answer a request of the open session ``session_id``, or False to leave it to the SDK.

        The checks are the session manager's and the session transport's, in their order; the
        request then goes to the session's own kernel (its connection, its dispatcher for
        cancellation and for what the handler sends), as the session's loop would run it.
        """
        manager = self._manager
        transport = manager._server_instances.get(session_id)  # noqa: SLF001 -- the table bind_sessions owns
        if (
            not isinstance(transport, DeferredResponses)
            or transport.is_json_response_enabled
            or transport.is_terminated
            or transport._read_stream_writer is None  # noqa: SLF001 -- not connected yet
            or (transport.idle_scope is not None and transport.idle_scope.cancel_called)
        ):
            return False
        user = scope.get("user")
        requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        if requestor != manager._session_owners.get(session_id):  # noqa: SLF001 -- as the manager checks
            return False
        connection = self._sessions(session_id) if self._sessions is not None else None
        if connection is None or not isinstance(connection.outbound, JSONRPCDispatcher):
            return False
        request = Request(scope, receive)
        request._body = body  # noqa: SLF001 -- read once; handlers may read it again
        if not (self._secure(request) and transport._check_content_type(request)):  # noqa: SLF001
            return False
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse):
            return False
        try:
            message = jsonrpc_message_adapter.validate_python(
                pydantic_core.from_json(body), by_name=False
            )
        except (ValueError, ValidationError):
            return False
        if not isinstance(message, JSONRPCRequest) or message.method == "initialize":
            return False
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
        call = _SessionCall(
            transport,
            connection.outbound,
            message,
            request=request,
            version=version,
            asgi=(scope, receive, send),
        )
        with _in_flight(transport):
            await call.serve(ServerRunner(manager.app, connection, manager._lifespan_state))  # noqa: SLF001
        return True


class _Exchange(_SingleExchangeDispatchContext):
    """One request's dispatch context, writing its own answer: JSON, or SSE once it must."""

    _send: Send
    _streaming: bool = False
    _finished: bool = False
    _lock: asyncio.Lock | None = None
    _quiet_since: float = 0.0
    _disconnected: bool = False

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        del opts
        if not self._may_stream:
            return
        event = _sse_event(
            JSONRPCNotification(
                jsonrpc="2.0", method=method, params=dict(params) if params is not None else None
            )
        )
        await self._emit(event)

    _may_stream: bool = False

    async def serve(
        self,
        work: Coroutine[Any, Any, dict[str, Any]],
        *,
        streams: bool,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """Run ``work`` (the kernel's coroutine) here and answer with what it returns or raises."""
        self._send = send
        self._may_stream = streams
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        watching: list[asyncio.Task[None]] = []
        timers: list[asyncio.TimerHandle] = []
        if streams and task is not None:
            self._quiet_since = loop.time()

            def watch() -> None:
                watching.append(loop.create_task(self._watch(receive, task)))

            timers.append(loop.call_later(WATCH_AFTER, watch))
            timers.append(
                loop.call_later(
                    _SSE_PING_INTERVAL,
                    lambda: watching.append(loop.create_task(self._keep_alive(loop))),
                )
            )
        answer: JSONRPCError | _Result
        try:
            try:
                answer = _Result(self.request_id, await work)
            except asyncio.CancelledError:
                if self._disconnected and task is not None and task.uncancel() == 0:
                    return  # the client left: nothing to answer, as on the SDK's path
                raise
            except Exception as exc:  # noqa: BLE001 -- the SDK's modern boundary, modern_error_data
                answer = JSONRPCError(
                    jsonrpc="2.0", id=self.request_id, error=modern_error_data(exc)
                )
        finally:
            for timer in timers:
                timer.cancel()
            for watcher in watching:
                watcher.cancel()
        await self._finish(answer, scope, receive)

    async def _finish(self, answer: JSONRPCError | _Result, scope: Scope, receive: Receive) -> None:
        lock = self._lock
        if lock is not None:
            await lock.acquire()
        try:
            self._finished = True
            send = self._send
            if self._streaming:
                final = answer.model() if isinstance(answer, _Result) else answer
                await send(
                    {"type": "http.response.body", "body": _sse_event(final), "more_body": False}
                )
            elif isinstance(answer, _Result):
                encoded = answer.encoded()
                if encoded is None:
                    await _write(answer.model(), scope, receive, send)
                else:
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 200,
                            "headers": [
                                (b"content-length", str(len(encoded)).encode()),
                                _JSON_HEADERS,
                            ],
                        }
                    )
                    await send({"type": "http.response.body", "body": encoded})
            else:
                await _write(answer, scope, receive, send)
        finally:
            if lock is not None:
                lock.release()

    async def _emit(self, chunk: bytes) -> None:
        lock = self._lock
        if lock is not None:
            await lock.acquire()
        try:
            if self._finished:
                return
            if not self._streaming:
                self._streaming = True
                await self._send(
                    {"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS}
                )
            await self._send({"type": "http.response.body", "body": chunk, "more_body": True})
            self._quiet_since = asyncio.get_running_loop().time()
        finally:
            if lock is not None:
                lock.release()

    async def _keep_alive(self, loop: asyncio.AbstractEventLoop) -> None:
        """From the first silent interval on: the SDK's pings, after each silent interval."""
        self._lock = asyncio.Lock()
        while not self._finished:
            quiet = loop.time() - self._quiet_since
            if quiet >= _SSE_PING_INTERVAL:
                await self._emit(_PING)
                quiet = 0.0
            await asyncio.sleep(_SSE_PING_INTERVAL - quiet)

    async def _watch(self, receive: Receive, task: asyncio.Task[Any]) -> None:
        """Cancel the handler (the ASGI task) when the client disconnects, as the SDK's path does."""
        while (await receive()).get("type") != "http.disconnect":
            pass
        if not self._finished:
            self._disconnected = True
            self.cancel_requested.set()
            task.cancel()


@final
class _Result:
    """A successful answer not yet encoded (the common case never builds its model)."""

    __slots__ = ("request_id", "result")

    def __init__(self, request_id: Any, result: dict[str, Any]) -> None:
        self.request_id = request_id
        self.result = result

    def model(self) -> JSONRPCResponse:
        """The SDK's model of this answer."""
        return JSONRPCResponse(jsonrpc="2.0", id=self.request_id, result=self.result)

    def encoded(self) -> bytes | None:
        """The body as the SDK's ``_write`` writes it, or None where only its model can say.

        A list page's items are joined from their JSON as ``json.dumps`` writes each, made once
        per catalogue (:meth:`EncodedItems.dumped`): the same bytes as dumping the whole
        answer, without encoding every item again at every page.
        """
        result = self.result
        try:
            if not any(type(value) is EncodedItems for value in result.values()):
                return _dumped({"jsonrpc": "2.0", "id": self.request_id, "result": result})
            head = b'{"jsonrpc":"2.0","id":' + _dumped(self.request_id) + b',"result":{'
            members = b",".join(
                _dumped(key)
                + b":"
                + (value.dumped() if type(value) is EncodedItems else _dumped(value))
                for key, value in result.items()
            )
        except (TypeError, ValueError, RecursionError):
            return None  # non-finite floats (the model writes null), values only it can dump
        return head + members + b"}}"


def _dumped(value: object) -> bytes:
    """``value`` as the SDK's 2026-07-28 entry writes JSON (``json.dumps``, compact)."""
    return dumps(value).encode()


def _allowed(value: str | None, allowed: list[str]) -> bool:
    """``TransportSecurityMiddleware``'s match of a Host or Origin against its allowed values."""
    if value in allowed:
        return True
    return value is not None and any(
        pattern.endswith(":*") and value.startswith(pattern[:-1]) for pattern in allowed
    )


def _over(declared: bytes, limit: int) -> bool:
    try:
        return int(declared) > limit
    except ValueError:
        return False


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    """``receive`` giving ``messages`` first, then the connection's own."""
    pending = list(reversed(messages))

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay


@contextmanager
def _in_flight(transport: DeferredResponses) -> Iterator[None]:
    """As the session transport counts a request: no idle countdown while it is served."""
    idle = transport.idle_scope
    timeout = transport._idle_timeout  # noqa: SLF001 -- the transport's own accounting, kept
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1  # noqa: SLF001
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1  # noqa: SLF001
        if not transport._requests_in_flight:  # noqa: SLF001
            idle.deadline = anyio.current_time() + timeout


class _SessionCall(_JSONRPCDispatchContext[TransportContext]):
    """A handshake-era request run in the ASGI task: JSON unless it sends something first.

    The dispatch context is the session dispatcher's own kind, registered as its request in
    flight (so ``notifications/cancelled`` reaches it); what the handler sends goes through the
    dispatcher and the session's message router as always. Before the first such message (or
    once the request has run :data:`~mcp_core.server._responses.STREAM_AFTER` seconds), the
    answer becomes the session transport's SSE stream, priming event first, and everything
    after (the answer included) reaches the client there, as on the SDK's path.
    """

    def __init__(
        self,
        transport: DeferredResponses,
        dispatcher: JSONRPCDispatcher[TransportContext],
        message: JSONRPCRequest,
        *,
        request: Request,
        version: str,
        asgi: tuple[Scope, Receive, Send],
    ) -> None:
        metadata = transport._create_session_message(  # noqa: SLF001 -- the transport's own metadata
            message, request, str(message.id), version
        ).metadata
        if isinstance(metadata, ServerMessageMetadata) and metadata.close_sse_stream is not None:
            metadata = dataclasses.replace(
                metadata, close_sse_stream=self._closing(metadata.close_sse_stream)
            )
        super().__init__(
            transport=dispatcher._transport_builder(metadata),  # noqa: SLF001
            _dispatcher=dispatcher,
            _request_id=message.id,
            message_metadata=metadata,
            _progress_token=progress_token_from_params(message.params),
        )
        self._session = transport
        self._message = message
        self._version = version
        self._asgi = asgi
        self._opened: asyncio.Future[None] | None = None
        self._pump: asyncio.Task[None] | None = None

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        if not self._closed:
            await self._streaming()
        await super().notify(method, params, opts)

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        if self.can_send_request:
            await self._streaming()
        return await super().send_raw_request(method, params, opts)

    def _closing(self, close: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
        """The handler closing its stream for SSE polling: there must be one to close first."""

        async def closing() -> None:
            await self._streaming()
            await close()

        return closing

    async def _streaming(self) -> None:
        """Open the answer's SSE stream, once, before anything is sent on it."""
        if self._opened is not None:
            await self._opened
            return
        self._opened = asyncio.get_running_loop().create_future()
        try:
            transport = self._session
            stream_id = str(self._message.id)
            priming = await transport._mint_priming_event(stream_id, self._version)  # noqa: SLF001
            streams = anyio.create_memory_object_stream[EventMessage](REQUEST_STREAM_BUFFER_SIZE)
            transport._request_streams[stream_id] = streams  # noqa: SLF001
            scope, receive, send = self._asgi
            self._pump = asyncio.get_running_loop().create_task(
                transport._stream(  # noqa: SLF001 -- the deferred answer's own stream
                    scope,
                    receive,
                    send,
                    request_id=stream_id,
                    reader=streams[1],
                    head=[] if priming is None else [priming],
                )
            )
            await asyncio.sleep(0)  # the stream registers its writer (a close finds it)
        finally:
            self._opened.set_result(None)

    async def serve(self, runner: ServerRunner[Any]) -> None:
        """Run the request through the session's kernel, then answer it."""
        dispatcher = self._dispatcher
        message = self._message
        key = coerce_request_id(message.id)
        with self._session.served_here() as cancel_scope:
            dispatcher._in_flight[key] = _InFlight(scope=cancel_scope, dctx=self)  # noqa: SLF001
            await self._answer(await self._run(runner, key, cancel_scope))

    async def _run(
        self, runner: ServerRunner[Any], key: RequestId, cancel_scope: anyio.CancelScope
    ) -> dict[str, Any] | ErrorData | None:
        """The request's result, its error, or None when it was cancelled."""
        dispatcher = self._dispatcher
        message = self._message
        loop = asyncio.get_running_loop()
        opening: list[asyncio.Task[None]] = []
        timer = loop.call_later(
            _responses.STREAM_AFTER, lambda: opening.append(loop.create_task(self._streaming()))
        )
        outcome: dict[str, Any] | ErrorData | None = None
        try:
            with cancel_scope:
                try:
                    result = await runner.on_request(self, message.method, message.params)
                finally:
                    # As the dispatcher: the back-channel closes, the request leaves the table.
                    self.close()
                    entry = dispatcher._in_flight.get(key)  # noqa: SLF001
                    if entry is not None and entry.dctx is self:
                        del dispatcher._in_flight[key]  # noqa: SLF001
                if not self.cancel_requested.is_set():
                    outcome = result
        except Exception as exc:  # noqa: BLE001 -- the dispatcher's boundary, kept as it is
            error = handler_exception_to_error_data(exc)
            if error is None:
                _sdk_log.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(exc))
            if not self.cancel_requested.is_set():
                outcome = error
        finally:
            timer.cancel()
            for task in opening:
                await task
        return outcome

    async def _answer(self, outcome: dict[str, Any] | ErrorData | None) -> None:
        dispatcher = self._dispatcher
        request_id = self._message.id
        if self._pump is not None:
            # The stream is open: the answer goes the way everything else went (when the
            # session ended meanwhile, its end closed the stream).
            if self._session.is_terminated:
                pass
            elif isinstance(outcome, ErrorData):
                await dispatcher._write_error(request_id, outcome)  # noqa: SLF001
            elif outcome is not None:
                await dispatcher._write_result(request_id, outcome)  # noqa: SLF001
            else:
                await dispatcher._settle_unanswered(self)  # noqa: SLF001
            await self._pump
            return
        scope, receive, send = self._asgi
        transport = self._session
        if outcome is None and transport.is_terminated:
            # The session ended with the request in flight: as DeferredResponses answers it.
            response = transport._create_error_response(  # noqa: SLF001
                "Session terminated before the request completed",
                HTTPStatus.INTERNAL_SERVER_ERROR,
                INTERNAL_ERROR,
            )
            await response(scope, receive, send)
            return
        if isinstance(outcome, dict):
            # The bytes the SDK's model writes, without building it (a large list page).
            body = encode_response(request_id, outcome)
            session = transport.mcp_session_id
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        _JSON_HEADERS,
                        *([(_SESSION_HEADER, session.encode())] if session else []),
                        (_CONTENT_LENGTH, str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        # A request the client cancelled is still ended on this era's wire.
        error = outcome or ErrorData(code=REQUEST_CANCELLED, message="Request cancelled")
        answer = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        await transport._create_json_response(answer)(scope, receive, send)  # noqa: SLF001
