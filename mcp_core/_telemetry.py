"""OpenTelemetry spans of mcp-core, through ``opentelemetry-api`` (a no-op until configured).

mcp-core never configures OpenTelemetry: an application that sets a tracer provider (the
``opentelemetry-sdk``, an agent, ``opentelemetry-instrument``) gets mcp-core's spans under it,
and one that does not pays for the API's no-op spans only. The spans (``docs/operating.md``):

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

from typing import Final

from opentelemetry import trace

from mcp_core._version import VERSION

__all__ = ["OUTCOME", "SOURCE", "tracer"]

tracer: Final = trace.get_tracer("mcp_core", VERSION)
"""mcp-core's tracer (a proxy: spans go to whichever provider the application sets)."""

OUTCOME: Final = "mcp_core.outcome"
"""The attribute naming how a step ended."""

SOURCE: Final = "mcp_core.source"
"""The attribute naming the source a step asked."""
