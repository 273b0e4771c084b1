# Copyright 2026 The mcp-core authors. SPDX-License-Identifier: MIT
"""Handshake-era streamable HTTP: a request is answered with one JSON body unless it needs a stream.

The SDK's session transport decides once per server how every request POST is answered: an SSE
stream (its default) or one JSON body (``json_response=True``, which also takes away the
request's back-channel: a handler can then neither log, report progress nor ask the client
anything on the call's behalf). An SSE answer costs a stream, several tasks and a priming event
per request, and most requests (lists, reads, pings, most tool calls) send nothing but their
answer: under 50 concurrent sessions the SSE machinery is most of the server's time.

:class:`DeferredResponses` decides per request, as late as it can, the way the SDK's own
2026-07-28 path already does: the request is dispatched with its back-channel open, and the first
message the server sends on its behalf decides.

- Its answer: one ``application/json`` body (the common case, and the cheap one).
- Anything else first (a log line, progress, a question to the client): an SSE stream that
  starts with that message (its event id lets the client resume), then everything after it,
  then the answer.
- Nothing within :data:`STREAM_AFTER` seconds: an SSE stream that starts with the priming event
  (so a client that loses the connection during a long call can resume it) and keeps the
  connection alive with pings, as the SDK's SSE answers do.
- The handler closing its stream for SSE polling before it sent anything: a stream holding just
  the priming event, which the client resumes with ``Last-Event-ID`` as from any closed stream.

Everything else a POST can carry (notifications, responses, malformed bodies, wrong sessions,
unacceptable ``Accept`` headers) goes through the SDK's own code unchanged, so it is answered and
refused exactly as before. The server chooses this with ``json_response=None`` (the default);
``True`` and ``False`` keep the SDK's fixed modes (ADR 0053).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http import HTTPStatus
from typing import TYPE_CHECKING, Final

import anyio
import pydantic_core
from mcp.server.streamable_http import (
    CONTENT_TYPE_SSE,
    GET_STREAM_KEY,
    LAST_EVENT_ID_HEADER,
    MCP_SESSION_ID_HEADER,
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    SSEEvent,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from mcp_types.version import is_version_at_least
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.requests import Request as StarletteRequest

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream
    from starlette.requests import Request
    from starlette.types import Receive, Scope, Send

__all__ = ["STREAM_AFTER", "DeferredResponses", "ResumableStreams"]

_log = logging.getLogger("mcp_core.server")

STREAM_AFTER: Final = 5.0
"""Seconds a request may run silently before its answer becomes a stream (priming event, pings)."""


class ResumableStreams(StreamableHTTPServerTransport):
    """The SDK's session transport, whose stream for server-initiated messages resumes from its start.

    The SDK primes every request's SSE stream with an event id but not the session's GET stream,
    so a client that loses that stream before anything arrived on it (an HTTP client's read
    timeout on a quiet stream, a proxy closing it) reconnects without ``Last-Event-ID`` and the
    notifications sent meanwhile (``list_changed``, resource updates) are stored but never
    replayed. With an event store, a first GET here is primed too: a cursor is stored for the
    stream, and the GET is served as a resumption from it, the SDK's own path (which validates
    it first, replays nothing yet, then primes and serves the live stream). Clients before
    2025-11-25 cannot parse a priming event and keep the SDK's plain stream; so does a GET while
    the session's stream is already open (the SDK answers 409).
    """

    _standalone_open: bool = False  # a primed GET stream is being served (set before it awaits)

    async def _handle_get_request(self, request: Request, send: Send) -> None:
        store = self._event_store
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
        if (
            store is None
            or LAST_EVENT_ID_HEADER in request.headers
            or not check_accept_headers(request)[1]
            or not is_version_at_least(version, "2025-11-25")
        ):
            await super()._handle_get_request(request, send)
            return
        if not await self._validate_request_headers(request, send):
            return
        if self._standalone_open or GET_STREAM_KEY in self._request_streams:
            # Decided before any await: two GETs at once cannot both become the session's stream.
            response = self._create_error_response(
                "Conflict: Only one SSE stream is allowed per session", HTTPStatus.CONFLICT
            )
            await response(request.scope, request.receive, send)
            return
        self._standalone_open = True
        try:
            cursor = await store.store_event(GET_STREAM_KEY, None)
            scope = dict(request.scope)
            scope["headers"] = [
                *request.scope["headers"],
                (LAST_EVENT_ID_HEADER.encode(), cursor.encode()),
            ]
            await super()._handle_get_request(StarletteRequest(scope, request.receive), send)
        finally:
            self._standalone_open = False


class DeferredResponses(ResumableStreams):
    """The SDK's session transport, answering each request POST with JSON unless it needs SSE.

    The session manager creates SDK transports; the server's session table turns each one into
    this class as it is registered, before it serves anything (see ``bind_sessions``). It adds
    no state of its own, so that is all it takes.
    """

    @contextmanager
    def served_here(self) -> Iterator[anyio.CancelScope]:
        """A scope for a request of this session served outside its loop (the HTTP hot path).

        Ending the session (DELETE, idle timeout, reclaimed) cancels it, as it cancels the
        requests its loop is running.
        """
        scope = anyio.CancelScope()
        here: set[anyio.CancelScope] = self.__dict__.setdefault("_served_here", set())
        here.add(scope)
        try:
            yield scope
        finally:
            here.discard(scope)

    async def terminate(self) -> None:
        for scope in tuple(self.__dict__.get("_served_here", ())):
            scope.cancel()
        await super().terminate()

    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        message = await self._request_here(request)
        if message is None:
            await super()._handle_post_request(scope, request, receive, send)
            return
        try:
            await self._answer(scope, request, message, receive, send)
        except Exception as exc:  # noqa: BLE001 -- the SDK's own POST containment: 500, then the session hears it
            _log.exception("error answering a request POST")
            response = self._create_error_response(
                "Error handling POST request", HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR
            )
            await response(scope, receive, send)
            if self._read_stream_writer is not None:
                await self._read_stream_writer.send(exc)

    async def _request_here(self, request: Request) -> JSONRPCRequest | None:
        """The request this POST carries, when it is one this session serves; else None.

        None leaves the POST to the SDK's code, which answers what is not a request (202 for a
        notification) and refuses what is wrong with the POST, each as it always has. The body
        is read once: Starlette keeps it for the SDK's second look.
        """
        if self.is_json_response_enabled or self._read_stream_writer is None:
            return None
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse and self._check_content_type(request)):
            return None
        try:
            message = jsonrpc_message_adapter.validate_python(
                pydantic_core.from_json(await request.body()), by_name=False
            )
        except (ValueError, ValidationError):
            return None
        if not isinstance(message, JSONRPCRequest):
            return None
        session = self._get_session_id(request)
        opening = message.method == "initialize" and session is None
        if self.mcp_session_id and session != self.mcp_session_id and not opening:
            return None
        return message

    async def _answer(
        self, scope: Scope, request: Request, message: JSONRPCRequest, receive: Receive, send: Send
    ) -> None:
        writer = self._read_stream_writer
        assert writer is not None  # checked by _request_here  # noqa: S101
        request_id = str(message.id)
        version = (
            str(message.params.get("protocolVersion", DEFAULT_NEGOTIATED_VERSION))
            if message.method == "initialize" and message.params
            else request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
        )
        # As in the SDK's SSE answers, the priming event is stored before the request is
        # dispatched, so it precedes in the store everything sent for the request: a client
        # resuming from it gets all of that, whenever the stream is cut or closed. A JSON
        # answer never sends it.
        priming = await self._mint_priming_event(request_id, version)
        streams = anyio.create_memory_object_stream[EventMessage](REQUEST_STREAM_BUFFER_SIZE)
        self._request_streams[request_id] = streams
        reader = streams[1]
        await writer.send(self._create_session_message(message, request, request_id, version))
        first: EventMessage | None = None
        closed = False
        with anyio.move_on_after(STREAM_AFTER):
            try:
                first = await reader.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                closed = True
        if first is None and not closed:
            # The window closed; a message may have landed just as it did.
            try:
                first = reader.receive_nowait()
            except anyio.WouldBlock:
                pass
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                closed = True
        if first is not None and isinstance(first.message, JSONRPCResponse | JSONRPCError):
            await self._clean_up_memory_streams(request_id)
            await self._create_json_response(first.message)(scope, receive, send)
        elif closed and self._terminated:
            # The session ended with the request in flight: nothing will answer it.
            await self._clean_up_memory_streams(request_id)
            response = self._create_error_response(
                "Session terminated before the request completed",
                HTTPStatus.INTERNAL_SERVER_ERROR,
                INTERNAL_ERROR,
            )
            await response(scope, receive, send)
        else:
            # Something to stream first, a long silence, or the handler closed its stream for
            # SSE polling: the stream opens as the SDK's would have, priming event first.
            head = [event for event in (priming,) if event is not None]
            if first is not None:
                head.append(self._create_event_data(first))
            await self._stream(
                scope, receive, send, request_id=request_id, reader=reader, head=head
            )

    async def _stream(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        *,
        request_id: str,
        reader: MemoryObjectReceiveStream[EventMessage],
        head: list[SSEEvent],
    ) -> None:
        """Answer with the SDK's SSE machinery: ``head``, then the request's stream to its answer.

        ``head`` is queued before the stream is registered, with no pause in between: a handler
        that closes its stream right after sending a message (SSE polling) closes it after that
        message, which therefore still reaches the client, as in the SDK's own SSE answers.
        """
        sse_writer, sse_reader = anyio.create_memory_object_stream[SSEEvent](len(head))
        for event in head:
            sse_writer.send_nowait(event)
        self._sse_stream_writers[request_id] = sse_writer
        headers = {
            "Cache-Control": "no-cache, no-transform",
            "Connection": "keep-alive",
            "Content-Type": CONTENT_TYPE_SSE,
            **({MCP_SESSION_ID_HEADER: self.mcp_session_id} if self.mcp_session_id else {}),
        }
        response = EventSourceResponse(
            content=sse_reader,
            data_sender_callable=partial(
                self._run_sse_writer, request_id, sse_writer, reader, None
            ),
            headers=headers,
        )
        try:
            await response(scope, receive, send)
        except Exception:  # noqa: BLE001 -- as the SDK's SSE answer: the stream is dropped, the session lives
            _log.exception("SSE response error")
            await sse_writer.aclose()
            await self._clean_up_memory_streams(request_id)
        finally:
            await sse_reader.aclose()
