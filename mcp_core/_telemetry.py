"""OpenTelemetry spans of mcp-core, through ``opentelemetry-api`` (a no-op until configured).

mcp-core never configures OpenTelemetry: an application that sets a tracer provider (the
``opentelemetry-sdk``, an agent, ``opentelemetry-instrument``) gets mcp-core's spans under it,
and one that does not pays for no span at all (:func:`tracing`; ADR 0119). The spans
(``docs/operating.md``):

- the request: the official SDK's server span per request (``tools/call add``...), parented on
  the trace context the client sent in ``_meta`` or, over HTTP, in its ``traceparent`` header;
- ``mcp_core.resolve``: finding the element a request names, with ``mcp_core.outcome``
  (``found``/``missing``);
- ``mcp_core.source.provide`` and ``mcp_core.source.lookup``: one source answering the registry,
  with its outcome (``served``, ``stale``, ``failed``, ``unavailable``, ``timed_out``);
- ``execute_tool {name}`` (GenAI semantic conventions), ``mcp_core.handler.read``,
  ``.get`` and ``.complete``: running the element's handler;
- ``mcp_core.registry.load``, ``.reload`` and ``.retry``.

Attributes never carry argument values or results unless the operator asks
(``McpServer(trace_arguments=True)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Final, final

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from mcp_core._version import VERSION

__all__ = ["OUTCOME", "SOURCE", "tracer", "tracing"]


def tracing() -> bool:
    """Whether the application has set a tracer provider (spans are wanted from now on).

    Until then every span of the OpenTelemetry API is a non-recording one: mcp-core skips making
    its own and the SDK's request span (see :class:`_Tracer` and
    ``mcp_core.server._tracing.RequestSpan``). A provider, once set, stays.
    """
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


_UNSET: Final = nullcontext(trace.INVALID_SPAN)
"""What a span is while no provider is set: the current context stays, nothing records."""


@final
class _Tracer:
    """OpenTelemetry's tracer for mcp-core, skipping the API's no-op spans while none is wanted.

    Until the application sets a tracer provider, the API makes every span a non-recording
    child carrying its parent's context, and makes it current: about 5 µs a span, three spans
    a ``tools/call``, for nothing anyone can see. Then this yields the invalid span (setting
    attributes on it does nothing) and leaves the current context as it is, which carries the
    same trace to whatever runs inside (a propagated ``traceparent`` is the parent's either way).
    Once a provider is set, spans go to it as the API's own tracer sends them.
    """

    __slots__ = ("_otel",)

    def __init__(self) -> None:
        self._otel = trace.get_tracer("mcp_core", VERSION)

    def start_as_current_span(
        self, name: str, attributes: Mapping[str, AttributeValue] | None = None
    ) -> AbstractContextManager[trace.Span]:
        """A span named ``name``, current while the ``with`` block runs (see the class)."""
        if not tracing():
            return _UNSET
        return self._otel.start_as_current_span(name, attributes=attributes)


tracer: Final = _Tracer()
"""mcp-core's tracer: spans go to whichever provider the application sets (none: no spans)."""

OUTCOME: Final = "mcp_core.outcome"
"""The attribute naming how a step ended."""

SOURCE: Final = "mcp_core.source"
"""The attribute naming the source a step asked."""
