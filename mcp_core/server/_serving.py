"""Serving as a process does: listen first, say where once bound, stop cleanly on a signal.

:meth:`McpServer.run <mcp_core.server.McpServer.run>` (and so ``App.run`` and ``mcp-core run``)
goes through here. The socket is
bound before anything is announced, so a taken port is one clear :class:`ListenError` and the
"serving ... at" line never lies. SIGINT and SIGTERM end the serving cleanly, so the process
ends like any other program after a goodbye line instead of a ``KeyboardInterrupt`` traceback:
while uvicorn serves, the first one *drains* the server (:mod:`mcp_core.server._lifecycle`: not
ready at once, no new connections, open streams ended where their clients resume, requests in
flight finished within the drain time; a second signal cuts the drain short), then uvicorn
raises the signal again for :func:`run_until_stopped` to see; at any other moment (starting,
stdio) the signal cancels the serving task.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import math
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
import uvicorn
from sse_starlette.sse import AppStatus

from mcp_core.errors import ListenError
from mcp_core.server._edge import DEFAULT_HEADER_TIMEOUT, header_deadline
from mcp_core.server._lifecycle import DEFAULT_DRAIN_TIME, Lifecycle, check_drain_time

if TYPE_CHECKING:
    from types import FrameType

    from starlette.types import ASGIApp, Message, Receive, Scope, Send


__all__ = [
    "LOG_FORMAT",
    "listen",
    "log_to_stderr",
    "run_server",
    "run_until_stopped",
    "say",
    "serve_asgi",
    "url_of",
]

_STOPPING: Final = (signal.SIGINT, signal.SIGTERM)

_log = logging.getLogger("mcp_core.server")

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
    """uvicorn's server, telling ``ready`` once it has started and draining when stopped.

    The first SIGINT or SIGTERM starts the drain (``lifecycle``: not ready), then, ``delay``
    seconds later, uvicorn's graceful shutdown, whose timeout is the drain time; a second one
    cuts both short (what is in flight is cancelled, the lifespan still ends cleanly); a third
    leaves at once.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        ready: Callable[[], None] | None,
        lifecycle: Lifecycle,
        delay: float,
    ) -> None:
        super().__init__(config)
        self._ready = ready
        self.lifecycle = lifecycle
        self._delay = delay
        self._cutting = False

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._ready is not None:
            self._ready()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # A signal handler runs between two bytecodes of the loop's work: act from the loop.
        loop = asyncio.get_event_loop()
        if not self.lifecycle.draining:
            self.lifecycle.begin_drain()  # not ready at once; still serving for the delay
            loop.call_soon_threadsafe(loop.call_later, self._delay, self._stop_after, sig)
        elif not self._cutting:  # a second signal: stop now, cut what is in flight
            self._cutting = True
            loop.call_soon_threadsafe(self._cut, sig)
        else:  # a third: leave at once, as uvicorn does (no lifespan shutdown)
            super().handle_exit(sig, frame)
            self.force_exit = True

    def _cut(self, sig: int) -> None:
        self._stop_after(sig)
        for task in tuple(self.server_state.tasks):
            task.cancel()

    def _stop_after(self, sig: int) -> None:
        if not self.should_exit:
            # uvicorn's own first: it records the signal (raised again once stopped), and would
            # take a SIGINT arriving with should_exit already set for a second, forcing one.
            super().handle_exit(sig, None)
            self.stop()

    def stop(self) -> None:
        """Stop accepting (uvicorn's graceful shutdown) and end the open-ended streams."""
        self.lifecycle.stop_accepting()
        self.should_exit = True


class _AutomaticSseDrain:
    """sse-starlette's process-wide "end every SSE stream at shutdown", off while we serve.

    Counted, so servers that overlap in one process restore it only when the last one ends.
    """

    __slots__ = ("_held", "_saved")

    def __init__(self) -> None:
        self._held = 0
        self._saved = True

    def hold(self) -> None:
        if self._held == 0:
            self._saved = AppStatus.enable_automatic_graceful_drain
            AppStatus.enable_automatic_graceful_drain = False
        self._held += 1

    def release(self) -> None:
        self._held -= 1
        if self._held == 0:
            AppStatus.enable_automatic_graceful_drain = self._saved


_SSE_DRAIN: Final = _AutomaticSseDrain()


class _Tracked:
    """The served app, counting what a drain finishes or cuts and ending streams left open."""

    __slots__ = ("_app", "_lifecycle", "server")

    def __init__(self, app: ASGIApp, lifecycle: Lifecycle) -> None:
        self._app = app
        self._lifecycle = lifecycle
        self.server: _Server | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        streaming = False

        async def tracked(message: Message) -> None:
            nonlocal streaming
            if message["type"] == "http.response.start":
                streaming = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                streaming = False
            await send(message)

        lifecycle = self._lifecycle
        try:
            await self._app(scope, receive, tracked)
        except asyncio.CancelledError:
            if lifecycle.draining:
                lifecycle.cut += 1
            raise
        if lifecycle.draining:
            lifecycle.finished += 1
        if streaming and self.server is not None and self.server.should_exit:
            # A stream the app left open at shutdown gets its last chunk, so the client sees
            # the stream end (and uvicorn logs no error about it).
            await send({"type": "http.response.body", "body": b"", "more_body": False})


