"""Health: how each source of a registry is doing, as plain values an operator can read.

The reference :class:`~mcp_core.registry.Registry` records, per source, when it last provided
successfully, its last error, how many times in a row it has failed and when it will be retried;
:meth:`Registry.health() <mcp_core.registry.Registry.health>` returns a :class:`RegistryHealth`
snapshot of that. The same snapshot is served as JSON by the HTTP health endpoint and printed by
``mcp-core inspect``.

Times are wall-clock seconds since the epoch (``time.time()``), ``None`` when the event has not
happened.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, final

# Imported here, not only for the type checker: a report's fields resolve wherever it is described
# (a tool returning a RegistryHealth has its output schema made from them). The stores package
# imports only the breaker's values up front.
from mcp_core.stores import BackendHealth

__all__ = ["RegistryHealth", "RegistryStatus", "SourceHealth", "SourceState", "SourceStatus"]

SourceState: TypeAlias = Literal["pending", "ok", "degraded", "down"]
"""How a source is serving.

- ``pending``: not provided yet (the registry has not loaded, or the source was just added);
- ``ok``: its last ``provide()`` succeeded and nothing it serves is stale;
- ``degraded``: it serves an older collection: its last ``provide()`` failed or timed out and
  its last good collection is served, or it reports a ``stale`` diagnostic (a cache entry served
  past its expiry);
- ``down``: its last ``provide()`` failed or timed out and it has nothing to serve.
"""

RegistryStatus: TypeAlias = Literal["unloaded", "loading", "ok", "degraded", "misconfigured"]
"""``loading`` until the first load completes (``unloaded`` instead when the catalogue is built
on demand, by the first request that needs it, and has not been yet); then ``ok`` when every
source and every shared backend is ``ok``, else ``degraded``; ``misconfigured`` when a shared
backend says this worker does not belong with the others (whatever else holds)."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SourceHealth:
    """One source's health: its state, what it contributes, and its recent history.

    ``source`` describes the source as diagnostics do; ``elements`` is the size of the
    collection it serves (None before its first success); ``last_error`` is the message of its
    most recent failure (kept after it recovers, with ``last_error_at``); ``stale_since`` is when
    what it serves stopped being fresh (its first failure since its last success, or when it
    started serving a stale cache entry); ``failures`` counts consecutive failures;
    ``next_retry`` is when the registry will try it again in the background.
    """

    source: str
    priority: int
    state: SourceState
    elements: int | None
    last_success: float | None
    last_error: str | None
    last_error_at: float | None
    stale_since: float | None
    failures: int
    next_retry: float | None

    def to_json(self) -> dict[str, Any]:
        """The JSON form (camelCase keys, times as seconds since the epoch or null)."""
        return {
            "source": self.source,
            "priority": self.priority,
            "state": self.state,
            "elements": self.elements,
            "lastSuccess": self.last_success,
            "lastError": self.last_error,
            "lastErrorAt": self.last_error_at,
            "staleSince": self.stale_since,
            "failures": self.failures,
            "nextRetry": self.next_retry,
        }


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RegistryHealth:
    """A registry's health: whether it has loaded, and each source's :class:`SourceHealth`.

    ``at`` is when the snapshot was taken. A worker of a deployment adds the shared backends it
    depends on (``backends``: its Redis store, its change bus, its registration) and its id
    (``worker``); a single process has neither.

    ``on_demand``: nothing is loading the catalogue ahead of requests (a server built with
    ``preload=False``): the first request that needs it builds it, so such a server is ready
    before it has loaded, and says ``unloaded`` rather than ``loading``. Asking for health never
    loads anything.

    ``draining``: the server serving this registry is stopping (it finishes what is in flight
    and takes nothing new): not ready, whatever the rest says.
    """

    loaded: bool
    sources: tuple[SourceHealth, ...]
    at: float
    backends: tuple[BackendHealth, ...] = ()
    worker: str | None = None
    on_demand: bool = False
    draining: bool = False

    @property
    def status(self) -> RegistryStatus:
        """``loading``, ``ok``, ``degraded`` (a source or backend is not ok) or ``misconfigured``."""
        if any(b.state == "misconfigured" for b in self.backends):
            return "misconfigured"
        if not self.loaded:
            return "unloaded" if self.on_demand else "loading"
        healthy = all(s.state == "ok" for s in self.sources) and all(
            b.state == "ok" for b in self.backends
        )
        return "ok" if healthy else "degraded"

    @property
    def ready(self) -> bool:
        """Whether requests are served: the catalogue is built, or built on demand by them.

        Degraded sources and backends count as served. A misconfigured worker is never ready: it
        must not be routed to; nor is a draining one.
        """
        return (
            (self.loaded or self.on_demand) and self.status != "misconfigured" and not self.draining
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON form served by the health endpoint."""
        document: dict[str, Any] = {
            "status": self.status,
            "ready": self.ready,
            "loaded": self.loaded,
            "at": self.at,
            "sources": [source.to_json() for source in self.sources],
        }
        if self.draining:
            document["draining"] = True
        if self.worker is not None:
            document["worker"] = self.worker
        if self.backends:
            document["backends"] = [backend.to_json() for backend in self.backends]
        return document


@dataclass(slots=True, eq=False)
class SourceStatus:
    """The registry's running record of one source (mutable; snapshots are SourceHealth)."""

    last_success: float | None = None
    last_error: str | None = None
    last_error_at: float | None = None
    failing_since: float | None = None
    stale_from: float | None = None
    failures: int = 0
    next_retry: float | None = None

    def succeeded(self) -> int:
        """Record a successful provide; return how many failures in a row it ends."""
        ended, self.failures = self.failures, 0
        self.last_success = time.time()
        self.failing_since = None
        self.next_retry = None
        return ended

    def serving_stale(self, at: float | None) -> None:
        """Record whether the source reports serving stale data (``at``: since when), or not."""
        if at is None:
            self.stale_from = None
        elif self.stale_from is None:
            self.stale_from = at

    def failed(self, message: str) -> None:
        """Record a failed (or timed-out) provide."""
        now = time.time()
        self.failures += 1
        self.last_error, self.last_error_at = message, now
        if self.failing_since is None:
            self.failing_since = now

    def health(
        self,
        *,
        source: str,
        priority: int,
        provided: bool,
        elements: int | None,
    ) -> SourceHealth:
        """A snapshot of this record."""
        state: SourceState
        if not provided:
            state = "pending"
        elif self.failures:
            state = "degraded" if elements is not None else "down"
        else:
            state = "degraded" if self.stale_from is not None else "ok"
        stale_since = self.failing_since if self.failures else self.stale_from
        return SourceHealth(
            source=source,
            priority=priority,
            state=state,
            elements=elements,
            last_success=self.last_success,
            last_error=self.last_error,
            last_error_at=self.last_error_at,
            stale_since=stale_since,
            failures=self.failures,
            next_retry=self.next_retry,
        )
