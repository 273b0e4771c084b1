"""The backend an operated server proxies: two tools, served by ``mcp-core run`` over HTTP."""

from __future__ import annotations

from mcp_core.app import App

app = App("backend")


@app.tool
def remote_echo(text: str) -> str:
    """Echo ``text`` from the backend."""
    return f"remote: {text}"


@app.tool
def remote_secret() -> str:
    """What the operator's middleware never lets through."""
    return "remote secret"
