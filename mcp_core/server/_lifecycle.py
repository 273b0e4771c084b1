"""A served process's lifecycle: live, ready, draining (ADR 0095).

A worker stopped by SIGTERM or SIGINT (a rolling restart, a scale-down, Ctrl-C) *drains*:

1. at once it reports itself not ready (``/readyz`` and ``/healthz`` 503, ``"draining": true``);
   for ``drain_delay`` seconds (0 by default; ``mcp-core run --drain-delay``: the time the load
   balancer takes to see it) it still serves what arrives, then it stops accepting connections
   and closes its idle ones, so new requests go to the other workers (a refused connection is
   one HAProxy retries elsewhere; a connection the kernel accepted just as the socket closed is
   reset, which is why a balancer should have stopped sending first);
2. the streams that never end on their own end then, at a point the client resumes from: each
   handshake-era session's standalone ``GET`` stream (the client reconnects with
   ``Last-Event-ID``) and each 2026-07-28 ``subscriptions/listen`` stream (closed gracefully,
   with its result);
3. requests in flight finish, for up to the drain time (``drain_time``, 10 s by default;
   ``mcp-core run --drain-time``); what is still running then is cut and counted;
4. the server's lifespan ends (its deployment registration is removed), and the process exits
   (``mcp-core run``: status 0 when nothing was cut).

:class:`Lifecycle` is the state the pieces share: the serving loop starts the drain, the health
endpoints read it, the server ends its open streams when told.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Final, Protocol, final, runtime_checkable

__all__ = ["DEFAULT_DRAIN_TIME", "Lifecycle", "check_drain_time"]

_log = logging.getLogger("mcp_core.server")

DEFAULT_DRAIN_TIME: Final = 10.0
"""Seconds requests in flight may take to finish once a stop is asked for."""


_MEANING: Final = {
    "drain_time": "the seconds requests in flight may take to finish once a stop is asked for",
    "drain_delay": "the seconds a stopping server still accepts requests, not ready, so that "
    "its load balancer stops sending them first",
}


def check_drain_time(value: object, name: str = "drain_time") -> float:
    """``value`` as seconds for ``name``, or a ValueError naming it and what is expected."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{name} is {_MEANING[name]}: a number from 0 up, got {value!r}")
    return float(value)


@runtime_checkable
class Draining(Protocol):
    """Says whether the server it belongs to is draining (a :class:`Lifecycle`, a run's hub)."""

    @property
    def draining(self) -> bool:
        """Whether a stop was asked for."""
        ...


@final
class Lifecycle:
    """Whether a server is draining, since when, and what the drain had to cut.

    :meth:`begin_drain` (not ready from now on) and :meth:`stop_accepting` (the socket closes)
    are idempotent; the callbacks given to :meth:`on_drain` run once, when the server stops
    accepting (a failing callback is logged and the others still run).
    """

    __slots__ = ("_callbacks", "_since", "_stopped", "cut", "finished")

    def __init__(self) -> None:
        self._since: float | None = None
        self._stopped = False
        self._callbacks: list[Callable[[], None]] = []
        self.cut = 0
        """Requests still running when the drain time ran out (cancelled)."""
        self.finished = 0
        """Requests that were in flight when the drain began and finished within it."""

    def __repr__(self) -> str:
        state = "serving" if self._since is None else "draining"
        return f"Lifecycle(<{state}>)"

    @property
    def draining(self) -> bool:
        """Whether a stop was asked for: the server finishes what it has and takes nothing new."""
        return self._since is not None

    @property
    def draining_since(self) -> float | None:
        """When the drain began (seconds since the epoch), or None."""
        return self._since

    def on_drain(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the server stops accepting (at once if it has)."""
        if self._stopped:
            _run(callback)
            return
        self._callbacks.append(callback)

    def begin_drain(self) -> None:
        """Report not ready from now on (the server still serves what reaches it)."""
        if self._since is None:
            self._since = time.time()

    def stop_accepting(self) -> None:
        """The server takes nothing new from now on: tell whoever asked (:meth:`on_drain`)."""
        self.begin_drain()
        if self._stopped:
            return
        self._stopped = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _run(callback)


def _run(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # noqa: BLE001 -- one failing callback must not stop the drain
        _log.exception("a drain callback failed; draining on")
