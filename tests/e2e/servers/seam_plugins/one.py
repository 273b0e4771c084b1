"""The first discovered plugin."""

from __future__ import annotations

from mcp_core.handlers import tool


@tool
def first_plugin_tool(x: int) -> int:
    """Add one."""
    return x + 1
