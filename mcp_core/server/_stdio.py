r"""The stdio transport, on the event loop: the SDK's message streams over non-blocking pipes.

The SDK's ``stdio_server`` reads and writes the process's standard streams through
``anyio.wrap_file``: every line read and every response written (and flushed) is a hop to a
worker thread and back, three per request (what they cost is measured in ADR 0052). This
transport hands the same streams to the same SDK server
(``Server.run``: its sessions, dispatch and middleware are untouched) but serves the pipes from the
event loop itself (``loop.connect_read_pipe`` / ``connect_write_pipe``), and writes a response's
JSON in one piece, pre-encoded list pages included (:class:`~mcp_core.server._paging.EncodedItems`).

What the SDK's transport promises is kept: while serving, file descriptor 0 reads the null device
and 1 writes to stderr, so a handler that prints or reads stdin cannot corrupt the protocol; both
are restored afterwards. Input is decoded as UTF-8 (undecodable bytes replaced), split into lines
(``\n``, ``\r\n`` or ``\r``) and parsed by the SDK's own message adapter; a line that is not a
JSON-RPC message goes to the server as the exception, as with the SDK. Every message is written as
the SDK writes it (``model_dump_json(by_alias=True, exclude_unset=True)``, one line), responses
by an equivalent, faster encoder (ADR 0052). A client that closes its
end ends the serving, as end of input does.

Where the pipes cannot be served from the loop (another event loop than asyncio, Windows, or a
standard stream that is a regular file rather than a pipe, socket or terminal), the SDK's transport
is used as it is.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
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

from mcp_core.server._paging import encode_response
from mcp_core.server._pipes import StdioPipes, open_pipes, servable

__all__ = ["encode_message", "encode_response", "stdio_streams"]

_log = logging.getLogger("mcp_core.server")

_NEWLINE: Final = b"\n"


def encode_message(message: types.JSONRPCMessage) -> bytes:
    """``message`` as the SDK's stdio transport writes it, as one line of bytes.

    A response is encoded field by field (``jsonrpc``, ``id``, ``result``, as its model dumps
    them), its result with the same encoder (:func:`~mcp_core.server._paging.wire_json`) and
    any pre-encoded list page inserted as it is; anything else goes through the SDK's model.
    """
    if type(message) is types.JSONRPCResponse:
        return encode_response(message.id, message.result) + _NEWLINE
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + _NEWLINE


@asynccontextmanager
async def stdio_streams(
    pipes: StdioPipes | None = None,
    *,
    replay: Sequence[str] = (),
    unanswered: types.RequestId | None = None,
    watch: Callable[[str], None] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK server's read and write streams over this process's stdin and stdout.

    See the module docstring; falls back to the SDK's ``stdio_server`` where the pipes cannot
    be served from the event loop. The stdio prelude (ADR 0115) hands over ``pipes`` it has
    opened and read from: the server first reads the ``replay`` lines (what the prelude took in
    that the server must see too), and the answer to the replayed request ``unanswered`` (the
    ``initialize`` the prelude answered already) is not written; ``watch`` sees each line read
    from the pipes before the server does (the prelude's call still running heeds its
    cancellation).
    """
    if pipes is not None:
        async with _served(pipes, replay, unanswered, watch) as streams:
            yield streams
        return
    if not servable():
        from mcp.server.stdio import stdio_server  # noqa: PLC0415 -- only the fallback needs it

        async with stdio_server() as streams:
            yield streams
        return
    async with open_pipes() as opened, _served(opened, (), None, None) as streams:
        yield streams


@asynccontextmanager
async def _served(
    pipes: StdioPipes,
    replay: Sequence[str],
    unanswered: types.RequestId | None,
    watch: Callable[[str], None] | None,
) -> AsyncIterator[tuple[Any, Any]]:
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_read, pipes, replay, watch, read_writer)
        tasks.start_soon(_write, write_reader, pipes, unanswered)
        yield read_stream, write_stream


async def _read(
    pipes: StdioPipes,
    replay: Sequence[str],
    watch: Callable[[str], None] | None,
    out: ContextSendStream[SessionMessage | Exception],
) -> None:
    """Each input line, parsed by the SDK's message adapter, to the server (until end of input)."""
    async with out:
        for replayed in replay:
            await _forward(replayed, out)
        while (line := await pipes.line()) is not None:
            if watch is not None:
                watch(line)
            await _forward(line, out)


async def _forward(text: str, out: ContextSendStream[SessionMessage | Exception]) -> None:
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except Exception as exc:  # noqa: BLE001 -- the SDK hands the server what it could not parse
        await out.send(exc)
        return
    await out.send(SessionMessage(message))


async def _write(
    messages: ContextReceiveStream[SessionMessage],
    pipes: StdioPipes,
    unanswered: types.RequestId | None,
) -> None:
    """Each message the server sends, as one line; waits whenever the pipe is full."""
    async with messages:
        async for session_message in messages:
            message = session_message.message
            if (
                unanswered is not None
                and isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
                and message.id == unanswered
            ):
                unanswered = None  # the replayed initialize: the client has its answer already
                if isinstance(message, types.JSONRPCError):
                    _log.error(
                        "the server refused the initialize the stdio prelude accepted: %s",
                        message.error.message,
                    )
                continue
            if not await pipes.write(encode_message(message)):
                return
