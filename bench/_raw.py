"""Raw JSON-RPC clients of a server in another process: lines over its stdio, POSTs over HTTP.

No MCP client library is involved: a request is ``json.dumps`` of the JSON-RPC message, written
as one line into the server's stdin or POSTed to its streamable HTTP endpoint (aiohttp, whose
per-request cost is a fraction of the servers'), and the answer is the bytes the server wrote,
found by id (stdio) or read from the response body (HTTP: a JSON body, or the ``data`` of the
server-sent event carrying the answer). The time of a request is from just before writing it to
just after its answer's last byte arrived: what a client feels, transport included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any, Final, Protocol, final

import aiohttp

__all__ = [
    "PROTOCOL_VERSION",
    "Connection",
    "HttpConnection",
    "Server",
    "ServerGoneError",
    "StdioConnection",
    "WireError",
    "http_client",
    "spawn_http",
    "spawn_stdio",
]

PROTOCOL_VERSION: Final = "2025-11-25"
"""The handshake's protocol revision: every library measured here speaks it."""

_LINE_LIMIT: Final = 1 << 30  # a full list of 100k tools is one line of tens of MiB
_STOP_GRACE: Final = 10.0
# The SDK (and the floor) write a response's members in this order, so the id and the outcome
# are read from its first bytes without parsing a list of thousands of tools.
_HEAD: Final = re.compile(rb'\{"jsonrpc":"2\.0","id":(-?\d+),"(result|error)"')
_SMALL: Final = 1 << 16
_OK: Final = 200
_ACCEPTED: Final = 202


class WireError(RuntimeError):
    """The server answered with a JSON-RPC error or an HTTP error status (the message shows it)."""


class ServerGoneError(RuntimeError):
    """The server process closed its side before answering."""


class Connection(Protocol):
    """One client session with a server."""

    async def request(
        self, method: str, params: dict[str, Any] | None = None
    ) -> tuple[float, bytes]:
        """Send a request; return the seconds until its answer arrived and the answer's bytes."""
        ...

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (nothing is answered)."""
        ...


def _encode(request_id: int | None, method: str, params: dict[str, Any] | None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        message["id"] = request_id
    message["method"] = method
    if params is not None:
        message["params"] = params
    return json.dumps(message, separators=(",", ":")).encode()


def _head(data: bytes) -> tuple[int | None, bool]:
    """The answer's id (None for a notification or a line that is no JSON object) and whether it is an error."""
    found = _HEAD.match(data)
    if found is not None:
        return int(found.group(1)), found.group(2) == b"error"
    if not data.startswith(b"{"):  # not JSON-RPC: a profiler wrapping the server says hello
        return None, False
    if len(data) > _SMALL:  # no known prefix and too long to be anything but a result
        return None, False
    message = json.loads(data)
    request_id = message.get("id")
    return (request_id if isinstance(request_id, int) else None), "error" in message


def _checked(data: bytes, request_id: int) -> bytes:
    answered, failed = _head(data)
    if answered != request_id:
        raise WireError(f"expected the answer to request {request_id}, got {data[:300]!r}")
    if failed:
        raise WireError(data[:500].decode(errors="replace"))
    return data


# -- processes --------------------------------------------------------------------------------


