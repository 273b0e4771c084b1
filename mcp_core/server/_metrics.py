"""Prometheus metrics of one server, with ``prometheus-client`` (the ``[metrics]`` extra).

:class:`ServerMetrics` is a middleware (the outermost, so it times everything the others do)
that counts and times each element request, plus a collector that reads the server's state at
scrape time: per-source health and staleness, the catalogue's size per kind, open sessions,
event-store bytes and the shared backends' (Redis circuit) state. Nothing is loaded or provided
to answer a scrape. The names follow Prometheus' conventions (``_total`` counters, ``_seconds``
units, base units); they are listed in ``docs/operating.md``.

Served at ``/metrics`` on the HTTP app (``streamable_http_app(metrics_path="/metrics")``) and, for
any transport, on a port of its own (:meth:`ServerMetrics.serve_on`, ``mcp-core run
--metrics-port``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, final

from mcp_core.elements import ElementKind
from mcp_core.registry import RegistryHealth
from mcp_core.server._middleware import CallNext, Request, outcome_of_error, outcome_of_result

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric
    from prometheus_client.registry import CollectorRegistry

__all__ = ["CONTENT_TYPE", "MetricsEndpoint", "ServerMetrics"]

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format's content type."""

LATENCY_BUCKETS: Final = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)
"""Seconds: from a cached list's half millisecond to a slow tool's minute."""

_SOURCE_STATES: Final = ("pending", "ok", "degraded", "down")
_BACKEND_STATES: Final = ("ok", "down", "misconfigured")
_KINDS: Final = {
    ElementKind.TOOL: "tool",
    ElementKind.RESOURCE: "resource",
    ElementKind.RESOURCE_TEMPLATE: "resource_template",
    ElementKind.PROMPT: "prompt",
}


def _prometheus() -> Any:
    try:
        import prometheus_client  # noqa: PLC0415 -- an optional extra, imported when used
    except ImportError as exc:  # pragma: no cover -- the dev environment has it
        raise ImportError(
            "metrics need prometheus-client: pip install 'mcp-core-server[metrics]'"
        ) from exc
    return prometheus_client


