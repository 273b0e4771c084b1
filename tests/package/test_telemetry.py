"""mcp-core's spans: none while no tracer provider is set, the API's own once one is.

Run in a fresh interpreter: a provider can be set once per process, and the tracing tests of
this suite set one.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

_SCRIPT = textwrap.dedent(
    """
    from opentelemetry import context, propagate, trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from mcp_core._telemetry import tracer

    PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    # No provider: a remote parent's context carries through unchanged, as the API's no-op
    # span would carry it, and no context is made current in its place (no attach at all).
    token = context.attach(propagate.extract({"traceparent": PARENT}))
    attached = []
    real_attach = context.attach

    def counting_attach(ctx):
        attached.append(ctx)
        return real_attach(ctx)

    try:
        before = trace.get_current_span()
        context.attach = counting_attach
        with tracer.start_as_current_span("mcp_core.resolve", attributes={"k": "v"}) as span:
            assert not span.is_recording()
            span.set_attribute("mcp_core.outcome", "found")  # does nothing, raises nothing
            assert trace.get_current_span() is before
            ours = {}
            propagate.inject(ours)
        context.attach = real_attach
        assert attached == [], attached
        with trace.get_tracer("reference").start_as_current_span("api") as span:
            api = {}
            propagate.inject(api)
        assert ours == api == {"traceparent": PARENT}, (ours, api)
    finally:
        context.detach(token)

    # No global provider, but an application's own (not global) provider recording a span:
    # mcp-core's attributes never land on that span.
    exporter = InMemorySpanExporter()
    own = TracerProvider()
    own.add_span_processor(SimpleSpanProcessor(exporter))
    with own.get_tracer("app").start_as_current_span("outer"):
        with tracer.start_as_current_span("mcp_core.resolve") as span:
            span.set_attribute("mcp_core.outcome", "found")
    (outer,) = exporter.get_finished_spans()
    assert "mcp_core.outcome" not in (outer.attributes or {}), outer.attributes
    exporter.clear()

    # A provider set (once, at any time): mcp-core's spans record, under their parent.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    with trace.get_tracer("app").start_as_current_span("request") as request:
        with tracer.start_as_current_span("mcp_core.resolve", attributes={"k": "v"}) as span:
            assert span.is_recording()
            span.set_attribute("mcp_core.outcome", "found")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    resolve = spans["mcp_core.resolve"]
    assert dict(resolve.attributes or {}) == {"k": "v", "mcp_core.outcome": "found"}
    assert resolve.parent is not None
    assert resolve.parent.span_id == request.get_span_context().span_id
    print("ok")
    """
)


def test_spans_skipped_until_a_provider_is_set_then_recorded() -> None:
    """No provider: no span made current, the trace carried as the API carries it; then spans."""
    done = subprocess.run(  # noqa: S603 -- this interpreter, our own script
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
