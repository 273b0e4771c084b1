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
import logging
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

import anyio

from mcp_core.server._lifecycle import Lifecycle

if TYPE_CHECKING:
    from types import FrameType


_T = TypeVar("_T")

__all__ = [
    "LOG_FORMAT",
    "built_noting_signals",
    "log_to_stderr",
    "run_server",
    "run_stdio_server",
    "run_until_stopped",
    "say",
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


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class StdioServable(Protocol):
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


class Servable(StdioServable, Protocol):
    """A server :func:`run_server` can serve over either transport."""

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
    if transport == "stdio":
        return run_stdio_server(server)
    log_to_stderr()  # the same lines as `mcp-core run`'s, unless the program chose its own
    name = server.lowlevel.name
    if transport == "http":

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


def run_stdio_server(server: StdioServable) -> signal.Signals | None:
    """Serve ``server`` over this process's stdio until the client leaves or a signal comes."""
    log_to_stderr()  # the same lines as `mcp-core run`'s, unless the program chose its own
    name = server.lowlevel.name

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
    if stopped is not None:
        say(f"stopped serving {name} ({stopped.name})")
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


def built_noting_signals(build: Callable[[], _T]) -> _T | signal.Signals:
    """``build()``, with SIGINT and SIGTERM only noted meanwhile: the signal if one came.

    Building a server imports the SDK (ADR 0115); a Ctrl-C then ends the run as quietly as one
    that comes while serving, rather than with a traceback from inside an import.
    """
    stopped: list[signal.Signals] = []
    with _noted(_STOPPING, stopped):
        built = build()
    return stopped[0] if stopped else built


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