@final
class Server:
    """A server process this client spawned, its stderr kept in a temporary file."""

    __slots__ = ("errors", "process", "spawned")

    def __init__(
        self, process: asyncio.subprocess.Process, errors: IO[bytes], spawned: float
    ) -> None:
        self.process = process
        self.errors = errors
        self.spawned = spawned

    def rss_mib(self) -> float | None:
        """The process's peak resident set size so far (``VmHWM``), in MiB; None if unreadable."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        except OSError:
            return None
        found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        return int(found.group(1)) / 1024 if found else None

    def cpu_s(self) -> float | None:
        """The CPU time (user and system, every thread) the process has used so far; None if unreadable."""
        try:
            stat = Path(f"/proc/{self.process.pid}/stat").read_text(encoding="ascii")
        except OSError:
            return None
        # Fields after the command name, which may hold spaces: state is the first, utime the 12th.
        fields = stat.rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stderr_tail(self, limit: int = 2000) -> str:
        """The last ``limit`` characters the server wrote to stderr."""
        self.errors.flush()
        self.errors.seek(0)
        return self.errors.read().decode(errors="replace")[-limit:]

    async def stop(self) -> int | None:
        """End the server: close its stdin (stdio) or send SIGTERM (HTTP), then kill if it lingers."""
        process = self.process
        if process.returncode is None:
            if process.stdin is not None:
                process.stdin.close()
            else:
                process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), _STOP_GRACE)
            except TimeoutError:
                process.kill()
                await process.wait()
        self.errors.close()
        return process.returncode


@asynccontextmanager
async def _spawned(
    command: Sequence[str], *, stdio: bool, pass_fds: Sequence[int] = ()
) -> AsyncIterator[Server]:
    errors = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by Server.stop
    spawned = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE if stdio else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE if stdio else errors,
        stderr=errors,
        pass_fds=pass_fds,
        limit=_LINE_LIMIT,
    )
    server = Server(process, errors, spawned)
    try:
        yield server
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                await server.stop()


# -- stdio ------------------------------------------------------------------------------------


@final
class StdioConnection:
    """Requests as lines on a server's stdin; answers read from its stdout by id."""

    __slots__ = ("_next_id", "_reader", "_writer")

    def __init__(self, server: Server) -> None:
        stdin, stdout = server.process.stdin, server.process.stdout
        if stdin is None or stdout is None:
            raise ValueError("a stdio connection needs the server's stdin and stdout as pipes")
        self._writer = stdin
        self._reader = stdout
        self._next_id = 0

    async def request(
        self, method: str, params: dict[str, Any] | None = None
    ) -> tuple[float, bytes]:
        """Write one request line; return the seconds until its answer line and the answer."""
        self._next_id += 1
        request_id = self._next_id
        line = _encode(request_id, method, params) + b"\n"
        start = time.perf_counter()
        self._writer.write(line)
        await self._writer.drain()
        while True:
            data = await self._reader.readline()
            if not data:
                raise ServerGoneError(f"the server closed stdout before answering {method}")
            if _head(data)[0] == request_id:
                break
        seconds = time.perf_counter() - start
        return seconds, _checked(data.rstrip(b"\r\n"), request_id)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Write one notification line."""
        self._writer.write(_encode(None, method, params) + b"\n")
        await self._writer.drain()


@asynccontextmanager
async def spawn_stdio(command: Sequence[str]) -> AsyncIterator[tuple[Server, StdioConnection]]:
    """Start ``command`` with pipes on stdin and stdout; yield it and a connection over them."""
    async with _spawned(command, stdio=True) as server:
        yield server, StdioConnection(server)


# -- streamable HTTP --------------------------------------------------------------------------


def _event_data(body: bytes, request_id: int) -> bytes:
    """The ``data`` of the server-sent event answering ``request_id`` in an SSE response body."""
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [line for line in event.split(b"\n") if line.startswith(b"data:")]
        data = b"\n".join(line[5:].removeprefix(b" ") for line in lines)
        if data and _head(data)[0] == request_id:
            return data
    raise WireError(f"no event answers request {request_id} in {body[:300]!r}")


def http_client() -> aiohttp.ClientSession:
    """An HTTP client with no connection cap and no timeouts (the caller bounds the run)."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        timeout=aiohttp.ClientTimeout(total=None),
    )


@final
class HttpConnection:
    """One streamable-HTTP session: POSTs to the endpoint, the session id once initialized."""

    __slots__ = ("_client", "_headers", "_next_id", "_url")

    def __init__(self, client: aiohttp.ClientSession, url: str) -> None:
        self._client = client
        self._url = url
        self._headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        self._next_id = 0

    async def _post(self, body: bytes) -> tuple[int, str, str | None, bytes]:
        async with self._client.post(self._url, data=body, headers=self._headers) as response:
            data = await response.read()
            return (
                response.status,
                response.headers.get("content-type", ""),
                response.headers.get("mcp-session-id"),
                data,
            )

    async def request(
        self, method: str, params: dict[str, Any] | None = None
    ) -> tuple[float, bytes]:
        """POST one request; return the seconds until its whole response arrived and the answer."""
        self._next_id += 1
        request_id = self._next_id
        body = _encode(request_id, method, params)
        start = time.perf_counter()
        status, kind, session, data = await self._post(body)
        seconds = time.perf_counter() - start
        if status != _OK:
            raise WireError(f"{method}: HTTP {status}: {data[:300]!r}")
        if kind.startswith("text/event-stream"):
            data = _event_data(data, request_id)
        if method == "initialize":
            if session is not None:
                self._headers["mcp-session-id"] = session
            self._headers["mcp-protocol-version"] = PROTOCOL_VERSION
        return seconds, _checked(data, request_id)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """POST one notification (answered 202 Accepted)."""
        status, _, _, data = await self._post(_encode(None, method, params))
        if status not in (_OK, _ACCEPTED):
            raise WireError(f"{method}: HTTP {status}: {data[:300]!r}")


@asynccontextmanager
async def spawn_http(command: Sequence[str]) -> AsyncIterator[tuple[Server, str]]:
    """Bind 127.0.0.1 on a free port, start ``command + [FD]`` serving on it; yield it and the URL.

    The listening socket exists before the server starts, so connections made at once wait in
    its backlog until the server accepts them: the client starts timing at spawn, as over stdio.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(2048)
        port = listener.getsockname()[1]
        fd = listener.fileno()
        os.set_inheritable(fd, True)  # noqa: FBT003 -- the stdlib's signature
        spawning = _spawned([*command, str(fd)], stdio=False, pass_fds=[fd])
        async with spawning as server:
            listener.close()  # the server holds it now; if it dies, connecting fails at once
            yield server, f"http://127.0.0.1:{port}/mcp"
    finally:
        listener.close()
