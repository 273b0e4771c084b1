"""What operating a server costs per request: middleware, tracing, metrics (docs/operating.md).

    python bench/operating.py            # ~10 s: each configuration, interleaved runs
    python bench/operating.py --smoke    # one short run of each, seconds; keeps it working

Each configuration answers the same ``tools/call`` (an async tool adding two numbers) through the
sans-IO request handlers, the layer every transport calls and where middleware, spans and metrics
live, so the figure is their own cost and not a transport's. The baseline already includes the
OpenTelemetry API's spans with no tracer provider set (the default: no-op spans). Rows are the
median of the runs' per-call mean, and the difference to the baseline. The status page is timed
for a catalogue of 1000 tools. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

if __package__ in (None, ""):  # run as a script: make the ``bench`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from mcp_core.app import App
from mcp_core.elements import Tool
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.server import AuditLog, CallNext, McpServer, RateLimit, Request
from mcp_core.visibility import SessionInfo


class _Dropped(SpanExporter):
    """Exports nothing: what a span costs to make and end, without a backend's I/O."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        del spans
        return SpanExportResult.SUCCESS


async def _passing(request: Request, call_next: CallNext) -> dict[str, Any]:
    return await call_next(request)


def _server(kind: str) -> McpServer:
    app = App("bench")

    @app.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers (async: no worker thread, so the figures are the layers' own)."""
        return a + b

    server = app.server
    if kind == "one pass-through middleware":
        server.add_middleware(_passing)
    elif kind == "AuditLog (sink discards)":
        server.add_middleware(AuditLog(lambda _record: None))
    elif kind == "RateLimit (never limiting)":
        server.add_middleware(RateLimit(1e12))
    elif kind == "metrics (prometheus-client)":
        server.metrics()
    elif kind == "all three + metrics":
        server.metrics()
        server.add_middleware(AuditLog(lambda _record: None), RateLimit(1e12))
    return server


KINDS = (
    "baseline (no middleware, no tracer provider)",
    "one pass-through middleware",
    "AuditLog (sink discards)",
    "RateLimit (never limiting)",
    "metrics (prometheus-client)",
    "all three + metrics",
    "tracing on (SDK provider, spans dropped)",
)


async def _per_call(server: McpServer, calls: int) -> float:
    gateway = RecordingGateway(session=SessionInfo(session_id="bench"))
    handlers = server.handlers
    arguments = {"a": 1, "b": 2}
    await server.registry.load()
    for _ in range(200):  # warm up
        await handlers.call_tool("add", arguments, gateway, era="2025-11-25")
    started = time.perf_counter()
    for _ in range(calls):
        await handlers.call_tool("add", arguments, gateway, era="2025-11-25")
    return (time.perf_counter() - started) / calls


def _numbered(a: int) -> int:
    return a


_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


async def _status_page(tools: int) -> float:
    app = App("status")
    for index in range(tools):
        app.add(
            Tool(name=f"tool_{index}", description=f"Tool number {index}.", input_schema=_SCHEMA),
            _numbered,
        )
    await app.server.registry.load()
    asgi = app.asgi(status_path="/status")
    transport = httpx2.ASGITransport(app=asgi)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        page = await http.get("/status")
        if page.status_code != 200:  # noqa: PLR2004 -- HTTP OK
            raise RuntimeError(f"/status answered {page.status_code}: {page.text[:200]}")
        started = time.perf_counter()
        runs = 5
        for _ in range(runs):
            await http.get("/status")
        return (time.perf_counter() - started) / runs


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="one short run of each")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10_000)
    args = parser.parse_args(argv)
    runs, calls = (1, 500) if args.smoke else (args.runs, args.calls)
    untraced, traced = KINDS[:-1], KINDS[-1]
    servers = {kind: _server(kind) for kind in untraced}
    results: dict[str, list[float]] = {kind: [] for kind in KINDS}

    async def measure() -> None:
        for _ in range(runs):  # interleaved: each run measures every configuration once
            for kind, server in servers.items():
                results[kind].append(await _per_call(server, calls))
        # A tracer provider is set once per process: the traced runs come last.
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_Dropped()))
        trace.set_tracer_provider(provider)
        server = _server(KINDS[0])
        for _ in range(runs):
            results[traced].append(await _per_call(server, calls))

    anyio.run(measure)
    base = statistics.median(results[KINDS[0]])
    print(f"tools/call through the request handlers; median of {runs} runs x {calls} calls\n")
    print("| configuration | µs per call | added |")
    print("|---|---:|---:|")
    for kind in KINDS:
        each = statistics.median(results[kind])
        added = "—" if kind == KINDS[0] else f"{(each - base) * 1e6:+.1f} µs"
        print(f"| {kind} | {each * 1e6:.1f} | {added} |")
    tools = 100 if args.smoke else 1000
    print(f"\nstatus page, {tools} tools: {anyio.run(_status_page, tools) * 1e3:.1f} ms per render")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
