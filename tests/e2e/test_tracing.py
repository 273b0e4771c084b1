"""OpenTelemetry: one real HTTP ``tools/call`` traced end to end, into the in-memory exporter.

The server runs in this process (uvicorn in a thread), so its spans reach the exporter this test
installs; the official client reaches it over a real socket.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import httpx2
import pytest
from mcp import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_core.app import App
from tests.e2e._http import RawSession, serve

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

EXPORTER = InMemorySpanExporter()


def _install() -> None:
    """Export this process's spans to ``EXPORTER`` (a provider can be set once per process)."""
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        current = TracerProvider()
        trace.set_tracer_provider(current)
    current.add_span_processor(SimpleSpanProcessor(EXPORTER))


_install()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The exporter, emptied before and after the test."""
    EXPORTER.clear()
    yield EXPORTER
    EXPORTER.clear()


def make_app(*, trace_arguments: bool = False) -> App:
    """A lazily loaded app (a call looks its tool up by name) with one tool."""
    app = App("traced", preload=False, trace_arguments=trace_arguments)

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return app


def one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    """The one span called ``name``."""
    found = [span for span in spans if span.name == name]
    assert len(found) == 1, [span.name for span in spans]
    return found[0]


def parent_of(span: ReadableSpan) -> int | None:
    """The span id of ``span``'s parent (None for a root)."""
    return span.parent.span_id if span.parent is not None else None


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_tools_call_over_http_with_its_child_spans(
    spans: InMemorySpanExporter, mode: str
) -> None:
    """The request span joins the client's trace; lookup and handler spans are its children."""
    app = make_app()
    with (
        serve(app.streamable_http_app()) as url,
        trace.get_tracer("test").start_as_current_span("client work") as root,
    ):
        async with Client(url, mode=mode) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
    assert not result.is_error
    finished = spans.get_finished_spans()
    request = one(finished, "tools/call add")
    assert request.context.trace_id == root.get_span_context().trace_id
    assert request.kind is trace.SpanKind.SERVER
    assert request.attributes is not None
    assert request.attributes["gen_ai.tool.name"] == "add"
    resolve = next(
        s
        for s in finished
        if s.name == "mcp_core.resolve"
        and s.context.trace_id == request.context.trace_id
        and (s.attributes or {}).get("mcp_core.kind") == "tool"
    )
    handler = one(finished, "execute_tool add")
    assert parent_of(resolve) == request.context.span_id
    assert parent_of(handler) == request.context.span_id
    assert (resolve.attributes or {})["mcp_core.outcome"] == "found"
    assert (handler.attributes or {})["gen_ai.operation.name"] == "execute_tool"
    # What the source did to answer: a lookup by name, or (when the client listed first) the load.
    sourced = [
        s for s in finished if s.name in {"mcp_core.source.lookup", "mcp_core.source.provide"}
    ]
    assert sourced, [s.name for s in finished]
    assert {(s.attributes or {})["mcp_core.outcome"] for s in sourced} == {"served"}
    # Argument values and results are never recorded unless asked.
    for span in finished:
        for key, value in (span.attributes or {}).items():
            assert "arguments" not in key, key
            assert "result" not in key, key
            assert value not in (2, 3, 5, "5"), (span.name, key)


async def test_lookup_span_under_the_resolve_span(spans: InMemorySpanExporter) -> None:
    """A call before any list resolves by one source lookup, inside the resolve span."""
    app = make_app()
    with serve(app.streamable_http_app()) as url:
        async with httpx2.AsyncClient() as http:
            session = RawSession(url, http)
            await session.open()
            await session.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    finished = spans.get_finished_spans()
    resolve = one(finished, "mcp_core.resolve")
    lookup = one(finished, "mcp_core.source.lookup")
    assert parent_of(lookup) == resolve.context.span_id
    assert (lookup.attributes or {})["mcp_core.source"] == "App('traced').functions"
    assert (lookup.attributes or {})["mcp_core.outcome"] == "served"


