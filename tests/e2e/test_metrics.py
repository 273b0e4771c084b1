"""Prometheus metrics, scraped after real requests from the official client.

``/metrics`` on the HTTP app and ``mcp-core run --metrics-port`` beside a stdio server, each
scrape parsed by ``prometheus-client``'s own parser.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from prometheus_client.parser import text_string_to_metric_families

from mcp_core.app import App
from mcp_core.errors import RequestRefusedError
from mcp_core.server import CallNext, Request
from tests.clients import ROOT, stdio
from tests.e2e._http import serve
from tests.e2e.conftest import free_port

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, by name and sorted labels (the official parser reads it)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    """The sample ``name`` with exactly ``labels``."""
    return found[(name, tuple(sorted(labels.items())))]


def make_app() -> App:
    """Two tools, one refused by a middleware, one that fails as a tool."""

    async def deny(request: Request, call_next: CallNext) -> dict[str, Any]:
        if request.target == "denied":
            raise RequestRefusedError("no")
        return await call_next(request)

    app = App("measured", middleware=[deny])

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @app.tool
    def denied() -> str:
        """Refused by the middleware."""
        return "never"

    return app


async def exercise(client: Client) -> None:
    """Three good calls, one tool error, one refusal, one unknown tool."""
    for a in range(3):
        assert not (await client.call_tool("add", {"a": a, "b": 1})).is_error
    assert (await client.call_tool("add", {"a": "x"})).is_error
    for name in ("denied", "nowhere"):
        with pytest.raises(MCPError):
            await client.call_tool(name, {})


def assert_counted(found: Any, sessions: Iterable[float]) -> None:
    """What :func:`exercise` leaves in the metrics."""
    assert value(found, "mcp_requests_total", method="tools/call", outcome="ok") == 3
    assert value(found, "mcp_requests_total", method="tools/call", outcome="tool_error") == 1
    assert value(found, "mcp_requests_total", method="tools/call", outcome="refused") == 2
    assert value(found, "mcp_request_duration_seconds_count", method="tools/call") == 6
    assert value(found, "mcp_request_duration_seconds_bucket", method="tools/call", le="+Inf") == 6
    assert value(found, "mcp_catalog_elements", kind="tool") == 2
    assert value(found, "mcp_registry_loaded") == 1
    source = "App('measured').functions"
    assert value(found, "mcp_source_state", source=source, state="ok") == 1
    assert value(found, "mcp_source_state", source=source, state="down") == 0
    assert value(found, "mcp_source_staleness_seconds", source=source) == 0
    assert value(found, "mcp_source_elements", source=source) == 2
    assert value(found, "mcp_sessions") in set(sessions)


async def test_metrics_path_on_the_http_app() -> None:
    """``/metrics`` answers the Prometheus text format after real calls over HTTP."""
    app = make_app()
    with serve(app.streamable_http_app(metrics_path="/metrics")) as url:
        async with Client(url, mode="legacy") as client:
            await exercise(client)
            async with httpx2.AsyncClient() as http:
                scrape = await http.get(url.replace("/mcp", "/metrics"))
    assert scrape.status_code == 200
    assert scrape.headers["content-type"].startswith("text/plain; version=0.0.4")
    found = samples(scrape.text)
    assert_counted(found, sessions={1})
    assert value(found, "mcp_event_store_bytes") >= 0


async def test_metrics_port_for_stdio(tmp_path: Any) -> None:
    """``mcp-core run --metrics-port`` serves the same metrics beside a stdio server."""
    server = tmp_path / "measured.py"
    server.write_text(
        "from tests.e2e.test_metrics import make_app\napp = make_app()\n", encoding="utf-8"
    )
    port = free_port()
    target = stdio(server, "--metrics-port", str(port), env={"PYTHONPATH": str(ROOT)})
    async with Client(target, mode="legacy") as client:
        await exercise(client)
        async with httpx2.AsyncClient() as http:
            scrape = await http.get(f"http://127.0.0.1:{port}/metrics")
    assert scrape.status_code == 200
    assert_counted(samples(scrape.text), sessions={1})


def test_metrics_route_refuses_a_foreign_host() -> None:
    """On a loopback host, ``/metrics`` refuses a Host naming another (DNS rebinding)."""
    from starlette.testclient import TestClient

    app = make_app().streamable_http_app(metrics_path="/metrics")
    with TestClient(app, base_url="http://evil.example") as client:
        assert client.get("/metrics").status_code in {400, 403, 421}
