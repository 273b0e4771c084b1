"""Serving as a process does: listen first, say where once bound, stop cleanly on a signal.

:meth:`McpServer.run <mcp_core.server.McpServer.run>` (and so ``App.run`` and ``mcp-core run``)
goes through here. The socket is
bound before anything is announced, so a taken port is one clear :class:`ListenError` and the
"serving ... at" line never lies. SIGINT and SIGTERM end the serving cleanly, so the process
ends like any other program after a goodbye line instead of a ``KeyboardInterrupt`` traceback:
while uvicorn serves, it handles them itself (its shutdown is what tells sse-starlette to end
the open SSE streams at once, and a second Ctrl-C forces the exit), then raises the signal again
for :func:`run_until_stopped` to see; at any other moment (starting, stdio) the signal cancels
the serving task.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
import uvicorn

from mcp_core.errors import ListenError
from mcp_core.server._edge import DEFAULT_HEADER_TIMEOUT, header_deadline

if TYPE_CHECKING:
    from types import FrameType

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "LOG_FORMAT",
    "SHUTDOWN_GRACE",
    "listen",
    "log_to_stderr",
    "run_server",
    "run_until_stopped",
    "say",
    "serve_asgi",
    "url_of",
]

# Seconds uvicorn waits for open requests and streams (an SSE stream stays open until its client
# leaves) before cancelling them, so a stop never hangs on an idle client.
SHUTDOWN_GRACE: Final = 5

_STOPPING: Final = (signal.SIGINT, signal.SIGTERM)

LOG_FORMAT: Final = "%(levelname)s %(name)s: %(message)s"
"""How a served process logs, whether started by ``mcp-core run`` or by ``app.run()``."""


def log_to_stderr(level: int | str = logging.WARNING) -> None:
    """Log to stderr in :data:`LOG_FORMAT` from ``level`` on, unless logging is set up already.

    A program that configured logging itself (any handler on the root logger) keeps its own.
    """
    logging.basicConfig(level=level, stream=sys.stderr, format=LOG_FORMAT)


def say(text: str) -> None:
    """One line for the person running the server, on stderr (stdout may be the protocol)."""
    sys.stderr.write(f"mcp-core: {text}\n")
    sys.stderr.flush()


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port), or a :class:`ListenError`."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if not 0 <= port <= 65535:  # noqa: PLR2004 -- the TCP port range
        raise ListenError(
            f"cannot listen on {where}: a port is a number from 0 to 65535 (0: any free port)",
            host=host,
            port=port,
        )
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise ListenError(
            f"cannot listen on {where}: {host!r} is not an address or a known host name "
            f"({exc.strerror}); use an address of this machine, e.g. 127.0.0.1",
            host=host,
            port=port,
        ) from exc
    sock = socket.socket(family, kind, proto)
    try:
        # As uvicorn does: a restarted server may bind while old connections are in TIME_WAIT.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ListenError(
            f"cannot listen on {where}: {_why(exc, port)}",
            host=host,
            port=port,
            error_number=exc.errno,
        ) from exc
    sock.setblocking(False)  # noqa: FBT003 -- the socket API's own positional flag
    return sock


def _why(exc: OSError, port: int) -> str:
    if exc.errno == errno.EADDRINUSE:
        return "the address is already in use; choose another port, or stop the server using it"
    if exc.errno == errno.EACCES:
        if 0 < port < 1024:  # noqa: PLR2004 -- the privileged port range
            return (
                "permission denied (ports below 1024 need privileges); choose a port from 1024 up"
            )
        return "permission denied; choose another port"
    if exc.errno == errno.EADDRNOTAVAIL:
        return "that address is not one of this machine's; use one of its addresses, e.g. 127.0.0.1"
    return f"{exc.strerror or exc}; check the host and port"


def url_of(sock: socket.socket, path: str) -> str:
    """The ``http://host:port/path`` a listening socket serves (the real port when bound to 0)."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


