"""A server an operator shapes: local, adopted and proxied tools behind one middleware.

The middleware refuses every tool whose name ends in ``secret``, wherever the tool comes from:
declared here, adopted from an SDK ``MCPServer`` or a fastmcp server, or proxied from the backend at
``$OPERATED_BACKEND`` (``tests/e2e/servers/operated_backend.py`` served over HTTP). It keeps what
it saw in ``SEEN`` (method, target, era, whether an element was in hand), and the
``middleware_seen`` tool reports it, so a test over a real transport can check what it saw.
"""

from __future__ import annotations

import json
import os
from typing import Any

from fastmcp import FastMCP
from mcp.server.mcpserver import MCPServer

from mcp_core.app import App
from mcp_core.bridges import FastMCPSource, MCPServerSource, RemoteSource
from mcp_core.errors import RequestRefusedError
from mcp_core.server import CallNext, Request

app = App("operated")
SEEN: list[dict[str, Any]] = []


@app.middleware
async def deny_secrets(request: Request, call_next: CallNext) -> dict[str, Any]:
    """Refuse each ``*secret`` tool; note every request seen."""
    SEEN.append(
        {
            "method": request.method,
            "target": request.target,
            "era": request.era,
            "element": request.element is not None,
        }
    )
    if request.method == "tools/call" and (request.target or "").endswith("secret"):
        raise RequestRefusedError(f"the operator denies {request.target}", data={"denied": True})
    return await call_next(request)


@app.tool
def local_echo(text: str) -> str:
    """Echo ``text`` from this server."""
    return f"local: {text}"


@app.tool
def local_secret() -> str:
    """Never reached: the middleware denies it."""
    return "local secret"


@app.tool
def middleware_seen() -> str:
    """What the middleware saw so far, as JSON."""
    return json.dumps(SEEN)


adopted = MCPServer("adopted")


@adopted.tool()
def adopted_echo(text: str) -> str:
    """Echo ``text`` from the adopted SDK server."""
    return f"adopted: {text}"


@adopted.tool()
def adopted_secret() -> str:
    """Never reached: the middleware denies it."""
    return "adopted secret"


fast = FastMCP("fast")


@fast.tool
def fast_echo(text: str) -> str:
    """Echo ``text`` from the adopted fastmcp server."""
    return f"fast: {text}"


@fast.tool
def fast_secret() -> str:
    """Never reached: the middleware denies it."""
    return "fast secret"


app.add_source(MCPServerSource(adopted))
app.add_source(FastMCPSource(fast))
backend = os.environ.get("OPERATED_BACKEND")
if backend:
    app.add_source(RemoteSource.http(backend, name="backend", health_interval=0.5))
