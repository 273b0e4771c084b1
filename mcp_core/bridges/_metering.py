"""What a remote may make the gateway read: its messages bounded and counted, over either transport.

One :class:`Meter` per remote counts the bytes it sends (a listing's ``max_bytes`` budget) and
bounds each message at ``max_message_bytes``: a larger one is never held whole. Over streamable
HTTP, :class:`Metered` reads each JSON answer up to the bound, and passes an event stream on an
event at a time, each up to the bound. Over stdio, :func:`metered_stdio` is the client
transport: the server's standard output is cut into lines at the bound, in time linear in what
it sends, and a line past the bound is skipped to its end unread.

A message refused for its size, or too deep for the official client's JSON parser, becomes a
JSON-RPC error for the request it answers, so that request fails alone with a message naming the
bound: over HTTP the request is the one its HTTP exchange carried; over stdio it is the request
in progress (requests to a stdio remote take turns, ``RemoteSource``), or every request the
session still awaits if the remote was sent several.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Final, final

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp.client.stdio import (
    FORCE_KILL_TIMEOUT,
    PROCESS_TERMINATION_TIMEOUT,
    StdioServerParameters,
    get_default_environment,
    stdio_client,
)
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

__all__ = ["READABLE_DEPTH", "Meter", "Metered", "metered_stdio"]

_log = logging.getLogger("mcp_core.bridges")

READABLE_DEPTH: Final = 150  # JSON levels in one listed element: the client's parser reads ~200
_LISTED: Final = ("tools", "resources", "resourceTemplates", "prompts")
_FLUSH_SECONDS: Final = 0.5  # for the messages already accepted, once the session ends
_EXIT_POLL_SECONDS: Final = 0.01


@final
class Meter:
    """Bytes received from a remote, and whether an answer was refused for its size.

    ``limit``: the largest message read (``max_message_bytes``). ``deep``: the remote has sent a
    page too deep for the official client, so its list answers are read first and their too-deep
    elements left out (``dropped`` counts them).
    """

    __slots__ = ("deep", "dropped", "limit", "received", "refused")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.received = 0
        self.refused = False
        self.deep = False
        self.dropped = 0


def _oversized(limit: int) -> types.ErrorData:
    """The error a request gets when its answer is larger than ``limit`` bytes."""
    return types.ErrorData(
        code=types.INTERNAL_ERROR,
        message=f"the remote's answer is larger than max_message_bytes={limit} bytes; "
        "it was not read",
    )


# -- streamable HTTP -------------------------------------------------------------------------------


@final
class Metered(httpx2.AsyncBaseTransport):
    """An HTTP transport that counts what the remote sends and bounds each JSON answer.

    A JSON answer is read here, up to the meter's limit: a larger one is cut off unread and
    replaced by a JSON-RPC error for the request it answered (so that request fails alone, and
    nothing larger than the limit is ever held). An event stream's events are bounded the same
    way (:class:`_Events`); other bodies are counted as they are read.
    """

    __slots__ = ("_inner", "_meter")

    def __init__(self, inner: httpx2.AsyncBaseTransport, meter: Meter) -> None:
        self._inner = inner
        self._meter = meter

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        meter = self._meter
        content_type = response.headers.get("content-type", "").lower()
        encoding = response.headers.get("content-encoding", "identity").lower()
        if content_type.startswith("text/event-stream") and encoding == "identity":
            response.stream = _Events(response.stream, meter, request)  # type: ignore[arg-type]  # an async stream
            return response
        if not content_type.startswith("application/json") and encoding == "identity":
            response.stream = _Counted(response.stream, meter)  # type: ignore[arg-type]  # an async stream
            return response
        chunks: list[bytes] = []
        size = 0
        too_large = encoding != "identity"  # unasked-for compression: its size is unknown
        try:
            async for chunk in response.stream:  # type: ignore[union-attr]  # an async stream
                size += len(chunk)
                meter.received += len(chunk)
                if size > meter.limit or too_large:
                    too_large = True
                    break
                chunks.append(chunk)
        finally:
            await response.aclose()
        headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-length"]
        body = b"".join(chunks)
        if too_large:
            meter.refused = True
            body = _oversized_answer(request, meter.limit)
            headers = [(b"content-type", b"application/json")]
        elif meter.deep:
            body = _readable(body, meter)
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=httpx2.ByteStream(body),
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


@final
class _Counted(httpx2.AsyncByteStream):
    """A response stream whose bytes are counted on a meter as they are read."""

    __slots__ = ("_inner", "_meter")

    def __init__(self, inner: httpx2.AsyncByteStream, meter: Meter) -> None:
        self._inner = inner
        self._meter = meter

    async def __aiter__(self) -> AsyncIterator[bytes]:
        meter = self._meter
        async for chunk in self._inner:
            meter.received += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


@final
class _Events(httpx2.AsyncByteStream):
    """An event stream passed on a whole event at a time, each at most the meter's limit.

    An event past the limit ends the stream: what was read of it is dropped, and an event
    carrying a JSON-RPC error for the request the stream answers takes its place (the SDK's
    own bound on an event fails the whole connection instead). Events end at a blank line,
    whichever line ends the stream uses. Once the remote has sent a page too deep to parse, each
    event's list answer is read first and its too-deep elements left out, as a JSON answer's.
    """

    __slots__ = ("_inner", "_meter", "_request")

    def __init__(
        self, inner: httpx2.AsyncByteStream, meter: Meter, request: httpx2.Request
    ) -> None:
        self._inner = inner
        self._meter = meter
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        meter = self._meter
        pending = bytearray()  # the events not yet passed on, the last one unfinished
        searched = 0  # how much of ``pending`` holds no event's end
        async for chunk in self._inner:
            meter.received += len(chunk)
            pending += chunk
            end, within = _events_end(pending, max(0, searched - 3), meter.limit)
            if end:
                events = bytes(pending[:end])
                yield _readable_events(events, meter) if meter.deep else events
                del pending[:end]
            searched = len(pending)
            if not within or searched > meter.limit:
                meter.refused = True
                answer = _oversized_answer(self._request, meter.limit)
                yield b"event: message\ndata: " + answer + b"\n\n"
                return
        if pending:  # the stream's end ends its last event (its last CR is read)
            events = bytes(pending)
            yield _readable_events(events, meter, _LAST_EVENT_END) if meter.deep else events

    async def aclose(self) -> None:
        await self._inner.aclose()


# A blank line: two line ends, each CRLF, LF or a CR alone (a CR then an LF is one line end, so
# a CR is taken alone only once what follows it has been read, or at the stream's end).
_ONE_LINE_END: Final = rb"(?:\r\n|\n|\r(?=[^\n]))"
_EVENT_END: Final = re.compile(_ONE_LINE_END * 2)
_LAST_EVENT_END: Final = re.compile(_ONE_LINE_END + rb"(?:\r\n|\n|\r(?=[^\n]|\Z))")
_LINE_END: Final = re.compile(rb"\r\n|\n|\r")


def _events_end(events: bytearray, since: int, limit: int) -> tuple[int, bool]:
    """Where the whole events at the start of ``events`` end, and whether each fits ``limit``.

    No event ends before ``since``. When one is larger than ``limit`` bytes, the end is that of
    the events before it.
    """
    end = 0
    for found in _EVENT_END.finditer(events, since):
        if found.end() - end > limit:
            return end, False
        end = found.end()
    return end, True


def _oversized_answer(request: httpx2.Request, limit: int) -> bytes:
    """A JSON-RPC error answering ``request``: its answer was larger than ``limit`` bytes."""
    try:
        request_id = json.loads(request.content).get("id")
    except (ValueError, AttributeError, httpx2.RequestNotRead):
        request_id = None
    error = _oversized(limit).model_dump(exclude_none=True)
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()


# -- list answers too deep to parse ----------------------------------------------------------------


def _readable(body: bytes, meter: Meter) -> bytes:
    """A list answer ``body`` without its elements nested more than ``READABLE_DEPTH`` levels."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return body  # not something to mend: the client says what is wrong with it
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        return body
    dropped = 0
    for key in _LISTED:
        items = result.get(key)
        if isinstance(items, list):
            kept = [item for item in items if _depth(item) <= READABLE_DEPTH]
            dropped += len(items) - len(kept)
            result[key] = kept
    if not dropped:
        return body
    meter.dropped += dropped
    return json.dumps(message).encode()


