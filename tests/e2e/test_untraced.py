"""With no tracer provider set, the SDK's request span is skipped unless it carries a trace.

Run in a fresh interpreter (a provider can be set once per process, and the tracing tests set
one): a tool reports the trace context current while it runs, which is what anything it calls
downstream would propagate.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent(
    """
    import json

    import anyio
    import httpx2
    from mcp import Client
    from mcp.server._otel import OpenTelemetryMiddleware
    from opentelemetry import propagate, trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from mcp_core.app import App
    from tests.e2e._http import serve

    ENTERED = []
    sdk_span = OpenTelemetryMiddleware.__call__

    async def counting(self, ctx, call_next):
        ENTERED.append(ctx.method)
        return await sdk_span(self, ctx, call_next)

    OpenTelemetryMiddleware.__call__ = counting

    app = App("untraced")

    @app.tool
    def carried() -> str:
        "The trace context current in the handler."
        found = {}
        propagate.inject(found)
        return found.get("traceparent", "")

    ENVELOPE = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    HEADERS = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "carried",
    }
    META = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    HEADER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    async def call(http, url, *, meta=None, header=None):
        extra = {"traceparent": meta} if meta else {}
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "carried", "arguments": {}, "_meta": {**ENVELOPE, **extra}},
        }
        headers = {**HEADERS, **({"traceparent": header} if header else {})}
        response = await http.post(url, json=body, headers=headers)
        assert response.status_code == 200, response.text
        return response.json()["result"]["content"][0]["text"]

    async def main():
        with serve(app.streamable_http_app()) as url:
            async with httpx2.AsyncClient() as http:
                # Nobody traces, and no trace came: no span, and none carried.
                assert await call(http, url) == ""
                assert ENTERED == [], ENTERED
                # A trace in _meta: the SDK's span makes it current, as before.
                assert await call(http, url, meta=META) == META
                assert ENTERED == ["tools/call"], ENTERED
                # A trace in the traceparent header: mcp-core's middleware makes it current.
                assert await call(http, url, header=HEADER) == HEADER
                assert ENTERED == ["tools/call"], ENTERED
            async with Client(url, mode="legacy") as client:
                result = await client.call_tool("carried", {})
                assert result.content[0].text == ""
            assert ENTERED == ["tools/call"], ENTERED
            # A provider set: every request gets the SDK's span again, recorded.
            exporter = InMemorySpanExporter()
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            trace.set_tracer_provider(provider)
            async with httpx2.AsyncClient() as http:
                await call(http, url)
            assert ENTERED == ["tools/call", "tools/call"], ENTERED
            names = [span.name for span in exporter.get_finished_spans()]
            assert "tools/call carried" in names, names
        print("ok")

    anyio.run(main)
    """
)


def test_the_request_span_only_when_tracing_or_carrying_a_trace() -> None:
    """No provider: no SDK span unless ``_meta`` carries a trace; every one once a provider is set."""
    done = subprocess.run(  # noqa: S603 -- this interpreter, our own script
        [sys.executable, "-c", _SCRIPT],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=_ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok"), done.stdout
