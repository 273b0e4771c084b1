"""Serving an ASGI app with uvicorn on a socket bound first, and draining it on a signal.

Split from :mod:`mcp_core.server._serving` so that a stdio start imports no HTTP server
(ADR 0115): :meth:`McpServer.run_http <mcp_core.server.McpServer.run_http>` imports this.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import math
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import anyio
import uvicorn
from sse_starlette.sse import AppStatus

from mcp_core.errors import ListenError
from mcp_core.server._edge import DEFAULT_HEADER_TIMEOUT, header_deadline
from mcp_core.server._lifecycle import DEFAULT_DRAIN_TIME, Lifecycle, check_drain_time

if TYPE_CHECKING:
    from types import FrameType

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["listen", "serve_asgi", "url_of"]

_log = logging.getLogger("mcp_core.server")


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
