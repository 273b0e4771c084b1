"""FastMCPSource: a ``fastmcp.FastMCP`` server's elements, served through mcp-core.

The FastMCP server runs in this process, reached with the official client over its in-memory
transport, as fastmcp's own in-process client reaches it: every FastMCP feature keeps working as
FastMCP implements it (its ``Context`` and dependency injection, middleware, transforms, mounted
servers, its lifespan), and what its tools send back while they run (logs, progress, sampling,
elicitation) is relayed through the mcp-core request's ``ClientGateway``, exactly as for a
:class:`~mcp_core.bridges.RemoteSource`, which this source is made of.

fastmcp is an optional dependency (``pip install 'mcp-core-server[fastmcp]'``): it is imported only when a
``FastMCPSource`` is created.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, final

from mcp.server import Server

from mcp_core.bridges._remote import RemoteSource
from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.sources import SourceDiagnostic

__all__ = ["FastMCPSource"]


@final
class FastMCPSource:
    """The tools, resources, templates and prompts of a ``fastmcp.FastMCP`` instance.

    ::

        from fastmcp import FastMCP

        legacy = FastMCP("legacy")            # an existing fastmcp app, untouched
        app.add_source(FastMCPSource(legacy))

    ``options`` are :class:`RemoteSource`'s (``tags``, ``timeout``, ``kinds``...; ``mode`` is
    ``"legacy"`` unless given). While running
    (``App`` runs its sources), one session keeps the FastMCP server's lifespan entered; each
    forwarded request has a session of its own.

    Raises:
        ImportError: fastmcp is not installed (the message says how to install it).
        TypeError: ``server`` is not a ``fastmcp.FastMCP``.
    """

    __slots__ = ("_remote", "server")

    def __init__(self, server: Any, **options: Any) -> None:
        try:
            fastmcp = importlib.import_module("fastmcp")
        except ImportError as exc:
            raise ImportError(
                "FastMCPSource needs fastmcp: pip install 'mcp-core-server[fastmcp]'"
            ) from exc
        if not isinstance(server, fastmcp.FastMCP):
            raise TypeError(
                f"FastMCPSource takes a fastmcp.FastMCP server, got {type(server).__name__}; "
                "for the official SDK's MCPServer use MCPServerSource"
            )
        # FastMCP keeps its SDK low-level server here; fastmcp's own in-memory transport reaches
        # the server through the same attribute.
        lowlevel = server._mcp_server  # noqa: SLF001 -- see above
        if not isinstance(lowlevel, Server):
            raise TypeError(f"{server!r} has no SDK low-level server this version can reach")
        self.server = server
        # fastmcp serves in-process sessions through the handshake (its low-level server does not
        # answer the 2026-07-28 discovery in process); what the client's own era asks of the
        # gateway is unaffected.
        self._remote = RemoteSource(lowlevel, **{"name": server.name, "mode": "legacy", **options})

    def __repr__(self) -> str:
        return f"FastMCPSource({self.server.name!r})"

    def kinds(self) -> ElementKind:
        """The kinds the server offers (all of them until it was first listed)."""
        return self._remote.kinds()

    async def provide(self) -> ElementCollection:
        """The server's elements, their handlers forwarding to it."""
        return await self._remote.provide()

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """Elements of the server that could not be served (invalid definitions)."""
        return self._remote.diagnostics()

    def cache_inputs(self) -> Mapping[str, object]:
        """What identifies the server."""
        return self._remote.cache_inputs()

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        """Call ``listener(kinds)`` when the server's catalogue changes."""
        return self._remote.subscribe(listener)

    def running(self) -> AbstractAsyncContextManager[object]:
        """Keep a session (and so the server's lifespan) open; follow its changes."""
        return self._remote.running()