async def test_trace_context_from_the_traceparent_header(spans: InMemorySpanExporter) -> None:
    """A request with no trace context in ``_meta`` joins the trace its ``traceparent`` names."""
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = "00f067aa0ba902b7"
    headers = {"traceparent": f"00-{trace_id}-{parent}-01"}
    app = make_app()
    with serve(app.streamable_http_app()) as url:
        async with httpx2.AsyncClient(headers=headers) as http:
            session = RawSession(url, http)
            await session.open()
            await session.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    request = one(spans.get_finished_spans(), "tools/call add")
    assert f"{request.context.trace_id:032x}" == trace_id
    assert f"{parent_of(request):016x}" == parent


async def test_arguments_and_results_when_asked(spans: InMemorySpanExporter) -> None:
    """With ``trace_arguments``, the handler span carries the call's arguments and result."""
    app = make_app(trace_arguments=True)
    with serve(app.streamable_http_app()) as url:
        async with Client(url, mode="legacy") as client:
            await client.call_tool("add", {"a": 20, "b": 22})
    handler = one(spans.get_finished_spans(), "execute_tool add")
    attributes = handler.attributes or {}
    assert attributes["gen_ai.tool.call.arguments"] == '{"a": 20, "b": 22}'
    assert "42" in str(attributes["gen_ai.tool.call.result"])


async def test_registry_reload_and_failed_source(spans: InMemorySpanExporter) -> None:
    """A reload is one span; a source that fails is a provide span with outcome failed."""
    from mcp_core.elements import ElementCollection, ElementKind
    from mcp_core.registry import Registry

    class Broken:
        def kinds(self) -> ElementKind:
            return ElementKind.TOOL

        async def provide(self) -> ElementCollection:
            raise RuntimeError("the backend is down")

    registry = Registry(sources=[(Broken(), 0)])
    await registry.reload()
    finished = spans.get_finished_spans()
    reload = one(finished, "mcp_core.registry.reload")
    provide = one(finished, "mcp_core.source.provide")
    assert parent_of(provide) == reload.context.span_id
    assert (provide.attributes or {})["mcp_core.outcome"] == "failed"
    assert provide.status.status_code is trace.StatusCode.ERROR


async def test_an_error_result_marks_the_tool_span(spans: InMemorySpanExporter) -> None:
    """A call answered with ``isError`` ends its ``execute_tool`` span in ERROR; a good one not."""
    app = make_app()
    with serve(app.streamable_http_app()) as url:
        async with Client(url, mode="legacy") as client:
            good = await client.call_tool("add", {"a": 1, "b": 2})
            failed = await client.call_tool("add", {"a": "one", "b": 2})
    assert not good.is_error
    assert failed.is_error
    handlers = [s for s in spans.get_finished_spans() if s.name == "execute_tool add"]
    assert [s.status.status_code for s in handlers] == [
        trace.StatusCode.UNSET,
        trace.StatusCode.ERROR,
    ]
    assert [(s.attributes or {}).get("error.type") for s in handlers] == [None, "tool_error"]


@pytest.mark.parametrize("asked", [False, True])
async def test_reads_and_prompts_record_arguments_only_when_asked(
    spans: InMemorySpanExporter, *, asked: bool
) -> None:
    """Read variables, prompt arguments and their results are on spans only if asked."""
    app = App("traced", preload=False, trace_arguments=asked)

    @app.resource_template("notes://{topic}")
    def note(topic: str) -> str:
        """A note about a topic."""
        return f"about {topic}"

    @app.prompt
    def greet(who: str) -> str:
        """Greet someone."""
        return f"hello {who}"

    with serve(app.streamable_http_app()) as url:
        async with Client(url, mode="legacy") as client:
            await client.read_resource("notes://tea")
            await client.get_prompt("greet", {"who": "ann"})
    finished = spans.get_finished_spans()
    for name, arguments, result in (
        ("mcp_core.handler.read", '{"topic": "tea"}', "about tea"),
        ("mcp_core.handler.get", '{"who": "ann"}', "hello ann"),
    ):
        attributes = one(finished, name).attributes or {}
        if asked:
            # JSON, a read's read-only mapping of variables included.
            assert attributes["mcp_core.arguments"] == arguments
            assert result in str(attributes["mcp_core.result"])
        else:
            assert "mcp_core.arguments" not in attributes
            assert "mcp_core.result" not in attributes