def _readable_events(events: bytes, meter: Meter, ends: re.Pattern[bytes] = _EVENT_END) -> bytes:
    """Whole ``events`` of a stream, each list answer without its too-deep elements."""
    mended = []
    start = 0
    for found in ends.finditer(events):
        event = events[start : found.end()]
        lines = _LINE_END.split(event)
        data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
        body = b"\n".join(data)
        readable = _readable(body, meter) if data else body
        if readable is not body:  # one data line now (JSON as written holds no line end)
            kept = [line for line in lines if line and not line.startswith(b"data:")]
            event = b"\n".join([*kept, b"data: " + readable]) + b"\n\n"
        mended.append(event)
        start = found.end()
    mended.append(events[start:])
    return b"".join(mended)


def _depth(value: object) -> int:
    """How many levels of JSON objects and arrays ``value`` nests (without recursion)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((member, depth + 1) for member in item)
    return deepest


# -- stdio -----------------------------------------------------------------------------------------


@final
class _Lines:
    """A byte stream cut into lines of at most ``limit`` bytes, in time linear in its length.

    :meth:`feed` returns the lines a chunk completes, and ``None`` the moment a line grows past
    the limit; the rest of that line is skipped, unread, up to its end.
    """

    __slots__ = ("_limit", "_parts", "_size", "_skipping")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        out: list[bytes | None] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not self._skipping:
                if self._size + len(piece) > self._limit:
                    out.append(None)
                    self._skipping = True
                    self._parts.clear()
                    self._size = 0
                else:
                    self._parts.append(piece)
                    self._size += len(piece)
            if end < 0:
                return out
            if not self._skipping:
                out.append(b"".join(self._parts))
            self._parts.clear()
            self._size = 0
            self._skipping = False
            start = end + 1


Streams = tuple[
    anyio.abc.ObjectReceiveStream[SessionMessage | Exception],
    anyio.abc.ObjectSendStream[SessionMessage],
]


@asynccontextmanager
async def metered_stdio(server: StdioServerParameters, meter: Meter) -> AsyncIterator[Streams]:
    """The official client's stdio transport, each message the server sends bounded by ``meter``.

    The server is started as the SDK's ``stdio_client`` starts it (its own process group, the
    SDK's default environment under ``server.env``) and ended the same way: its standard input
    closed, a grace period, then its whole process group terminated. What differs is the reading:
    lines of at most ``meter.limit`` bytes, in linear time (the SDK's reader joins each chunk to
    the line so far, so one long line costs time quadratic in its length, and holds it whole). A
    line past the limit is skipped to its end, and the requests the session awaits get an error
    naming ``max_message_bytes``; one too deep to parse gets them a parse error (so a list page
    is asked for again and read mended, as over HTTP). On Windows this is the SDK's transport.
    """
    if sys.platform == "win32":  # pragma: no cover -- the SDK's job objects end the process tree
        async with stdio_client(server) as streams:
            yield streams
        return
    process = await anyio.open_process(
        [server.command, *server.args],
        env=get_default_environment() | (server.env or {}),
        stderr=sys.stderr,
        cwd=server.cwd,
        start_new_session=True,
    )
    pipes = _Pipes(server, process, meter)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(pipes.read)
        tasks.start_soon(pipes.write)
        try:
            yield pipes.incoming, pipes.outgoing
        finally:
            with anyio.CancelScope(shield=True):  # every wait in it is bounded
                await pipes.end()
            tasks.cancel_scope.cancel()


@final
class _Pipes:
    """The pipes of one stdio server and the session's streams, and the requests it awaits."""

    __slots__ = (
        "_awaited",
        "_incoming_send",
        "_meter",
        "_outgoing_receive",
        "_process",
        "_server",
        "_written",
        "incoming",
        "outgoing",
    )

    def __init__(
        self, server: StdioServerParameters, process: anyio.abc.Process, meter: Meter
    ) -> None:
        self._server = server
        self._process = process
        self._meter = meter
        self._incoming_send, self.incoming = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](0)
        self.outgoing, self._outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)
        self._awaited: dict[types.RequestId, None] = {}  # sent, not yet answered
        self._written = anyio.Event()

    async def read(self) -> None:
        """Hand the server's messages to the session, a bounded line at a time."""
        stdout = self._process.stdout
        assert stdout is not None  # noqa: S101 -- opened with a pipe
        lines = _Lines(self._meter.limit)
        try:
            async with self._incoming_send:
                async for chunk in stdout:
                    self._meter.received += len(chunk)
                    for line in lines.feed(chunk):
                        await self._deliver(line)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass  # the session ended (or the pipe did): the drain below remains
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for _ in stdout:  # read to the end: a server blocked writing could not exit
                pass

    async def write(self) -> None:
        """Send the session's messages to the server, one line each."""
        stdin = self._process.stdin
        assert stdin is not None  # noqa: S101 -- opened with a pipe
        server = self._server
        try:
            async with self._outgoing_receive:
                async for session_message in self._outgoing_receive:
                    message = session_message.message
                    if isinstance(message, types.JSONRPCRequest):
                        self._awaited[message.id] = None
                    elif isinstance(message, types.JSONRPCNotification):
                        self._forget_cancelled(message)
                    data = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await stdin.send(data.encode(server.encoding, server.encoding_error_handler))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await self._incoming_send.aclose()  # the session sees the end instead of waiting
        finally:
            self._written.set()

    def _forget_cancelled(self, notification: types.JSONRPCNotification) -> None:
        """A request the session gave up on (it timed out, say) is no longer awaited."""
        if notification.method == "notifications/cancelled" and notification.params:
            given_up = notification.params.get("requestId")
            if isinstance(given_up, int | str):
                self._awaited.pop(given_up, None)

    async def end(self) -> None:
        """Stop both streams, let accepted messages out, then end the server as the SDK does."""
        self.incoming.close()
        self.outgoing.close()
        with anyio.move_on_after(_FLUSH_SECONDS):
            await self._written.wait()
        process = self._process
        await _close(process.stdin)  # the server's cue to exit
        if not await _exited(process, PROCESS_TERMINATION_TIMEOUT):
            await terminate_posix_process_tree(process, FORCE_KILL_TIMEOUT)
            await _exited(process, FORCE_KILL_TIMEOUT)
        await _close(process.stdout)  # a process it left behind may hold the pipe: stop reading
        # The event loop's transport of the process is closed only once both pipes report their
        # end, which a process left behind can postpone past the loop's own end (a warning at
        # collection): close it now. Nothing public reaches it; anyio's process holds asyncio's.
        transport = getattr(getattr(process, "_process", None), "_transport", None)
        close = getattr(transport, "close", None)
        if callable(close):
            with suppress(PermissionError):  # re-killing a child of another user, on 3.11 and 3.12
                close()

    async def _deliver(self, line: bytes | None) -> None:
        meter = self._meter
        if line is None:
            meter.refused = True
            await self._fail_awaited(_oversized(meter.limit))
            return
        if not line.strip():
            return
        if meter.deep:
            line = _readable(line, meter)
        try:
            text = line.decode(self._server.encoding, self._server.encoding_error_handler)
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValueError as exc:
            if "recursion" in str(exc) and self._awaited:  # an answer nested too deep to parse
                why = f"the remote's answer could not be parsed: {_first_words(exc)}"
                await self._fail_awaited(types.ErrorData(code=types.PARSE_ERROR, message=why))
            else:  # not something the session awaits: handed on, as the SDK's reader does
                await self._incoming_send.send(exc)
            return
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._awaited.pop(message.id, None)  # type: ignore[arg-type]  # an error's id may be None
        await self._incoming_send.send(SessionMessage(message))

    async def _fail_awaited(self, error: types.ErrorData) -> None:
        """Answer every awaited request with ``error`` (none awaited: the log says it)."""
        if not self._awaited:
            _log.warning("%s: %s", self._server.command, error.message)
            return
        for request_id in list(self._awaited):
            del self._awaited[request_id]
            failed = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
            await self._incoming_send.send(SessionMessage(failed))


def _first_words(exc: ValueError) -> str:
    """What a parser's error says, without the (long) input it quotes."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    said = lines[1] if len(lines) > 1 else lines[0] if lines else type(exc).__name__
    return said.split(" [type=", 1)[0]


async def _close(pipe: anyio.abc.AsyncResource | None) -> None:
    if pipe is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await pipe.aclose()


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    """Whether ``process`` exited within ``seconds``.

    Its return code is polled: ``wait()`` also waits for its pipes, which a process it left
    behind may hold open.
    """
    with anyio.move_on_after(seconds):
        while process.returncode is None:  # noqa: ASYNC110 -- no event tells of an exit alone
            await anyio.sleep(_EXIT_POLL_SECONDS)
        return True
    return False
