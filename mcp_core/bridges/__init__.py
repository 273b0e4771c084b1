"""Bridges: servers that already exist, served as mcp-core element sources.

- :class:`MCPServerSource`: an official SDK ``MCPServer`` instance, in process, its functions
  unchanged (``ctx: Context``, ``Resolve(...)``, its lifespan, its middleware);
- :class:`FastMCPSource`: a ``fastmcp.FastMCP`` instance through its public API (the optional
  ``mcp-core-server[fastmcp]`` extra; fastmcp is imported only when one is created);
- :class:`RemoteSource`: a remote MCP server reached with the official client over stdio or
  streamable HTTP, in either protocol era, its calls forwarded and its requests back to the
  client (logging, progress, sampling, elicitation, roots) relayed through the ClientGateway.

This layer sits between ``app`` and ``server`` (ADR 0035): it may import the ``mcp`` SDK, and
``App`` runs the sources that need running (a lifespan, connections) for each server run.
"""

from mcp_core.bridges._fastmcp import FastMCPSource
from mcp_core.bridges._mcpserver import MCPServerSource
from mcp_core.bridges._remote import RemoteSource

__all__ = ["FastMCPSource", "MCPServerSource", "RemoteSource"]