@final
class ServerMetrics:
    """The metrics of one server: a middleware for requests, a collector for state.

    ``health`` gives the registry's health, ``catalog`` the catalogue's size per kind (None
    before it has loaded), ``sessions`` the number of open sessions, ``event_bytes`` the bytes
    the session event stores retain; each is read at scrape time and never loads anything.
    ``registry`` is the ``prometheus_client`` registry the metrics live in (a new one unless
    given: two servers in one process never clash).
    """

    __slots__ = ("_latency", "_requests", "registry")

    def __init__(
        self,
        *,
        health: Callable[[], RegistryHealth],
        catalog: Callable[[], Mapping[ElementKind, int] | None],
        sessions: Callable[[], int],
        event_bytes: Callable[[], int | None],
        registry: CollectorRegistry | None = None,
    ) -> None:
        prometheus = _prometheus()
        self.registry: CollectorRegistry = (
            registry if registry is not None else prometheus.CollectorRegistry()
        )
        self._requests = prometheus.Counter(
            "mcp_requests",
            "MCP element requests answered, by method and outcome "
            "(ok, tool_error, refused, failed).",
            ["method", "outcome"],
            registry=self.registry,
        )
        self._latency = prometheus.Histogram(
            "mcp_request_duration_seconds",
            "Time to answer an MCP element request, by method.",
            ["method"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_StateCollector(health, catalog, sessions, event_bytes))

    def __repr__(self) -> str:
        return "ServerMetrics()"

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        """The middleware: count and time ``request``."""
        started = time.perf_counter()
        outcome: str = "failed"
        try:
            result = await call_next(request)
        except Exception as exc:
            outcome = outcome_of_error(exc)[1]
            raise
        else:
            outcome = outcome_of_result(result)
            return result
        finally:
            method = request.method
            self._latency.labels(method).observe(time.perf_counter() - started)
            self._requests.labels(method, outcome).inc()

    def exposition(self) -> bytes:
        """The metrics now, in the Prometheus text format (:data:`CONTENT_TYPE`)."""
        latest: bytes = _prometheus().generate_latest(self.registry)
        return latest

    def serve_on(self, port: int, host: str = "127.0.0.1") -> MetricsEndpoint:
        """Serve ``/metrics`` on ``host:port`` from a thread of its own; returns how to stop it.

        For a server whose transport has no HTTP app to add a route to (stdio). Port 0 picks a
        free port (the returned endpoint's ``port`` says which); calling the endpoint stops it.
        """
        server, thread = _prometheus().start_http_server(port, addr=host, registry=self.registry)

        def stop() -> None:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

        return MetricsEndpoint(server.server_port, stop)


@final
class MetricsEndpoint:
    """A metrics endpoint served from a thread of its own: its ``port``; calling it stops it."""

    __slots__ = ("_stop", "port")

    def __init__(self, port: int, stop: Callable[[], None]) -> None:
        self.port: Final = port
        self._stop = stop

    def __call__(self) -> None:
        """Stop serving (waits up to 5 s for the thread)."""
        self._stop()


@final
class _StateCollector:
    """Reads the server's state at each scrape (a custom collector of ``prometheus_client``)."""

    def __init__(
        self,
        health: Callable[[], RegistryHealth],
        catalog: Callable[[], Mapping[ElementKind, int] | None],
        sessions: Callable[[], int],
        event_bytes: Callable[[], int | None],
    ) -> None:
        self._health = health
        self._catalog = catalog
        self._sessions = sessions
        self._event_bytes = event_bytes

    def describe(self) -> Iterable[Metric]:
        return ()

    def collect(self) -> Iterator[Metric]:
        core = _prometheus().metrics_core
        gauge: Callable[..., Any] = core.GaugeMetricFamily
        report = self._health()
        now = time.time()
        yield gauge(
            "mcp_registry_loaded",
            "Whether the catalogue has been built (1) or not (0).",
            value=1 if report.loaded else 0,
        )
        yield from _sources(gauge, report, now)
        yield from _backends(gauge, report)
        sizes = self._catalog()
        if sizes is not None:
            elements = gauge(
                "mcp_catalog_elements", "Elements in the catalogue, by kind.", labels=["kind"]
            )
            for kind, name in _KINDS.items():
                elements.add_metric([name], sizes.get(kind, 0))
            yield elements
        yield gauge(
            "mcp_sessions",
            "Open handshake-era sessions (a 2026-07-28 request is its own session).",
            value=self._sessions(),
        )
        retained = self._event_bytes()
        if retained is not None:
            yield gauge(
                "mcp_event_store_bytes",
                "Bytes the session event stores retain for stream resumption.",
                value=retained,
            )


def _sources(gauge: Callable[..., Any], report: RegistryHealth, now: float) -> Iterator[Any]:
    state = gauge(
        "mcp_source_state",
        "Each source's state: 1 for the one it is in (pending, ok, degraded, down).",
        labels=["source", "state"],
    )
    stale = gauge(
        "mcp_source_staleness_seconds",
        "How long each source has served something older than it should (0 when fresh).",
        labels=["source"],
    )
    success = gauge(
        "mcp_source_last_success_timestamp_seconds",
        "When each source last provided successfully (seconds since the epoch).",
        labels=["source"],
    )
    failures = gauge("mcp_source_failures", "Each source's failures in a row.", labels=["source"])
    elements = gauge("mcp_source_elements", "Elements each source serves.", labels=["source"])
    for source in report.sources:
        name = source.source
        for each in _SOURCE_STATES:
            state.add_metric([name, each], 1 if source.state == each else 0)
        since = source.stale_since
        stale.add_metric([name], max(0.0, now - since) if since is not None else 0.0)
        if source.last_success is not None:
            success.add_metric([name], source.last_success)
        failures.add_metric([name], source.failures)
        if source.elements is not None:
            elements.add_metric([name], source.elements)
    yield from (state, stale, success, failures, elements)


def _backends(gauge: Callable[..., Any], report: RegistryHealth) -> Iterator[Any]:
    if not report.backends:
        return
    state = gauge(
        "mcp_backend_state",
        "Each shared backend's state (a Redis store's circuit, the change bus, the worker's "
        "registration): 1 for the one it is in (ok, down, misconfigured).",
        labels=["backend", "state"],
    )
    for backend in report.backends:
        for each in _BACKEND_STATES:
            state.add_metric([backend.backend, each], 1 if backend.state == each else 0)
    yield state
