"""Raw JSON-RPC in, bytes out: drives an SDK low-level server as the stdio transport does.

Every library measured here serves through the official SDK's low-level ``Server``
(``mcp.server.lowlevel.server.Server``): mcp-core's ``McpServer.lowlevel``, ``MCPServer``'s
``_lowlevel_server`` and fastmcp's ``_mcp_server``. :class:`WireClient` feeds it what a stdio
client would write (a JSON line, parsed by the SDK's own message adapter exactly as
``mcp.server.stdio`` parses it) and turns each response into the bytes stdio would write
(``model_dump_json(by_alias=True, exclude_unset=True)``), over in-memory streams, with no client
library and no client-side validation. The time of a request is the time from the line in to the
bytes out: the server's own time, transport framing included, no file descriptors.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final, Protocol, final

import anyio
import anyio.abc
import mcp_types
from mcp.server.models import InitializationOptions
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from mcp_types.version import LATEST_HANDSHAKE_VERSION

__all__ = ["LowLevel", "WireClient", "WireError", "serving"]

PROTOCOL_VERSION: Final = LATEST_HANDSHAKE_VERSION


class LowLevel(Protocol):
    """The part of the SDK's low-level ``Server`` the driver uses."""

    async def run(
        self,
        read_stream: Any,
        write_stream: Any,
        initialization_options: InitializationOptions,
        raise_exceptions: bool = ...,
    ) -> None:
        """Serve one connection until the read side closes."""
        ...

    def create_initialization_options(self) -> InitializationOptions:
        """What ``initialize`` answers with."""
        ...


class WireError(RuntimeError):
    """The server answered a request with a JSON-RPC error (the message holds the bytes)."""


@final
class WireClient:
    """Sends JSON-RPC requests as raw lines and returns each response as the bytes stdio writes."""

    __slots__ = ("_next_id", "_receive", "_send")

    def __init__(self, send: Any, receive: Any) -> None:
        self._send = send
        self._receive = receive
        self._next_id = 0

    async def initialize(self) -> bytes:
        """The handshake: ``initialize`` then ``notifications/initialized``."""
        answer = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcp-core-bench", "version": "0"},
            },
        )
        await self.notify("notifications/initialized")
        return answer

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification line (no answer expected)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(json.dumps(message).encode())

    async def request(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        """Send one request line and return the response line's bytes; raise WireError on an error."""
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self._write(json.dumps(message).encode())
        while True:
            received = await self._receive.receive()
            if isinstance(received, Exception):
                raise received
            assert isinstance(received, SessionMessage)  # noqa: S101 -- the stream's type
            answer = received.message
            if not isinstance(answer, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
                continue  # a notification or a server-to-client request: not ours
            if answer.id != request_id:
                continue
            data = answer.model_dump_json(by_alias=True, exclude_unset=True).encode()
            if isinstance(answer, mcp_types.JSONRPCError):
                raise WireError(data.decode(errors="replace")[:500])
            return data

    async def timed(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, bytes]:
        """``request`` and the seconds it took, line in to bytes out."""
        start = time.perf_counter()
        data = await self.request(method, params)
        return time.perf_counter() - start, data

    async def _write(self, line: bytes) -> None:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        await self._send.send(SessionMessage(message))


@asynccontextmanager
async def serving(server: LowLevel) -> AsyncIterator[WireClient]:
    """Run ``server`` on in-memory streams; yield a client that has not initialized yet."""
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        client_read, client_write = client_streams
        server_read, server_write = server_streams
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(
                server.run, server_read, server_write, server.create_initialization_options()
            )
            try:
                yield WireClient(client_write, client_read)
            finally:
                tasks.cancel_scope.cancel()
