r"""The stdio transport, on the event loop: the SDK's message streams over non-blocking pipes.

The SDK's ``stdio_server`` reads and writes the process's standard streams through
``anyio.wrap_file``: every line read and every response written (and flushed) is a hop to a
worker thread and back, three per request. On a busy machine those hops were two fifths of a
``ping`` and most of the difference between a request and the bare cost of the pipe
(``bench/PROFILES.md``). This transport hands the same streams to the same SDK server
(``Server.run``: its sessions, dispatch and middleware are untouched) but serves the pipes from the
event loop itself (``loop.connect_read_pipe`` / ``connect_write_pipe``), and writes a response's
JSON in one piece, pre-encoded list pages included (:class:`~mcp_core.server._paging.EncodedItems`).

What the SDK's transport promises is kept: while serving, file descriptor 0 reads the null device
and 1 writes to stderr, so a handler that prints or reads stdin cannot corrupt the protocol; both
are restored afterwards. Input is decoded as UTF-8 (undecodable bytes replaced), split into lines
(``\n``, ``\r\n`` or ``\r``) and parsed by the SDK's own message adapter; a line that is not a
JSON-RPC message goes to the server as the exception, as with the SDK. Every message is written as
the SDK writes it (``model_dump_json(by_alias=True, exclude_unset=True)``, one line), responses
by an equivalent encoder that is three times faster for large results. A client that closes its
end ends the serving, as end of input does.

Where the pipes cannot be served from the loop (another event loop than asyncio, Windows, or a
standard stream that is a regular file rather than a pipe, socket or terminal), the SDK's transport
is used as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import mcp_types as types
from mcp.shared._context_streams import (
    ContextReceiveStream,
    ContextSendStream,
    create_context_streams,
)
from mcp.shared.message import SessionMessage

from mcp_core.server._paging import EncodedItems, wire_json

__all__ = ["encode_message", "encode_response", "stdio_streams"]

_log = logging.getLogger("mcp_core.server")

# Bytes read from the pipe per line search; longer lines are read in several pieces.
_CHUNK: Final = 64 * 1024
_NEWLINE: Final = b"\n"
_RESPONSE_HEAD: Final = b'{"jsonrpc":"2.0","id":'


def encode_message(message: types.JSONRPCMessage) -> bytes:
    """``message`` as the SDK's stdio transport writes it, as one line of bytes.

    A response is encoded field by field (``jsonrpc``, ``id``, ``result``, as its model dumps
    them), its result with the same encoder (:func:`~mcp_core.server._paging.wire_json`) and
    any pre-encoded list page inserted as it is; anything else goes through the SDK's model.
    """
    if type(message) is types.JSONRPCResponse:
        return encode_response(message.id, message.result) + _NEWLINE
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + _NEWLINE


def encode_response(request_id: types.RequestId, result: dict[str, Any]) -> bytes:
    """The JSON of the response ``result`` to ``request_id``, as its SDK model writes it."""
    return b"".join(
        (_RESPONSE_HEAD, wire_json(request_id), b',"result":', _encode_result(result), b"}")
    )


def _encode_result(result: dict[str, Any]) -> bytes:
    for value in result.values():
        if type(value) is EncodedItems:
            break
    else:
        return wire_json(result)
    parts = [
        wire_json(key)
        + b":"
        + (value.encoded() if type(value) is EncodedItems else wire_json(value))
        for key, value in result.items()
    ]
    return b"{" + b",".join(parts) + b"}"


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK server's read and write streams over this process's stdin and stdout.

    See the module docstring; falls back to the SDK's ``stdio_server`` where the pipes cannot
    be served from the event loop.
    """
    loop = _asyncio_loop()
    if loop is None or not _pipe_like(0) or not _pipe_like(1):
        from mcp.server.stdio import stdio_server  # noqa: PLC0415 -- only the fallback needs it

        async with stdio_server() as streams:
            yield streams
        return
    with _claimed(0, _null_input) as stdin_fd, _claimed(1, _stderr_output) as stdout_fd:
        read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
        write_stream, write_reader = create_context_streams[SessionMessage](0)
        reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
            os.fdopen(os.dup(stdin_fd), "rb", buffering=0),
        )
        write_transport, write_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(stdout_fd), "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_read, reader, read_writer)
                # A client that closes its end of stdout has left: stop reading as well.
                tasks.start_soon(_write, write_reader, writer, read_transport.close)
                yield read_stream, write_stream
        finally:
            read_transport.close()
            write_transport.close()


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    if sys.platform == "win32":  # pragma: no cover -- the proactor loop serves pipes differently
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio): the SDK's transport serves it
        return None


def _pipe_like(fd: int) -> bool:
    """Whether the loop can serve ``fd``: a pipe, a socket or a terminal (not a regular file)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _null_input() -> int:
    return os.open(os.devnull, os.O_RDONLY)


def _stderr_output() -> int:
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)


@contextlib.contextmanager
def _claimed(fd: int, diversion: Callable[[], int]) -> Iterator[int]:
    """A private descriptor of the wire ``fd`` was, with ``fd`` itself diverted meanwhile.

    Anything else in the process that reads fd 0 or writes fd 1 (a handler's ``print``) gets the
    diversion instead of the protocol's pipe. Afterwards ``fd`` is the wire again, in blocking
    mode as it was.
    """
    wire = os.dup(fd)
    os.set_inheritable(wire, False)  # noqa: FBT003 -- the os API's own positional flag
    diverted = False
    try:
        replacement = diversion()
        try:
            os.dup2(replacement, fd)
            diverted = True
        finally:
            os.close(replacement)
        yield wire
    finally:
        with contextlib.suppress(OSError):
            os.set_blocking(wire, True)
        if diverted:
            os.dup2(wire, fd)
        os.close(wire)


async def _read(
    reader: asyncio.StreamReader, out: ContextSendStream[SessionMessage | Exception]
) -> None:
    """Each input line, parsed by the SDK's message adapter, to the server (until end of input)."""
    async with out:
        pending: list[bytes] = []
        while True:
            try:
                chunk = await reader.readuntil(_NEWLINE)
            except asyncio.LimitOverrunError as exc:
                pending.append(await reader.readexactly(exc.consumed))
                continue
            except asyncio.IncompleteReadError as exc:
                chunk = exc.partial
                if pending:
                    chunk = b"".join(pending) + chunk
                if chunk:
                    await _forward(chunk, out)
                return
            except (ConnectionError, OSError):
                return  # the client is gone: as at end of input
            if pending:
                chunk = b"".join(pending) + chunk
                pending.clear()
            await _forward(chunk, out)


async def _forward(chunk: bytes, out: ContextSendStream[SessionMessage | Exception]) -> None:
    # As the SDK's text wrapper reads: universal newlines, undecodable bytes replaced.
    for line in chunk.splitlines():
        text = line.decode("utf-8", "replace")
        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except Exception as exc:  # noqa: BLE001 -- the SDK hands the server what it could not parse
            await out.send(exc)
            continue
        await out.send(SessionMessage(message))


async def _write(
    messages: ContextReceiveStream[SessionMessage],
    writer: asyncio.StreamWriter,
    stop_reading: Callable[[], None],
) -> None:
    """Each message the server sends, as one line; waits whenever the pipe is full."""
    async with messages:
        async for session_message in messages:
            try:
                writer.write(encode_message(session_message.message))
                await writer.drain()
            except (ConnectionError, OSError):
                _log.info("the client closed stdout; ending the session")
                stop_reading()
                return
