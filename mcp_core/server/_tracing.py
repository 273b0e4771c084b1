"""Trace context for the request span: from the request's ``_meta``, else its HTTP headers.

The official SDK opens one server span per request (``tools/call add``...), parented on the W3C
trace context in the request's ``_meta``; without one, on the current context. Over streamable
HTTP a client (or a proxy in front of the server) often sends it as ``traceparent`` /
``tracestate`` headers instead: :func:`trace_context_from_headers` makes that the current context
while the rest of the request runs, so the SDK's span and mcp-core's spans below it join the
client's trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.shared._otel import extract_trace_context
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

from mcp_core._telemetry import tracing
from mcp_core.server._gateway import Ctx, http_request_of

__all__ = ["RequestSpan", "trace_context_from_headers", "with_request_span_when_tracing"]


@final
class RequestSpan:
    """The SDK's request span (its ``OpenTelemetryMiddleware``), left out while nobody traces.

    The SDK opens a server span around every request; with no tracer provider set it is a
    non-recording span, made current and closed again (about 20 µs of a ``tools/call``). Then
    this calls the rest of the chain directly, unless the request's ``_meta`` carries a trace
    context: the SDK's span makes that current, so whatever the handler calls downstream carries
    the client's trace even when this server records nothing, and that is kept. Once a provider
    is set, every request gets the SDK's span.
    """

    __slots__ = ("_span",)

    def __init__(self, span: ServerMiddleware[Any]) -> None:
        self._span = span

    async def __call__(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        """The request, in the SDK's span when it records or carries the client's trace."""
        if tracing() or extract_trace_context(ctx.meta) is not None:
            return await self._span(ctx, call_next)
        return await call_next(ctx)


def with_request_span_when_tracing(
    chain: list[ServerMiddleware[Any]],
) -> list[ServerMiddleware[Any]]:
    """``chain`` (a low-level server's middleware) with the SDK's request span in a :class:`RequestSpan`."""
    return [
        RequestSpan(layer) if isinstance(layer, OpenTelemetryMiddleware) else layer
        for layer in chain
    ]


async def trace_context_from_headers(ctx: Ctx, call_next: CallNext) -> HandlerResult:
    """An SDK middleware: run the request under the trace context of its HTTP headers, if any.

    A valid ``traceparent`` in ``_meta`` wins (the SDK reads it); so does an invalid header's
    absence of effect: a header that does not parse leaves the context as it was.
    """
    request = http_request_of(ctx)
    carrier = _header_carrier(request.headers if request is not None else None)
    meta = ctx.meta
    if carrier is None or (isinstance(meta, Mapping) and "traceparent" in meta):
        return await call_next(ctx)
    try:
        extracted = propagate.extract(carrier)
    except (ValueError, TypeError):
        return await call_next(ctx)
    if not trace.get_current_span(extracted).get_span_context().is_valid:
        return await call_next(ctx)
    token = otel_context.attach(extracted)
    try:
        return await call_next(ctx)
    finally:
        otel_context.detach(token)


def _header_carrier(headers: Any) -> dict[str, str] | None:
    parent = headers.get("traceparent") if headers is not None else None
    if not isinstance(parent, str):
        return None  # most requests: no trace context to carry
    state = headers.get("tracestate")
    return (
        {"traceparent": parent, "tracestate": state}
        if isinstance(state, str)
        else {"traceparent": parent}
    )
