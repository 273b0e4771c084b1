"""A served process's lifecycle: live, ready, draining (ADR 0095).

A worker stopped by SIGTERM or SIGINT (a rolling restart, a scale-down, Ctrl-C) *drains*:

1. at once it reports itself not ready (``/readyz`` and ``/healthz`` 503, ``"draining": true``),
   stops accepting connections and closes its idle ones, so the balancer sends new requests to
   the other workers (a refused connection is one HAProxy retries elsewhere);
2. the streams that never end on their own end now, at a point the client resumes from: each
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
from typing import Final, final

__all__ = ["DEFAULT_DRAIN_TIME", "Lifecycle", "check_drain_time"]

_log = logging.getLogger("mcp_core.server")

DEFAULT_DRAIN_TIME: Final = 10.0
"""Seconds requests in flight may take to finish once a stop is asked for."""


def check_drain_time(value: object) -> float:
    """``value`` as a drain time in seconds, or a ValueError naming it and what is expected."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(
            f"drain_time is the seconds requests in flight may take to finish once a stop is "
            f"asked for: a number from 0 up, got {value!r}"
        )
    return float(value)


@final
class Lifecycle:
    """Whether a server is draining, since when, and what the drain had to cut.

    :meth:`begin_drain` is idempotent; the callbacks given to :meth:`on_drain` run once, when it
    first happens (a failing callback is logged and the others still run).
    """

    __slots__ = ("_callbacks", "_since", "cut", "finished")

    def __init__(self) -> None:
        self._since: float | None = None
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
        """Call ``callback`` when the drain begins (at once if it has)."""
        if self._since is not None:
            _run(callback)
            return
        self._callbacks.append(callback)

    def begin_drain(self) -> None:
        """Report not ready from now on, and tell whoever asked (:meth:`on_drain`)."""
        if self._since is not None:
            return
        self._since = time.time()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _run(callback)


def _run(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # noqa: BLE001 -- one failing callback must not stop the drain
        _log.exception("a drain callback failed; draining on")