async def serve_asgi(
    app: ASGIApp,
    sock: socket.socket,
    *,
    ready: Callable[[], None] | None = None,
    header_timeout: float | None = DEFAULT_HEADER_TIMEOUT,
    drain_time: float = DEFAULT_DRAIN_TIME,
    drain_delay: float = 0.0,
    lifecycle: Lifecycle | None = None,
) -> None:
    """Serve ``app`` with uvicorn on the listening ``sock`` until cancelled or signalled.

    ``ready`` is called once the server accepts requests. A connection whose request headers
    take over ``header_timeout`` seconds is answered 408 and closed (see
    :func:`~mcp_core.server._edge.header_deadline`). The client address the app sees is the
    connection's peer: ``X-Forwarded-For`` is for the app to believe or not (its
    ``trusted_proxies``). A signal, or cancelling this, drains: ``lifecycle`` (the app's, so
    its health endpoints and open streams follow) starts draining, after ``drain_delay``
    seconds (a signal's drain only: the time a balancer takes to see it) the socket stops accepting,
    idle connections close, requests in flight get ``drain_time`` seconds to finish (then they
    are cancelled and counted in ``lifecycle.cut``), and the app's lifespan shutdown runs.
    """
    drain_time = check_drain_time(drain_time)
    drain_delay = check_drain_time(drain_delay, "drain_delay")
    lifecycle = lifecycle if lifecycle is not None else Lifecycle()
    tracked = _Tracked(app, lifecycle)
    config = uvicorn.Config(
        tracked,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(drain_time),
        http=header_deadline(header_timeout),
        proxy_headers=False,
    )
    server = tracked.server = _Server(config, ready, lifecycle, drain_delay)
    # sse-starlette would end every SSE stream the moment a stop is asked for, a request's
    # answer still coming included; the drain ends the open-ended streams itself and lets the
    # others finish (process-wide: restored when the last serving in the process ends).
    _SSE_DRAIN.hold()
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        # Stop the way a signal does (drain, then the lifespan's shutdown), shielded from the
        # cancellation that asked for it; then let that cancellation go on.
        server.stop()
        with anyio.CancelScope(shield=True):
            await serving
        raise
    finally:
        _SSE_DRAIN.release()
        if lifecycle.draining:
            _report_drain(lifecycle, drain_time)


def _report_drain(lifecycle: Lifecycle, drain_time: float) -> None:
    since = lifecycle.draining_since or time.time()
    if lifecycle.cut:
        _log.warning(
            "drained in %.1f s: %d request(s) finished, %d still running when the drain time "
            "(%g s) ran out were cut (a longer --drain-time lets them finish)",
            time.time() - since,
            lifecycle.finished,
            lifecycle.cut,
            drain_time,
        )
    else:
        _log.info(
            "drained in %.1f s: %d request(s) finished", time.time() - since, lifecycle.finished
        )


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class Servable(Protocol):
    """What :func:`run_server` serves (``McpServer`` is one), so this module needs no server's."""

    @property
    def lowlevel(self) -> _Named:
        """The SDK server, for its name."""
        ...

    @property
    def lifecycle(self) -> Lifecycle:
        """Whether it is draining, and what a drain cut (said when it stops)."""
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

        async def serve_stdio() -> None:
            # Said from inside the loop, as the HTTP address is: a Ctrl-C once it is read ends
            # with the same goodbye as a later one.
            if sys.stdin.isatty():  # started by hand, not by a client: say why nothing happens
                say(
                    f"serving {name} over stdio: it waits for an MCP client on stdin, and a "
                    "terminal is none; to connect a client by URL, serve over HTTP (--transport "
                    'http, or app.run("http")). Ctrl-C stops it.'
                )
            await server.run_stdio()

        stopped = run_until_stopped(serve_stdio)
    elif transport == "http":

        def ready(url: str) -> None:
            say(f"serving {name} at {url}")

        async def serve() -> None:
            await server.run_http(host=host, port=port, path=path, ready=ready, **options)

        stopped = run_until_stopped(serve)
    else:
        raise ValueError(f"transport must be 'stdio' or 'http', got {transport!r}")
    if stopped is not None:
        drain = server.lifecycle
        how = "" if transport != "http" else f", drained{_cut(drain.cut)}" if drain.draining else ""
        say(f"stopped serving {name} ({stopped.name}{how})")
    return stopped


def _cut(count: int) -> str:
    return f": {count} request(s) cut when the drain time ran out" if count else ""


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
            if not stopped:  # else a signal came while the loop was being made: stop at once
                await main()

    try:
        with _noted(_STOPPING, stopped):
            anyio.run(guarded)
    except KeyboardInterrupt:
        return stopped[0] if stopped else signal.SIGINT
    return stopped[0] if stopped else None


@contextmanager
def _noted(signals: tuple[signal.Signals, ...], stopped: list[signal.Signals]) -> Iterator[None]:
    """Until the loop handles ``signals``, only note them (a second one still interrupts).

    A ``KeyboardInterrupt`` raised while the event loop is being made leaves a half-made loop
    whose finalizer prints a traceback ("Exception ignored in BaseEventLoop.__del__").
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def note(signum: int, _frame: FrameType | None) -> None:
        if stopped:
            raise KeyboardInterrupt
        stopped.append(signal.Signals(signum))

    previous = {sig: signal.signal(sig, note) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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
