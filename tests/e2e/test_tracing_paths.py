"""The HTTP hot path traces a request exactly as the SDK's path does (ADR 0111).

The request span (``tools/call NAME``, the SDK's server span) and mcp-core's spans under it come
from the kernel both paths end in, so there is one piece of code for them; this test holds the
two paths to it. One app is served twice over real HTTP, as built (ordinary requests take the hot
path) and with the hot path taken out, and the official client makes the same calls in both eras:
a call answered, a call whose handler fails, a call of an unknown tool, and a call whose trace
context comes in the ``traceparent`` header. The spans each path exports (names, kinds, parents,
attributes, status) are equal, and the hot path did answer the calls itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Final

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.applications import Starlette

from mcp_core.app import App
from tests.clients import SDK_HTTP_TIMEOUT
from tests.e2e._http import RawSession, serve
from tests.e2e.test_tracing import EXPORTER
from tests.server.test_hotpath import (
    ENVELOPE,
    MODERN,
    hot_path_of,
    reaching_the_sdk,
    without_hot_path,
)

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

TRACE_ID: Final = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT: Final = f"00-{TRACE_ID}-00f067aa0ba902b7-01"

Shape = tuple[str, str, str, tuple[tuple[str, Any], ...], str]


def make_app() -> Starlette:
    """One tool that answers, one that fails."""
    app = App("traced")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @app.tool
    def fails() -> int:
        """Always fails."""
        raise RuntimeError("it failed")

    return app.streamable_http_app()


async def answered(client: Client) -> None:
    """A call answered."""
    await client.call_tool("add", {"a": 2, "b": 3})


async def failed(client: Client) -> None:
    """A call whose handler raises: a tool error."""
    assert (await client.call_tool("fails", {})).is_error


async def unknown(client: Client) -> None:
    """A call of a tool there is not: a protocol error."""
    with pytest.raises(MCPError):
        await client.call_tool("missing", {})


CALLS: dict[str, Callable[[Client], Awaitable[None]]] = {
    "answered": answered,
    "failed": failed,
    "unknown": unknown,
}


def shapes(finished: Iterator[ReadableSpan] | tuple[ReadableSpan, ...]) -> list[Shape]:
    """Each span as (name, kind, parent's name, attributes, status), ids left out."""
    spans = tuple(finished)
    names = {span.context.span_id: span.name for span in spans}
    found: list[Shape] = []
    for span in spans:
        parent = "root" if span.parent is None else names.get(span.parent.span_id, "remote")
        attributes = tuple(
            sorted((k, v) for k, v in (span.attributes or {}).items() if k != "jsonrpc.request.id")
        )
        found.append((span.name, span.kind.name, parent, attributes, span.status.status_code.name))
    return sorted(found)


async def traced(
    app: Starlette,
    exporter: InMemorySpanExporter,
    mode: str,
    call: Callable[[Client], Awaitable[None]],
) -> tuple[list[Shape], int | None]:
    """The spans of ``call`` made on ``app``, and its POSTs the SDK answered.

    (None: ``app`` has no hot path to leave requests to the SDK.)
    """
    hot = hot_path_in(app)
    with serve(app) as url:
        async with httpx2.AsyncClient(timeout=SDK_HTTP_TIMEOUT) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode) as client:
                await client.list_tools()
                exporter.clear()
                with watching(app) as reached:
                    await call(client)
    posts = sum(1 for scope in reached if isinstance(scope, dict) and scope["method"] == "POST")
    finished = exporter.get_finished_spans()
    exporter.clear()
    return shapes(finished), posts if hot else None


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The in-memory exporter (``tests.e2e.test_tracing`` installs it), emptied around the test."""
    EXPORTER.clear()
    yield EXPORTER
    EXPORTER.clear()


def watching(app: Starlette) -> AbstractContextManager[list[object]]:
    """The requests ``app``'s hot path leaves to the SDK while inside (none without one)."""
    return reaching_the_sdk(app) if hot_path_in(app) else nullcontext([])


def hot_path_in(app: Starlette) -> bool:
    """Whether ``app`` has its hot path."""
    try:
        hot_path_of(app)
    except AttributeError:
        return False
    return True


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("case", list(CALLS))
async def test_the_hot_path_traces_as_the_sdk_path(
    spans: InMemorySpanExporter, mode: str, case: str
) -> None:
    """Same spans through either path, in both eras; the hot path answered the call."""
    hot, hot_posts = await traced(make_app(), spans, mode, CALLS[case])
    sdk, sdk_posts = await traced(without_hot_path(make_app()), spans, mode, CALLS[case])
    assert hot_posts == 0  # the hot path answered it
    assert sdk_posts is None
    assert hot == sdk
    assert [shape[0] for shape in hot if shape[1] == "SERVER"] == [
        "tools/call " + {"answered": "add", "failed": "fails", "unknown": "missing"}[case]
    ]


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_the_traceparent_header_on_either_path(spans: InMemorySpanExporter, era: str) -> None:
    """A raw call with its trace context only in the header joins that trace on either path."""
    found = []
    for app in (make_app(), without_hot_path(make_app())):
        with serve(app) as url:
            async with httpx2.AsyncClient(headers={"traceparent": TRACEPARENT}) as http:
                with watching(app) as reached:
                    if era == "legacy":
                        session = RawSession(url, http)
                        await session.open()
                        spans.clear()
                        reached.clear()
                        await session.request("tools/call", {"name": "add", "arguments": ARGS})
                    else:
                        spans.clear()
                        answer = await http.post(url, json=MODERN_CALL, headers=MODERN_HEADERS)
                        assert answer.status_code == 200, answer.text
        posts = [
            scope for scope in reached if isinstance(scope, dict) and scope["method"] == "POST"
        ]
        assert not posts
        finished = spans.get_finished_spans()
        assert {f"{span.context.trace_id:032x}" for span in finished} == {TRACE_ID}
        # (the session's notifications/initialized may finish after the clear, on the SDK's loop)
        found.append([s for s in shapes(finished) if not s[0].startswith("notifications/")])
    assert found[0] == found[1]
    assert next(shape for shape in found[0] if shape[1] == "SERVER")[2] == "remote"


ARGS: Final = {"a": 1, "b": 1}
MODERN_CALL: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": ARGS, "_meta": ENVELOPE},
}
MODERN_HEADERS: Final = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "add",
}