class _Server(uvicorn.Server):
    """uvicorn's server, telling ``ready`` once it has started (lifespan done, socket served)."""

    def __init__(self, config: uvicorn.Config, ready: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._ready is not None:
            self._ready()


async def serve_asgi(
    app: ASGIApp,
    sock: socket.socket,
    *,
    ready: Callable[[], None] | None = None,
    header_timeout: float | None = DEFAULT_HEADER_TIMEOUT,
) -> None:
    """Serve ``app`` with uvicorn on the listening ``sock`` until cancelled or signalled.

    ``ready`` is called once the server accepts requests. A connection whose request headers
    take over ``header_timeout`` seconds is answered 408 and closed (see
    :func:`~mcp_core.server._edge.header_deadline`). The client address the app sees is the
    connection's peer: ``X-Forwarded-For`` is for the app to believe or not (its
    ``trusted_proxies``). A signal, or cancelling this, stops accepting, gives open requests
    :data:`SHUTDOWN_GRACE` seconds, and runs the app's lifespan shutdown.
    """
    server: _Server | None = None

    async def ending_open_streams(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        streaming = False

        async def tracked(message: Message) -> None:
            nonlocal streaming
            if message["type"] == "http.response.start":
                streaming = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                streaming = False
            await send(message)

        await app(scope, receive, tracked)
        if streaming and server is not None and server.should_exit:
            # At shutdown sse-starlette ends the SDK's SSE streams without their last chunk:
            # send it, so the client sees the stream end (and uvicorn logs no error about it).
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    config = uvicorn.Config(
        ending_open_streams,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        http=header_deadline(header_timeout),
        proxy_headers=False,
    )
    server = _Server(config, ready)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        # Stop the way uvicorn does on a signal (drain, then the lifespan's shutdown), shielded
        # from the cancellation that asked for it; then let that cancellation go on.
        server.should_exit = True
        with anyio.CancelScope(shield=True):
            await serving
        raise


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class Servable(Protocol):
    """What :func:`run_server` serves (``McpServer`` is one), so this module needs no server's."""

    @property
    def lowlevel(self) -> _Named:
        """The SDK server, for its name."""
        ...

    async def run_stdio(self) -> None:
        """Serve over stdin and stdout until the input ends."""
        ...

    async def run_http(self, *args: Any, **kwargs: Any) -> None:
        """Serve streamable HTTP until cancelled."""
        ...


def run_server(
    server: Servable,
    transport: str,
    *,
    host: str,
    port: int,
    path: str,
    options: dict[str, object],
) -> signal.Signals | None:
    """Serve ``server`` in this process (stdio or streamable HTTP) until stopped; see ``McpServer.run``."""
    log_to_stderr()  # the same lines as `mcp-core run`'s, unless the program chose its own
    name = server.lowlevel.name
    if transport == "stdio":
        stopped = run_until_stopped(server.run_stdio)
    elif transport == "http":

        def ready(url: str) -> None:
            say(f"serving {name} at {url}")

        async def serve() -> None:
            await server.run_http(host=host, port=port, path=path, ready=ready, **options)

        stopped = run_until_stopped(serve)
    else:
        raise ValueError(f"transport must be 'stdio' or 'http', got {transport!r}")
    if stopped is not None:
        say(f"stopped serving {name} ({stopped.name})")
    return stopped


def run_until_stopped(main: Callable[[], Awaitable[None]]) -> signal.Signals | None:
    """Run ``main`` in a new event loop until it returns, or until SIGINT or SIGTERM stops it.

    Returns the signal that stopped it, or None. The first signal cancels ``main`` (which may
    clean up); a second one while it does raises ``KeyboardInterrupt`` at once, as Ctrl-C
    twice does elsewhere. From a thread other than the main one, signals are left to the caller.
    """
    stopped: list[signal.Signals] = []

    async def guarded() -> None:
        loop = asyncio.get_running_loop()
        with anyio.CancelScope() as scope, _handling(_STOPPING, stopped, loop, scope.cancel):
            await main()

    try:
        anyio.run(guarded)
    except KeyboardInterrupt:
        return stopped[0] if stopped else signal.SIGINT
    return stopped[0] if stopped else None


@contextmanager
def _handling(
    signals: tuple[signal.Signals, ...],
    stopped: list[signal.Signals],
    loop: asyncio.AbstractEventLoop,
    stop: Callable[[], None],
) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if stopped:
            raise KeyboardInterrupt
        stopped.append(signal.Signals(signum))
        # A signal handler runs between two bytecodes of whatever the loop was doing: hand the
        # cancellation to the loop rather than cancel from inside it.
        loop.call_soon_threadsafe(stop)

    previous = {sig: signal.signal(sig, on_signal) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
