"""Factories that point the kit at mcp-core's own implementations (what ``scripts/kit`` certifies).

One module per target, each exporting the factory the kit calls and, where the target does not
claim a law or changes content by design, its ``MCP_CONFORMANCE``. They double as examples of
factories for third parties::

    pytest --mcp-conformance --mcp-registry=mcp_core.registry:Registry
    pytest --mcp-conformance --mcp-source=mcp_conformance.reference.static:source
    pytest --mcp-conformance --mcp-wrapper=mcp_conformance.reference.cached:wrap
    pytest --mcp-conformance --mcp-server=mcp_conformance.reference.server:make_server
    pytest --mcp-conformance --mcp-visibility=mcp_conformance.reference.visibility:composed
    pytest --mcp-conformance --mcp-event-store=mcp_core.server:InMemoryEventStore
    pytest --mcp-conformance --mcp-cache-store=mcp_core.stores:MemoryStore
    pytest --mcp-conformance --mcp-change-bus=mcp_core.stores:MemoryChangeBus

Registry: ``mcp_core.registry:Registry`` itself (its constructor is a factory). Sources:
:mod:`.static`, :mod:`.lazy`, :mod:`.collection_file`, :mod:`.function`, :mod:`.discovery`.
Wrappers: :mod:`.cached`, :mod:`.isolated`, :mod:`.filtered`, :mod:`.prefixed`, :mod:`.validated`.
Server: :mod:`.server` (``McpServer`` over the reference ``Registry``). Visibility combinators:
:mod:`.visibility` (``all_of``, ``any_of`` and ``not_`` nested in ``composed``). Event store:
``mcp_core.server:InMemoryEventStore`` itself (its constructor takes the kit's keywords). Cache
stores (listing stores too): ``mcp_core.stores:MemoryStore`` itself and :mod:`.sqlite_store` (a
file per store). ``RedisStore`` expires entries on the Redis server's clock, which the kit cannot
move: its tests run the same contract against a real Redis. Change bus:
``mcp_core.stores:MemoryChangeBus`` itself, outages included (``take_down``/``bring_back``).
``RedisChangeBus`` needs a Redis server, and only the server can interrupt it: its tests hold it
to the same laws against a real Redis.
"""

from collections.abc import Mapping
from types import MappingProxyType

TARGETS: tuple[tuple[str, str], ...] = (
    ("registry", "mcp_core.registry:Registry"),
    ("source", "mcp_conformance.reference.static:source"),
    ("source", "mcp_conformance.reference.lazy:source"),
    ("source", "mcp_conformance.reference.collection_file:source"),
    ("source", "mcp_conformance.reference.function:source"),
    ("source", "mcp_conformance.reference.discovery:source"),
    ("wrapper", "mcp_conformance.reference.cached:wrap"),
    ("wrapper", "mcp_conformance.reference.isolated:wrap"),
    ("wrapper", "mcp_conformance.reference.filtered:wrap"),
    ("wrapper", "mcp_conformance.reference.filtered:wrap_kinds"),
    ("wrapper", "mcp_conformance.reference.prefixed:wrap"),
    ("wrapper", "mcp_conformance.reference.validated:wrap"),
    ("server", "mcp_conformance.reference.server:make_server"),
    ("visibility", "mcp_conformance.reference.visibility:composed"),
    ("event-store", "mcp_core.server:InMemoryEventStore"),
    ("cache-store", "mcp_core.stores:MemoryStore"),
    ("cache-store", "mcp_conformance.reference.sqlite_store:make_cache_store"),
    ("change-bus", "mcp_core.stores:MemoryChangeBus"),
)
"""Every reference target as ``(kind, "module:factory")``: what a full certification runs."""

KNOWN_FAILURES: Mapping[str, Mapping[str, str]] = MappingProxyType({})
"""Laws a reference target is known to FAIL, with the issue that fixes it.

``scripts/kit`` accepts exactly these FAILs (and fails when one of them passes, so the entry is
removed with the fix); the report still shows each as FAIL. Nothing else may be listed here.
"""
