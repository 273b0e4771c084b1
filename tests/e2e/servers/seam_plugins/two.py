"""The second discovered plugin: never called, so never imported by a warm server."""

from __future__ import annotations

from mcp_core.handlers import tool


@tool
def second_plugin_tool(x: int) -> int:
    """Add two."""
    return x + 2
