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
from typing import Any

from mcp.server.context import CallNext, HandlerResult
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

from mcp_core.server._gateway import Ctx, http_request_of

__all__ = ["trace_context_from_headers"]

_HEADERS = ("traceparent", "tracestate")


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
    if headers is None:
        return None
    found = {name: headers.get(name) for name in _HEADERS}
    carrier = {name: value for name, value in found.items() if isinstance(value, str)}
    return carrier if "traceparent" in carrier else None
