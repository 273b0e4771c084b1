"""One MCP endpoint in front of several servers: a local app, a remote over HTTP, one over stdio.

    mcp-core run examples/gateway/weather.py --transport http --port 8001   # the HTTP backend
    python examples/gateway/gateway.py --port 8000                          # the gateway
    mcp-core inspect examples/gateway/gateway.py                            # where each element comes from

- the weather service (``weather.py``, an mcp-core app) is reached over streamable HTTP and
  mounted under the ``weather`` prefix (``weather_forecast``, ``weather+weather://stations``);
- the notes service (``notes.py``, written for the SDK's ``MCPServer``) is started as a stdio
  subprocess and mounted under ``notes``;
- the gateway's own tools beat both (``Priority.MANUAL``): ``notes_delete`` here replaces the
  notes service's own, which ``mcp-core inspect`` reports as shadowed;
- who sees what is decided per user, across all of them, from the bearer token's scopes: each
  backend's elements are tagged ``scope:<name>``, and ``scoped_by_tag`` hides them from sessions
  without that scope. The two demo tokens stand in for a real OAuth verifier.

Configuration: ``WEATHER_URL`` (default ``http://127.0.0.1:8001/mcp``),
``GATEWAY_HEALTH_INTERVAL`` (seconds between backend checks, default 5) and
``GATEWAY_MAX_BACKOFF`` (the longest wait between reconnection attempts, default 30).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from mcp_core import App, ClientGateway, ToolError
from mcp_core.bridges import RemoteSource
from mcp_core.server import LOG_FORMAT
from mcp_core.sources import PrefixedSource
from mcp_core.visibility import scoped_by_tag

HERE = Path(__file__).resolve().parent
HEALTH_INTERVAL = float(os.environ.get("GATEWAY_HEALTH_INTERVAL", "5"))
MAX_BACKOFF = float(os.environ.get("GATEWAY_MAX_BACKOFF", "30"))

app = App(
    "gateway",
    version="1.0.0",
    instructions="Weather forecasts and personal notes, from one endpoint.",
)

weather = RemoteSource.http(
    os.environ.get("WEATHER_URL", "http://127.0.0.1:8001/mcp"),
    name="weather",
    tags={"scope:weather"},
    health_interval=HEALTH_INTERVAL,
    max_backoff=MAX_BACKOFF,
)
notes = RemoteSource.stdio(
    sys.executable,
    [str(HERE / "notes.py")],
    name="notes",
    tags={"scope:notes"},
    health_interval=HEALTH_INTERVAL,
    max_backoff=MAX_BACKOFF,
)
app.add_source(PrefixedSource(weather, "weather"))
app.add_source(PrefixedSource(notes, "notes"))
app.visibility = scoped_by_tag(app.registry)


@app.tool(tags={"scope:notes"})
def notes_delete(name: str) -> str:
    """Delete a note: disabled through the gateway (this replaces the notes service's own tool).

    Args:
        name: The note.
    """
    raise ToolError(f"deleting {name!r} through the gateway is disabled; ask the notes service")


@app.tool
def whoami(gateway: ClientGateway) -> str:
    """Who the gateway thinks you are, and what you may see."""
    session = gateway.session
    return f"{session.principal or 'anonymous'} (scopes: {', '.join(sorted(session.scopes))})"


@app.tool(tags={"scope:admin"})
def status() -> str:
    """The gateway's diagnostics: backends unavailable, elements skipped or shadowed."""
    found = app.registry.diagnostics()
    return "\n".join(str(d) for d in found) if found else "all backends healthy"


# Two fixed demo tokens: who holds them, and the scopes they grant.
DEMO_GRANTS = {
    "alice-token": ("alice", ("weather", "notes", "admin")),
    "bob-token": ("bob", ("weather",)),
}


class DemoTokens:
    """Verifies the demo tokens (use your identity provider's verifier in production)."""

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's grant, or None."""
        grant = DEMO_GRANTS.get(token)
        if grant is None:
            return None
        subject, scopes = grant
        return AccessToken(token=token, client_id="demo", subject=subject, scopes=list(scopes))


def main() -> None:
    """Serve the gateway over streamable HTTP with bearer-token authentication."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log-level", default="WARNING", help="e.g. INFO to see reconnections")
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr, format=LOG_FORMAT)
    base = f"http://{args.host}:{args.port}"
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(base),
        resource_server_url=AnyHttpUrl(f"{base}/mcp"),
        validate_token_resource=False,
    )
    print(f"gateway: serving at {base}/mcp", file=sys.stderr)
    app.run("http", host=args.host, port=args.port, token_verifier=DemoTokens(), auth=auth)


if __name__ == "__main__":
    main()
